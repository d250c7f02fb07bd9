"""`stormbound schema --kind ...`: every schema has `$schema` and `$id`, and what we ship and write
validates against it (and what the readers refuse, the schema refuses too).

`jsonschema` is not a dependency; `validate` below implements the JSON Schema keywords our schemas
use (type, properties, required, additionalProperties, items, prefixItems, enum, const, anyOf,
oneOf, allOf, not, if/then, $ref into $defs, numeric and string bounds) and fails on any other one,
so a schema that grows a keyword it cannot check makes these tests fail instead of passing blindly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
TRACES = ROOT / "tests" / "data" / "traces"
SHARED = ROOT / "tests" / "data" / "vectors"  # the reliability and CEP vectors (README there)

ANNOTATIONS = {"title", "description", "default", "examples", "$schema", "$id", "$defs", "format"}
TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def errors(value: Any, schema: Any, root: dict[str, Any], path: str = "$") -> list[str]:
    """Every way `value` breaks `schema` (empty: valid)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    found: list[str] = []
    for key, rule in schema.items():
        if key in ANNOTATIONS or key in ("then", "else", "minContains"):
            continue
        if key == "$ref":
            assert rule.startswith("#/$defs/"), rule
            found += errors(value, root["$defs"][rule.removeprefix("#/$defs/")], root, path)
        elif key == "type":
            names = rule if isinstance(rule, list) else [rule]
            if not any(_is_type(value, n) for n in names):
                found.append(f"{path}: expected {rule}, got {type(value).__name__}")
        elif key == "enum":
            if value not in rule:
                found.append(f"{path}: {value!r} not one of {rule}")
        elif key == "const":
            if value != rule:
                found.append(f"{path}: {value!r} is not {rule!r}")
        elif key in ("anyOf", "oneOf"):
            passing = sum(not errors(value, sub, root, path) for sub in rule)
            if passing == 0 or (key == "oneOf" and passing > 1):
                found.append(f"{path}: {passing} of the {key} alternatives hold")
        elif key == "allOf":
            for sub in rule:
                found += errors(value, sub, root, path)
        elif key == "not":
            if not errors(value, rule, root, path):
                found.append(f"{path}: matches a 'not' schema")
        elif key == "if":
            branch = schema.get("then") if not errors(value, rule, root, path) else schema.get("else")
            if branch is not None:
                found += errors(value, branch, root, path)
        elif key in ("properties", "required", "additionalProperties"):
            if not isinstance(value, dict):
                continue
            if key == "properties":
                for name, sub in rule.items():
                    if name in value:
                        found += errors(value[name], sub, root, f"{path}.{name}")
            elif key == "required":
                found += [f"{path}: missing {name}" for name in rule if name not in value]
            else:
                known = schema.get("properties", {})
                for name, item in value.items():
                    if name not in known:
                        found += errors(item, rule, root, f"{path}.{name}") if rule is not False \
                            else [f"{path}.{name}: unknown field"]
        elif key in ("items", "prefixItems", "minItems", "maxItems"):
            if not isinstance(value, list):
                continue
            if key == "items":
                start = len(schema.get("prefixItems", []))
                for i, item in enumerate(value[start:], start):
                    found += errors(item, rule, root, f"{path}[{i}]")
            elif key == "prefixItems":
                for i, (item, sub) in enumerate(zip(value, rule, strict=False)):
                    found += errors(item, sub, root, f"{path}[{i}]")
            elif (key == "minItems" and len(value) < rule) or (key == "maxItems" and len(value) > rule):
                found.append(f"{path}: {len(value)} items breaks {key} {rule}")
        elif key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if _is_type(value, "number") and not {
                "minimum": value >= rule, "maximum": value <= rule,
                "exclusiveMinimum": value > rule, "exclusiveMaximum": value < rule}[key]:
                found.append(f"{path}: {value} breaks {key} {rule}")
        elif key in ("minLength", "maxLength", "pattern"):
            if isinstance(value, str) and not (
                    (key == "minLength" and len(value) >= rule) or (key == "maxLength" and len(value) <= rule)
                    or (key == "pattern" and re.search(rule, value) is not None)):
                found.append(f"{path}: {value!r} breaks {key} {rule}")
        else:
            raise AssertionError(f"the test validator does not know the keyword {key!r} (at {path})")
    return found


