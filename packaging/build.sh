#!/usr/bin/env bash
# Build the standalone bundle: dist/stormbound/, dist/stormbound-<version>-linux-x86_64.tar.gz and the
# Debian packages dist/stormbound_<version>_amd64.deb and dist/stormbound-spark_<version>_amd64.deb.
# Usage: bash packaging/build.sh   (from any folder; `make dist` installs PyInstaller first)
# PYTHON=... picks the interpreter (default .venv/bin/python); CLEAN=1 empties PyInstaller's cache.
set -euo pipefail
cd "$(dirname "$0")/.."

# the Debian packages the build needs (the libraries Qt loads, readelf, dpkg-dev): installed when missing,
# as root with apt-get, so that `make dist` stays one command on a fresh machine
if [ "${DEB:-1}" = "1" ]; then
  bash packaging/build_deps.sh
fi

PY="${PYTHON:-.venv/bin/python}"
if ! "$PY" -c "import PyInstaller" 2>/dev/null; then
  echo "build.sh: PyInstaller is not installed in $PY; run 'make dist' (installs .[dist])" >&2
  exit 2
fi
VERSION="$("$PY" -c 'import app; print(app.__version__)')"
ARCH="$(uname -m)"
ARCHIVE="dist/stormbound-${VERSION}-linux-${ARCH}.tar.gz"

clean_flag=()
if [ "${CLEAN:-0}" = "1" ]; then clean_flag=(--clean); fi

"$PY" -m PyInstaller --noconfirm "${clean_flag[@]}" --log-level WARN \
  --distpath dist --workpath build/pyinstaller packaging/stormbound.spec

# The interpreter built from source (pyenv) carries debug info and symbol tables: ~20 MB
# that users never need. Strip only Python's own files: libraries repaired by auditwheel
# (numpy, PySide6, z3) can break when stripped. The same files name the build machine's
# pyenv folder as RUNPATH: dropped (packaging/elf_runpath.py).
PYTHON_OWN=(dist/stormbound/_internal/libpython3*.so* dist/stormbound/_internal/python3*/lib-dynload/*.so)
if command -v strip >/dev/null; then
  strip --strip-unneeded "${PYTHON_OWN[@]}"
fi
"$PY" packaging/elf_runpath.py "${PYTHON_OWN[@]}" >/dev/null

# tar stores symlinks as symlinks (no -h), so Qt's library links survive.
rm -f "$ARCHIVE"
tar -C dist -czf "$ARCHIVE" stormbound

echo "bundle:  dist/stormbound/ ($(du -sh dist/stormbound | cut -f1))"
echo "archive: $ARCHIVE ($(du -sh "$ARCHIVE" | cut -f1))"

# The Debian packages (dpkg-deb; packaging/deb/build_deb.py). DEB=0 skips them (a
# non-Debian build machine); SPARK_DEB=0 builds only the app package.
if [ "${DEB:-1}" = "1" ]; then
  spark_flag=()
  if [ "${SPARK_DEB:-1}" = "0" ]; then spark_flag=(--no-spark); fi
  "$PY" packaging/deb/build_deb.py "${spark_flag[@]}"
fi
