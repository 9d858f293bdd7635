#!/bin/sh
# Live soak: `gpufir --live` filtering a private JACK server's audio for a long
# time (default 600 s), checked for xruns, memory growth and sample-exact output.
#
#   bench/soak-live.sh [SECONDS] [gpufir options...]     e.g. 600 --backend cuda
#
# A JACK server (dummy driver, sync mode, 64-frame periods; scripts/with-jackd.sh)
# runs gpufir (CPU backend unless the options say otherwise) with a filter of
# SOAK_TAPS (255) decaying-noise taps. tests/soak_client plays noise plus a
# counting ramp into gpufir and records its output. Every 10 s the script samples
# gpufir's RSS (/proc/PID/status VmRSS) and its status-socket counters. At the end
# it prints the duration, gpufir's xruns by kind during the soak (frames lost:
# input overflows, output underflows and overflows), its late blocks (engine time
# over the period: absorbed by the slack, reported only), the worst playback
# margin, worker wake-up delay and callback interval (docs/live.md, "Why an
# underrun happened"), the CPU time the hypervisor stole from this machine
# (/proc/stat), JACK's xruns (reported only: the dummy driver counts its own late
# wake-ups), RSS first, last and max, and whether the recording matched the
# reference (one constant delay, then rel. L2 < 1e-5 in every one-second window).
# Exit status: 0 if gpufir lost no audio, RSS grew < 1 MB after the first minute
# and the output matched; 1 otherwise; 77 without jackd.
# Environment: GPUFIR_BUILD_DIR (build: where src/gpufir and tests/soak_client
# are), SOAK_TAPS (255), SOAK_LATENCY_SLACK (the config's latency_slack: a number,
# "auto", or unset for the default; with auto slack one glitch, the step that raises
# the slack, is allowed), SOAK_DIR (keep logs there instead of a temporary dir).
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${SOAK_INNER:-}" ]; then
	# Under a private server; fixed names (JACK's registry has 8 slots).
	SOAK_INNER=1 JACK_NAME=gpufir-soak JACK_PERIOD=64 JACK_RATE=48000 \
		exec sh "$root/scripts/with-jackd.sh" sh "$0" "$@"
fi

secs=600
case "${1:-}" in
[0-9]*) secs=$1 && shift ;;
esac
build=${GPUFIR_BUILD_DIR:-$root/build}
bin=$build/src/gpufir
client=$build/tests/soak_client
taps=${SOAK_TAPS:-255}
for f in "$bin" "$client"; do
	if [ ! -x "$f" ]; then
		echo "soak-live.sh: $f not found (build first; GPUFIR_BUILD_DIR=$build)" >&2
		exit 2
	fi
done
work=${SOAK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpufir-soak.XXXXXX")}
mkdir -p "$work"

gpid=
cpid=
finish() {
	[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
	[ -n "$gpid" ] && kill "$gpid" 2>/dev/null
	[ -z "${SOAK_DIR:-}" ] && rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT TERM

"$client" taps "$work/taps.txt" "$taps" 1 || exit 1
case "${SOAK_LATENCY_SLACK:-default}" in
default) slack_line="# latency_slack: the default" ;;
auto) slack_line='latency_slack = "auto";' ;;
*) slack_line="latency_slack = $SOAK_LATENCY_SLACK;" ;;
esac
cat >"$work/soak.conf" <<EOF
sample_rate = 48000;
block_frames = 64;
$slack_line
backend = "cpu";
status_socket = "$work/status";
input = { device = "system"; host_api = "JACK"; channels = 2; };
output = { device = "system"; host_api = "JACK"; };
filters = ( { name = "soak"; file = "taps.txt"; format = "text"; } );
chain = ["soak"];
EOF

