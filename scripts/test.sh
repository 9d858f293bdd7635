#!/usr/bin/env bash
# Installs packages, then builds and runs the whole test suite twice: a normal
# build (with the CUDA backend when a toolkit is present; GPU tests skip
# without a GPU) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Live tests run against a private JACK server with the dummy driver.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/env.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j"$jobs"
scripts/with-jackd.sh ctest --test-dir build --output-on-failure

# Sanitizers cover the host code; CUDA code cannot run without a GPU anyway.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFIR_SANITIZE=ON -DGPUFIR_CUDA=OFF
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	scripts/with-jackd.sh ctest --test-dir build-asan --output-on-failure
