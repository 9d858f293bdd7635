#!/usr/bin/env bash
# Offline filtering on one machine: gpufir against the I/O floor and its peers.
#
#   bench/bench-offline.sh [BUILD_DIR] [WORK_DIR] [SECONDS] [TAPS]
#
# Makes a SECONDS (600) stereo 48 kHz float32 WAV and a TAPS (65535)
# non-symmetric filter, then times, on the same file: gpufir -i -o (the CLI:
# auto, --backend cpu striped over every CPU and on one thread, --backend
# cuda), a bare libsndfile read+write copy (bench_sfcopy), fconvolver -T,
# BruteFIR ($BRUTEFIR, file I/O), SoX fir, SciPy oaconvolve and CuPy
# oaconvolve. Prints seconds, M samples/s (frames x channels / s) and ratios,
# checks gpufir's output against a float64 reference and the stripes' output
# against one thread's. Then the start-up: CUDA's steps in a fresh
# process (bench_gpu startup), with and without another process holding a
# context (what persistence mode gives), and gpufir's own set-up phases (-v).
# Run it where the GPU is (source .devdeps/use-deps.sh first on the GPU
# machine, for sox and BruteFIR). QUICK=1 skips the CPU peers and CuPy's file
# run. Many short files in one process: bench/bench-batch.sh.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-gpu}
WORK=${2:-/tmp/gpufir-bench}
SECONDS_LEN=${3:-600}
TAPS=${4:-65535}
PY=${PYTHON:-python3}
PEERS="$ROOT/bench/bench-peers.py"
mkdir -p "$WORK"
RESULTS="$WORK/results.txt"
: >"$RESULTS"
SAMPLES=$((SECONDS_LEN * 48000 * 2))

. "$ROOT/bench/timing.sh"

echo "== data: $SECONDS_LEN s stereo 48 kHz float32, $TAPS taps"
OFFSET=$($PY "$PEERS" gen "$WORK" "$SECONDS_LEN" "$TAPS") || exit 1
cat "$WORK/in.wav" >/dev/null # page cache warm for everyone
ls -l "$WORK/in.wav"

echo "== I/O floor and gpufir"
timed sfcopy 3 "$BUILD/bench/bench_sfcopy" "$WORK/in.wav" "$WORK/out_copy.wav"
if [ -x "$BUILD/src/gpufir" ]; then
	timed gpufir 3 "$BUILD/src/gpufir" -i "$WORK/in.wav" -o "$WORK/out_gpufir.wav" -c "$WORK/gpufir.conf" &&
		{ tail -2 "$WORK/gpufir.err"; $PY "$PEERS" check "$WORK" "$WORK/out_gpufir.wav" | tee -a "$RESULTS"; }
	# Where the streaming goes: auto's pick, set-up phases and each pipeline stage's busy time.
	"$BUILD/src/gpufir" -v -i "$WORK/in.wav" -o "$WORK/out_gpufir.wav" -c "$WORK/gpufir.conf" 2>&1 |
		grep -E "auto backend|stripes|offline: " | head -8
	timed gpufir_cpu 3 "$BUILD/src/gpufir" -i "$WORK/in.wav" -o "$WORK/out_gpufir_cpu.wav" -c "$WORK/gpufir.conf" \
		--backend cpu
	timed gpufir_cpu_1thread 3 "$BUILD/src/gpufir" -i "$WORK/in.wav" -o "$WORK/out_gpufir_cpu1.wav" \
		-c "$WORK/gpufir.conf" --backend cpu --threads 1
	# Stripes on every CPU give the one-thread output, sample for sample.
	$PY "$PEERS" same "$WORK/out_gpufir_cpu.wav" "$WORK/out_gpufir_cpu1.wav" | tee -a "$RESULTS"
	timed gpufir_cuda 3 "$BUILD/src/gpufir" -i "$WORK/in.wav" -o "$WORK/out_gpufir_cuda.wav" -c "$WORK/gpufir.conf" \
		--backend cuda
	# Fixed cost (process start, CUDA context, cuFFT, plans, taps): the same filter on 1 s of audio.
	$PY "$PEERS" gen "$WORK/short" 1 "$TAPS" >/dev/null
	timed gpufir_1s_file 3 "$BUILD/src/gpufir" -i "$WORK/short/in.wav" -o "$WORK/short/out.wav" -c "$WORK/gpufir.conf"
	"$BUILD/src/gpufir" -v -i "$WORK/short/in.wav" -o "$WORK/short/out.wav" -c "$WORK/gpufir.conf" 2>&1 |
		grep -i -E "cuda:|offline: " | head -5
	GPUFIR_CUDA_PREWARM=0 timed gpufir_1s_file_no_prewarm 3 "$BUILD/src/gpufir" -i "$WORK/short/in.wav" \
		-o "$WORK/short/out.wav" -c "$WORK/gpufir.conf"
	# The pipeline and engine alone: a 1-tap filter on the CPU backend (no CUDA at all).
	printf 'filters = ( { name = "one"; coeffs = [1.0]; } );\nchain = ["one"];\n' >"$WORK/one.conf"
	timed gpufir_cpu_1tap 3 "$BUILD/src/gpufir" -i "$WORK/in.wav" -o "$WORK/out_1tap.wav" -c "$WORK/one.conf" \
		--backend cpu
