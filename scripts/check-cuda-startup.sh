#!/usr/bin/env bash
# The lazily loaded CUDA module and auto by cost, on a machine with a GPU:
#
#   scripts/check-cuda-startup.sh BUILD [WORK_DIR]
#
# 1. gpufir links neither libcudart nor libcufft; a CPU run opens neither (strace,
#    when installed); the module loads for --backend cuda.
# 2. With an empty cost cache, auto on a 5 s stereo file at 4095 taps picks the CPU
#    "by default"; a --backend cuda run then measures CUDA's start-up into the cache.
# 3. Whole processes, RUNS (10) each, median: --backend cuda against --backend cpu on
#    that file (their difference is the real start-up, to compare with the cache's
#    figure), and auto against cpu (target: auto <= 1.1x cpu).
# 4. auto on a LONG (600) s file at 65535 taps: whichever backend it picks, its whole
#    process takes at most 1.1x the faster of --backend cpu and --backend cuda (3 runs
#    each, median). Which one wins depends on the machine: many cores can beat the
#    GPU's start-up on a file of this size.
# Prints "CHECK name ok|FAILED" and "FIGURE name value" lines; exit 1 if a check failed.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: $0 BUILD [WORK_DIR]}" && pwd) || exit 2
WORK=${2:-/tmp/gpufir-check-startup}
RUNS=${RUNS:-10}
LONG=${LONG:-600}
G="$BUILD/src/gpufir"
PY=python3
"$PY" -c "import numpy, scipy" 2>/dev/null || PY=/usr/bin/python3
mkdir -p "$WORK"
export GPUFIR_COST_CACHE="$WORK/costs"
rm -f "$GPUFIR_COST_CACHE"
failed=0
check() { # name command...
	local name=$1
	shift
	if "$@"; then echo "CHECK $name ok"; else echo "CHECK $name FAILED"; failed=1; fi
}
# Median wall time in ms of RUNS runs of a command.
median_ms() {
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000))
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%.1f", v[int((NR + 1) / 2)] / 1000 }'
}

[ -f "$WORK/corpus/c0000.wav" ] || "$PY" "$ROOT/bench/bench-peers.py" corpus "$WORK" 1 5 4095 >/dev/null || exit 1
F="$WORK/corpus/c0000.wav"
C="$WORK/gpufir.conf"

check no_cuda_linked sh -c "! ldd '$G' | grep -E 'libcudart|libcufft'"
check module_beside [ -f "$BUILD/src/libgpufir-cuda.so" ]
if command -v strace >/dev/null; then
	strace -f -e trace=openat "$G" -q --backend cpu -c "$C" -i "$F" -o "$WORK/o.wav" 2>"$WORK/strace.log"
	check cpu_run_maps_no_cuda sh -c "! grep -v ENOENT '$WORK/strace.log' | grep -E 'libcudart|libcufft|libgpufir-cuda'"
fi
"$G" -v -c "$C" -i "$F" -o "$WORK/o.wav" >"$WORK/auto1.log" 2>&1
check auto_small_cpu_by_default grep -q "auto backend by cost: cpu: .*by default" "$WORK/auto1.log"
check auto_small_no_module sh -c "! grep -q 'loaded the CUDA backend' '$WORK/auto1.log'"
"$G" -v --backend cuda -c "$C" -i "$F" -o "$WORK/o.wav" >"$WORK/cuda1.log" 2>&1
check cuda_runs grep -q "cuda backend" "$WORK/cuda1.log"
check cache_written grep -qs "^gpu_startup_ms " "$GPUFIR_COST_CACHE"
echo "FIGURE cache_after_one_cuda_run $(tr '\n' ' ' 2>/dev/null <"$GPUFIR_COST_CACHE")"

cpu=$(median_ms "$G" -q --backend cpu -c "$C" -i "$F" -o "$WORK/o.wav")
cuda=$(median_ms "$G" -q --backend cuda -c "$C" -i "$F" -o "$WORK/o.wav")
echo "FIGURE whole_process_ms_cpu $cpu"
echo "FIGURE whole_process_ms_cuda $cuda"
echo "FIGURE real_startup_ms(cuda-cpu) $(awk -v a="$cuda" -v b="$cpu" 'BEGIN { printf "%.1f", a - b }')"
echo "FIGURE cache_after_runs $(tr '\n' ' ' 2>/dev/null <"$GPUFIR_COST_CACHE")"
"$G" -v -c "$C" -i "$F" -o "$WORK/o.wav" >"$WORK/auto2.log" 2>&1
check auto_small_cpu_measured grep -q "auto backend by cost: cpu: .*measured here" "$WORK/auto2.log"
auto=$(median_ms "$G" -q -c "$C" -i "$F" -o "$WORK/o.wav")
cpu=$(median_ms "$G" -q --backend cpu -c "$C" -i "$F" -o "$WORK/o.wav")
echo "FIGURE auto_ms $auto cpu_ms $cpu ratio $(awk -v a="$auto" -v b="$cpu" 'BEGIN { printf "%.2f", a / b }')"
check auto_within_1.1x_cpu awk -v a="$auto" -v b="$cpu" 'BEGIN { exit !(a <= 1.1 * b) }'

if [ "$LONG" != 0 ]; then
	[ -f "$WORK/long/in.wav" ] || "$PY" "$ROOT/bench/bench-peers.py" gen "$WORK/long" "$LONG" 65535 >/dev/null || exit 1
	L=(-c "$WORK/long/gpufir.conf" -i "$WORK/long/in.wav" -o "$WORK/long/out.wav")
	"$G" -v "${L[@]}" >"$WORK/long.log" 2>&1
	grep -m1 "auto backend by cost" "$WORK/long.log" | sed 's/^/FIGURE long_choice /'
	lcpu=$(RUNS=3 median_ms "$G" -q --backend cpu "${L[@]}")
	lcuda=$(RUNS=3 median_ms "$G" -q --backend cuda "${L[@]}")
	lauto=$(RUNS=3 median_ms "$G" -q "${L[@]}")
	echo "FIGURE long_ms auto $lauto cpu $lcpu cuda $lcuda"
	check auto_long_within_1.1x_best awk -v a="$lauto" -v c="$lcpu" -v g="$lcuda" \
		'BEGIN { b = c < g ? c : g; exit !(a <= 1.1 * b) }'
fi
exit $failed
