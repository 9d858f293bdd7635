#!/usr/bin/env bash
# Fails when a C source or header differs from .clang-format's layout.
# Fix with: clang-format -i FILE. cuda/ follows the same style by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h' 'bench/*.c')
bad=0
for f in "${files[@]}"; do
	if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
		echo "not formatted: $f" >&2
		bad=1
	fi
done
exit $bad