else
	echo "FAILED gpufir: $BUILD/src/gpufir not built" | tee -a "$RESULTS"
fi

echo "== start-up: CUDA's steps in a fresh process (bench_gpu startup)"
nvidia-smi -q 2>/dev/null | grep -i -m1 "persistence mode"
startup_run() { # label
	local t0 t1 ret
	t0=$(date +%s%N)
	GF_T0_NS=$t0 "$BUILD/bench/bench_gpu" startup >"$WORK/startup.log" 2>&1
	t1=$(date +%s%N)
	ret=$(awk '/main returns at/ { print $5 }' "$WORK/startup.log")
	sed "s/^/$1 /" "$WORK/startup.log" | grep -v "main returns"
	awk -v a="$t0" -v b="$t1" -v r="$ret" -v l="$1" 'BEGIN {
		printf "%s startup  exit (main() returns .. the shell sees it)    %8.1f ms\n", l, (b - r) / 1e6
		printf "%s startup  whole process                                 %8.1f ms\n", l, (b - a) / 1e6 }'
}
if [ -x "$BUILD/bench/bench_gpu" ]; then
	for _ in 1 2 3; do # process start and the loading of the libraries (cuFFT: 280 MB), no CUDA call
		t0=$(date +%s%N)
		"$BUILD/src/gpufir" --version >/dev/null
		t1=$(date +%s%N)
		echo "gpufir --version: $(((t1 - t0) / 1000)) us"
	done
	startup_run cold
	startup_run cold
	# Another process holds a context, as the persistence daemon would keep the driver up.
	"$BUILD/bench/bench_gpu" hold 30 >"$WORK/hold.log" 2>&1 &
	HOLD=$!
	for _ in $(seq 50); do grep -q "context open" "$WORK/hold.log" 2>/dev/null && break; sleep 0.1; done
	startup_run held
	timed gpufir_1s_file_held 3 "$BUILD/src/gpufir" -i "$WORK/short/in.wav" -o "$WORK/short/out.wav" \
		-c "$WORK/gpufir.conf"
	kill "$HOLD" 2>/dev/null
	wait "$HOLD" 2>/dev/null
fi

echo "== CPU peers"
[ "${QUICK:-0}" = 1 ] && echo "(skipped: QUICK=1)"
if [ "${QUICK:-0}" != 1 ] && command -v fconvolver >/dev/null; then
	timed fconvolver 3 fconvolver -T "$WORK/fconv.conf" "$WORK/in.wav" "$WORK/out_fconv.wav"
