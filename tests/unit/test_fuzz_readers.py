"""Fuzzing every file reader with mutations of valid documents (docs/limits.md).

Strategies start from a valid document of each kind (topology, D-VerT, trace, compressed
`/2` trace and its plot series, gzipped traces in one or two members, timings YAML with
aliases, verified export, Flux, event logs as JSON Lines, JSON, CSV and Parquet, Storm metrics and events
logs) and mutate it: a wrong type in a field, a field removed or added, huge and
non-finite numbers, deep nesting, long and odd strings, truncation, flipped bytes, other
encodings, random bytes. Every reader, in this process, must either return a result or
refuse with a TopologyError subclass whose message is one printable line, within a few
seconds. CI runs a fixed (derandomised) sample; `pytest -m fuzz` runs many more random ones.
"""

from __future__ import annotations

import copy
import csv
import gzip
import io
import json
import re
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.formats import FormatError, dvert, load_topology, read_json
from app.core.formats.timings import TimingsError, read_timings
from app.core.formats.trace import load_trace
from app.core.formats.trace_compress import ExpandError, compress_positions
from app.core.formats.verified import build_verified, check_verified
from app.core.long_trace import read_long_trace
from app.core.results import VerifyResult
from app.core.storm.flux.builder import import_flux
from app.core.topology import Problem, TopologyError
from app.measure import logstream
from app.measure.eventlog import read_log

# ruamel warns about JSON-style floats (`1e+308`) read as YAML 1.1; the Flux reader still reads them
pytestmark = pytest.mark.filterwarnings("ignore::ruamel.yaml.error.MantissaNoDotYAML1_1Warning")

ROOT = Path(__file__).resolve().parents[2]
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SLOW_S = 30.0  # a hang: readers take well under 0.5 s on these files, even on a loaded machine

