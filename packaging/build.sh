#!/usr/bin/env bash
# Build the standalone bundle: dist/stormbound/ and dist/stormbound-<version>-linux-x86_64.tar.gz.
# Usage: bash packaging/build.sh   (from any folder; `make dist` installs PyInstaller first)
# PYTHON=... picks the interpreter (default .venv/bin/python); CLEAN=1 empties PyInstaller's cache.
set -euo pipefail
cd "$(dirname "$0")/.."

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

# The interpreter built from source (pyenv) carries debug info: ~20 MB that users
# never need. Strip only Python's own files: libraries repaired by auditwheel
# (numpy, PySide6, z3) can break when stripped.
if command -v strip >/dev/null; then
  find dist/stormbound/_internal -maxdepth 1 -name 'libpython3*.so*' -type f -exec strip --strip-debug {} +
  find dist/stormbound/_internal/python3*/lib-dynload -name '*.so' -type f -exec strip --strip-debug {} +
fi

# tar stores symlinks as symlinks (no -h), so Qt's library links survive.
rm -f "$ARCHIVE"
tar -C dist -czf "$ARCHIVE" stormbound

echo "bundle:  dist/stormbound/ ($(du -sh dist/stormbound | cut -f1))"
echo "archive: $ARCHIVE ($(du -sh "$ARCHIVE" | cut -f1))"
