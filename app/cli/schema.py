"""`stormbound schema [--kind topology|trace|result|event|pattern]`: the JSON Schema of one of our formats.

Each schema carries `$schema` (JSON Schema 2020-12) and `$id` https://stormbound.dev/schema/KIND/1
(app/core/formats/schema.py; docs/formats.md, "JSON Schemas"). Topology and trace come from their
pydantic models; the event record and the pattern file from their readers' rules; the result is
the envelope every `--json` output shares, with the shapes of `check`, `verify` and errors.
"""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import EXIT_OK, RESULT_FORMAT, examples, print_json

# The kinds of --json results the subcommands print (print_result's first argument).
RESULT_KINDS = ("check", "verify", "analyze", "compare", "reliability", "diff", "cep", "run", "import-storm-ui",
                "import-flux", "annotate", "error")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `schema` to the `stormbound` command line."""
    from app.core.formats.schema import SCHEMA_KINDS

    p = sub.add_parser(
        "schema", help="print the JSON Schema of a Stormbound format (default: the .storm.json document)",
        description="Print a JSON Schema (2020-12) with its $id, https://stormbound.dev/schema/KIND/1: topology "
                    "(.storm.json), trace (stormbound-trace/1 lasso files, /2 compressed), result (what --json "
                    "prints), event "
                    "(one event-log record) or pattern (a JSON pattern file for `cep`).",
        epilog=examples("stormbound schema --kind trace > trace.schema.json"))
    p.add_argument("--kind", choices=SCHEMA_KINDS, default="topology", help="which format (default topology)")
    p.set_defaults(func=cmd_schema, file_args=())


def _hoist_defs(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Move a pydantic schema's `$defs` into `defs` (the root's), so its `#/$defs/...` refs still resolve."""
    body = dict(schema)
    defs.update(body.pop("$defs", {}))
    return body