_COMMON = {"deadline": None, "database": None, "print_blob": True,
           "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.filter_too_much]}
CI = settings(max_examples=150, derandomize=True, **_COMMON)  # type: ignore[arg-type]
FUZZ = settings(max_examples=1500, **_COMMON)  # type: ignore[arg-type]

_TMP = tempfile.TemporaryDirectory(prefix="stormbound-fuzz-")
TMP = Path(_TMP.name)


# ---- valid documents -------------------------------------------------------------------


def topology_doc() -> dict[str, Any]:
    return json.loads((ROOT / "models" / "getting-started.storm.json").read_text(encoding="utf-8"))


def dvert_doc() -> dict[str, Any]:
    return dvert.to_dvert(load_topology(ROOT / "models" / "getting-started.storm.json"))


def trace_doc() -> dict[str, Any]:
    return json.loads((ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json").read_text(encoding="utf-8"))


def compressed_trace_doc() -> dict[str, Any]:
    """getting-started's lasso as `stormbound-trace/2` (a position, patches and a repeat item)."""
    data = load_trace(ROOT / "tests" / "data" / "traces" / "getting-started.1.trace.json").model_dump(mode="json")
    return {**data, "format": "stormbound-trace/2", "positions": compress_positions(data["positions"])}


TIMINGS_DOC = {"split": {"alpha": "20ms", "sigma": 2, "parallelism": 4}, "sentences": {"rate": "2/s", "burst": 2}}
TIMINGS_LINES = ["split:", "  alpha: 20ms", "  sigma: {default: 2}", "  parallelism: 4", "sentences:", "  rate: 2/s"]


def verified_doc() -> dict[str, Any]:
    topo = load_topology(ROOT / "models" / "getting-started.storm.json")
    results = [VerifyResult(property="growth", verdict="counterexample", k=12, loop_start=5, growing=["count"],
                            message="lasso"),
               VerifyResult(property="threshold", verdict="none-up-to-k", k=20, threshold=50, message="none")]
    return json.loads(json.dumps(build_verified(topo, results)))


FLUX_DOC = {
    "name": "fuzz",
    "config": {"topology.workers": 1},
    "spouts": [{"id": "s", "className": "org.example.S", "parallelism": 1,
                "config": {"stormbound.rate": 10.0, "stormbound.burst": 2}}],
    "bolts": [{"id": "b", "className": "org.example.B", "parallelism": 2,
               "config": {"stormbound.alpha": 0.05, "stormbound.sigma": 1.0}},
              {"id": "c", "className": "org.example.C", "parallelism": 1}],
    "streams": [{"from": "s", "to": "b", "grouping": {"type": "SHUFFLE"}},
                {"from": "b", "to": "c", "grouping": {"type": "FIELDS", "args": ["word"]}}],
}

RECORDS: list[dict[str, Any]] = [
    {"t": 0.0, "ev": "spout_emit", "comp": "s", "task": 1, "tuple": "a1", "msg": "m1"},
    {"t": 0.1, "ev": "take", "comp": "b", "task": 2, "tuple": "a1"},
    {"t": 0.2, "ev": "bolt_emit", "comp": "b", "task": 2, "tuple": "b1", "anchors": ["a1"]},
    {"t": 0.3, "ev": "bolt_ack", "comp": "b", "task": 2, "tuple": "a1"},
    {"t": 0.4, "ev": "spout_ack", "comp": "s", "task": 1, "msg": "m1"},
    {"t": 0.5, "ev": "spout_fail", "comp": "s", "task": 1, "msg": "m2", "reason": "TIMEOUT"},
    {"t": 0.25, "comp": "b", "task": 2, "queue": 3},
]
COLUMNS = ["t", "ev", "comp", "task", "tuple", "msg", "anchors", "reason", "queue"]

METRICS_LINES = [
    "2024-03-01 10:00:01,000 10 [INFO] 1709287201 host:6700 3:b __receive {population=2, capacity=1024}",
    "2024-03-01 10:00:01,000 10 [INFO] 1709287201 host:6700 3:b __execute-latency {s:default=1.5}",
    "2024-03-01 10:00:02,000 10 [INFO] 1709287202 host:6700 3:b __receive {population=5, capacity=1024}",
    "2024-03-01 10:00:02,000 10 [INFO] 1709287202 host:6700 3:b __ack-count 17",
]
EVENTS_LINES = [
    "Mon Nov 23 11:33:18 UTC 2026,s,1,m1,[hello world]",
    "Mon Nov 23 11:33:18 UTC 2026,b,2,,[hello]",
    "Mon Nov 23 11:33:19 UTC 2026,b,2,,[world]",
]


# ---- mutations -------------------------------------------------------------------------

WRONG = [None, True, False, 0, -1, 2, 1.5, -1e308, 1e308, 5e-324, 10 ** 30, -(10 ** 30), "", "x", "5", "NaN",
         "\n\x1b[31m\x00", "\ud800", "é" * 3, [], {}, [1, "a", None], {"a": None}, [[[]]], "1e9999999", "5/0"]
RAW = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400", "-0", "9" * 5000, "-" + "9" * 4301,
       "[" * 5000 + "]" * 5000, '{"a":' * 2000 + "1" + "}" * 2000, '"' + "x" * 200_000 + '"',
       "1" + "0" * 400 + ".5", "[" * 101 + "]" * 101]
RAW_MARK = "\x01raw\x01"


def iter_paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into a decoded JSON value (iteratively: a mutant may nest deeply)."""
    stack = [(node, prefix)]
    while stack:
        value, path = stack.pop()
        yield path
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


@st.composite
def mutated_value(draw: st.DrawFn, original: Any) -> tuple[Any, str | None]:
    """(a mutated copy of a decoded JSON document, raw text to splice in for RAW_MARK or None)."""
    doc = copy.deepcopy(original)
    paths = list(iter_paths(doc))
    op = draw(st.sampled_from(["wrong", "wrong", "raw", "raw", "delete", "add", "list", "none"]))
    raw = None
    path = draw(st.sampled_from(paths))
    if not path:
        if op in ("wrong", "raw"):
            return (draw(st.sampled_from(WRONG)), None) if op == "wrong" else (RAW_MARK, draw(st.sampled_from(RAW)))
        return doc, None
    parent, key = _parent(doc, path), path[-1]
    if op == "wrong":
        parent[key] = draw(st.sampled_from(WRONG))
    elif op == "raw":
        parent[key] = RAW_MARK
        raw = draw(st.sampled_from(RAW))
    elif op == "delete":
        del parent[key]
    elif op == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["extra", "id", "k", "\n", ""]))] = draw(st.sampled_from(WRONG))
    elif op == "list" and isinstance(parent[key], list) and parent[key]:
        parent[key] = parent[key] * draw(st.sampled_from([0, 2, 50]))
    return doc, raw


def to_json_text(doc: Any, raw: str | None, ascii_only: bool) -> str:
    text = json.dumps(doc, ensure_ascii=ascii_only)
    if raw is not None:
        text = text.replace(json.dumps(RAW_MARK, ensure_ascii=ascii_only), raw, 1)
    return text


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """`data`, often left alone, else truncated, with bytes flipped or inserted, re-encoded, or replaced."""
    op = draw(st.sampled_from(["keep", "keep", "keep", "truncate", "flip", "insert", "latin1", "utf16", "bom",
                               "random", "empty", "nul"]))
    if op == "truncate" and data:
        return data[: draw(st.integers(0, len(data) - 1))]
    if op == "flip" and data:
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            out[draw(st.integers(0, len(out) - 1))] ^= draw(st.integers(1, 255))
        return bytes(out)
    if op == "insert":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.binary(min_size=1, max_size=64)) + data[at:]
    if op == "latin1":
        return data.decode("utf-8", "replace").replace("e", "é").encode("latin-1", "replace")
    if op == "utf16":
        return data.decode("utf-8", "replace").encode("utf-16")
    if op == "bom":
        return b"\xef\xbb\xbf" + data
    if op == "random":
        return draw(st.binary(min_size=0, max_size=4096))
    if op == "empty":
        return b""
    if op == "nul":
        return data.replace(b",", b"\x00,", 1)
    return data


@st.composite
def json_file(draw: st.DrawFn, original: Any) -> bytes:
    doc, raw = draw(mutated_value(original))
    text = to_json_text(doc, raw, draw(st.booleans()))
    return draw(damaged(text.encode("utf-8", "surrogatepass")))


@st.composite
def records(draw: st.DrawFn) -> tuple[list[Any], str | None]:
    """The sample records with one mutated (or the list itself)."""
    base: Any = copy.deepcopy(RECORDS)
    if draw(st.integers(0, 9)) == 0:
        value, raw = draw(mutated_value(base))
        return (value if isinstance(value, list) else [value]), raw
    i = draw(st.integers(0, len(base) - 1))
    rec, raw = draw(mutated_value(base[i]))
    base[i] = rec
    return base, raw


def jsonl_bytes(recs: list[Any], raw: str | None) -> bytes:
    lines = [to_json_text(r, raw, True) for r in recs]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def csv_bytes(recs: list[Any], raw: str | None) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in recs:
        if not isinstance(r, dict):
            writer.writerow([str(r)])
            continue
        row = []
        for c in COLUMNS:
            v = r.get(c)
            if v == RAW_MARK:
                v = raw
            elif isinstance(v, list) and c == "anchors":
                v = ";".join(str(a) for a in v)
            row.append("" if v is None else str(v))
        writer.writerow(row)
    return buf.getvalue().encode("utf-8", "surrogatepass")


# ---- the invariant ---------------------------------------------------------------------


def read_cleanly(read: Callable[[Path], Any], path: Path) -> None:
    """`read(path)` returns, or refuses with a TopologyError of one printable line; never hangs."""
    start = time.monotonic()
    try:
        read(path)
    except TopologyError as err:
        text = str(err)
        assert text.strip(), "an empty message"
        assert not CONTROL.search(text), f"a control character in: {text!r}"
        for problem in err.problems:
            assert not CONTROL.search(str(problem)), f"a control character in: {problem!s}"
    elapsed = time.monotonic() - start
    assert elapsed < SLOW_S, f"{read} took {elapsed:.1f} s on {path}"


def put(name: str, data: bytes) -> Path:
    path = TMP / name
    if path.is_dir():
        import shutil

        shutil.rmtree(path)
    path.write_bytes(data)
    return path


def both_log_readers(path: Path) -> None:
    read_cleanly(read_log, path)
    read_cleanly(lambda p: list(logstream.batches(p)), path)


# ---- the properties, each run twice: a fixed CI sample and a long random one ------------


def _topology(data: bytes) -> None:
    read_cleanly(load_topology, put("doc.storm.json", data))


def _dvert(data: bytes) -> None:
    read_cleanly(load_topology, put("doc.dvert.json", data))


def _trace(data: bytes) -> None:
    read_cleanly(load_trace, put("doc.trace.json", data))


def as_format_error(read: Callable[[Path], Any], *kinds: type[Exception]) -> Callable[[Path], Any]:
    """`read` with its own refusals (`kinds`: one-line errors that are no TopologyError) as FormatErrors, so
    `read_cleanly` checks their message the same way."""
    def wrapped(path: Path) -> Any:
        try:
            return read(path)
        except kinds as err:
            raise FormatError([Problem("file", str(err))]) from None
    return wrapped


def _plot_series(path: Path) -> Any:
    """What `stormbound plot` reads: the trace's series (app/core/long_trace.py), `/1` or `/2`."""
    data = read_json(path)
    return read_long_trace(data) if isinstance(data, dict) else None


def _compressed_trace(data: bytes) -> None:
    path = put("doc.trace.json", data)
    read_cleanly(load_trace, path)
    read_cleanly(as_format_error(_plot_series, ExpandError), path)


def _gz_trace(data: bytes) -> None:
    path = put("doc.trace.json.gz", data)
    read_cleanly(load_trace, path)
    read_cleanly(as_format_error(_plot_series, ExpandError), path)


def _timings(data: bytes) -> None:
    read_cleanly(as_format_error(read_timings, TimingsError), put("timings.yaml", data))


def _verified(data: bytes) -> None:
    read_cleanly(lambda p: check_verified(read_json(p)), put("doc.verified.json", data))


def _flux(data: bytes) -> None:
    read_cleanly(import_flux, put("doc.yaml", data))


def _jsonl(data: bytes) -> None:
    both_log_readers(put("log.jsonl", data))


def _json_log(data: bytes) -> None:
    both_log_readers(put("log.json", data))


def _csv(data: bytes) -> None:
    both_log_readers(put("log.csv", data))


def _metrics(data: bytes) -> None:
    read_cleanly(read_log, put("metrics.log", data))


def _storm_events(data: bytes) -> None:
    read_cleanly(read_log, put("events.log", data))


TOPOLOGY = json_file(topology_doc())
DVERT = json_file(dvert_doc())
TRACE = json_file(trace_doc())
COMPRESSED_TRACE = json_file(compressed_trace_doc())


@st.composite
def gz_file(draw: st.DrawFn) -> bytes:
    """A trace, `/1` or `/2`, mutated, gzipped in one or two members, then maybe damaged."""
    text = draw(json_file(draw(st.sampled_from([trace_doc(), compressed_trace_doc()]))))
    cut = draw(st.integers(0, len(text)))
    packed = gzip.compress(text) if draw(st.booleans()) else gzip.compress(text[:cut]) + gzip.compress(text[cut:])
    return draw(damaged(packed))


@st.composite
def timings_file(draw: st.DrawFn) -> bytes:
    """A timings YAML file, mutated as JSON text (YAML reads it) or as YAML with anchors and aliases."""
    if draw(st.booleans()):
        return draw(json_file(TIMINGS_DOC))
    lines = list(TIMINGS_LINES)
    i = draw(st.integers(0, len(lines) - 1))
    lines[i] = draw(st.sampled_from([lines[i] + " &a", "x: &a [" + ", ".join(["*b"] * 9) + "]", lines[i] + ": [",
                                     "  alpha: " + "9" * 5000, "  sigma: .nan", "  alpha: *zz", "\t" + lines[i],
                                     "b: &b [" + ", ".join(["x"] * 9) + "]\nc: &c [" + ", ".join(["*b"] * 9) + "]\n"
                                     "d: [" + ", ".join(["*c"] * 9) + "]"]))
    return draw(damaged(("\n".join(lines) + "\n").encode("utf-8")))


TIMINGS = timings_file()
GZ_TRACE = gz_file()
VERIFIED = json_file(verified_doc())
FLUX = json_file(FLUX_DOC)  # YAML 1.1 reads JSON text (and Flux's own checks apply)
JSONL = records().map(lambda r: jsonl_bytes(*r)).flatmap(damaged)
JSON_LOG = st.one_of(json_file({"events": RECORDS[:-1], "queues": RECORDS[-1:]}), json_file(RECORDS))
CSV = records().map(lambda r: csv_bytes(*r)).flatmap(damaged)

ODD_VALUES = ["nan", "NaN", "1e400", "-5", "2.5", "", "abc", "9" * 5000, "-0", "1e-400", "\x1b"]


@st.composite
def metrics_file(draw: st.DrawFn) -> bytes:
    lines = list(METRICS_LINES)
    i = draw(st.integers(0, len(lines) - 1))
    odd = draw(st.sampled_from(ODD_VALUES))
    lines[i] = re.sub(r"(=|\s)(\d+(?:\.\d+)?)(}|\s*$)", lambda m: m[1] + odd + m[3], lines[i], count=1)
    if draw(st.booleans()):
        lines[i] = lines[i].replace(" 3:b ", draw(st.sampled_from([" 99999999999999999999999:b ", " -4:b ",
                                                                   " 3:\x1b ", " x:b "])))
    return draw(damaged(("\n".join(lines) + "\n").encode("utf-8")))


@st.composite
def events_log_file(draw: st.DrawFn) -> bytes:
    lines = list(EVENTS_LINES)
    i = draw(st.integers(0, len(lines) - 1))
    field = draw(st.integers(0, 4))
    parts = lines[i].split(",", 4)
    parts[field] = draw(st.sampled_from(["", "9" * 5000, "-1", "Xyz Foo 99 99:99:99 UTC 0", "\x1b", "²", "[", "a,b"]))
    lines[i] = ",".join(parts)
    return draw(damaged(("\n".join(lines) + "\n").encode("utf-8")))


METRICS = metrics_file()
STORM_EVENTS = events_log_file()

CASES = [
    ("topology", TOPOLOGY, _topology),
    ("dvert", DVERT, _dvert),
    ("trace", TRACE, _trace),
    ("compressed_trace", COMPRESSED_TRACE, _compressed_trace),
    ("gz_trace", GZ_TRACE, _gz_trace),
    ("timings", TIMINGS, _timings),
    ("verified", VERIFIED, _verified),
    ("flux", FLUX, _flux),
    ("jsonl", JSONL, _jsonl),
    ("json_log", JSON_LOG, _json_log),
    ("csv", CSV, _csv),
    ("metrics", METRICS, _metrics),
    ("storm_events", STORM_EVENTS, _storm_events),
]


@pytest.mark.parametrize(("kind", "strategy", "check"), CASES, ids=[c[0] for c in CASES])
def test_reader_refuses_cleanly_or_reads(kind: str, strategy: st.SearchStrategy[bytes], check) -> None:
    CI(given(strategy)(check))()


@pytest.mark.fuzz
@pytest.mark.parametrize(("kind", "strategy", "check"), CASES, ids=[c[0] for c in CASES])
def test_reader_refuses_cleanly_or_reads_long(kind: str, strategy: st.SearchStrategy[bytes], check) -> None:
    FUZZ(given(strategy)(check))()


# ---- Parquet: damaged bytes and odd column types ----------------------------------------


def _parquet_bytes(table: Any) -> bytes:
    pq = pytest.importorskip("pyarrow.parquet")
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@st.composite
def parquet_file(draw: st.DrawFn) -> bytes:
    pa = pytest.importorskip("pyarrow")
    rows = [{c: r.get(c) for c in COLUMNS} for r in RECORDS]
    table = pa.Table.from_pylist(rows)
    column = draw(st.sampled_from(COLUMNS))
    kind = draw(st.sampled_from(["keep", "string", "nan", "negative", "null", "bool", "huge"]))
    n = table.num_rows
    replacement = {
        "string": pa.array(["\x1b" + str(i) for i in range(n)]),
        "nan": pa.array([float("nan")] * n),
        "negative": pa.array([-5] * n),
        "null": pa.array([None] * n, type=pa.string()),
        "bool": pa.array([True] * n),
        "huge": pa.array([1e308 * 10] * n),
    }.get(kind)
    if replacement is not None:
        table = table.set_column(COLUMNS.index(column), column, replacement)
    return draw(damaged(_parquet_bytes(table)))


def _parquet(data: bytes) -> None:
    both_log_readers(put("log.parquet", data))


def test_parquet_reader_refuses_cleanly_or_reads() -> None:
    pytest.importorskip("pyarrow")
    CI(given(parquet_file())(_parquet))()


@pytest.mark.fuzz
def test_parquet_reader_refuses_cleanly_or_reads_long() -> None:
    pytest.importorskip("pyarrow")
    FUZZ(given(parquet_file())(_parquet))()


# ---- a few inputs no mutation above reaches ------------------------------------------------


def test_yaml_alias_bomb_is_refused() -> None:
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f'{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},'
              f'*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]' for i in range(8)]
    lines += ["name: bomb", "spouts: *i", "bolts: []", "streams: []"]
    read_cleanly(import_flux, put("bomb.yaml", ("\n".join(lines) + "\n").encode()))


def test_log_run_folder_of_odd_entries() -> None:
    folder = TMP / "run"
    folder.mkdir(exist_ok=True)
    (folder / "events.jsonl").write_bytes(jsonl_bytes(RECORDS, None))
    (folder / "queues.csv").mkdir(exist_ok=True)
    both_log_readers(folder)


# ---- the depth pre-check agrees with the decoded depth -----------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.text(alphabet='[]{}"\\ ab\n', max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=4), inner,
                                                                max_size=3),
    max_leaves=30)


