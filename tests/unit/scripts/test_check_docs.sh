#!/bin/sh
# scripts/check-docs.sh: the project's own docs cite only commits in its history; and, on a
# repository made up here, a citation of a commit git has passes, one of a commit it lacks fails
# naming the file and line, numbers and hex-looking words are not citations, and a shallow
# clone notes the commits past its depth instead of failing.
# Usage: test_check_docs.sh SOURCE_DIR. Exit 77 (skip) without git or outside a git work tree.
set -u
src=${1:-${GPUFIR_SOURCE_DIR:-}}
[ -n "$src" ] || { echo "usage: $0 SOURCE_DIR" >&2; exit 2; }
. "$src/tests/lib/script_test.sh"
gf_need git

# The project's docs, where the source is a git work tree with its history.
bash "$src/scripts/check-docs.sh"
rc=$?
[ "$rc" = 77 ] && { echo "SKIP: $src is not a git work tree"; exit 77; }
[ "$rc" = 0 ] || fail "the project's docs cite commits not in its history (listed above)"

# A made-up repository: two commits, the script beside them.
repo=$dir/repo
mkdir -p "$repo/scripts" "$repo/docs"
cp "$src/scripts/check-docs.sh" "$repo/scripts/"
g() { git -C "$repo" -c user.name=test -c user.email=test@example.invalid "$@"; }
g init -q && g add scripts && g commit -q -m first || fail "git init"
first=$(g rev-parse --short=7 HEAD)
# A citation holds a letter and a digit (check-docs.sh); one short hash in 27 holds no letter:
# commit again until this one reads as a citation.
n=0
until printf '%s' "$first" | grep -q '[a-f]' && printf '%s' "$first" | grep -q '[0-9]'; do
	n=$((n + 1))
	g commit -q --amend -m "first $n" || fail "git commit --amend"
	first=$(g rev-parse --short=7 HEAD)
done
echo "a" >"$repo/a" && g add a && g commit -q -m second || fail "git commit"
second=$(g rev-parse HEAD)
check() { # WANT_STATUS FILE...: runs the check on FILEs of the made-up repository
	want=$1
	shift
	out=$(bash "$repo/scripts/check-docs.sh" "$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] || fail "check-docs $*: exit status $rc, want $want: $out"
}

printf '# ok\nMeasured on tree %s+ and commit %s (`cmd`).\n' "$first" "$second" >"$repo/docs/ok.md"
check 0 docs/ok.md
printf '# numbers\n1048575 taps, 3600000 ms, a facade, deadbeef and 0x7fffffff.\n' >"$repo/docs/numbers.md"
check 0 docs/numbers.md
printf '# bad\nfine %s\nline three: tree 0123abc (`cmd`)\n' "$first" >"$repo/docs/bad.md"
check 1 docs/ok.md docs/bad.md
echo "$out" | grep -q "docs/bad.md:3: cites 0123abc" || fail "no FILE:LINE for the missing commit: $out"
echo "$out" | grep -q "docs/ok.md" && fail "a good file reported: $out"
check 1 docs/missing.md # a file that cannot be read is a failure, not a pass

# A shallow clone of depth 1 lacks the first commit: a note, not a failure.
git clone -q --depth 1 "file://$repo" "$dir/shallow" || fail "git clone --depth 1"
cp "$repo/docs/ok.md" "$dir/shallow/docs.md"
out=$(bash "$dir/shallow/scripts/check-docs.sh" docs.md 2>&1)
rc=$?
[ "$rc" = 0 ] || fail "shallow clone: exit status $rc, want 0: $out"
echo "$out" | grep -q "note: docs.md:2: $first is not in this shallow clone" || fail "shallow clone: no note: $out"

# Outside a git work tree nothing can be checked.
mkdir -p "$dir/plain/scripts" && cp "$src/scripts/check-docs.sh" "$dir/plain/scripts/"
GIT_CEILING_DIRECTORIES=$dir bash "$dir/plain/scripts/check-docs.sh" >/dev/null 2>&1
rc=$?
[ "$rc" = 77 ] || fail "outside a work tree: exit status $rc, want 77"
echo "test_check_docs: ok"
