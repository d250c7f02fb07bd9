"""Shared test fixtures: paths to the repository, the examples and the shared test data folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
SHARED = ROOT.parent / "shared"
DVERT = SHARED / "data" / "dvert"


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return MODELS


@pytest.fixture(scope="session")
def dvert_dir() -> Path:
    if not DVERT.exists():
        pytest.skip("the shared test data folder (data/dvert) is not beside the checkout")
    return DVERT