def decoded_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((decoded_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((decoded_depth(v) for v in value), default=0)
    return 0


@CI
@given(JSON_VALUES, st.integers(0, 6), st.booleans())
def test_depth_check_agrees_with_the_decoded_depth(value: Any, limit: int, ascii_only: bool) -> None:
    from app.core.formats.limits import depth_overflow

    text = json.dumps(value, ensure_ascii=ascii_only)
    assert (depth_overflow(text, limit) is None) == (decoded_depth(value) <= limit), text


# ---- issue 33: units, stream declarations, failure fields, Parquet folders and rolled logs, Storm UI number
# shapes, HTTP/1.1 slow bodies. Each runs a fixed CI sample and a long random one (`make fuzz`).

SMALL_CI = settings(max_examples=40, derandomize=True, **_COMMON)  # type: ignore[arg-type]
SMALL_FUZZ = settings(max_examples=400, **_COMMON)  # type: ignore[arg-type]
UNITS = ["", "ms", "s", "us", "µs", "ns", "min", "h", "/s", "/min", "/ms", " tuples/s", "m", "sec", "\x1b", "/x"]
UNIT_TEXT = st.one_of(
    st.builds(lambda sign, mantissa, exponent, unit: f"{sign}{mantissa}{exponent}{unit}",
              st.sampled_from(["", "-", "+", " "]),
              st.one_of(st.integers(0, 10**6).map(str), st.floats(0, 1e6).map(repr),
                        st.text("0123456789.", min_size=1, max_size=300)),
              st.one_of(st.just(""), st.integers(-10**9, 10**9).map(lambda e: f"e{e}"),
                        st.integers(-400, 400).map(lambda e: f"E{e}")),
              st.sampled_from(UNITS)),
    st.text(max_size=300))


def _units(text: str) -> None:
    """Every time and rate the command line and the app parse: a value the model takes, or one UnitError line,
    at once (a huge exponent is not built digit by digit)."""
    import math

    from app.core.units import MAX_MAGNITUDE, MIN_MAGNITUDE, UnitError, parse_duration, parse_rate

    start = time.monotonic()
    for parse in (parse_duration, parse_rate):
        try:
            value = parse(text)
        except UnitError as err:
            assert "\n" not in str(err).strip() and len(str(err)) < 400, str(err)
        else:
            assert math.isfinite(value) and (value == 0 or MIN_MAGNITUDE <= abs(value) <= MAX_MAGNITUDE), value
    assert time.monotonic() - start < SLOW_S, text[:80]


def _annotate_values(items: list[str]) -> None:
    """`annotate`'s planning of KEY=VALUE items on a document: changes, or one UsageError line."""
    from app.cli.annotate import plan
    from app.cli.common import UsageError

    doc = topology_doc()
    doc["bolts"][0]["streams"] = ["extra"]
    start = time.monotonic()
    for component in ("split", "sentences", "settings"):
        try:
            plan(doc, component, items)
        except UsageError as err:
            assert "\n" not in str(err) and len(str(err)) < 600, str(err)
    assert time.monotonic() - start < SLOW_S


KEYS = ["alpha", "sigma", "parallelism", "min_ttf", "rate", "burst", "sigma.extra", "ratio.extra",
        "min_reboot_time", "max_reboot_time", "max_idle_time", "tolerance", "failures", "replay"]
ANNOTATE_ITEMS = st.lists(st.builds(lambda k, v: f"{k}={v}", st.sampled_from(KEYS), UNIT_TEXT), min_size=1,
                          max_size=3)


@st.composite
def stream_declarations(draw: st.DrawFn) -> bytes:
    """A document whose spouts and bolts declare odd, reserved, duplicate, long or many streams, with values
    and subscriptions naming them (or not)."""
    doc = topology_doc()
    names = st.one_of(st.sampled_from(["default", "__ack", "__tick", "__metrics", "x" * 300, "a\nb", "\u202e", "s",
                                       "s", ""]), st.text(max_size=12))
    for comp in draw(st.lists(st.sampled_from([*doc["spouts"], *doc["bolts"]]), min_size=1, max_size=3)):
        if draw(st.booleans()):
            declared = draw(st.lists(names, max_size=20))
        else:
            declared = [f"s{i}" for i in range(draw(st.sampled_from([10, 1000, 5000])))]
        comp["streams"] = declared if draw(st.integers(0, 9)) else draw(st.sampled_from(WRONG))
        field = "stream_sigma" if "alpha" in comp else "stream_ratio"
        values = {str(n): draw(st.sampled_from([0, 0.5, 2, -1, 1e308, 5e-324, "1", None, True]))
                  for n in (declared[:draw(st.integers(0, 3))] + draw(st.lists(names, max_size=2)))}
        comp[field] = values if draw(st.integers(0, 9)) else draw(st.sampled_from(WRONG))
        for name in declared[:draw(st.sampled_from([0, 1, 3, 1000]))]:
            doc["subscriptions"].append({"source": comp["name"], "target": "split", "stream": name})
    return json.dumps(doc).encode("utf-8")


FAILURE_VALUES = [0, 1e-9, 1e-10, 0.5, 10, 1e12, 1e13, 1e308, 5e-324, -1, None, True, "10", "1e-99999999", [], {}]


@st.composite
def failure_fields(draw: st.DrawFn) -> dict[str, Any]:
    """A document with a failing bolt: min_ttf, the reboot bounds, failures and replay set to anything."""
    doc = topology_doc()
    for bolt in draw(st.lists(st.sampled_from(doc["bolts"]), min_size=1, max_size=2)):
        bolt["min_ttf"] = draw(st.sampled_from(FAILURE_VALUES))
        bolt["alpha"] = draw(st.sampled_from([0.001, 1e-9, 1e12, 0.5, 5e-324, 1e308]))
    settings_ = doc.setdefault("settings", {})
    for key in ("min_reboot_time", "max_reboot_time", "max_idle_time"):
        if draw(st.booleans()):
            settings_[key] = draw(st.sampled_from(FAILURE_VALUES))
    settings_["failures"] = draw(st.sampled_from([True, False, None, "on", 1]))
    settings_["replay"] = draw(st.sampled_from(["paced", "at-once", "none", "", None, 5]))
    doc["spouts"][0]["rate"] = draw(st.sampled_from([1e-9, 1, 1e12, 1e-320, 1e308, "5", True]))
    return doc


def _check_command(doc: dict[str, Any]) -> None:
    """`stormbound check` of the document, in this process: exit 0, 1 or 2 and one line per refusal, never 3."""
    import contextlib

    from app.cli import main

    path = put("failing.storm.json", json.dumps(doc).encode("utf-8"))
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["check", str(path)])
    assert code in (0, 1, 2), (code, err.getvalue()[:300])
    if code == 2:  # one line per problem, at most one per field set wrong
        lines = err.getvalue().strip().splitlines()
        assert 1 <= len(lines) <= 8 and not any(CONTROL.search(line) for line in lines), err.getvalue()[:300]
    assert time.monotonic() - start < SLOW_S


def _streams(data: bytes) -> None:
    read_cleanly(load_topology, put("streams.storm.json", data))


NEW_CASES = [
    ("units", UNIT_TEXT, _units),
    ("annotate_values", ANNOTATE_ITEMS, _annotate_values),
    ("stream_declarations", stream_declarations(), _streams),
    ("failure_fields", failure_fields(), _check_command),
]


@pytest.mark.parametrize(("kind", "strategy", "check"), NEW_CASES, ids=[c[0] for c in NEW_CASES])
def test_new_reader_cases_refuse_cleanly_or_read(kind: str, strategy: st.SearchStrategy[Any], check) -> None:
    SMALL_CI(given(strategy)(check))()


@pytest.mark.fuzz
@pytest.mark.parametrize(("kind", "strategy", "check"), NEW_CASES, ids=[c[0] for c in NEW_CASES])
def test_new_reader_cases_refuse_cleanly_or_read_long(kind: str, strategy: st.SearchStrategy[Any], check) -> None:
    SMALL_FUZZ(given(strategy)(check))()


# ---- Parquet folders and rolled events.log files ------------------------------------------------------------


@st.composite
def parquet_folder(draw: st.DrawFn) -> list[tuple[str, str, bytes]]:
    """Entries of a Parquet folder: (kind, name, bytes) with kind part, fifo, dangling, folder, hidden, empty,
    uint64 (a part whose task and queue columns are uint64, values up to 2^64-1)."""
    entries: list[tuple[str, str, bytes]] = []
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["part", "part", "part", "fifo", "dangling", "folder", "hidden", "empty",
                                     "uint64"]))
        data = b""
        if kind == "part":
            data = draw(parquet_file())
        elif kind == "uint64":
            pa = pytest.importorskip("pyarrow")
            big = draw(st.sampled_from([0, 5, 2**53, 2**53 + 1, 2**63 + 5, 2**64 - 1]))
            data = _parquet_bytes(pa.table({"t": [0.0, 1.0], "ev": ["spout_emit", None], "comp": ["s", "b"],
                                            "task": pa.array([1, big], type=pa.uint64()), "tuple": ["a1", None],
                                            "msg": ["m1", None], "queue": pa.array([None, big], type=pa.uint64())}))
        entries.append((kind, f"part-{i}.parquet" if kind != "hidden" else f"_part-{i}", data))
    return entries


