#!/bin/sh
# The live side is a module (src/cli/live_module.h): the program links no
# PortAudio, JACK, ALSA, libpipewire or libsystemd, and an offline run, --version, --help,
# --check-config and --status load none of them (the dynamic loader's own
# report, LD_DEBUG=files); --live loads them through libgpufir-live.so, from the
# build tree and from an installed tree; a missing or broken module is a clear
# error with exit status 1, not a crash.
# Usage: test_startup_libs.sh GPUFIR BUILD_DIR
set -u
G=${1:?usage: $0 GPUFIR BUILD_DIR}
build=${2:?usage: $0 GPUFIR BUILD_DIR}
LIVE_LIBS='lib(portaudio|jack|asound|systemd|pipewire)[.-]'
work=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-startup-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
unset GPUFIR_LIVE_MODULE

needed=$(readelf -d "$G" | grep NEEDED) || fail "readelf -d $G"
echo "$needed" | grep -Eq "$LIVE_LIBS" && fail "the program links a live library: $needed"
[ -f "$(dirname "$G")/libgpufir-live.so" ] || fail "libgpufir-live.so is not beside the program"

# A 0.5 s stereo 48 kHz file and a short filter.
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" - "$work/in.wav" <<'PY' || fail "cannot write the input file"
import math, struct, sys, wave
w = wave.open(sys.argv[1], "wb")
w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
w.writeframes(b"".join(struct.pack("<hh", int(8000 * math.sin(i * 0.05)), 0) for i in range(24000)))
w.close()
PY
printf '1\n0.5\n0.25\n' >"$work/taps.txt"
printf 'filters = ( { name = "fir"; file = "taps.txt"; } );\nchain = ["fir"];\n' >"$work/gpufir.conf"

# run NAME EXPECTED_RC args...: the loader's report of every library it loaded in $work/NAME.log
run() {
	name=$1 want=$2
	shift 2
	LD_DEBUG=files LD_DEBUG_OUTPUT="$work/$name.ld" "$@" >"$work/$name.out" 2>&1
	rc=$?
	cat "$work/$name.ld".* >"$work/$name.log" 2>/dev/null
	[ "$rc" = "$want" ] || { cat "$work/$name.out"; fail "$name: exit status $rc, expected $want"; }
	grep -q 'file=' "$work/$name.log" || fail "$name: LD_DEBUG=files reported nothing"
}
no_live_libs() {
	loaded=$(grep -E "file=[^ ]*$LIVE_LIBS" "$work/$1.log")
	[ -z "$loaded" ] || fail "$1 loaded live libraries: $loaded"
	grep -q 'libgpufir-live' "$work/$1.log" && fail "$1 loaded libgpufir-live.so"
	echo "ok: $1 loads no live library"
}

cd "$work" || exit 1
run offline_cpu 0 "$G" -q --backend cpu -c gpufir.conf -i in.wav -o out_cpu.wav
no_live_libs offline_cpu
[ -s out_cpu.wav ] || fail "offline_cpu wrote no output"
run offline_auto 0 "$G" -q -c gpufir.conf -i in.wav -o out_auto.wav
no_live_libs offline_auto
run version 0 "$G" --version
no_live_libs version
run help 0 "$G" --help
no_live_libs help
run check_config 0 "$G" --check-config gpufir.conf
no_live_libs check_config
run status 4 "$G" --status "$work/no-daemon.sock"
no_live_libs status

# --live loads the module and the live libraries (a config that cannot be read then ends it:
# exit 6, not configured).
run live 6 "$G" --live -c "$work/missing.conf"
grep -Eq "file=[^ ]*libgpufir-live.so" live.log || fail "--live did not load libgpufir-live.so"
grep -Eq "file=[^ ]*libportaudio" live.log || fail "--live did not load PortAudio"
grep -q "missing.conf" live.out || fail "--live: the module did not report the config: $(cat live.out)"
echo "ok: --live loads libgpufir-live.so and PortAudio"

# A missing or broken module: a clear message, exit status 1.
GPUFIR_LIVE_MODULE="$work/none.so" "$G" --live -c gpufir.conf >missing.out 2>&1
rc=$?
[ $rc = 1 ] || fail "missing module: exit status $rc, expected 1: $(cat missing.out)"
grep -q "live mode needs libgpufir-live.so: .*none.so" missing.out || fail "missing module: $(cat missing.out)"
printf 'not a library\n' >broken.so
GPUFIR_LIVE_MODULE="$work/broken.so" "$G" --list-devices >broken.out 2>&1
rc=$?
[ $rc = 1 ] || fail "broken module: exit status $rc, expected 1: $(cat broken.out)"
grep -q -- "--list-devices needs libgpufir-live.so: .*broken.so" broken.out || fail "broken module: $(cat broken.out)"
libm=$(ldd "$G" | sed -n 's|.*=> \(/[^ ]*libm\.so[^ ]*\) .*|\1|p')
if [ -n "$libm" ]; then
	GPUFIR_LIVE_MODULE="$libm" "$G" --live -c gpufir.conf >wrong.out 2>&1
	rc=$?
	[ $rc = 1 ] || fail "a library that is not the module: exit status $rc: $(cat wrong.out)"
	grep -q "not the live module of gpufir" wrong.out || fail "wrong module: $(cat wrong.out)"
fi
echo "ok: a missing, broken or foreign module is exit status 1 with the reason"

# The installed layout: the staged program finds the module in its lib dir.
DESTDIR="$work/root" cmake --install "$build" >install.log 2>&1 || { cat install.log; fail "cmake --install"; }
bin=$(find "$work/root" -path '*/bin/gpufir' -type f | head -n 1)
mod=$(find "$work/root" -name libgpufir-live.so | head -n 1)
[ -n "$bin" ] && [ -n "$mod" ] || fail "the install lacks gpufir or libgpufir-live.so"
run installed_live 6 "$bin" --live -c "$work/missing.conf"
grep -q "file=$work/root/[^ ]*/libgpufir-live.so " installed_live.log || fail "the installed program did not load $mod: $(grep gpufir-live installed_live.log)"
run installed_offline 0 "$bin" -q --backend cpu -c gpufir.conf -i in.wav -o out_inst.wav
no_live_libs installed_offline
echo "ok: installed, --live loads ${mod#"$work/root"}"
