#!/usr/bin/env bash
# Fresh machine to filtered audio: installs packages, builds, and denoises the
# bundled sample with the built-in denoise chain (GPU when present, else CPU).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j"$(nproc)"
./build/src/gpufir -i samples/noisy_speech.wav -o denoised.wav
echo "wrote denoised.wav (compare with samples/noisy_speech.wav)"
