#!/usr/bin/env bash
# Installs the Debian packages gpufir builds, tests and benchmarks with.
# The CUDA toolkit is optional (the CPU backend works without it); when nvcc is
# on PATH or in /usr/local/cuda, the CUDA backend is built too.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
pkgs=(build-essential cmake pkg-config
      libsndfile1-dev libconfig-dev portaudio19-dev libsystemd-dev libfftw3-dev
      libsamplerate0-dev libjansson-dev libwebsockets-dev
      jackd2 libjack-jackd2-dev systemd
      pipewire pipewire-bin pipewire-jack wireplumber dbus
      libpipewire-0.3-dev pipewire-pulse pulseaudio-utils
      sox jconvolver hyperfine espeak-ng python3 python3-numpy python3-scipy
      python3-pip curl clang clang-format libclang-rt-14-dev valgrind
      libxml2-utils chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	$SUDO apt-get update -qq
	# jackd2 asks whether to enable real-time priority: answer for it.
	echo "jackd2 jackd/tweak_rt_limits boolean false" | $SUDO debconf-set-selections
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
