"""One engine interface from one factory (app/measure/log_engine.py, app/measure/engines.py, with which
app/spark/log_engine.py registers the Spark engine): both engines
satisfy `LogEngine`, the factory picks them by the user's choice, and `stormbound analyze` / `reliability`
read a log only through the engine the factory returns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.measure import engines
from app.measure.analysis import Analysis
from app.measure.engine_choice import Choice, EngineError
from app.measure.engines import SparkNeeded, open_log_engine
from app.measure.log_engine import EmbeddedEngine, LogEngine
from app.measure.records import EventLogError
from app.measure.reliability import ReliabilityConfig, ReliabilityReport, check_reliability_path_local
from app.spark.log_engine import SparkEngine
from tests.unit.test_engine_choice import TEN_EVENTS


@pytest.fixture
def ten_events(tmp_path: Path) -> Path:
    path = tmp_path / "ten.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in TEN_EVENTS))
    return path


class FakeHost:
    """A Spark host that answers in this process with the embedded engine, recording the requests."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def request(self, op: str, on_progress: Any = None, **params: Any) -> dict[str, Any]:
        self.requests.append((op, params))
        if on_progress is not None:
            on_progress(0.5, "on the fake Spark")
        embedded = EmbeddedEngine()
        if op == "analyze":
            return embedded.analyze(params["path"], time_unit=params["time_unit"], bin_s=params["bin_s"],
                                    growth_floor=params["growth_floor"]).model_dump()
        config = ReliabilityConfig.model_validate(params["config"])
        return embedded.reliability(params["path"], config, time_unit=params["time_unit"],
                                    limit=params["limit"]).model_dump()


def test_both_engines_satisfy_the_protocol() -> None:
    embedded: LogEngine = EmbeddedEngine()
    spark: LogEngine = SparkEngine(FakeHost().request)
    assert isinstance(embedded, LogEngine) and isinstance(spark, LogEngine)
    assert (embedded.name, spark.name) == ("embedded", "spark")


def test_both_engines_give_the_same_results(ten_events: Path) -> None:
    host = FakeHost()
    progress: list[str] = []
    spark = SparkEngine(host.request)
    embedded = EmbeddedEngine()
    analysed = spark.analyze(str(ten_events), bin_s=0.5, on_progress=lambda f, m: progress.append(m))
    assert analysed == embedded.analyze(str(ten_events), bin_s=0.5)
    assert host.requests[0] == ("analyze", {"path": str(ten_events), "time_unit": "s", "bin_s": 0.5,
                                            "growth_floor": 0.05})
    config = ReliabilityConfig(message_timeout_s=30)
    assert spark.reliability(ten_events, config, limit=5) == embedded.reliability(ten_events, config, limit=5)
    assert host.requests[1][0] == "reliability" and host.requests[1][1]["limit"] == 5
    assert progress == ["on the fake Spark"]
    steps: list[str] = []
    embedded.analyze(ten_events, on_progress=lambda f, m: steps.append(m))
    assert steps == ["analysing in this process"]


def test_the_factory_picks_by_the_users_choice(ten_events: Path) -> None:
    host = FakeHost()
    asked: list[Choice] = []

    def spark(choice: Choice) -> Any:
        asked.append(choice)
        return host.request

    assert open_log_engine(ten_events).name == "embedded"
    assert open_log_engine(ten_events, "local").name == "embedded"
    engine = open_log_engine(ten_events, "auto", spark=spark, spark_requested=True)
    assert engine.name == "spark" and engine.reason == "a Spark master was given" and asked[-1].engine == "spark"
    assert open_log_engine(ten_events, "auto", spark=spark, max_events=5).name == "spark"
    assert open_log_engine("hdfs://nn:8020/logs/events.parquet", spark=spark).name == "spark"
    with pytest.raises(SparkNeeded, match="this log needs Spark"):
        open_log_engine(ten_events, "spark")  # no Spark at hand
    with pytest.raises(EngineError):
        open_log_engine(ten_events, "gpu", spark=spark)
    missing = ten_events.parent / "missing.jsonl"
    with pytest.raises(EventLogError, match="no such file"):
        open_log_engine(missing, spark=spark)
    # the Runs panel: a log it cannot size goes to the attached Spark, which reports its own error
    assert open_log_engine(missing, spark=spark, unsized_to_spark=True).name == "spark"
    assert open_log_engine(missing, "embedded", spark=spark, unsized_to_spark=True).name == "embedded"


class FakeEngine:
    """An engine the tests inject through the factory: it answers with fixed results."""

    name = "embedded"
    reason = "a fake"

    def __init__(self, log: Path):
        self.log = log
        self.calls: list[str] = []

    def analyze(self, log: Any, **kwargs: Any) -> Analysis:
        self.calls.append("analyze")
        return Analysis(source="from the fake engine", start=0, end=2, events=42, queue_samples=0, bin_s=1,
                        growth_floor=0.05, components={})

    def reliability(self, log: Any, config: ReliabilityConfig, **kwargs: Any) -> ReliabilityReport:
        self.calls.append("reliability")
        report = check_reliability_path_local(self.log, config)
        return report.model_copy(update={"notes": ["from the fake engine"]})


@pytest.fixture
def fake_engine(ten_events: Path, monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    fake = FakeEngine(ten_events)
    monkeypatch.setitem(engines.ENGINE_BUILDERS, "embedded", lambda choice, spark: fake)
    return fake


def test_the_cli_reads_a_log_only_through_the_factory(ten_events: Path, fake_engine: FakeEngine, capsys) -> None:
    from app.cli import main

    main(["analyze", str(ten_events), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["analysis"]["source"] == "from the fake engine" and out["analysis"]["events"] == 42
    main(["reliability", str(ten_events), "--json"])
    assert json.loads(capsys.readouterr().out)["notes"] == ["from the fake engine"]
    assert fake_engine.calls == ["analyze", "reliability"]


def test_the_report_checks_in_this_process_only_with_the_embedded_engine(ten_events: Path,
                                                                         fake_engine: FakeEngine) -> None:
    from argparse import Namespace

    from app.cli.engine import in_this_process

    def args(**given: Any) -> Namespace:
        return Namespace(**{"log": str(ten_events), "engine": "auto", "master": None, "local_max_events": None,
                            "local_max_mb": None, **given})

    assert in_this_process(args()) is fake_engine  # the factory's engine: no Spark is started for a report
    assert in_this_process(args(local_max_events=5)) == "10 records, more than 5"
    assert in_this_process(args(master="local[2]")) == "a Spark master was given"
    assert in_this_process(args(engine="gpu")).startswith("--engine gpu")


def test_spark_registers_its_engine_with_the_factory_in_app_measure() -> None:
    """The factory is app.measure's and knows the embedded engine; Spark's is registered by app.spark."""
    import subprocess
    import sys

    code = ("import sys\nfrom app.measure import engines\n"
            "assert 'app.spark' not in sys.modules and set(engines.ENGINE_BUILDERS) == {'embedded'}\n"
            "import app.spark\nassert set(engines.ENGINE_BUILDERS) == {'embedded', 'spark'}\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
