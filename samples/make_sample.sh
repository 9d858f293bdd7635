#!/bin/sh
# Regenerate samples/noisy_speech.wav: 6.0 s of synthetic speech (espeak-ng)
# at 48 kHz, mono, 16-bit, with 50 Hz mains hum (plus harmonics) and white
# hiss mixed in. Deterministic: the noise comes from a seeded generator, and
# sox runs without dither, so the same tool versions give the same bytes.
#
# Needs: espeak-ng, sox, python3 (standard library only).
# Usage: samples/make_sample.sh [OUT.wav]   (default: next to this script)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/noisy_speech.wav"}
for tool in espeak-ng sox python3; do
	command -v "$tool" >/dev/null 2>&1 || { echo "make_sample.sh: $tool not found" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# 1. Speech: espeak-ng writes 22050 Hz mono.
espeak-ng -v en-us -s 165 -w "$tmp/speech22k.wav" \
	"This is G P U fir. The hum and the hiss should go away, while the voice stays clear."

# 2. 48 kHz, peak at -6 dBFS (headroom before resampling). -D: no dither (reproducible).
sox -D "$tmp/speech22k.wav" -b 16 "$tmp/speech48k.wav" gain -3 rate -v 48000 gain -n -6

# 3. Place the speech 0.15 s in, make it exactly 6.0 s, and mix in the noise:
#    hum 50 Hz at -20 dBFS with 100/150/200 Hz harmonics
#    (faded in over 0.5 s, as when a ground loop is plugged in), and Gaussian
#    hiss at -42 dBFS RMS from a fixed seed.
python3 - "$tmp/speech48k.wav" "$out" <<'PY'
import math, random, struct, sys, wave

src, dst = sys.argv[1], sys.argv[2]
with wave.open(src, "rb") as w:
    assert w.getnchannels() == 1 and w.getsampwidth() == 2
    rate, n = w.getframerate(), w.getnframes()
    speech = struct.unpack("<%dh" % n, w.readframes(n))
lead, n = int(0.15 * rate), int(6.0 * rate)
speech = ((0,) * lead + speech + (0,) * n)[:n]

rng = random.Random(20261129)
hum = ((50.0, 0.100), (100.0, 0.030), (150.0, 0.040), (200.0, 0.015))
hiss_rms = 10.0 ** (-42.0 / 20.0)
fade = int(0.5 * rate)
frames = bytearray()
for i in range(n):
    t = i / rate
    h = sum(a * math.sin(2.0 * math.pi * f * t) for f, a in hum)
    if i < fade:
        h *= 0.5 - 0.5 * math.cos(math.pi * i / fade)
    x = speech[i] / 32768.0 + h + rng.gauss(0.0, hiss_rms)
    s = max(-32768, min(32767, int(round(x * 32768.0))))
    frames += struct.pack("<h", s)

with wave.open(dst, "wb") as w:
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(rate)
    w.writeframes(bytes(frames))
PY
echo "wrote $out"
