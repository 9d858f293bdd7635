#!/usr/bin/env bash
# Offline at corpus scale, with the peers in the same run:
#
#   bench/bench-batch.sh [BUILD_DIR] [WORK_DIR] [FILES] [SECONDS] [TAPS]
#
# Makes FILES (200) stereo 48 kHz float32 WAVs of SECONDS (5) each and a TAPS
# (4095) filter, then times, best of RUNS (3) after a warm-up:
#   - the floor: bench_sfcopy copying the corpus in one process (1 thread and
#     one per CPU);
#   - gpufir --batch (auto: the GPU where one is usable) and --batch --backend cpu;
#   - gpufir --batch --gpu all (every GPU of the host);
#   - one process per file, as a shell loop does it: gpufir (auto, run once), gpufir
#     --backend cpu, fconvolver -T, and with xargs -P (one per CPU);
#   - one 5 s file: auto against --backend cpu (target: auto <= 1.1x cpu).
# Prints "RESULT name seconds per_file_ms" lines and a Markdown table (the one
# file's rows are medians of interleaved rounds where hyperfine is missing); checks
# that the batch's outputs equal the per-file runs' samples (CPU backend).
# RUNS=N sets the repetitions. One long file on every backend and against the
# peers: bench/bench-offline.sh.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
WORK=${2:-/tmp/gpufir-bench-batch}
FILES=${3:-200}
SECS=${4:-5}
TAPS=${5:-4095}
RUNS=${RUNS:-3}
PY=${PYTHON:-python3}
if ! "$PY" -c "import numpy, scipy" 2>/dev/null; then PY=/usr/bin/python3; fi
PEERS="$ROOT/bench/bench-peers.py"
G="$BUILD/src/gpufir"
CPUS=$(nproc)
mkdir -p "$WORK"
RESULTS="$WORK/results.txt"
: >"$RESULTS"

. "$ROOT/bench/timing.sh"
fresh_out() { rm -rf "$WORK/out" && mkdir -p "$WORK/out"; }
BENCH_PREP=fresh_out
# RESULT lines here carry ms per file: timed_files NAME FILES CMD... (RUNS runs).
record() { # name seconds
	local ms
	ms=$(awk -v s="$2" -v n="$PER_FILES" 'BEGIN { printf "%.2f", 1000 * s / n }')
	echo "RESULT $1 $2 $ms" | tee -a "$RESULTS"
}
timed_files() { # name files cmd...
	local name=$1
	PER_FILES=$2
	shift 2
	timed "$name" "$RUNS" "$@"
}
loop_gpufir() { # extra args...
	for f in "$WORK"/corpus/*.wav; do "$G" -q -c "$WORK/gpufir.conf" "$@" -i "$f" -o "$WORK/out/${f##*/}" || return 1; done
}
loop_fconvolver() {
	for f in "$WORK"/corpus/*.wav; do fconvolver -T "$WORK/fconv.conf" "$f" "$WORK/out/${f##*/}" >/dev/null || return 1; done
}
# Without hyperfine: ROUNDS rounds, each running auto, --backend cpu and
# fconvolver once (interleaved, so a burst of load hits all alike); the
# median of each and auto's ratio to the CPU backend (target <= 1.1x).
one_file_medians() { # file rounds
	local f=$1 rounds=$2 r t0 t1
	local -a names=(one_gpufir_auto one_gpufir_cpu) cmds
	cmds=("$G -q -c $WORK/gpufir.conf -i $f -o $WORK/one_auto.wav"
		"$G -q -c $WORK/gpufir.conf --backend cpu -i $f -o $WORK/one_cpu.wav")
	if command -v fconvolver >/dev/null; then
		names+=(one_fconvolver)
		cmds+=("fconvolver -T $WORK/fconv.conf $f $WORK/one_fconv.wav")
	fi
	rm -f "$WORK"/one_*.ns
	for ((r = 0; r < rounds; r++)); do
		for k in "${!cmds[@]}"; do
			t0=$(date +%s%N)
			${cmds[$k]} >/dev/null 2>&1
			t1=$(date +%s%N)
			echo $((t1 - t0)) >>"$WORK/${names[$k]}.ns"
		done
	done
	for k in "${!names[@]}"; do
		sort -n "$WORK/${names[$k]}.ns" | awk -v n="${names[$k]}" '{ v[NR] = $1 }
			END { s = v[int((NR + 1) / 2)] / 1e9; printf "RESULT %s %.4f %.2f\n", n, s, s * 1e3 }'
	done | tee -a "$RESULTS"
	awk '/^RESULT one_gpufir_auto / { a = $3 } /^RESULT one_gpufir_cpu / { c = $3 }
		END { if (c > 0) printf "RATIO one file: auto %.2fx --backend cpu (median of the rounds)\n", a / c }' \
		"$RESULTS" | tee -a "$RESULTS"
}
export G WORK
parallel_gpufir() { # extra args... (one process per file, CPUS at a time)
	ls "$WORK"/corpus/*.wav | xargs -P "$CPUS" -I{} sh -c 'f={}; "$G" -q -c "$WORK/gpufir.conf" "$@" -i "$f" -o "$WORK/out/${f##*/}"' sh "$@"
}
parallel_fconvolver() {
	ls "$WORK"/corpus/*.wav | xargs -P "$CPUS" -I{} sh -c 'f={}; fconvolver -T "$WORK/fconv.conf" "$f" "$WORK/out/${f##*/}" >/dev/null'
}

