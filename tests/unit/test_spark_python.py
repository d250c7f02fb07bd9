"""Which Python starts the Spark host (app.spark.session.spark_python), the packaged one included."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from app.spark import session


@pytest.fixture
def packaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for /opt/stormbound-spark/bin/python, and a frozen app (which never uses its own Python)."""
    python = tmp_path / "opt" / "stormbound-spark" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    monkeypatch.setattr(session, "PACKAGED_SPARK_PYTHON", str(python))
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    return python


def test_packaged_python_comes_before_python3_on_path(packaged: Path, tmp_path: Path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "python3").chmod(0o755)
    assert session.spark_python(None, {"PATH": str(tmp_path / "bin")}) == str(packaged)


def test_setting_and_environment_come_before_the_packaged_python(packaged: Path, tmp_path: Path):
    mine = tmp_path / "mine"
    mine.write_text("#!/bin/sh\n")
    mine.chmod(0o755)
    assert session.spark_python(str(mine), {"PATH": ""}) == str(mine)
    assert session.spark_python(None, {"PATH": "", session.SPARK_PYTHON_ENV: str(mine)}) == str(mine)


def test_without_the_package_python3_on_path_is_used(packaged: Path, tmp_path: Path):
    packaged.unlink()
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "python3").chmod(0o755)
    assert session.spark_python(None, {"PATH": str(tmp_path / "bin")}) == str(tmp_path / "bin" / "python3")
    with pytest.raises(session.SparkUnavailable, match="no Python found for Spark"):
        session.spark_python(None, {"PATH": str(tmp_path / "nothing")})
