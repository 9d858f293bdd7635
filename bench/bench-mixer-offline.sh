#!/usr/bin/env bash
# A mixer offline on each backend: a 2 -> 4 crossover (four paths of TAPS taps)
# on a SECONDS stereo 48 kHz float32 WAV through `gpufir -i -o`, on the CPU
# (each input transformed once, the paths summed in the spectrum) and on the
# GPU (the paths run as channels, gathered and summed by the engine), beside
# the plain stereo chain of the same filter on the GPU. Prints the best of 3
# runs (after a warm-up run) in seconds, M input samples/s and the ratios,
# and checks that the two backends' outputs agree.
#
#   bench/bench-mixer-offline.sh [BUILD_DIR] [WORK_DIR] [SECONDS] [TAPS]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
WORK=${2:-/tmp/gpufir-bench-mixer}
SECONDS_LEN=${3:-300}
TAPS=${4:-65535}
PY=${PYTHON:-python3}
GPUFIR="$BUILD/src/gpufir"
mkdir -p "$WORK"
$PY "$ROOT/bench/bench-peers.py" gen "$WORK" "$SECONDS_LEN" "$TAPS" >/dev/null || exit 1
cat >"$WORK/mixer.conf" <<'CONF'
filters = ( { name = "fir"; file = "taps.txt"; } );
mixer = {
 inputs = 2;
 outputs = 4;
 paths = (
  { in = 0; out = 0; chain = ["fir"]; },
  { in = 0; out = 1; chain = ["fir"]; gain_db = -3.0; invert = true; },
  { in = 1; out = 2; chain = ["fir"]; },
  { in = 1; out = 3; chain = ["fir"]; gain_db = -6.0; }
 );
};
CONF
SAMPLES=$((SECONDS_LEN * 48000 * 2))

RESULTS=/dev/null
. "$ROOT/bench/timing.sh"

echo "== $SECONDS_LEN s stereo 48 kHz, 2 -> 4 mixer of $TAPS-tap paths"
cat "$WORK/in.wav" >/dev/null
timed mixer_cpu 3 "$GPUFIR" -i "$WORK/in.wav" -o "$WORK/out_cpu.wav" -c "$WORK/mixer.conf" --backend cpu
timed mixer_cuda 3 "$GPUFIR" -i "$WORK/in.wav" -o "$WORK/out_cuda.wav" -c "$WORK/mixer.conf" --backend cuda
timed stereo_cuda 3 "$GPUFIR" -i "$WORK/in.wav" -o "$WORK/out_stereo.wav" -c "$WORK/gpufir.conf" --backend cuda
[ -n "${T_mixer_cpu:-}" ] && [ -n "${T_mixer_cuda:-}" ] &&
	awk -v c="$T_mixer_cpu" -v g="$T_mixer_cuda" 'BEGIN { printf "RATIO mixer cpu / cuda %.2f\n", c / g }'
[ -n "${T_stereo_cuda:-}" ] && [ -n "${T_mixer_cuda:-}" ] &&
	awk -v s="$T_stereo_cuda" -v g="$T_mixer_cuda" 'BEGIN { printf "RATIO mixer cuda / stereo chain cuda %.2f\n", g / s }'
$PY - "$WORK/out_cpu.wav" "$WORK/out_cuda.wav" <<'PYEOF'
import sys
import numpy as np
from scipy.io import wavfile
a = wavfile.read(sys.argv[1])[1].astype(np.float64)
b = wavfile.read(sys.argv[2])[1].astype(np.float64)
print("CHECK cuda against cpu: shape %s, rel L2 %.3g" % (b.shape, np.linalg.norm(a - b) / np.linalg.norm(a)))
PYEOF