def _parquet_folder(entries: list[tuple[str, str, bytes]]) -> None:
    import os
    import shutil

    folder = TMP / "folder.parquet"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    for kind, name, data in entries:
        path = folder / name
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dangling":
            path.symlink_to(TMP / "gone.parquet")
        elif kind == "folder":
            path.mkdir()
        else:
            path.write_bytes(data)
    both_log_readers(folder)
    read_cleanly(_embedded, folder)


def _embedded(path: Path) -> None:
    """The embedded engine (DuckDB) on the log: a refusal is a TopologyError line, never DuckDB's own error."""
    from app.measure.sql.embedded import embedded_log

    with embedded_log(path) as engine:
        engine.run("SELECT count(*), max(task) FROM events")
        engine.run("SELECT count(*), max(queue) FROM queues")


@st.composite
def rolled_events(draw: st.DrawFn) -> list[tuple[str, bytes]]:
    """A worker's rolled events.log files: live, numbered and gzipped, each maybe damaged, one maybe all
    newlines (a gzip bomb in small)."""
    import gzip

    files: list[tuple[str, bytes]] = []
    for name in draw(st.lists(st.sampled_from(["events.log", "events.log.1", "events.log.2.gz", "events.log.3.gz",
                                               "events.log.gz"]), min_size=1, max_size=3, unique=True)):
        text = draw(events_log_file())
        if draw(st.integers(0, 5)) == 0:
            text = b"\n" * draw(st.sampled_from([1, 1000, 3_000_000]))
        data = gzip.compress(text) if name.endswith(".gz") else text
        files.append((name, draw(damaged(data)) if name.endswith(".gz") else data))
    return files


