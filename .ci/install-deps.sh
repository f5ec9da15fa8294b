#!/usr/bin/env bash
# Installs the Debian packages b2nd-cpp needs to build and test, only if some are missing.
set -euo pipefail
pkgs=(cmake ninja-build g++ clang clang-format pkg-config
      libboost-dev libxtensor-dev catch2 liblz4-dev libzstd-dev zlib1g-dev libmsgpack-cxx-dev libbenchmark-dev libzfp-dev
      libmpich-dev mpich time libxxhash-dev
      libcurl4-openssl-dev nginx python3 openssl doxygen s3cmd
      libhdf5-dev python3-numpy python3-h5py python3-zarr python3-netcdf4 hdf5-filter-plugin-blosc-serial
      hdf5-filter-plugin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Test-only tools from the npm registry: s3rver, the S3 server the S3 tests start on loopback.
# (nodejs and npm are on the machine; without them the S3 tests skip, saying so.)
if command -v npm >/dev/null 2>&1 &&
   { ! command -v s3rver >/dev/null 2>&1 || [ "$(s3rver --version 2>/dev/null)" != "3.7.1" ]; }; then
  echo "installing: s3rver@3.7.1 (npm)"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo npm install -g --no-audit --no-fund s3rver@3.7.1 >/dev/null
fi
# zarrita (an independent Zarr v2/v3 implementation, sharding included) with its file-system
# store: the bridges tests read every Zarr array b2nd exports back with it.
if command -v npm >/dev/null 2>&1; then
  root=$(npm root -g)
  if ! grep -qs '"version": "0.7.5"' "$root/zarrita/package.json" ||
     [ ! -f "$root/@zarrita/storage/package.json" ]; then
    echo "installing: zarrita@0.7.5 @zarrita/storage@0.2.0 (npm)"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo npm install -g --no-audit --no-fund zarrita@0.7.5 @zarrita/storage@0.2.0 >/dev/null
  fi
fi