def _reachable(defs: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """The definitions some root refers to, directly or not (the rest left out)."""
    import json
    import re

    keep: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in keep or name not in defs:
            continue
        keep.add(name)
        todo += re.findall(r'"#/\$defs/([^"]+)"', json.dumps(defs[name]))
    return {k: v for k, v in defs.items() if k in keep}


def result_schema() -> dict[str, Any]:
    """The envelope of every --json output, with the `check`, `verify` and `error` shapes spelled out."""
    from app.core.formats.schema import with_ids
    from app.core.latency.report import LatencyReport
    from app.core.rates import IdleWarning
    from app.core.results import VerifyResult

    defs: dict[str, Any] = {}
    verify = _hoist_defs(VerifyResult.model_json_schema(), defs)
    verify["properties"] = {k: v for k, v in verify["properties"].items() if k != "trace"}
    verify["properties"]["traces"] = {"type": "array", "items": {"type": "string"},
                                      "description": "the trace files written with --trace-out (empty without it)"}
    idle = _hoist_defs(IdleWarning.model_json_schema(), defs)
    number = {"type": "number"}
    maybe = {"anyOf": [number, {"type": "null"}]}
    check: dict[str, Any] = {
        "type": "object", "required": ["bolts", "suggested_parallelism", "warnings"],
        "properties": {
            "bolts": {"type": "object", "additionalProperties": {
                "type": "object",
                "required": ["capacity_min", "capacity_max", "inflow_min", "inflow_max", "utilisation", "status",
                             "explanation", "sigma_effective", "queue_bound"],
                "properties": {"capacity_min": number, "capacity_max": number, "inflow_min": number,
                               "inflow_max": number, "utilisation": number,
                               "status": {"enum": ["bounded", "no-repeating-growth", "may-grow", "grows"]},
                               "explanation": {"type": "string"},
                               "sigma_effective": {"type": "array", "items": {"type": "string"},
                                                   "minItems": 2, "maxItems": 2},
                               # bounded: the queue never exceeds it in any run; null: not bounded
                               "queue_bound": maybe,
                               # in a repeating run, when below inflow_max (an upstream bolt may flood it)
                               "inflow_long_run_max": number,
                               # with failures on (docs/boundedness.md, "Failures"); null: no bound
                               "inflow_failures": maybe, "added_load": maybe,
                               "lost_per_failure": maybe, "failures_note": {"type": "string"},
                               # a windowed bolt (docs/model.md section 10): held unacked, hold times, timer (s)
                               # (window_hold_max null: a mixed window's count eviction, no every-run bound)
                               **dict.fromkeys(("window_pending", "window_hold_nominal", "window_hold_max"), maybe),
                               "window_timer": number}}},
            "failures": {"type": "object", "required": ["replay_rate", "replay_backlog"],
                         "description": "present when the statuses account for failures and replays",
                         "properties": {"replay_rate": {"type": "object", "additionalProperties": maybe},
                                        "replay_backlog": {"type": "object", "additionalProperties": maybe}}},
            "suggested_parallelism": {"type": "object",
                                      "additionalProperties": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
            "warnings": {"type": "array", "items": {"$ref": "#/$defs/IdleWarning"}},
            "fail_on": {"anyOf": [
                {"type": "object", "required": ["status", "bolts"],
                 "properties": {"status": {"enum": ["grows", "may-grow"]},
                                "bolts": {"type": "array", "items": {"type": "string"}}}},
                {"$ref": "#/$defs/TimeoutFailOn"}]},
        },
    }
    # per spout: can a tuple tree outlast the message timeout (docs/latency.md)
    latency = _hoist_defs(LatencyReport.model_json_schema(), defs)
    check["properties"]["latency"] = {"$ref": "#/$defs/LatencyReport"}
    verify["properties"]["latency"] = {"$ref": "#/$defs/LatencyReport"}
    verify["properties"]["fail_on"] = {"anyOf": [  # grows: also a certified lasso with worker deaths (model.md 9.5)
        {"type": "object", "required": ["status", "bolts"],
         "properties": {"status": {"const": "grows"}, "bolts": {"type": "array", "items": {"type": "string"}}}},
        {"$ref": "#/$defs/TimeoutFailOn"}]}
    timeout_fail_on = {"type": "object", "required": ["status", "spouts"],
                       "properties": {"status": {"const": "timeout"},
                                      "spouts": {"type": "array", "items": {"type": "string"}}}}
    check["properties"]["headroom"] = {"$ref": "#/$defs/Headroom"}
    check["properties"]["rebalance"] = {"type": "array", "items": {"type": "string"},
                                        "description": "storm rebalance commands for the suggested parallelism, "
                                                       "and the bolts they cannot reach (numTasks)"}
    check["properties"].update(_proven_without_search())
    verify["properties"]["headroom"] = {"$ref": "#/$defs/Headroom",
                                        "description": "capacity in Storm's terms (left out with --threshold)"}
    text_or_null = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    problem = {"type": "object", "required": ["file", "field", "message"], "additionalProperties": False,
               "properties": {"file": text_or_null, "field": text_or_null, "message": {"type": "string"}}}
    error = {"type": "object", "required": ["error", "problems", "exit_code"],
             "properties": {"error": {"$ref": "#/$defs/Problem"},
                            "problems": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/Problem"}},
                            "exit_code": {"enum": [2, 3]}}}
    defs = _reachable(defs, ["BoltVerdict", "SpoutTimeout"])
    defs.update({"VerifyResult": verify, "CheckResult": check, "ErrorResult": error, "Problem": problem,
                 "IdleWarning": idle, "LatencyReport": latency, "TimeoutFailOn": timeout_fail_on, **headroom_defs()})

    def when(kind: str, ref: str) -> dict[str, Any]:
        return {"if": {"properties": {"kind": {"const": kind}}}, "then": {"$ref": f"#/$defs/{ref}"}}

    schema = {
        "title": f"Stormbound --json result ({RESULT_FORMAT})",
        "description": "Every `--json` output, errors included: one object with `format` and `kind`, then the "
                       "subcommand's own keys (docs/formats.md, \"Results\").",
        "type": "object", "required": ["format", "kind"],
        "properties": {
            "format": {"const": RESULT_FORMAT},
            "kind": {"type": "string", "pattern": "^[a-z][a-z-]*$", "examples": list(RESULT_KINDS),
                     "description": "the subcommand (import storm-ui: import-storm-ui), or `error`"},
        },
        "allOf": [when("error", "ErrorResult"), when("check", "CheckResult"), when("verify", "VerifyResult")],
        "$defs": defs,
    }
    return with_ids(schema, "result")


def _proven_without_search() -> dict[str, Any]:
    """`check --json`'s answers proven without a search: the floods (`unbounded`) and the joins whose growth the
    rates prove (`grows_by_rates`), each with its certificate."""
    unbounded = {
        "type": "object", "description": "bolts proven unbounded without a search: flooded by a bolt whose growth the "
                                         "rates prove (docs/boundedness.md, 'Unbounded: a backlog that floods')",
        "additionalProperties": {"type": "object", "required": ["source", "message", "flood_certificate"],
                                 "properties": {"source": {"type": "string"}, "message": {"type": "string"},
                                                "flood_certificate": {"$ref": "#/$defs/FloodCertificate"}}}}
    grows = {
        "type": "object", "description": "joins whose growth the rates prove without a search, certified "
                                         "(docs/verifier.md, 'Growth proven by rates', through a join)",
        "additionalProperties": {"type": "object", "required": ["message", "growth_certificate"],
                                 "properties": {"message": {"type": "string"},
                                                "growth_certificate": {"$ref": "#/$defs/RateGrowthCertificate"}}}}
    storms = {
        "type": "object", "description": "bolts proven unbounded without a search by a replay storm: a failing bolt's "
                                         "at-once replays outgrow it every failure cycle (docs/boundedness.md, "
                                         "'Unbounded: a replay storm')",
        "additionalProperties": {"type": "object", "required": ["failing", "message", "storm_certificate"],
                                 "properties": {"failing": {"type": "string"}, "message": {"type": "string"},
                                                "storm_certificate": {"$ref": "#/$defs/StormCertificate"}}}}
    spills = {
        "type": "object", "description": "bolts proven unbounded without a search by a backlog replayed at once: a "
                                         "failing bolt whose growth the rates prove fails once and its spout replays "
                                         "all it held into the bolt (docs/boundedness.md, 'Unbounded: a backlog "
                                         "replayed at once')",
        "additionalProperties": {"type": "object", "required": ["failing", "message", "spill_certificate"],
                                 "properties": {"failing": {"type": "string"}, "message": {"type": "string"},
                                                "spill_certificate": {"$ref": "#/$defs/SpillCertificate"}}}}
    return {"unbounded": unbounded, "unbounded_by_storm": storms, "unbounded_by_spill": spills,
            "grows_by_rates": grows}


def headroom_defs() -> dict[str, Any]:
    """The `headroom` object of `check` and `verify` (app/core/headroom.py, Headroom.to_json)."""
    num = {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/ExactNumber"}]}
    exact = {"type": "object", "required": ["exact", "value"], "additionalProperties": False,
             "properties": {"exact": {"type": "string", "pattern": "^-?[0-9]+(/[0-9]+)?$"},
                            "value": {"type": "number"}},
             "description": "an exact fraction as text beside its decimal"}
    names = {"type": "array", "items": {"type": "string"}}
    storm = {"type": "object",
             "required": ["estimate", "backpressure", "offered_rate", "sustainable_rate", "backlog_growth",
                          "receive_buffer", "queues", "max_spout_pending", "message_timeout_secs", "pending"],
             "properties": {
                 "estimate": {"const": True}, "backpressure": {"type": "boolean"},
                 "backpressure_source": {"enum": ["config", "default", "always"]},
                 "storm_version": {"type": "string"}, "storm_version_given": {"type": "boolean"},
                 "receive_buffer_unit": {"enum": ["tuples", "slots"]}, "acking": {"type": "boolean"},
                 "acking_source": {"enum": ["default", "config", "off", "unreliable"]},
                 "throttle": {"enum": ["backpressure", "max.spout.pending", "none"]},
                 "offered_rate": num, "sustainable_rate": num, "backlog_growth": num,
                 "sustainable_rates": {"type": "object", "additionalProperties": num},
                 "receive_buffer": {"type": "integer"}, "receive_buffer_source": {"enum": ["config", "default"]},
                 "queues": {"type": "array", "items": {"type": "object", "properties": {
                     "bolt": {"type": "string"}, "growth": num, "executors": {"type": "integer"},
                     "seconds_to_full": num, "slots": {"type": "integer"}, "service_rate": num,
                     "pending_bound": num, "per_tree": {"type": "object"}, "never_fills": {"type": "boolean"},
                     "wait_when_full": num, "times_out": {"type": "boolean"}}}},
                 "max_spout_pending": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                 "message_timeout_secs": {"type": "integer"},
                 "message_timeout_source": {"enum": ["config", "default"]},
                 "pending": {"type": "array", "items": {"type": "object", "properties": {
                     "spout": {"type": "string"}, "in_flight": {"type": "integer"}, "throughput": num, "wait": num,
                     "times_out": {"type": "boolean"}}}}}}
    headroom = {"type": "object",
                "required": ["headroom", "headroom_exact", "limiting_bolts", "grows_at", "first_to_saturate",
                             "overloaded", "exact", "storm"],
                "properties": {"headroom": num, "headroom_exact": {"type": "boolean"}, "limiting_bolts": names,
                               "grows_at": num, "first_to_saturate": names, "overloaded": {"type": "boolean"},
                               "exact": names, "storm": {"anyOf": [{"type": "null"}, storm]},
                               "timeouts": {"type": "array", "items": {"type": "object"}, "description": "bounded "
                                            "queues whose wait can exceed the message timeout"},
                               "observed": {"type": "object", "description": "what the Storm UI showed beyond "
                                            "the rates (a Storm UI import) and its signs of saturation"},
                               "ignores_failures": {"const": True, "description": "set by check when failures are "
                                                    "on: the factors are those of the failure-free rate check"}},
                "description": "the factors by which every spout's rate may grow (docs/storm.md, \"Headroom\")"}
    return {"Headroom": headroom, "ExactNumber": exact}


def schema_of(kind: str) -> dict[str, Any]:
    """The schema of one kind (a name of SCHEMA_KINDS)."""
    from app.core.formats.schema import topology_schema, with_ids

    if kind == "topology":
        return topology_schema()
    if kind == "trace":
        return trace_schema()
    if kind == "event":
        from app.measure.record_schema import event_record_schema

        return with_ids(event_record_schema(), "event")
    if kind == "pattern":
        from app.cep.pattern_schema import pattern_file_schema

        return with_ids(pattern_file_schema(), "pattern")
    return result_schema()


def trace_schema() -> dict[str, Any]:
    """A trace file: `stormbound-trace/1`, or the compressed `stormbound-trace/2` whose `positions` may hold
    repeat items (docs/trace-format.md); either may name its schema with a `"$schema"` key."""
    from app.core.formats.schema import with_ids
    from app.core.formats.trace import CompressedTrace, Trace

    plain, packed = Trace.model_json_schema(), CompressedTrace.model_json_schema()
    defs = {**plain.pop("$defs", {}), **packed.pop("$defs", {})}
    named = {"$schema": {"type": "string", "description": "the schema this document follows (ignored by the readers)"}}
    for body in (plain, packed):
        body["properties"] = {**named, **body["properties"]}
    defs["Trace"], defs["CompressedTrace"] = plain, packed
    body = {"description": "a lasso trace: stormbound-trace/1, or stormbound-trace/2 with its repeating runs as "
                           "repeat items (docs/trace-format.md)",
            "anyOf": [{"$ref": "#/$defs/Trace"}, {"$ref": "#/$defs/CompressedTrace"}], "$defs": defs}
    return with_ids(body, "trace", "Stormbound lasso trace (stormbound-trace/1, or /2 compressed)")


def cmd_schema(args: argparse.Namespace) -> int:
    """Print the schema asked for."""
    print_json(schema_of(getattr(args, "kind", "topology")))
    return EXIT_OK
