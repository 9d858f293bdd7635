#!/bin/sh
# Prints the slowest tests of the ctest runs in a build folder, from CTest's
# own log of the latest (Testing/Temporary/LastTest.log) and the logs of
# earlier runs kept beside it as LastTest-*.log (scripts/test.sh keeps one
# where a tree's tests run in two passes), slowest first:
#   scripts/slowest-tests.sh build [COUNT]     (COUNT: 10)
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [COUNT]" >&2
	exit 2
fi
dir=$1/Testing/Temporary
count=${2:-10}
if [ ! -r "$dir/LastTest.log" ]; then
	echo "slowest-tests.sh: no test log in $1 ($dir/LastTest.log)" >&2
	exit 1
fi
echo "The $count slowest tests in $1:"
# Each test's entry names it ("N/M Test: NAME") before its time ("Test time = S sec").
awk '/^[0-9]+\/[0-9]+ Test: / { name = $3 }
     /^Test time = / && name != "" { printf "%10.2f s  %s\n", $4, name; name = "" }' "$dir"/LastTest*.log |
	sort -rn | head -n "$count"
