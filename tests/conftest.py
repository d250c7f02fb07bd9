"""Shared test fixtures: paths to the repository, the examples and D-VerT's published configurations
(tests/data/dvert, kept in the repository so that no test is skipped in a clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
DVERT = ROOT / "tests" / "data" / "dvert"
VECTORS = ROOT / "tests" / "data" / "vectors"  # DiffStream, CEP and Storm reliability vectors (README there)
STORM_FLUX = ROOT / "tests" / "data" / "flux" / "storm-examples"  # Apache Storm's Flux examples


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return MODELS


@pytest.fixture(scope="session")
def dvert_dir() -> Path:
    return DVERT
