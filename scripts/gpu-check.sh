#!/usr/bin/env bash
# GPU verification, on a machine with an NVIDIA GPU and a build made with the
# CUDA backend (cmake -B BUILD -DCMAKE_BUILD_TYPE=Release; cmake --build BUILD):
#
#   scripts/gpu-check.sh BUILD LOGDIR
#
# Runs, each into LOGDIR/<step>.log, and prints one line per step (exit status,
# seconds) whatever the earlier steps gave:
#   gpu          ctest -L gpu (the CUDA engine against the double reference)
#   live_cuda    test_live_jack on the CUDA backend under a private JACK server:
#                sample-exact playback, two streams, recording, the CUDA fault
#                hook mid-stream (CPU fallback), device loss
#   crossover_cuda  test_daemon_crossover on CUDA: a 2 -> 4 mixer live, its paths on the GPU
#   reload_cuda  test_daemon_reload_load on CUDA: 1048575 taps (GPU_CHECK_RELOAD_TAPS)
#                at 256-frame blocks, the filter file replaced while audio plays: no
#                underflow, no late block, every reload's crossfade exact
#   reload_cuda_fused  the same at 4095 taps and 64-frame blocks on the default path
#                (the fused kernel where it timed faster than the staged path at create)
#   reload_cuda_persist  the same on the persistent-kernel path (gpu_path = "persistent",
#                4095 taps at 64-frame blocks): each reload hands the running kernel over
#                to the launched path (fused or staged) before the new filter is built
#   hang_cuda    test_daemon_hang on CUDA: a late block (muted, the GPU kept), a kernel
#                that spins (GPUFIR_CUDA_HANG_AFTER): CPU takes over after the hang bound,
#                then the GPU again; a stuck worker, with and without the noise suppressor;
#                status answers, SIGTERM within 2 s
#   suppress_cuda  test_daemon_suppress_gpu: the daemon on CUDA with the noise suppressor on
#                8 channels under JACK: status puts it on the GPU (suppressor_where), no hop
#                failed or missed its block's deadline, the recording denoised (measured)
#   live_cuda_tight  its playback case at latency_slack 1 (two blocks of latency),
#                reported, not required: it fails where the host stalls threads
#   hang_cuda_persist  the same on the opt-in persistent-kernel path (gpu_path = "persistent"),
#                reported: its exit after a hung kernel took over 2 s (docs/cuda.md)
#   cuda_startup scripts/check-cuda-startup.sh: no CUDA library linked, none mapped
#                by a CPU run, auto by cost on a 5 s and a 600 s file, CUDA's start-up
#                measured into the cost cache against the whole-process difference
#   bench_live   engine time per block and capacity on the CUDA backend
#                (GPU_CHECK_BLOCKS blocks per size, 20000; GPU_CHECK_TRIAL_S, 1;
#                more arguments in GPU_CHECK_BENCH_ARGS, e.g. --no-capacity --crossfade)
#   bench_live_persist  its latency table on the persistent-kernel path (reported)
#   memcheck, racecheck  compute-sanitizer on the quick GPU case set, when
#                GPU_CHECK_SANITIZE=1; racecheck instruments only our kernels that
#                use shared memory (k_direct, k_mac*, k_live), one run each, on the
#                test's racecheck set (GPUFIR_GPU_TEST_QUICK=race)
#   cyclictest   60 s (GPU_CHECK_CYCLIC_S) of real-time wake-up latency (two SCHED_FIFO threads), when
#                cyclictest is installed: the host's jitter, for the live figures
# GPU_CHECK_ONLY="gpu hang_cuda ..." runs only those steps (to split a check over calls).
# Exit status: 0 if every required step passed.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 BUILD LOGDIR" >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd) || exit 2
logs=$2
mkdir -p "$logs"
failed=0

# The daemon tests run the real program, as ctest would point them to it.
export GPUFIR_BIN="$build/src/gpufir" GPUFIR_SOURCE_DIR="$root" GPUFIR_BINARY_DIR="$build"
# Test programs load the CUDA module from here (ctest sets the same; gpufir finds it beside itself).
export GPUFIR_CUDA_MODULE="$build/src/libgpufir-cuda.so" GPUFIR_COST_CACHE="$logs/cost-cache"

# step NAME REQUIRED COMMAND... (only the steps named in GPU_CHECK_ONLY, when set)
step() {
	local name=$1 required=$2
	shift 2
	case " ${GPU_CHECK_ONLY:-$name} " in
	*" $name "*) ;;
	*) return 0 ;;
	esac
	local t0 rc ms
	t0=$(date +%s%N)
	"$@" >"$logs/$name.log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	printf '%-16s rc %3d  %4d.%01d s\n' "$name" "$rc" $((ms / 1000)) $((ms % 1000 / 100))
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$required" = required ]; then
		failed=1
	fi
}

