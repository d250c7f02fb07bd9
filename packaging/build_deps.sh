#!/usr/bin/env bash
# The Debian packages `make dist` needs on the build machine, installed when missing (as .ci/run does for
# the display tests): binutils (readelf, strip) and dpkg-dev for the packages, and every library the
# bundled Qt loads from the system, since packaging/deb/depends.py computes `Depends:` from `ldd` and
# stops on a library that is not installed (the list of docs/install.md, "What the system must provide").
# Installs only as root with apt-get; otherwise prints the one command to run and exits 2.
# Usage: bash packaging/build_deps.sh [--list]   (--list: print the packages and exit)
set -euo pipefail

BUILD_PACKAGES="binutils dpkg-dev libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1 libxcb-xfixes0 libxcb-xkb1
  libx11-xcb1 libxkbcommon0 libxkbcommon-x11-0 libegl1 libgl1 libfontconfig1 libfreetype6 libglib2.0-0
  libdbus-1-3 libwayland-client0 libwayland-cursor0 libwayland-egl1"

if [ "${1:-}" = "--list" ]; then
  echo $BUILD_PACKAGES
  exit 0
fi
if ! command -v dpkg >/dev/null; then
  echo "build_deps.sh: no dpkg on this machine: build with DEB=0 (the archive only)" >&2
  exit 2
fi
missing=()
for package in $BUILD_PACKAGES; do
  # Ubuntu 24.04 renamed some libraries (libglib2.0-0t64): either name installed will do
  dpkg -s "$package" >/dev/null 2>&1 || dpkg -s "${package}t64" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "build_deps.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if (timeout 600 apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
      { timeout 300 apt-get update -qq >/dev/null 2>&1 &&
        timeout 600 apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; }); then
    exit 0
  fi
  echo "build_deps.sh: apt-get could not install ${missing[*]}" >&2
  exit 2
fi
echo "build_deps.sh: not installed on the build machine: ${missing[*]}; install them with:" \
     "sudo apt-get install ${missing[*]}" >&2
exit 2
