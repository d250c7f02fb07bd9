#!/usr/bin/env bash
# Print the figures of the built bundle: size of dist/stormbound/ and of the archive,
# and wall time of `--version` and `--selftest` from the frozen binary (RUNS runs each,
# default 3, run as a user would: minimal environment, no display).
# Usage: bash packaging/measure.sh   (after packaging/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${RUNS:-3}"
BIN=dist/stormbound/stormbound
[ -x "$BIN" ] || { echo "measure.sh: $BIN not built; run 'make dist' first" >&2; exit 2; }
ARCHIVE="$(ls dist/stormbound-*-linux-*.tar.gz | head -1)"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

echo "bundle folder: $(du -sh dist/stormbound | cut -f1) ($(find dist/stormbound -type f | wc -l) files)"
echo "archive:       $(du -sh "$ARCHIVE" | cut -f1) $ARCHIVE"

time_runs() {  # label, args...
  local label="$1"; shift
  local times=()
  for _ in $(seq "$RUNS"); do
    local start end
    start=$(date +%s.%N)
    if ! env -i PATH=/usr/bin:/bin HOME="$SCRATCH" TMPDIR="$SCRATCH" LANG=C.UTF-8 "$BIN" "$@" >/dev/null; then
      return 1
    fi
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')")
  done
  printf '%-12s %s s\n' "$label" "$(printf '%.2f ' "${times[@]}")"
}
time_runs "--version" --version || echo "--version failed"
time_runs "--selftest" --selftest || echo "--selftest failed (message above)"