echo "== $(date -u +%F) $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) on $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sed 's/^/   GPU: /'
echo "== corpus: $FILES x $SECS s stereo 48 kHz float32, $TAPS taps"
[ -f "$WORK/corpus/c$(printf %04d $((FILES - 1))).wav" ] && [ -f "$WORK/fconv.conf" ] ||
	"$PY" "$PEERS" corpus "$WORK" "$FILES" "$SECS" "$TAPS" || exit 1
cat "$WORK"/corpus/*.wav >/dev/null # page cache warm for everyone

timed_files sfcopy_1proc_1thread "$FILES" "$BUILD/bench/bench_sfcopy" -d "$WORK/out" "$WORK"/corpus/*.wav
timed_files sfcopy_1proc_${CPUS}threads "$FILES" "$BUILD/bench/bench_sfcopy" -d "$WORK/out" -j "$CPUS" "$WORK"/corpus/*.wav
timed_files gpufir_batch_auto "$FILES" "$G" -c "$WORK/gpufir.conf" --batch "$WORK/list.txt" -o "$WORK/out/" &&
	tail -1 "$WORK/gpufir_batch_auto.err"
timed_files gpufir_batch_gpu_all "$FILES" "$G" -c "$WORK/gpufir.conf" --batch "$WORK/list.txt" -o "$WORK/out/" --gpu all &&
	tail -1 "$WORK/gpufir_batch_gpu_all.err"
timed_files gpufir_batch_cpu "$FILES" "$G" -c "$WORK/gpufir.conf" --batch "$WORK/list.txt" -o "$WORK/out/" --backend cpu &&
	tail -1 "$WORK/gpufir_batch_cpu.err"
# The batch equals the per-file runs (CPU backend: deterministic), sample for sample.
mkdir -p "$WORK/check_b" "$WORK/check_f"
"$G" -q -c "$WORK/gpufir.conf" --backend cpu --batch "$WORK/list.txt" -o "$WORK/check_b/"
for i in 0000 0001 $(printf %04d $((FILES - 1))); do
	"$G" -q -c "$WORK/gpufir.conf" --backend cpu -i "$WORK/corpus/c$i.wav" -o "$WORK/check_f/c$i.wav"
	"$PY" "$PEERS" same "$WORK/check_b/c$i.wav" "$WORK/check_f/c$i.wav" | tee -a "$RESULTS"
done

RUNS=1 timed_files loop_gpufir_auto "$FILES" loop_gpufir # 0.36 s a file on a GPU: once
timed_files loop_gpufir_cpu "$FILES" loop_gpufir --backend cpu
command -v fconvolver >/dev/null && timed_files loop_fconvolver "$FILES" loop_fconvolver
timed_files xargs_P${CPUS}_gpufir_cpu "$FILES" parallel_gpufir --backend cpu
command -v fconvolver >/dev/null && timed_files xargs_P${CPUS}_fconvolver "$FILES" parallel_fconvolver

echo "== one $SECS s file: auto against --backend cpu (hyperfine where present)"
F1="$WORK/corpus/c0000.wav"
FCONV=$(command -v fconvolver)
if command -v hyperfine >/dev/null; then
	hyperfine -N -w 3 -r 20 --export-markdown "$WORK/one_file.md" \
		"$G -q -c $WORK/gpufir.conf -i $F1 -o $WORK/one_auto.wav" \
		"$G -q -c $WORK/gpufir.conf --backend cpu -i $F1 -o $WORK/one_cpu.wav" \
		${FCONV:+"fconvolver -T $WORK/fconv.conf $F1 $WORK/one_fconv.wav"} 2>&1 | grep -E "Benchmark|Time" | tee -a "$RESULTS"
	cat "$WORK/one_file.md"
else
	one_file_medians "$F1" 21
fi
"$G" -v -c "$WORK/gpufir.conf" -i "$F1" -o "$WORK/one_auto.wav" 2>&1 | grep -E "engine:|auto" | head -3

echo "== summary (seconds; ms per file)"
echo "| run | s | ms/file |"
echo "| --- | ---: | ---: |"
awk '/^RESULT/ { printf "| %s | %s | %s |\n", $2, $3, $4 }' "$RESULTS"
