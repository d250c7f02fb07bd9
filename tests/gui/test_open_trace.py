"""A trace file opened in the app (docs/limits.md): its topology is opened and the message says it came from a
trace (not "Imported D-VerT file"); a broken trace is refused as a trace, naming the field."""

from __future__ import annotations

import json
from pathlib import Path

from app.core.formats.trace import load_trace
from app.core.formats.trace_compress import compress_positions

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json"


def compressed() -> dict:
    data = load_trace(TRACE).model_dump(mode="json")
    return {**data, "format": "stormbound-trace/2", "positions": compress_positions(data["positions"])}


def test_a_trace_opens_its_topology_and_says_so(make_window, tmp_path: Path) -> None:
    window = make_window()
    path = tmp_path / "lasso.trace.json"
    path.write_text(json.dumps(compressed()), encoding="utf-8")
    assert window.open_path(path, ask=False)
    message = window.statusBar().currentMessage()
    assert message.startswith("Opened the topology of trace file lasso.trace.json") and "D-VerT" not in message
    assert window.document.path is None  # Save asks for a name: the trace is never overwritten as a topology


def test_a_broken_trace_is_refused_as_a_trace(make_window, tmp_path: Path) -> None:
    window = make_window()
    data = compressed()
    index = next(i for i, item in enumerate(data["positions"]) if "repeat" in item)
    data["positions"][index]["repeat"]["count"] = -1
    path = tmp_path / "broken.trace.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert not window.open_path(path, ask=False)
    title, text = window.dialogs.shown[-1][1:3]
    assert title == "Cannot open file" and f"positions.{index}.repeat.count" in text and "trace" in text
