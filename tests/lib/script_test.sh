# What the shell-script tests share (sourced after they set src, the source folder):
# gf_need TOOL skips the test (77) where TOOL is missing; $dir is a temporary folder removed at
# exit; fail MESSAGE ends the test as failed.
gf_need() { command -v "$1" >/dev/null 2>&1 || { echo "SKIP: $1 not installed"; exit 77; }; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/gpufir-test-XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
