"""`repair` reads a Flux file's text with one parse: the round-trip tree and the parsing events its edits are
planned on come from the same pass (app/core/storm/flux/yaml_text.py, `yaml_events`); the events kept are those
a separate parse gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.core.storm.flux import yaml_text
from tests.unit.test_hostile_traces import flux_text


def test_repair_parses_the_file_once_for_its_tree_and_its_events(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[int] = []
    real = yaml_text.yaml_parser

    def counting() -> Any:
        parser = real()
        parse = parser.parse
        parser.parse = lambda text: (parses.append(len(text)), parse(text))[1]
        return parser

    monkeypatch.setattr(yaml_text, "yaml_parser", counting)
    monkeypatch.setattr(yaml_text, "_PARSED", {})
    monkeypatch.setattr(yaml_text, "_EVENTS", {})
    flux = tmp_path / "t.yaml"
    flux.write_text(flux_text(["b0", "b1", "b2"]), encoding="utf-8")
    assert main(["-q", "repair", str(flux), "--parallelism", "b1=4", "-o", str(tmp_path / "r.yaml")]) == 0
    assert parses == []  # the events came from the tree's own parse
    repaired = (tmp_path / "r.yaml").read_text(encoding="utf-8")
    assert repaired.count("parallelism: 4") == 1 and repaired.replace("parallelism: 4", "parallelism: 1") == \
        flux.read_text(encoding="utf-8")


def test_the_kept_events_are_those_a_parse_gives() -> None:
    text = flux_text([f"b{i}" for i in range(5)]) + "x: &a {k: [1, 'two', \"3\"]}\ny: *a\nz: |\n  block\n"
    yaml_text.parse_yaml(text, Path("t.yaml"))
    kept = yaml_text.yaml_events(text)
    fresh = list(yaml_text.yaml_parser().parse(text))

    def key(e: Any) -> tuple[Any, ...]:
        return (type(e).__name__, getattr(e, "value", None), getattr(e, "anchor", None), getattr(e, "style", None),
                getattr(e, "flow_style", None), getattr(e, "tag", None), getattr(e, "implicit", None),
                e.start_mark.index if e.start_mark else None, e.end_mark.index if e.end_mark else None)

    assert [key(e) for e in kept] == [key(e) for e in fresh] and len(kept) > 50