def schema(capsys, kind: str) -> dict[str, Any]:
    assert main(["schema", "--kind", kind]) == 0
    return json.loads(capsys.readouterr().out)


def run(capsys, *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", ["topology", "trace", "result", "event", "pattern"])
def test_every_kind_has_schema_and_id(capsys, kind: str) -> None:
    data = schema(capsys, kind)
    assert data["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert data["$id"] == f"https://stormbound.dev/schema/{kind}/1"
    assert list(data)[:2] == ["$schema", "$id"] and data["title"]


def test_default_kind_is_the_topology(capsys) -> None:
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out)["$id"].endswith("/topology/1")
    assert main(["schema", "--kind", "nope"]) == 2


def test_shipped_models_validate_and_bad_ones_do_not(capsys) -> None:
    topo = schema(capsys, "topology")
    models = sorted(MODELS.glob("*.storm.json"))
    assert len(models) >= 5
    for path in models:
        assert errors(json.loads(path.read_text()), topo, topo) == [], path.name
    doc = json.loads((MODELS / "getting-started.storm.json").read_text())
    assert errors({**doc, "bolts": [{**doc["bolts"][0], "alpha": 0}]}, topo, topo)  # alpha > 0
    assert errors({**doc, "colour": "red"}, topo, topo)  # unknown field


def test_documents_may_carry_dollar_schema(tmp_path: Path, capsys) -> None:
    topo = schema(capsys, "topology")
    doc = {"$schema": topo["$id"], **json.loads((MODELS / "getting-started.storm.json").read_text())}
    assert errors(doc, topo, topo) == []
    path = tmp_path / "named.storm.json"
    path.write_text(json.dumps(doc))
    code, data = run(capsys, "check", str(path), "--json")
    assert code == 0 and data["kind"] == "check"
    path.write_text(json.dumps({**doc, "$schema": 3}))
    code, data = run(capsys, "check", str(path), "--json")
    assert code == 2 and data["error"]["field"] == "$schema"


def test_shipped_and_written_traces_validate(tmp_path: Path, capsys) -> None:
    from app.core.formats.trace import load_trace

    trace_schema = schema(capsys, "trace")
    for path in sorted(TRACES.glob("*.trace.json")):
        assert errors(json.loads(path.read_text()), trace_schema, trace_schema) == [], path.name
    written = tmp_path / "lasso.json"
    code, result = run(capsys, "verify", str(MODELS / "getting-started.storm.json"), "--k-max", "8", "--json",
                       "--trace-out", str(written))
    assert code == 1
    raw = json.loads(written.read_text())
    assert errors(raw, trace_schema, trace_schema) == []
    named = tmp_path / "named.json"
    named.write_text(json.dumps({"$schema": trace_schema["$id"], **raw}))
    assert load_trace(named).k == raw["k"]
    from app.cli.plot import plotted

    assert f"k = {raw['k']}" in plotted(str(named), 0)[1]  # `stormbound plot` reads it too
    raw["positions"][0]["bolts"]["count"]["phase"] = "sleeping"
    assert errors(raw, trace_schema, trace_schema)
    result_schema = schema(capsys, "result")
    assert errors(result, result_schema, result_schema) == []


def test_results_and_errors_validate(tmp_path: Path, capsys) -> None:
    result_schema = schema(capsys, "result")
    outputs = [run(capsys, "check", str(MODELS / "simple-DIA-cfg-1.storm.json"), "--json", "--fail-on", "grows"),
               run(capsys, "check", str(tmp_path / "missing.storm.json"), "--json"),
               run(capsys, "verify", str(MODELS / "getting-started.storm.json"), "--k", "0", "--json"),
               run(capsys, "verify", str(MODELS / "focused-crawler-reduced-cfg-6.storm.json"), "--json"),
               run(capsys, "check", str(MODELS / "getting-started.storm.json"), "--json", "--fail-on", "timeout")]
    assert [code for code, _ in outputs] == [1, 2, 2, 0, 1]
    for _, data in outputs:
        assert errors(data, result_schema, result_schema) == [], data
    broken = {**outputs[1][1], "error": {"file": "x"}}
    assert errors(broken, result_schema, result_schema)
    assert errors({**outputs[0][1], "bolts": {"B1": {"status": "fine"}}}, result_schema, result_schema)


def test_event_records_validate_as_the_reader_reads_them(capsys) -> None:
    from app.measure.eventlog import record_from_dict
    from app.measure.records import EventLogError

    event = schema(capsys, "event")
    good = [{"t": 0, "ev": "spout_emit", "comp": "s", "task": 1, "msg": "m1", "tuple": "t1"},
            {"t": 1.5, "ev": "bolt_emit", "comp": "split", "tuple": "t2", "anchors": ["t1"]},
            {"t": 2, "ev": "spout_fail", "comp": "s", "msg": "m1", "reason": "TIMEOUT"},
            {"t": 2, "comp": "split", "task": 3, "queue": 7}]
    bad = [{"t": 1, "ev": "take", "comp": "split"},  # a take needs its tuple id
           {"t": 1, "ev": "spout_ack", "comp": "s", "tuple": "t1"},  # needs its message id
           {"t": 1, "ev": "take", "comp": "split", "tuple": "t1", "anchors": ["t0"]},  # anchors: bolt_emit only
           {"t": 1, "ev": "explode", "comp": "split", "tuple": "t1"},
           {"t": 1, "comp": "split", "queue": -1},
           {"t": 1, "comp": "split"},
           {"t": 1, "ev": "take", "comp": "split", "tuple": "t1", "colour": "red"}]
    for record in good:
        assert errors(record, event, event) == [], record
        record_from_dict(record, "line")
    for record in bad:
        assert errors(record, event, event), record
        with pytest.raises(EventLogError):
            record_from_dict(record, "line")
    vectors = SHARED / "storm-reliability-vectors.json"
    if vectors.exists():
        for case in json.loads(vectors.read_text()):
            for record in case["trace"]:
                assert errors(record, event, event) == [], (case["name"], record)


def test_pattern_files_validate_as_the_reader_reads_them(tmp_path: Path, capsys) -> None:
    from app.cep.monitors import load_monitors
    from app.cep.nodes import PatternError, to_ast
    from app.cep.syntax import parse_pattern_json

    pattern = schema(capsys, "pattern")
    shipped = {"context": "chronicle", "patterns": [
        {"id": p.id, "ast": to_ast(p.ast), "text": p.text, "context": p.context,
         **({"by": list(p.by)} if p.by else {})} for p in load_monitors()]}
    assert errors(shipped, pattern, pattern) == []
    assert [p.id for p in parse_pattern_json(json.loads(json.dumps(shipped)))] == [p.id for p in load_monitors()]
    good = [[{"id": "pair", "text": "a -> b within 10", "context": "strict", "by": "comp"}],
            {"$schema": pattern["$id"], "patterns": [{"name": "x", "vepl": "a{3}", "timeout": True}]},
            [{"id": "n", "ast": {"op": "times", "n": 2, "arg": {"atom": "a", "params": ["task"],
                                                               "tests": [["t", ">=", 1]]}}}]]
    bad = [[],
           [{"text": "a -> b"}],  # no id
           [{"id": "x"}],  # no pattern
           [{"id": "x", "ast": {"op": "follows", "args": [{"atom": "a"}]}}],  # one argument
           [{"id": "x", "ast": {"op": "times", "n": 0, "arg": {"atom": "a"}}}],
           [{"id": "x", "text": "a", "timeout": "yes"}]]
    for data in good:
        assert errors(data, pattern, pattern) == [], data
        parse_pattern_json(data)
    for data in bad:
        assert errors(data, pattern, pattern), data
        with pytest.raises(PatternError):
            parse_pattern_json(data)
    vectors = SHARED / "cep-vectors.json"
    if vectors.exists():
        for case in json.loads(vectors.read_text()):
            if isinstance(case, dict) and case.get("patterns"):
                assert errors(case["patterns"], pattern, pattern) == [], case.get("name")


def test_check_with_failures_validates(tmp_path: Path, capsys) -> None:
    """`check --json` with failures on adds the replay figures (docs/boundedness.md, "Failures")."""
    doc = {"spouts": [{"name": "S", "rate": 1}],
           "bolts": [{"name": "A", "alpha": 0.9, "sigma": 1, "parallelism": 1},
                     {"name": "C", "alpha": 0.1, "sigma": 0, "parallelism": 1, "min_ttf": 2}],
           "subscriptions": [{"source": "S", "target": "A"}, {"source": "S", "target": "C"}],
           "settings": {"tolerance": 0, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2}}
    path = tmp_path / "fails.storm.json"
    path.write_text(json.dumps(doc))
    result_schema = schema(capsys, "result")
    code, data = run(capsys, "check", str(path), "--json")
    assert code == 0 and data["failures"]["replay_backlog"]["S"] is None and data["headroom"]["ignores_failures"]
    assert data["bolts"]["A"]["queue_bound"] is None and data["bolts"]["C"]["lost_per_failure"] == 7
    assert errors(data, result_schema, result_schema) == [], data
    assert errors({**data, "failures": {"replay_rate": {"S": "fast"}}}, result_schema, result_schema)


def test_check_with_a_replay_storm_validates(tmp_path: Path, capsys) -> None:
    """`check --json` lists the bolts a replay storm makes unbounded, with their certificates
    (docs/boundedness.md, "Unbounded: a replay storm"), and `--fail-on grows` counts them."""
    doc = {"spouts": [{"name": "S", "rate": 1}],
           "bolts": [{"name": "J", "alpha": 0.913, "sigma": 1, "parallelism": 2},
                     {"name": "F", "alpha": 0.839, "sigma": 1, "parallelism": 1, "min_ttf": 3}],
           "subscriptions": [{"source": "S", "target": "J"}, {"source": "S", "target": "F"}],
           "settings": {"tolerance": 0.2, "max_idle_time": 0, "min_reboot_time": 1, "max_reboot_time": 2,
                        "replay": "at-once"}}
    path = tmp_path / "storm.storm.json"
    path.write_text(json.dumps(doc))
    result_schema = schema(capsys, "result")
    code, data = run(capsys, "check", str(path), "--json", "--fail-on", "grows")
    assert code == 1 and "J" in data["unbounded_by_storm"] and "J" in data["fail_on"]["bolts"]
    assert data["unbounded_by_storm"]["J"]["storm_certificate"]["growth"] == 4
    assert errors(data, result_schema, result_schema) == [], data


def test_check_of_a_mixed_window_validates(tmp_path: Path, capsys) -> None:
    """`check --json` on a count eviction on a timer gives its timer and no every-run hold bound (null), which the
    result schema allows (docs/model.md section 10.4)."""
    doc = json.loads((Path(__file__).resolve().parents[1] / "data" / "windows" / "mixed-time-count.storm.json")
                     .read_text())
    doc["bolts"][0]["window"] = {"kind": "count", "length": 30, "slide": 3, "slide_kind": "duration"}
    doc["bolts"][0]["alpha"] = 0.5
    path = tmp_path / "mixed.storm.json"
    path.write_text(json.dumps(doc))
    result_schema = schema(capsys, "result")
    code, data = run(capsys, "check", str(path), "--json")
    w = data["bolts"]["W"]
    assert code == 0 and w["window_timer"] == 3 and w["window_hold_max"] is None and w["window_hold_nominal"] == 6
    assert errors(data, result_schema, result_schema) == [], data