def _rolled(files: list[tuple[str, bytes]]) -> None:
    import shutil

    port = TMP / "artifacts" / "wc-1-1" / "6700"
    shutil.rmtree(TMP / "artifacts", ignore_errors=True)
    port.mkdir(parents=True)
    for name, data in files:
        (port / name).write_bytes(data)
    (port.parent / "6701").symlink_to(port, target_is_directory=True)
    read_cleanly(read_log, TMP / "artifacts")


def test_parquet_folders_and_rolled_logs_refuse_cleanly_or_read() -> None:
    pytest.importorskip("pyarrow")
    SMALL_CI(given(parquet_folder())(_parquet_folder))()
    SMALL_CI(given(rolled_events())(_rolled))()


@pytest.mark.fuzz
def test_parquet_folders_and_rolled_logs_refuse_cleanly_or_read_long() -> None:
    pytest.importorskip("pyarrow")
    SMALL_FUZZ(given(parquet_folder())(_parquet_folder))()
    SMALL_FUZZ(given(rolled_events())(_rolled))()


# ---- Storm UI number shapes --------------------------------------------------------------------------------

UI_SHAPES = [None, -3, -1, 0, 0.0, -0.0, 1, 10**4000, -(10**4000), 1e308, 5e-324, 2**63, "-3", "3", "0.5", "abc",
             "1e400", "NaN", "", " 7 ", "9" * 4000, True, False, [], {}, [None], {"x": None}]


