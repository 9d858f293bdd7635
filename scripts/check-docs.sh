#!/usr/bin/env bash
# Fails when a document cites a commit that is not in this repository's history: a figure
# must name a tree that anyone with a clone can check out and measure again.
#
#   scripts/check-docs.sh [FILE...]      (default: README.md and docs/*.md)
#
# A citation is a word of 7 to 40 hex digits holding both a letter and a digit (`tree
# 3de2287+`, `commit 8efe459`), so tap counts such as 1048575 and words such as "facade" are
# not taken for one. Another project's commit is written OWNER/REPO@HASH and a digest cut
# short ends in "…" (`sha256 154f15e3…9f753e`): neither is this repository's. Exit status: 0 when git has every cited commit; 1 when it lacks one (each
# printed as FILE:LINE); 77 outside a git work tree (a source tarball: nothing to check
# against). In a shallow clone a commit git lacks may lie past the clone's depth: it is
# printed as a note, not a failure, and the rest is still checked.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "check-docs: not a git work tree: no history to check the citations against" >&2
	exit 77
fi
shallow=$(git rev-parse --is-shallow-repository 2>/dev/null)
[ $# -gt 0 ] || set -- README.md docs/*.md

bad=0
missing=0
cited=0
for f in "$@"; do
	[ -r "$f" ] || { echo "check-docs: cannot read $f" >&2; bad=1; continue; }
	while IFS=: read -r line word; do
		case $word in @* | *…) continue ;; esac
		case $word in *[0-9]*) ;; *) continue ;; esac
		case $word in *[a-f]*) ;; *) continue ;; esac
		cited=$((cited + 1))
		git cat-file -e "$word^{commit}" 2>/dev/null && continue
		missing=$((missing + 1))
		if [ "$shallow" = true ]; then
			echo "check-docs: note: $f:$line: $word is not in this shallow clone; not checked" >&2
		else
			echo "$f:$line: cites $word, which is not a commit in this repository's history" >&2
			bad=1
		fi
	done < <(grep -noE '@?\b[0-9a-f]{7,40}\b(…)?' "$f")
done
if [ "$bad" = 0 ]; then
	note=""
	[ "$missing" -gt 0 ] && note=", $missing past the shallow clone's depth not checked"
	echo "check-docs: $cited commit citations in $# files$note"
fi
exit $bad
