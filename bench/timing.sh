# Timing for the benchmark scripts (sourced). The caller sets WORK (logs go
# there), SAMPLES (frames x channels of one run) and RESULTS (a file the
# results are appended to; /dev/null for none), and may set BENCH_PREP (a
# command run before each timed run) or define its own record() after this.

now() { date +%s.%N; }

# Prints "RESULT NAME SECONDS MSAMPLES/S", appends it to $RESULTS and keeps
# the seconds in T_NAME for the caller's ratios.
record() { # name seconds
	local msps
	msps=$(awk -v s="$2" -v n="$SAMPLES" 'BEGIN { printf "%.1f", n / s / 1e6 }')
	echo "RESULT $1 $2 $msps" | tee -a "$RESULTS"
	eval "T_$1=$2"
}

# Best of N runs of a command (after one untimed warm-up run when N > 1).
timed() { # name runs cmd...
	local name=$1 runs=$2 best="" t0 t1 dt i
	shift 2
	[ "$runs" -gt 1 ] && { "$@" >/dev/null 2>"$WORK/$name.err" || true; }
	for ((i = 0; i < runs; i++)); do
		${BENCH_PREP:-:}
		t0=$(now)
		if ! "$@" >"$WORK/$name.log" 2>"$WORK/$name.err"; then
			echo "FAILED $name: $(tail -3 "$WORK/$name.err" | tr '\n' ' ')" | tee -a "$RESULTS"
			return 1
		fi
		t1=$(now)
		dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
		if [ -z "$best" ] || awk -v a="$dt" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$dt; fi
	done
	record "$name" "$best"
}