def _ui_snapshot() -> dict[str, Any]:
    data = ROOT / "tests" / "data" / "storm-ui"
    comps = {c: json.loads((data / f"component-{c}.json").read_text()) for c in ("sentences", "split", "count",
                                                                                  "report")}
    return {"url": "http://127.0.0.1:1", "topology_id": "wordcount-3-1700000000", "window": "600",
            "topology": json.loads((data / "topology.json").read_text()), "components": comps}


UI_BASE = _ui_snapshot()


@st.composite
def ui_replies(draw: st.DrawFn) -> dict[str, Any]:
    """The replies of one import with one to three values (any field, nested too) replaced by an odd shape."""
    snapshot = copy.deepcopy(UI_BASE)
    roots = [snapshot["topology"], *snapshot["components"].values()]
    for _ in range(draw(st.integers(1, 3))):
        root = draw(st.sampled_from(roots))
        paths = [p for p in iter_paths(root) if p]
        path = draw(st.sampled_from(paths))
        _parent(root, path)[path[-1]] = copy.deepcopy(draw(st.sampled_from(UI_SHAPES)))  # never shared: no cycle
    return snapshot


def _ui(snapshot: dict[str, Any]) -> None:
    from app.core.storm.ui.reader import from_storm_ui
    from app.core.storm.ui.replies import StormUISnapshot

    start = time.monotonic()
    try:
        from_storm_ui(StormUISnapshot(**snapshot))
    except TopologyError as err:
        assert "\n" not in str(err) and not CONTROL.search(str(err)) and len(str(err)) < 600, str(err)[:300]
    assert time.monotonic() - start < SLOW_S


