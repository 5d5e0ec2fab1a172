#!/usr/bin/env bash
# Installs every Debian package that gantry's build and tests need. Idempotent: packages that are
# already installed are skipped, so `make demo` / `make test` can call it every time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libcaf-dev            # CAF 0.17.6 (actor framework)
  libtorch-dev          # LibTorch 1.13 (CPU)
  libopenblas0-serial   # an optimized BLAS behind LibTorch (Debian links it to the 10x slower reference BLAS)
  librocksdb-dev        # RocksDB 7.8
  libzmq3-dev cppzmq-dev
  catch2                # Catch2 v2
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
