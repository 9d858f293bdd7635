# Sourced by the scripts: puts a CUDA toolkit in /usr/local/cuda on PATH when
# present, so CMake builds the CUDA backend; harmless without one.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	export PATH="/usr/local/cuda/bin:$PATH"
fi