def test_storm_ui_number_shapes_refuse_cleanly_or_read() -> None:
    CI(given(ui_replies())(_ui))()


@pytest.mark.fuzz
def test_storm_ui_number_shapes_refuse_cleanly_or_read_long() -> None:
    FUZZ(given(ui_replies())(_ui))()


# ---- HTTP/1.1 slow bodies: a loopback server that drips, stalls or lies about lengths ------------------------


class _SlowServer:
    """A one-behaviour HTTP server on 127.0.0.1 (raw sockets): `plan` says what it sends for every request;
    each connection stops by itself once the client is gone, its time is up, or the server is closed."""

    def __init__(self, plan: dict[str, Any]):
        import socket
        import threading

        self.plan = plan
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.1)
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __enter__(self) -> _SlowServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()

    def _serve(self) -> None:
        import threading

        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: Any) -> None:
        plan = self.plan
        deadline = time.monotonic() + 10  # bounded: the client's deadline is far shorter
        try:
            conn.settimeout(1)
            conn.recv(65536)
            body = plan["body"]
            head = [f"HTTP/{plan['version']} 200 OK", "Content-Type: application/json"]
            if plan["length"] == "right":
                head.append(f"Content-Length: {len(body)}")
            elif plan["length"] == "more":
                head.append(f"Content-Length: {len(body) + 1000}")
            elif plan["length"] == "chunked":
                head.append("Transfer-Encoding: chunked")
            if plan["keepalive"]:
                head.append("Connection: keep-alive")
            data = ("\r\n".join(head) + "\r\n\r\n").encode()
            if plan["length"] == "chunked":
                data += b"".join(b"%x\r\n%s\r\n" % (1, body[i:i + 1]) for i in range(len(body))) + b"0\r\n\r\n"
            else:
                data += body
            step = plan["step"]
            for i in range(0, len(data), step):
                if self.stop.is_set() or time.monotonic() > deadline:
                    break
                conn.sendall(data[i:i + step])
                time.sleep(plan["pause"])
            if plan["stall"]:
                self.stop.wait(min(10.0, max(0.0, deadline - time.monotonic())))
        except OSError:
            pass  # the client cut the connection at its deadline
        finally:
            conn.close()