step gpu required ctest --test-dir "$build" -L gpu --no-tests=error --output-on-failure
step live_cuda required env GPUFIR_TEST_BACKEND=cuda \
	"$root/scripts/with-jackd.sh" "$build/tests/test_live_jack"
step live_cuda_tight optional env GPUFIR_TEST_BACKEND=cuda GPUFIR_TEST_LATENCY_SLACK=1 \
	GPUFIR_LIVE_CASES=playback "$root/scripts/with-jackd.sh" "$build/tests/test_live_jack"
step reload_cuda required env GPUFIR_TEST_BACKEND=cuda GPUFIR_TEST_RELOAD_TAPS="${GPU_CHECK_RELOAD_TAPS:-1048575}" \
	GPUFIR_TEST_RELOAD_BLOCK="${GPU_CHECK_RELOAD_BLOCK:-256}" "$root/scripts/with-jackd.sh" "$build/tests/test_daemon_reload_load"
step reload_cuda_fused required env GPUFIR_TEST_BACKEND=cuda GPUFIR_TEST_RELOAD_TAPS=4095 \
	GPUFIR_TEST_RELOAD_BLOCK=64 "$root/scripts/with-jackd.sh" "$build/tests/test_daemon_reload_load"
step reload_cuda_persist required env GPUFIR_TEST_BACKEND=cuda GPUFIR_TEST_GPU_PATH=persistent GPUFIR_TEST_RELOAD_TAPS=4095 \
	GPUFIR_TEST_RELOAD_BLOCK=64 "$root/scripts/with-jackd.sh" "$build/tests/test_daemon_reload_load"
step crossover_cuda required env GPUFIR_TEST_BACKEND=cuda \
	"$root/scripts/with-jackd.sh" "$build/tests/test_daemon_crossover"
step hang_cuda required env GPUFIR_TEST_BACKEND=cuda "$root/scripts/with-jackd.sh" "$build/tests/test_daemon_hang"
step suppress_cuda required "$root/scripts/with-jackd.sh" "$build/tests/test_daemon_suppress_gpu"
step hang_cuda_persist optional env GPUFIR_TEST_BACKEND=cuda GPUFIR_TEST_GPU_PATH=persistent \
	"$root/scripts/with-jackd.sh" "$build/tests/test_daemon_hang"
step cuda_startup required "$root/scripts/check-cuda-startup.sh" "$build" "$logs/startup-work"
step bench_live required "$build/bench/bench_live" --backend cuda --blocks "${GPU_CHECK_BLOCKS:-20000}" \
	--trial "${GPU_CHECK_TRIAL_S:-1}" ${GPU_CHECK_BENCH_ARGS:-}
step bench_live_persist optional "$build/bench/bench_live" --backend cuda --gpu-path persistent \
	--blocks "${GPU_CHECK_BLOCKS:-20000}" --sizes 64,128 --no-capacity --no-floor
# racecheck reports hazards on shared memory. Instrumenting every kernel (cuFFT's
# included) never finished the quick set in 40-343 s; so it checks, one run each,
# the kernels of ours that use shared memory, on a set of few calls of each of
# their shapes, and runs the rest uninstrumented.
racecheck_shared() {
	local k rc=0
	for k in k_direct k_mac k_live; do
		echo "== racecheck, kernels named *$k*"
		env GPUFIR_GPU_TEST_QUICK=race compute-sanitizer --tool racecheck \
			--kernel-name "kns=$k" --error-exitcode 9 "$1" || rc=$?
	done
	return $rc
}
if [ "${GPU_CHECK_SANITIZE:-0}" = 1 ]; then
	# Under the sanitizer, work behind a persistent kernel never completes (docs/cuda.md).
	step memcheck required env GPUFIR_GPU_TEST_QUICK=1 GPUFIR_GPU_TEST_NO_PERSIST=1 compute-sanitizer \
		--tool memcheck --leak-check full --error-exitcode 9 "$build/tests/test_gpu_engine"
	step racecheck required racecheck_shared "$build/tests/test_gpu_engine"
fi
if command -v cyclictest >/dev/null 2>&1; then
	step cyclictest optional cyclictest -m -p 90 -t 2 -a -i 1000 -D "${GPU_CHECK_CYCLIC_S:-60}" -q -h 30000
fi
exit $failed
