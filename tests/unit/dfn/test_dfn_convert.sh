#!/bin/sh
# scripts/dfn-convert.py: the official DeepFilterNet3 tarball converts into a file the
# engine loads and runs (test_dfn_nonfinite on it); a model whose config.ini the engine
# does not implement, and one with a corrupt graph, are refused with what is wrong. Skips (77) without the
# tarball (scripts/install-deepfilter.sh) or a Python with onnx and numpy
# (GPUFIR_DFN_PYTHON names one; else the venv scripts/install-deepfilter.sh made, else python3).
set -eu
dir=${GPUFIR_DEEPFILTER_DIR:-$GPUFIR_BINARY_DIR/deepfilter}
py=${GPUFIR_DFN_PYTHON:-python3}
[ -z "${GPUFIR_DFN_PYTHON:-}" ] && [ -x "$dir/venv/bin/python" ] && py=$dir/venv/bin/python
tarball=$dir/DeepFilterNet3_onnx.tar.gz
if [ ! -r "$tarball" ]; then
	echo "skipped: no $tarball (scripts/install-deepfilter.sh)"
	exit 77
fi
if ! "$py" -c 'import onnx, numpy' 2>/dev/null; then
	echo "skipped: $py has no onnx and numpy (set GPUFIR_DFN_PYTHON)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
convert="$GPUFIR_SOURCE_DIR/scripts/dfn-convert.py"

# refused WHAT PATTERN: $tmp/x, packed again, must not convert, with PATTERN in the message and no file.
refused() {
	(cd "$tmp/x" && tar -czf "$tmp/in.tar.gz" .)
	if "$py" "$convert" "$tmp/in.tar.gz" "$tmp/out.dfn" 2>"$tmp/err"; then
		echo "FAIL: $1 was converted"
		exit 1
	fi
	cat "$tmp/err"
	grep -q "$2" "$tmp/err"
	test ! -e "$tmp/out.dfn"
}

"$py" "$convert" "$tarball" "$tmp/ok.dfn"
GPUFIR_DFN_MODEL="$tmp/ok.dfn" "$GPUFIR_BINARY_DIR/tests/test_dfn_nonfinite"

mkdir "$tmp/x"
tar -xzf "$tarball" -C "$tmp/x"
ini=$(find "$tmp/x" -name config.ini)
sed -i 's/^sr = 48000$/sr = 44100/' "$ini"
refused "a 44.1 kHz config.ini" '\[df\] sr = 44100'

sed -i 's/^sr = 44100$/sr = 48000/' "$ini"
echo junk >"$(find "$tmp/x" -name enc.onnx)"
refused "a corrupt enc.onnx" 'enc.onnx is not a readable ONNX model'
echo ok
