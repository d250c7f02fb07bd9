"""A `/1` trace's positions decoded one at a time (app/core/formats/limits.py, `decode_lazily`): the same series
as the whole document decoded, the same one-line refusal for every bad text, and a fraction of the memory."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from app.core.formats.jsonfile import read_json
from app.core.formats.limits import FormatError, LazyItems, decode_lazily, load_json_text
from app.core.formats.trace import load_trace
from app.core.long_trace import read_long_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.trace_memory import long_plain_trace  # noqa: E402 - the bench's own /1 trace builder

ROOT = Path(__file__).resolve().parents[2]
TRACES = sorted((ROOT / "tests" / "data" / "traces").glob("*.trace.json"))


def whole(value: Any) -> Any:
    return {k: (list(v) if isinstance(v, LazyItems) else v) for k, v in value.items()} if isinstance(value, dict) \
        else value


@pytest.mark.parametrize("text", [
    '{"a": 1, "positions": [1, {"x": [2]}, "s"], "b": [3]}', '{"positions": []}', "{}", "[1, 2]", ' {"positions" :'
    ' [ 1 , 2 ] } ', '{"positions": [1,]}', '{"positions": [NaN]}', '{"a": 1, "a": 2}', '{"positions": [1e400]}',
    '{"a": 1,}', '{"a": 1} x', '{"positions": [{"q": 1, "q": 2}]}', '{"positions": [' + "[" * 300 + "]" * 300 + "]}",
    '{"positions": [' + "9" * 5000 + "]}", '{"positions" [1]}', '{"positions": [1 2]}', "", '"x"'])
def test_every_text_decodes_or_is_refused_as_the_whole_decoder_does(text: str) -> None:
    try:
        expected: Any = load_json_text(text)
    except FormatError as err:
        expected = str(err)
    try:
        found = whole(decode_lazily(text, "positions"))
    except FormatError as err:
        found = str(err)
    assert found == expected


@pytest.mark.parametrize("path", TRACES, ids=[p.name for p in TRACES])
def test_a_trace_read_lazily_has_the_series_of_the_trace_decoded_whole(path: Path) -> None:
    from tests.unit.test_long_trace import same_series

    lazy = read_json(path, lazy="positions")
    assert isinstance(lazy["positions"], LazyItems)
    lazy.pop("$schema", None)
    full = json.loads(path.read_text(encoding="utf-8"))
    full.pop("$schema", None)
    for passes in (0, 2):
        same_series(read_long_trace(lazy, passes).series, read_long_trace(full, passes).series)
    assert load_trace(path)  # the file is a trace the app reads whole too


def test_a_long_trace_read_lazily_holds_a_fraction_of_the_whole_decode(tmp_path: Path) -> None:
    """What the plot holds once the series are made, its document still referenced (as `plot` holds it): the
    text and a row a position, not the decoded positions (the reader's fixed read buffer is the same for both)."""
    path = tmp_path / "long.trace.json"
    path.write_text(json.dumps(long_plain_trace(3000)), encoding="utf-8")

    def held(read: Any) -> int:
        tracemalloc.start()
        try:
            data = read()
            data.pop("$schema", None)
            series = read_long_trace(data)
            assert len(series.series.times) == 3000
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()

    lazily = held(lambda: read_json(path, lazy="positions"))
    wholly = held(lambda: read_json(path))
    assert lazily < 0.5 * wholly, (lazily, wholly)


def test_the_depth_check_finds_the_brackets_outside_strings_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """The depth check (limits.depth_overflow) cut a 50 MB text into a piece per quote at once: 600 MB of pieces
    for a 150,000-position trace; a chunk at a time, carrying whether a chunk starts inside a string."""
    import random

    from app.core.formats import limits

    monkeypatch.setattr(limits, "_CHUNK", 7)  # chunks end inside strings, on quotes, between brackets
    rng = random.Random(1)
    for _ in range(300):
        doc = [{"a": "x[{" * rng.randint(0, 3), "b": [[1], {"c": "]" * rng.randint(0, 2)}]}
               for _ in range(rng.randint(0, 5))]
        text = json.dumps(doc)
        expected = "".join(text.split('"')[0::2]).encode().translate(None, limits._NOT_BRACKETS)
        assert limits._brackets_outside_strings(text) == expected, text
    deep = '{"s": "[[[[", "a": ' + "[" * 600 + "]" * 600 + "}"
    assert limits.depth_overflow(deep, 500) is not None and limits.depth_overflow(deep, 700) is None


def test_a_small_file_is_read_without_a_buffer_the_size_of_the_limit(tmp_path: Path) -> None:
    from app.core.fileio import read_bytes

    path = tmp_path / "small.json"
    path.write_bytes(b"{}" * 1000)
    tracemalloc.start()
    try:
        assert read_bytes(path, ValueError, 64 * 1024 * 1024) == b"{}" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1024 * 1024, peak  # it allocated the limit's 64 MB first
    with pytest.raises(ValueError, match="over the limit of 100 bytes"):
        read_bytes(path, ValueError, 100)