# status KEY: one value from the last status-socket answer
status() { awk -v k="$1:" '$1 == k { print $2; exit }' "$work/status.txt"; }
query() { "$bin" --status "$work/status" >"$work/status.txt" 2>/dev/null; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$gpid/status" 2>/dev/null; }

"$bin" --live -c "$work/soak.conf" "$@" >"$work/gpufir.log" 2>&1 &
gpid=$!
i=0
until query && [ "$(status state)" = running ]; do
	i=$((i + 1))
	if ! kill -0 "$gpid" 2>/dev/null || [ $i -ge 300 ]; then
		echo "soak-live.sh: gpufir did not start:" >&2
		grep -v '^ALSA lib' "$work/gpufir.log" | tail -20 >&2
		exit 1
	fi
	sleep 0.1
done
backend=$(status backend)/$(status algo)
in0=$(status input_overflows) out0=$(status output_underflows) over0=$(status output_overflows)
late0=$(status late_blocks)
# steal: CPU time the hypervisor took from this (virtual) machine, in ticks of 10 ms
steal() { awk '$1 == "cpu" { print $9; exit }' /proc/stat; }
steal0=$(steal)

"$client" run "$secs" "$work/taps.txt" >"$work/client.log" 2>&1 &
cpid=$!
t0=$(date +%s)
next=0
rss_first= rss_last= rss_max=0 rss_base= rss_base_max=0
echo "soak: $secs s, gpufir pid $gpid, $backend, $taps taps, block 64, JACK $JACK_DEFAULT_SERVER (dummy, sync, 64 frames)"
while kill -0 "$cpid" 2>/dev/null; do
	t=$(($(date +%s) - t0))
	if [ "$t" -ge "$next" ]; then
		next=$((next + 10))
		if ! kill -0 "$gpid" 2>/dev/null; then
			echo "soak-live.sh: gpufir exited during the soak" >&2
			break
		fi
		r=$(rss_kb)
		query
		[ -z "$rss_first" ] && rss_first=$r
		rss_last=$r
		[ "$r" -gt "$rss_max" ] && rss_max=$r
		# Growth is measured from the first sample after the first minute.
		if [ "$t" -ge 60 ]; then
			[ -z "$rss_base" ] && rss_base=$r
			[ "$r" -gt "$rss_base_max" ] && rss_base_max=$r
		fi
		printf 't=%4d s  rss %6d kB  xruns in %s out %s over %s  late %s  margin %s  wake %s us' \
			"$t" "$r" "$(status input_overflows)" "$(status output_underflows)" \
			"$(status output_overflows)" "$(status late_blocks)" "$(status margin_frames_worst)" \
			"$(status wake_us_worst)"
		printf '  device %s  blocks %s  load %s\n' "$(status device_xruns)" "$(status blocks)" \
			"$(cut -d' ' -f1 /proc/loadavg)"
	fi
	sleep 1
done
wait "$cpid"
crc=$?
cpid=
duration=$(($(date +%s) - t0))
query
din=$(($(status input_overflows) - in0))
dout=$(($(status output_underflows) - out0))
dover=$(($(status output_overflows) - over0))
dlate=$(($(status late_blocks) - late0))
dsteal=$(($(steal) - steal0))
kill -TERM "$gpid"
wait "$gpid"
grc=$?
gpid=

if [ -z "$rss_base" ]; then # shorter than a minute and a sample: from the first one
	rss_base=$rss_first
	rss_base_max=$rss_max
fi
growth=$((rss_base_max - rss_base))
fail=0
echo "---- soak summary ----"
echo "duration: $duration s (audio: $(awk '$1 == "played_s:" { print $2 }' "$work/client.log") s played)"
echo "gpufir xruns during the soak: input overflows $din, output underflows $dout, output overflows $dover" \
	"(since start: $(status input_overflows)/$(status output_underflows)/$(status output_overflows))"
glitches=$(awk '$1 == "glitches:" { print $2 }' "$work/client.log")
if [ "$(status latency_slack_mode)" = auto ]; then
	# Adaptive slack: one glitch is allowed, the one that raises the slack.
	echo "auto slack: now $(status latency_slack) periods after $(status resyncs) step(s);" \
		"recording: $glitches glitch(es), delay steps:" \
		"$(awk '$1 == "delay_step_at_s:" { printf " at %s s %s %s %s", $2, $3, $4, $5 }' "$work/client.log")"
	[ "$(status resyncs)" -le 1 ] && [ "${glitches:-99}" -le 1 ] || fail=1
else
	[ $((din + dout + dover)) -eq 0 ] || fail=1
fi
echo "late blocks: $dlate (engine time over the period; reported only)"
echo "worst since start: playback margin $(status margin_frames_worst) frames," \
	"worker wake-up $(status wake_us_worst) us, callback interval $(status callback_gap_us_worst) us;" \
	"latency $(status latency_frames) frames"
echo "stolen by the hypervisor: $((dsteal * 10)) ms of CPU time ($(nproc) CPUs)"
echo "JACK xruns: $(awk '$1 == "jack_xruns:" { print $2 }' "$work/client.log") (reported only)"
flat=flat
[ "$growth" -lt 1024 ] || { flat="GROWING"; fail=1; }
echo "RSS: first $rss_first kB, last $rss_last kB, max $rss_max kB; growth after the first minute $growth kB ($flat)"
echo "recording: $(awk '$1 == "result:" { print $2 }' "$work/client.log"), delay" \
	"$(awk '$1 == "delay_frames:" { print $2 }' "$work/client.log") frames;" \
	"$(grep '^windows:' "$work/client.log" | cut -d' ' -f2-)" \
	"$(grep '^mismatch_at_s:' "$work/client.log")"
[ "$crc" -eq 0 ] || [ "$(status latency_slack_mode)" = auto ] || fail=1
[ "$crc" -le 1 ] || fail=1
[ "$grc" -eq 0 ] || { echo "gpufir exited with status $grc"; fail=1; }
if [ "$fail" -ne 0 ]; then
	echo "soak: FAIL (logs in $work)"
	SOAK_DIR=$work # keep them
	exit 1
fi
echo "soak: PASS"
exit 0
