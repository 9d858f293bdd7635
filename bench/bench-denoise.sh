#!/usr/bin/env bash
# Denoising benchmark: gpufir's denoising configurations against SoX noisered, speexdsp,
# RNNoise, noisereduce and DeepFilterNet3 on a test set it builds itself (16 kHz speech in seven
# kinds of noise at 0/5/10 dB SNR, and clean speech at 16 and 48 kHz), scored with PESQ
# (wideband), STOI, ESTOI and SI-SDR.
# See docs/denoise.md.
#
#   bench/bench-denoise.sh [--quick] [--out DIR] [--gpufir PATH] [--jobs N] [--systems RE] [--items RE]
#
#   --quick        2 utterances, 3 noises (white, hum, babble), 5 dB only: a smoke run
#   --out DIR      where the set, the outputs and the tables go (default build/bench-denoise)
#   --gpufir PATH  the gpufir binary to measure (default: build/src/gpufir, built if missing)
#   --jobs N       processes scoring in parallel (default: the CPUs)
#   --systems RE   only the systems whose label matches RE (case-insensitive), e.g. deepfilter
#   --items RE     only the files whose id matches RE, e.g. clean48 (the clean 48 kHz clips)
#
# Installs what it needs when missing (Debian packages with apt-get; numpy, scipy,
# soundfile, pesq, pystoi, pyrnnoise and noisereduce from PyPI into a venv in
# build/denoise-venv), builds bench/denoise/speex_denoise.c, installs DeepFilterNet3
# (scripts/install-deepfilter.sh, into $GPUFIR_DEEPFILTER_DIR or build/deepfilter; its rows are
# skipped where that fails), then runs bench/denoise/make_set.py and run.py.
# Results: DIR/summary.md, DIR/conditions.md, DIR/results.csv, DIR/systems.csv.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

OUT=build/bench-denoise
GPUFIR=""
QUICK=0
JOBS=$(nproc)
SYSTEMS=""
ITEMS=""
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) QUICK=1 ;;
	--out) OUT=$2; shift ;;
	--out=*) OUT=${1#--out=} ;;
	--gpufir) GPUFIR=$2; shift ;;
	--gpufir=*) GPUFIR=${1#--gpufir=} ;;
	--jobs) JOBS=$2; shift ;;
	--jobs=*) JOBS=${1#--jobs=} ;;
	--systems) SYSTEMS=$2; shift ;;
	--items) ITEMS=$2; shift ;;
	-h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-denoise.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done

# Debian packages, only those missing.
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
pkgs=(espeak-ng sox libsox-fmt-all libspeexdsp-dev libsndfile1-dev alsa-utils
      sound-theme-freedesktop python3-venv python3-dev build-essential pkg-config)
if [ -z "$GPUFIR" ] && [ ! -x build/src/gpufir ]; then # gpufir's own build dependencies
	pkgs+=(cmake libconfig-dev portaudio19-dev libsystemd-dev libfftw3-dev libsamplerate0-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bench-denoise: installing ${missing[*]}" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# gpufir
if [ -z "$GPUFIR" ]; then
	GPUFIR=build/src/gpufir
	if [ ! -x "$GPUFIR" ]; then
		. scripts/env.sh
		cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
		cmake --build build -j"$(nproc)"
	fi
fi
[ -x "$GPUFIR" ] || { echo "bench-denoise: $GPUFIR is not an executable" >&2; exit 1; }
GPUFIR=$(realpath "$GPUFIR")

# speexdsp front end
mkdir -p build
SPEEX=build/denoise-speex
if [ ! -x "$SPEEX" ] || [ bench/denoise/speex_denoise.c -nt "$SPEEX" ]; then
	cc -O2 -Wall -Wextra bench/denoise/speex_denoise.c -o "$SPEEX" \
		$(pkg-config --cflags --libs speexdsp sndfile) -lm
fi

# Python venv (Debian's python3: its headers build pesq)
VENV=build/denoise-venv
PY=$VENV/bin/python
if [ ! -x "$PY" ]; then
	/usr/bin/python3 -m venv "$VENV"
fi
if ! "$PY" -c 'import numpy, scipy, soundfile, pesq, pystoi, pyrnnoise, noisereduce' 2>/dev/null; then
	"$PY" -m pip install -q numpy scipy soundfile pesq pystoi pyrnnoise noisereduce
fi

# DeepFilterNet3's runtime and model, for the deepfilter rows
DFDIR=${GPUFIR_DEEPFILTER_DIR:-build/deepfilter}
bash scripts/install-deepfilter.sh "$DFDIR" || echo "bench-denoise: no DeepFilterNet3: its rows are skipped" >&2

mkdir -p "$OUT"
SET=$OUT/set$([ "$QUICK" = 1 ] && echo -quick || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src cuda 2>/dev/null || commit="$commit (with local changes in src/ or cuda/)"
start=$(date +%s)
if [ ! -f "$SET/manifest.json" ]; then
	"$PY" bench/denoise/make_set.py "$SET" $([ "$QUICK" = 1 ] && echo --quick)
fi
"$PY" bench/denoise/run.py --set "$SET" --out "$OUT" --gpufir "$GPUFIR" --speex "$ROOT/$SPEEX" \
	--jobs "$JOBS" --commit "$commit" --deepfilter "$DFDIR" --systems "$SYSTEMS" --items "$ITEMS" 2>&1 |
	tee "$OUT/run.log"
echo "bench-denoise: $(($(date +%s) - start)) s; tables in $OUT/summary.md and $OUT/conditions.md" >&2
