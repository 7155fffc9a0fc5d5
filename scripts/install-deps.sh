#!/usr/bin/env bash
# Installs the Debian packages Warpbook builds and tests with. Idempotent: installs only what is
# missing. Needs root (or sudo) and Debian 12 or similar. The CUDA toolkit (NVRTC, headers) is
# not a Debian package here: install it from NVIDIA and put it under /usr/local/cuda.
set -euo pipefail
pkgs=(
  cmake ninja-build g++ pkg-config git
  libfmt-dev doctest-dev libtomlplusplus-dev nlohmann-json3-dev libcli11-dev libsqlite3-dev
  libmd4c-dev libstb-dev libglfw3-dev libimgui-dev libgl-dev fonts-dejavu-core
  xvfb x11-apps imagemagick xauth
  python3-numba
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ! -e /usr/local/cuda/include/nvrtc.h ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit (NVRTC) was not found under /usr/local/cuda; Warpbook needs it" >&2
  exit 1
fi
echo "install-deps: all packages present"