fi
if [ "${QUICK:-0}" != 1 ] && command -v sox >/dev/null; then
	timed sox_fir 1 sox -D -V1 "$WORK/in.wav" -e floating-point -b 32 "$WORK/out_sox.wav" fir "$WORK/taps.txt"
fi
if [ "${QUICK:-0}" != 1 ] && [ -n "${BRUTEFIR:-}" ] && [ -x "$BRUTEFIR" ]; then
	FL=8192
	BLOCKS=$(((TAPS + FL - 1) / FL))
	cat >"$WORK/brutefir.conf" <<EOF
sampling_rate: 48000;
filter_length: $FL,$BLOCKS;
float_bits: 32;
overflow_warnings: false;
show_progress: false;
allow_poll_mode: false;
monitor_rate: false;
powersave: false;
lock_memory: false;
convolver_config: "$WORK/brutefir_convolver";
modules_path: "$(dirname "$BRUTEFIR")";
coeff "h" { filename: "$WORK/taps.raw"; format: "FLOAT_LE"; };
input "l", "r" { device: "file" { path: "$WORK/in.wav"; skip: $OFFSET; }; sample: "FLOAT_LE"; channels: 2/0,1; };
output "l", "r" { device: "file" { path: "$WORK/out_brutefir.raw"; }; sample: "FLOAT_LE"; channels: 2/0,1; };
filter "fl" { from_inputs: "l"; to_outputs: "l"; coeff: "h"; };
filter "fr" { from_inputs: "r"; to_outputs: "r"; coeff: "h"; };
EOF
	# The first run plans the FFTs (FFTW wisdom goes to convolver_config): untimed.
	timeout 60 "$BRUTEFIR" -nodefault -quiet "$WORK/brutefir.conf" >"$WORK/brutefir_plan.log" 2>&1 ||
		echo "brutefir planning run: $(tail -2 "$WORK/brutefir_plan.log" | tr '\n' ' ')"
	timed brutefir 1 "$BRUTEFIR" -nodefault -quiet "$WORK/brutefir.conf"
	ls -l "$WORK/out_brutefir.raw" 2>/dev/null
fi
for peer in $([ "${QUICK:-0}" = 1 ] || echo scipy cupy); do
	t0=$(now)
	$PY "$PEERS" "$peer" "$WORK" 2>"$WORK/$peer.err" | tee -a "$RESULTS" || echo "FAILED $peer: $(tail -2 "$WORK/$peer.err")"
done
$PY "$PEERS" cupy-sweep "$WORK" 2>"$WORK/cupy-sweep.err" | tee -a "$RESULTS"

echo "== summary (M samples/s = frames x channels / s; ratio = time / gpufir time)"
awk '
	$1 == "RESULT" { t[$2] = $3; m[$2] = $4; order[n++] = $2 }
	END {
		g = t["gpufir"]; c = t["sfcopy"]
		for (i = 0; i < n; i++) {
			k = order[i]
			printf "%-28s %9.3f s %9.1f Msamples/s", k, t[k], m[k]
			if (g > 0) printf "   x%.2f of gpufir", t[k] / g
			printf "\n"
		}
		if (g > 0 && c > 0) printf "gpufir / bare copy = %.2f (target <= 1.3)\n", g / c
		s1 = t["gpufir_1s_file"]
		if (g > 0 && c > 0 && s1 > 0) printf "gpufir less its fixed cost (1 s file: %.3f s) / bare copy = %.2f\n", s1, (g - s1) / c
		best = ""
		split("fconvolver sox_fir brutefir scipy_oaconvolve_file", cpu, " ")
		for (i in cpu) if (cpu[i] in t && (best == "" || t[cpu[i]] < t[best])) best = cpu[i]
		if (g > 0 && best != "") printf "fastest CPU peer %s: %.1fx slower than gpufir (target >= 20)\n", best, t[best] / g
	}' "$RESULTS"
