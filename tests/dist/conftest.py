"""One build of dist/ per test session (packaging/build.sh: bundle, archive, Debian packages).

STORMBOUND_DIST_REUSE=1 tests an existing dist/ without rebuilding.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"


@pytest.fixture(scope="session")
def built_dist() -> Path:
    if os.environ.get("STORMBOUND_DIST_REUSE") != "1":
        env = {**os.environ, "PYTHON": os.environ.get("PYTHON", sys.executable)}  # the tests' own environment
        done = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], cwd=ROOT, capture_output=True,
                              text=True, timeout=3600, env=env)
        assert done.returncode == 0, f"build.sh failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return DIST