SLOW_PLANS = st.fixed_dictionaries({
    "version": st.sampled_from(["1.0", "1.1"]),
    "keepalive": st.booleans(),
    "length": st.sampled_from(["right", "more", "none", "chunked"]),
    "step": st.sampled_from([1, 7, 100, 100_000]),
    "pause": st.sampled_from([0.0, 0.01, 0.2]),
    "stall": st.booleans(),
    "body": st.sampled_from([b'{"topologies": []}', b'{"topologies": [' + b'{"id": "x"},' * 200 + b'{}]}',
                             b"[" * 200 + b"]" * 200, b'{"a": 1e400}', b"\xff\xfe"]),
})
HTTP_TIMEOUT_S = 0.8


def _slow(plan: dict[str, Any]) -> None:
    """One GET with a 0.8 s deadline: a reply or one StormUIError line, and back within the deadline (plus
    the join of the helper thread), however the server drips, stalls or lies."""
    from app.core.storm.ui.client import StormUIClient, StormUIError

    with _SlowServer(plan) as server:
        client = StormUIClient(server.url, timeout_s=HTTP_TIMEOUT_S)
        start = time.monotonic()
        try:
            client.get("/api/v1/topology/summary")
        except StormUIError as err:
            assert "\n" not in str(err) and not CONTROL.search(str(err)), str(err)
        assert time.monotonic() - start < HTTP_TIMEOUT_S + 1.5, plan


def test_http_slow_bodies_end_within_the_deadline() -> None:
    settings(max_examples=8, derandomize=True, **_COMMON)(given(SLOW_PLANS)(_slow))()  # type: ignore[arg-type]


@pytest.mark.fuzz
def test_http_slow_bodies_end_within_the_deadline_long() -> None:
    settings(max_examples=80, **_COMMON)(given(SLOW_PLANS)(_slow))()  # type: ignore[arg-type]
