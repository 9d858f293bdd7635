#!/bin/sh
# bench/bench-api-load.py's verdict, from daemon logs made up here (--from-logs): two clean runs
# get their ratio; a run with gpufir's xruns, the device's, late blocks or a latency step (an auto
# slack that grew) gets none, the report says which run, and the exit status is 1.
# Usage: test_bench_api_load.sh SOURCE_DIR. Exit 77 (skip) without python3.
set -u
src=${1:-${GPUFIR_SOURCE_DIR:-}}
[ -n "$src" ] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
. "$src/tests/lib/script_test.sh"
gf_need python3

# A stats line as the daemon logs it: xruns in, out, over; late blocks; device xruns; median us.
stats() {
	echo "gpufir: stats: running, blocks 3000, xruns in $1 out $2 over $3, late blocks $4 (0 in swaps, 0 the host's), device xruns $5, block us median $6 p99 30 max 200 over 3000 blocks, margin min 0 frames"
}
stats 0 0 0 0 0 10 >"$dir/clean.log"
stats 0 0 0 0 0 20 >"$dir/clean2.log"
{ stats 0 0 0 0 0 10; stats 0 64 0 0 0 11; } >"$dir/underrun.log"
stats 0 0 0 0 3 10 >"$dir/device.log"
stats 0 0 0 2 0 10 >"$dir/late.log"
{ echo "gpufir: latency now 512 frames (10.67 ms), was 64: device period 64, slack 7 periods (auto), resync 1"
  stats 0 0 0 0 0 10; } >"$dir/step.log"

verdict() { # QUIET LOADED WANT_STATUS WANT_TEXT
	out=$(python3 "$src/bench/bench-api-load.py" --from-logs "$dir/$1" "$dir/$2" 2>&1)
	rc=$?
	echo "$out" | tail -n 1
	[ "$rc" = "$3" ] || fail "$1 / $2: exit status $rc, want $3"
	echo "$out" | grep -q "$4" || fail "$1 / $2: no \"$4\" in the report"
}
verdict clean.log clean2.log 0 "ratio B/A: median 2.000"
verdict clean.log underrun.log 1 "no ratio: B had xruns"
verdict underrun.log clean.log 1 "no ratio: A had xruns"
verdict clean.log device.log 1 "no ratio: B had"
verdict clean.log late.log 1 "no ratio: B had"
verdict step.log clean.log 1 "no ratio: A had"
out=$(python3 "$src/bench/bench-api-load.py" --from-logs "$dir/underrun.log" "$dir/clean.log")
echo "$out" | grep -q "ratio B/A" && fail "a ratio printed for a run that glitched"
echo "$out" | grep -q "xruns in 0 out 64 device 0  late 0  latency steps 0" || fail "the glitched run's counts"
echo "test_bench_api_load: ok"
