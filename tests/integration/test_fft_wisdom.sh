#!/bin/sh
# The CPU backend's FFTW wisdom file (src/engine/cpu/fft_wisdom.h): the first run
# writes it beside the cost cache, later runs plan from it (and write nothing),
# a corrupt file is ignored and replaced, GPUFIR_COST_CACHE="" turns it off,
# and the output is the same byte for byte in every case.
# Usage: test_fft_wisdom.sh GPUFIR
set -u
G=${1:?usage: $0 GPUFIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-wisdom-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$work" || exit 1
py=python3
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
"$py" - in.wav <<'PY' || fail "cannot write the input file"
import math, struct, sys, wave
w = wave.open(sys.argv[1], "wb")
w.setnchannels(2); w.setsampwidth(2); w.setframerate(48000)
w.writeframes(b"".join(struct.pack("<hh", int(8000 * math.sin(i * 0.05)), int(3000 * math.cos(i * 0.3))) for i in range(48000)))
w.close()
PY
"$py" -c "import math; print('\n'.join('%.9f' % (math.sin(0.01 * k) / (1 + k)) for k in range(3000)))" >taps.txt
printf 'filters = ( { name = "fir"; file = "taps.txt"; } );\nchain = ["fir"];\n' >gpufir.conf
W="$work/cache/fftwf-wisdom"
export GPUFIR_COST_CACHE="$work/cache/costs"

run() { # NAME [env...]: a CPU FFT run, -v log in NAME.log, output NAME.wav
	name=$1
	shift
	env "$@" "$G" -v --backend cpu --algo fft --format FLOAT -c gpufir.conf -i in.wav -o "$name.wav" >"$name.log" 2>&1 ||
		{ cat "$name.log"; fail "$name: gpufir failed"; }
}
run off GPUFIR_COST_CACHE=
[ -e "$W" ] && fail "GPUFIR_COST_CACHE=\"\" wrote wisdom"
run first
[ -s "$W" ] || fail "the first run wrote no wisdom file"
head -c 7 "$W" | grep -q '(fftw-3' || fail "the wisdom file is not FFTW wisdom: $(head -c 80 "$W")"
grep -q "FFTW wisdom written" first.log || fail "first run: no 'written' line"
cp "$W" w1
run second
grep -q "FFTW wisdom from $W" second.log || fail "second run did not read the wisdom: $(grep -i wisdom second.log)"
grep -q "FFTW wisdom written" second.log && fail "second run planned anew and rewrote the wisdom"
cmp -s "$W" w1 || fail "second run changed the wisdom file"
printf 'garbage\n' >"$W"
run corrupt
grep -q "not FFTW wisdom of this library: ignored" corrupt.log || fail "corrupt wisdom: $(grep -i wisdom corrupt.log)"
head -c 7 "$W" | grep -q '(fftw-3' || fail "corrupt wisdom was not replaced"
# The samples, bit for bit (the headers' PEAK chunks carry a time stamp).
same_data() {
	"$py" - "$1" "$2" <<'PY'
import struct, sys
def data(p):
    b = open(p, "rb").read()
    i = 12
    while i + 8 <= len(b):
        tag, n = b[i:i + 4], struct.unpack("<I", b[i + 4:i + 8])[0]
        if tag == b"data":
            return b[i + 8:i + 8 + n]
        i += 8 + n + (n & 1)
    sys.exit("no data chunk in " + p)
a, b = data(sys.argv[1]), data(sys.argv[2])
sys.exit(0 if a == b and len(a) > 0 else 1)
PY
}
for r in first second corrupt; do
	same_data off.wav "$r.wav" || fail "$r.wav differs from the run without wisdom"
done
echo "ok: wisdom written once, read after, corrupt file replaced, output identical"
