#!/bin/sh
# Run a command against a private, headless PipeWire server, e.g.
#   scripts/with-pipewire.sh ctest --test-dir build -R test_daemon_period
# What it takes, as root or not, without a desktop session (docs/live.md):
# - a D-Bus session bus: wireplumber exits without one ("Cannot autolaunch
#   D-Bus without X11 $DISPLAY"), so the script re-runs itself under
#   dbus-run-session when DBUS_SESSION_BUS_ADDRESS is unset;
# - its own XDG_RUNTIME_DIR (mode 0700) for the server's socket;
# - a null sink: no sound card; PipeWire's Dummy-Driver drives the graph.
#   support.null-audio-sink node "gf-null-sink" (PortAudio's JACK device of
#   that name: playback ports in, monitor ports out).
# The command runs under pw-jack (PipeWire's libjack), with
# GPUFIR_TEST_PIPEWIRE=1 and the quantum forced to 64 frames at 48 kHz.
# GPUFIR_PW_LOGS=DIR keeps what the server saw in DIR: pipewire.log,
# wireplumber.log, profiler.log (pw-profiler: every graph cycle's driver
# position, quantum, rate and each node's signal/awake/finish times and
# status), metadata.log (pw-metadata -m: each quantum/rate setting as it
# changes) and pw-dump.json (the graph 3 s into the command).
# Exit status: the command's; 77 when pipewire, wireplumber, pw-jack or
# dbus-run-session is missing. Debian packages: pipewire pipewire-bin
# pipewire-jack wireplumber dbus.
set -u
for t in pipewire wireplumber pw-jack pw-cli pw-metadata dbus-run-session; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "with-pipewire.sh: $t not found" >&2
		exit 77
	fi
done
if [ $# -eq 0 ]; then
	echo "usage: $0 command [args...]" >&2
	exit 2
fi
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
	exec dbus-run-session -- sh "$0" "$@"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-pw.XXXXXX")
chmod 700 "$dir"
export XDG_RUNTIME_DIR="$dir" PIPEWIRE_RUNTIME_DIR="$dir"
ppid_=
wpid=
mpid=
fpid=
finish() {
	[ -n "$fpid" ] && kill -INT "$fpid" 2>/dev/null
	[ -n "$mpid" ] && kill "$mpid" 2>/dev/null
	[ -n "$wpid" ] && kill "$wpid" 2>/dev/null
	[ -n "$ppid_" ] && kill "$ppid_" 2>/dev/null
	wait 2>/dev/null
	if [ -n "${GPUFIR_PW_LOGS:-}" ]; then
		mkdir -p "$GPUFIR_PW_LOGS" && cp "$dir"/*.log "$dir"/*.json "$GPUFIR_PW_LOGS"/ 2>/dev/null
	fi
	rm -rf "$dir"
}
trap finish EXIT
trap 'exit 130' INT TERM

pipewire >"$dir/pipewire.log" 2>&1 &
ppid_=$!
i=0
until pw-cli info 0 >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -ge 50 ] || ! kill -0 "$ppid_" 2>/dev/null; then
		echo "with-pipewire.sh: pipewire did not start:" >&2
		tail -n 20 "$dir/pipewire.log" >&2
		exit 1
	fi
	sleep 0.1
done
wireplumber >"$dir/wireplumber.log" 2>&1 &
wpid=$!
pw-cli create-node adapter '{ factory.name = support.null-audio-sink node.name = gf-null-sink
	media.class = Audio/Sink object.linger = true audio.position = [ FL FR ] }' >/dev/null
pw-metadata -n settings 0 clock.force-rate 48000 >/dev/null
pw-metadata -n settings 0 clock.force-quantum 64 >/dev/null
i=0
until pw-jack jack_lsp 2>/dev/null | grep -q '^gf-null-sink:playback_FL$'; do
	i=$((i + 1))
	if [ $i -ge 50 ]; then
		echo "with-pipewire.sh: the null sink did not appear" >&2
		exit 1
	fi
	sleep 0.1
done
sleep 0.5 # wireplumber settles
if [ -n "${GPUFIR_PW_LOGS:-}" ]; then
	pw-metadata -n settings -m >"$dir/metadata.log" 2>&1 &
	mpid=$!
	(cd "$dir" && exec pw-profiler -o profiler.log >/dev/null 2>&1) &
	fpid=$!
	(sleep 3 && pw-dump >"$dir/pw-dump.json" 2>/dev/null) &
fi
# Sanitizer builds: PipeWire's libjack leaks what its clients registered
# (tests/lib/lsan-pipewire.supp says what).
root=$(cd "$(dirname "$0")/.." && pwd)
LSAN_OPTIONS="suppressions=$root/tests/lib/lsan-pipewire.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	GPUFIR_TEST_PIPEWIRE=1 pw-jack "$@"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
	echo "with-pipewire.sh: pipewire log tail:" >&2
	tail -n 10 "$dir/pipewire.log" >&2
fi
exit $rc
