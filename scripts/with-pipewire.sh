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
# GPUFIR_TEST_PIPEWIRE=1 and the quantum forced to 64 frames at 48 kHz
# (GPUFIR_PW_QUANTUM=N: N instead).
# GPUFIR_PW_MICS="NAME..." adds stand-in microphones: each a pw-loopback whose
# Audio/Sink "NAME-in" feeds its mono Audio/Source "NAME" (play a file into
# NAME-in: pw-play --target NAME-in x.wav); the first is the default source.
# GPUFIR_PW_PULSE=1 starts pipewire-pulse too (PulseAudio clients: parecord).
# From the command, `sh with-pipewire.sh --restart` kills the server and its
# helpers (SIGKILL, as a crash) and starts them again as before, on the same
# runtime directory: what a desktop's PipeWire restart looks like to clients.
# GPUFIR_PW_LOGS=DIR keeps what the server saw in DIR: pipewire.log,
# wireplumber.log, profiler.log (pw-profiler: every graph cycle's driver
# position, quantum, rate and each node's signal/awake/finish times and
# status), metadata.log (pw-metadata -m: each quantum/rate setting as it
# changes) and pw-dump.json (the graph 3 s into the command).
# Exit status: the command's; 77 when pipewire, wireplumber, pw-jack or
# dbus-run-session is missing. Debian packages: pipewire pipewire-bin
# pipewire-jack wireplumber dbus (pipewire-pulse for GPUFIR_PW_PULSE).
set -u
for t in pipewire wireplumber pw-jack pw-cli pw-metadata dbus-run-session; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "with-pipewire.sh: $t not found" >&2
		exit 77
	fi
done
if [ "${GPUFIR_PW_PULSE:-0}" = 1 ] && ! command -v pipewire-pulse >/dev/null 2>&1; then
	echo "with-pipewire.sh: pipewire-pulse not found" >&2
	exit 77
fi
if [ $# -eq 0 ]; then
	echo "usage: $0 command [args...] | $0 --restart" >&2
	exit 2
fi

# Every process started here, one PID a line, in the runtime directory: the
# exit handler and --restart kill them all.
spawn() {
	"$@" &
	echo $! >>"$XDG_RUNTIME_DIR/pids"
}

kill_all() {
	if [ -f "$XDG_RUNTIME_DIR/pids" ]; then
		while read -r p; do
			kill "-$1" "$p" 2>/dev/null
		done <"$XDG_RUNTIME_DIR/pids"
		rm -f "$XDG_RUNTIME_DIR/pids"
	fi
}

# pipewire, wireplumber, the null sink, the quantum, the stand-in
# microphones and pipewire-pulse, each waited for.
start_server() {
	spawn pipewire >>"$XDG_RUNTIME_DIR/pipewire.log" 2>&1
	i=0
	until pw-cli info 0 >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -ge 50 ]; then
			echo "with-pipewire.sh: pipewire did not start:" >&2
			tail -n 20 "$XDG_RUNTIME_DIR/pipewire.log" >&2
			return 1
		fi
		sleep 0.1
	done
	spawn wireplumber >>"$XDG_RUNTIME_DIR/wireplumber.log" 2>&1
	pw-cli create-node adapter '{ factory.name = support.null-audio-sink node.name = gf-null-sink
		media.class = Audio/Sink object.linger = true audio.position = [ FL FR ] }' >/dev/null
	pw-metadata -n settings 0 clock.force-rate 48000 >/dev/null
	pw-metadata -n settings 0 clock.force-quantum "${GPUFIR_PW_QUANTUM:-64}" >/dev/null
	for m in ${GPUFIR_PW_MICS:-}; do
		spawn pw-loopback -n "$m" -m '[ MONO ]' \
			--capture-props="media.class=Audio/Sink node.name=$m-in node.description=$m-in" \
			--playback-props="media.class=Audio/Source node.name=$m node.description=$m" \
			>>"$XDG_RUNTIME_DIR/mics.log" 2>&1
	done
	if [ "${GPUFIR_PW_PULSE:-0}" = 1 ]; then
		spawn pipewire-pulse >>"$XDG_RUNTIME_DIR/pipewire-pulse.log" 2>&1
	fi
	i=0
	until pw_ready; do
		i=$((i + 1))
		if [ $i -ge 50 ]; then
			echo "with-pipewire.sh: the null sink, microphones or pulse server did not appear" >&2
			return 1
		fi
		sleep 0.1
	done
	set -- ${GPUFIR_PW_MICS:-}
	if [ $# -gt 0 ]; then
		pw-metadata -n default 0 default.configured.audio.source "{ \"name\": \"$1\" }" \
			Spa:String:JSON >/dev/null
	fi
	sleep 0.5 # wireplumber settles
}

# Everything start_server waits for is there.
pw_ready() {
	pw-jack jack_lsp 2>/dev/null | grep -q '^gf-null-sink:playback_FL$' || return 1
	for m in ${GPUFIR_PW_MICS:-}; do
		pw-cli ls Node 2>/dev/null | grep -q "node.name = \"$m\"" || return 1
	done
	[ "${GPUFIR_PW_PULSE:-0}" != 1 ] || [ -S "$XDG_RUNTIME_DIR/pulse/native" ]
}

if [ "$1" = --restart ]; then
	if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -f "$XDG_RUNTIME_DIR/pids" ]; then
		echo "with-pipewire.sh --restart: not under with-pipewire.sh" >&2
		exit 2
	fi
	kill_all KILL
	sleep 0.2
	start_server
	exit $?
fi

if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
	exec dbus-run-session -- sh "$0" "$@"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-pw.XXXXXX")
chmod 700 "$dir"
export XDG_RUNTIME_DIR="$dir" PIPEWIRE_RUNTIME_DIR="$dir"
: >"$dir/pids"
finish() {
	kill_all INT
	wait 2>/dev/null
	if [ -n "${GPUFIR_PW_LOGS:-}" ]; then
		mkdir -p "$GPUFIR_PW_LOGS" && cp "$dir"/*.log "$dir"/*.json "$GPUFIR_PW_LOGS"/ 2>/dev/null
	fi
	rm -rf "$dir"
}
trap finish EXIT
trap 'exit 130' INT TERM

start_server || exit 1
if [ -n "${GPUFIR_PW_LOGS:-}" ]; then
	spawn pw-metadata -n settings -m >"$dir/metadata.log" 2>&1
	spawn sh -c 'cd "$1" && exec pw-profiler -o profiler.log >/dev/null 2>&1' sh "$dir"
	(sleep 3 && pw-dump >"$dir/pw-dump.json" 2>/dev/null) &
fi
# Sanitizer builds: PipeWire's libjack leaks what its clients registered
# (tests/lib/lsan-pipewire.supp says what).
root=$(cd "$(dirname "$0")/.." && pwd)
LSAN_OPTIONS="suppressions=$root/tests/lib/lsan-pipewire.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	GPUFIR_TEST_PIPEWIRE=1 GPUFIR_PW_SCRIPT="$root/scripts/with-pipewire.sh" pw-jack "$@"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
	echo "with-pipewire.sh: pipewire log tail:" >&2
	tail -n 10 "$dir/pipewire.log" >&2
fi
exit $rc
