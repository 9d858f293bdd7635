#!/bin/sh
# Offline mode under Valgrind's memcheck: any invalid access, use of an
# uninitialised value or leak ("definitely" or "possibly" lost) fails.
# Runs the CPU backend on a short generated WAV with the built-in chain, with
# an inline-taps config (both algorithms), with --tail, then one error path
# (a config error) and one input error (random bytes named .wav).
# Usage: valgrind-offline.sh [GPUFIR_PROGRAM]   (default: $GPUFIR_BIN)
# Exit 77 (skip) when valgrind is missing or the program is a sanitizer build.
set -u
bin=${1:-${GPUFIR_BIN:-}}
[ -n "$bin" ] && [ -x "$bin" ] || { echo "usage: $0 GPUFIR_PROGRAM" >&2; exit 2; }
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
if ldd "$bin" 2>/dev/null | grep -q 'lib[at]san'; then
	echo "SKIP: $bin is a sanitizer build (Valgrind cannot run it)"
	exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-vg-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A 16-bit mono 48 kHz WAV of 0.25 s of noise: header written by hand, so no
# tool beyond od/head is needed.
le32() { printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }
le16() { printf "$(printf '\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)))"; }
bytes=24000
{
	printf 'RIFF'; le32 $((36 + bytes)); printf 'WAVEfmt '; le32 16
	le16 1; le16 1; le32 48000; le32 96000; le16 2; le16 16
	printf 'data'; le32 $bytes
	head -c $bytes /dev/urandom
} >"$work/in.wav"

cat >"$work/inline.conf" <<'EOF'
filters = ( { name = "fir"; coeffs = [ 0.5, -0.25, 0.125, 0.0625, -0.03125, 0.015625, 0.01, -0.005 ]; } );
chain = ["fir"];
EOF
cat >"$work/bad.conf" <<'EOF'
filters = ( { name = "fir"; coeffs = [ 0.5 ]; } );
chain = ["missing"];
EOF
head -c 4096 /dev/urandom >"$work/junk.wav"

vg() {
	valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible \
		--track-origins=yes "$bin" "$@" >"$work/log" 2>&1
}

# name, expected exit code, arguments
check() {
	name=$1 want=$2
	shift 2
	vg "$@"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		cat "$work/log" >&2
		[ "$rc" -eq 99 ] && fail "$name: Valgrind reported errors"
		fail "$name: exit $rc, expected $want"
	fi
	echo "ok: $name (exit $rc, no Valgrind errors)"
}

check "built-in chain" 0 -i "$work/in.wav" -o "$work/out1.wav" --backend cpu
check "inline taps, direct" 0 -i "$work/in.wav" -o "$work/out2.wav" -c "$work/inline.conf" --backend cpu --algo direct
check "inline taps, fft, --tail, float" 0 -i "$work/in.wav" -o "$work/out3.wav" -c "$work/inline.conf" \
	--backend cpu --algo fft --tail --format FLOAT
check "config error" 6 -i "$work/in.wav" -o "$work/out4.wav" -c "$work/bad.conf" --backend cpu
check "unreadable input" 4 -i "$work/junk.wav" -o "$work/out5.wav" --backend cpu
[ -e "$work/out4.wav" ] && fail "config error left an output behind"
[ -e "$work/out5.wav" ] && fail "input error left an output behind"
echo "valgrind-offline: OK"
