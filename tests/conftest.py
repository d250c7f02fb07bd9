"""Shared test fixtures: paths to the repository, the examples and D-VerT's published configurations
(tests/data/dvert, kept in the repository so that no test is skipped in a clone)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
DVERT = ROOT / "tests" / "data" / "dvert"
VECTORS = ROOT / "tests" / "data" / "vectors"  # DiffStream, CEP and Storm reliability vectors (README there)
STORM_FLUX = ROOT / "tests" / "data" / "flux" / "storm-examples"  # Apache Storm's Flux examples


SPARK_TESTS = "tests/spark/"  # their modules run together on one worker: one local[2] session (tests/spark/conftest.py)


def xdist_scope(nodeid: str) -> str:
    """The unit of work a test is sent to a pytest-xdist worker in (`make test`: `-n 2 --dist loadscope`): its
    module, as xdist's loadscope does, so that module-scoped fixtures are built once; every Spark test in one."""
    path = nodeid.replace("\\", "/").split("::", 1)[0]
    return SPARK_TESTS if path.startswith(SPARK_TESTS) else path


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist; without it installed the suite runs serially
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's loadscope with `xdist_scope`'s units; the Spark unit, the longest, is sent out first."""

        def _split_scope(self, nodeid: str) -> str:
            return xdist_scope(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if SPARK_TESTS in self.workqueue:
                self.workqueue.move_to_end(SPARK_TESTS, last=False)
            super()._assign_work_unit(node)

    return ModuleScheduling(config, log)


@pytest.fixture(scope="session")
def models_dir() -> Path:
    return MODELS


@pytest.fixture(scope="session")
def dvert_dir() -> Path:
    return DVERT
