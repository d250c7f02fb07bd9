"""Hostile input for the expression and pattern languages and for DiffStream streams and specs (docs/limits.md).

Every case gives exit 2 and one line naming the file or field, the problem and, for a limit, its name;
or a correct result where the input is in fact valid. Each runs well inside a few seconds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cep import PatternError, compile_pattern, find_matches, load_patterns, parse_ast, parse_text
from app.cep.nodes import Pattern
from app.cli import main
from app.diff import DiffError, diff_streams, parse_dependence, parse_equality, read_stream
from app.expr import ExprError, parse_expr
from app.expr.limits import LIMITS, LimitSettingError, limit, one_line, parse_settings, set_limits


@pytest.fixture(autouse=True)
def _default_limits(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("STORMBOUND_LIMITS", raising=False)
    set_limits({})
    yield
    set_limits({})


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    start = time.perf_counter()
    code = main(argv)
    assert time.perf_counter() - start < 30, "a hostile input must not hang the command"
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    assert all(ch == "\t" or ch >= " " for ch in lines[0]), "control characters must be escaped"
    return lines[0]


@pytest.fixture()
def ok(tmp_path: Path) -> Path:
    path = tmp_path / "ok.jsonl"
    path.write_text('{"a": 1}\n{"a": 2}\n')
    return path


@pytest.fixture()
def events(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps({"type": t, "t": i}) + "\n" for i, t in enumerate("abab")))
    return path


# ---- expressions (diff predicates) ----------------------------------------------------------

DEEP_PREDICATES = {
    "parentheses": "(" * 1000 + "x.a" + ")" * 1000 + " == 1",
    "not": "not " * 10_000 + "x.a",
    "minus": "-" * 10_000 + "x.a",
    "brackets": "[" * 1000 + "1" + "]" * 1000 + " == x.a",
    "fields": "x" + ".a" * 1000 + " == 1",
}


@pytest.mark.parametrize("name", sorted(DEEP_PREDICATES))
def test_deep_predicates_are_refused_naming_expr_depth(name: str, ok: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "predicate:" + DEEP_PREDICATES[name]], capsys)
    line = _one_line_error(code, err)
    assert "dependence.expr" in line and "expr_depth = 64" in line and len(line) < 400


def test_flat_chain_of_20000_or_is_valid_and_evaluates() -> None:
    source = " or ".join(["x.a == 1"] * 19_999 + ["x.a == 2"])
    assert parse_expr(source).evaluate(x={"a": 2}, y=None) is True
    assert parse_expr(source).evaluate(x={"a": 3}, y=None) is False
    assert parse_expr(" + ".join(["x.a"] * 20_000)).evaluate(x={"a": 1}, y=None) == 20_000
    assert parse_expr(" and ".join(["x.a > 0"] * 5000)).evaluate(x={"a": 1}, y=None) is True


def test_chains_keep_python_semantics() -> None:
    assert parse_expr("x.a or x.b or x.c").evaluate(x={"a": 0, "b": "", "c": 7}, y=None) == 7
    assert parse_expr("x.a and x.b and x.c").evaluate(x={"a": 1, "b": 0, "c": 7}, y=None) == 0
    assert parse_expr("10 - 3 - 2 * 2 // 3 + 1").evaluate(x=None, y=None) == 10 - 3 - 2 * 2 // 3 + 1
    with pytest.raises(Exception, match="position 8 .*division by zero"):
        parse_expr("x.a + 1 / 0").evaluate(x={"a": 1}, y=None)


def test_huge_numbers_in_predicates(ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "predicate:x.a == " + "9" * 5000], capsys)
    line = _one_line_error(code, err)
    assert "5,000 digits" in line and "number_digits = 1,000" in line
    with pytest.raises(ExprError, match="too large"):
        parse_expr("x.a < 1e400")
    assert parse_expr("x.a < " + "9" * 999).evaluate(x={"a": 1}, y=None) is True


def test_expression_length_limit_and_setting() -> None:
    set_limits({"expr_length": 10})
    with pytest.raises(ExprError, match="expr_length = 10"):
        parse_expr("x.a == 12345")
    set_limits({"expr_depth": 100})
    assert parse_expr("(" * 90 + "x.a" + ")" * 90).evaluate(x={"a": 4}, y=None) == 4


def test_error_messages_are_cut_and_escaped() -> None:
    with pytest.raises(ExprError) as err:
        parse_expr("x.a == 1 ) " + "y" * 5000 + "\n\x1b")
    assert len(str(err.value)) < 200 and "\n" not in str(err.value) and "\x1b" not in str(err.value)
    assert one_line("a\nb\x1b\ud800") == "a\\nb\\x1b\\ud800"
    assert one_line("x" * 100, 10) == "x" * 9 + "…"


# ---- DiffStream streams and specs -------------------------------------------------------------


def test_deep_json_in_streams_and_specs(tmp_path: Path, ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 10_000 + "]" * 10_000 + "\n1\n")
    code, _, err = _run(["diff", str(deep), str(ok), "-d", "all"], capsys)
    line = _one_line_error(code, err)
    assert str(deep) in line and "line 1" in line and "json_depth = 100" in line
    array = tmp_path / "deep.json"
    array.write_text("[" + "[" * 10_000 + "]" * 10_000 + "]")
    code, _, err = _run(["diff", str(array), str(ok), "-d", "all"], capsys)
    assert "json_depth" in _one_line_error(code, err)
    inline = '{"kind": "all", "description": ' + "[" * 10_000 + "]" * 10_000 + "}"
    code, _, err = _run(["diff", str(ok), str(ok), "-d", inline], capsys)
    assert "dependence" in _one_line_error(code, err)
    folder = tmp_path / ("a_long_folder_name_" * 4) / ("another_one_" * 4)
    folder.mkdir(parents=True)
    spec = folder / "spec.json"
    spec.write_text(inline)
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "@" + str(spec)], capsys)
    line = _one_line_error(code, err)
    # a long path is cut at its start, so the line still names the file
    assert len(str(spec)) > 100 and "…" in line and "spec.json" in line and "json_depth" in line


def test_items_nested_within_the_limit_are_compared(tmp_path: Path) -> None:
    item = "[" * 90 + "1" + "]" * 90
    path = tmp_path / "nested.jsonl"
    path.write_text(item + "\n" + item + "\n")
    assert diff_streams(read_stream(path), read_stream(path), "all").equivalent


def test_lone_surrogate_in_a_stream_is_compared_and_printed(tmp_path: Path, ok: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('"\\ud800"\n"x\\n\\u001b"\n')
    code, out, err = _run(["diff", str(odd), str(ok), "-d", "all"], capsys)
    assert code == 1 and err == ""
    assert '"\\ud800"' in out
    out.encode("utf-8")  # printable
    code, out, _ = _run(["diff", str(odd), str(odd), "-d", "all", "--json"], capsys)
    assert code == 0 and json.loads(out)["equivalent"] is True


def test_latin1_spec_file(tmp_path: Path, ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "latin1.json"
    spec.write_bytes('{"kind": "predicate", "expr": "x.a == \'é\'"}'.encode("latin-1"))
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "@" + str(spec)], capsys)
    line = _one_line_error(code, err)
    assert "latin1.json" in line and "not UTF-8" in line
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "@" + str(tmp_path)], capsys)
    assert "cannot read" in _one_line_error(code, err)


def test_latin1_and_huge_numbers_in_streams(tmp_path: Path, ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"a": "é"}\n{"a": 2}\n'.encode("latin-1"))
    code, _, err = _run(["diff", str(latin), str(ok), "-d", "all"], capsys)
    assert "not UTF-8" in _one_line_error(code, err)
    big = tmp_path / "big.jsonl"
    big.write_text('{"a": %s}\n{"a": 1}\n' % ("9" * 5000))
    code, _, err = _run(["diff", str(big), str(ok), "-d", "all"], capsys)
    line = _one_line_error(code, err)
    assert "big.jsonl: line 1" in line and "5,000 digits" in line


def test_bad_parquet_is_one_line_naming_the_file(tmp_path: Path, ok: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really\n(parquet)\n")
    code, _, err = _run(["diff", str(bad), str(ok), "-d", "all"], capsys)
    line = _one_line_error(code, err)
    assert "bad.parquet" in line and "in null" not in line and "item 0" not in line


def test_only_without_fields_is_refused(ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "all", "-e", "only:"], capsys)
    assert "only:" in _one_line_error(code, err)
    with pytest.raises(DiffError, match="only"):
        parse_equality({"kind": "structural", "only": []})
    assert parse_equality("only:a").only == ["a"]


def test_spec_messages_escape_what_they_echo() -> None:
    with pytest.raises(DiffError) as err:
        parse_dependence("bogus\n\x1b[31m" + "z" * 500)
    assert "\n" not in str(err.value) and "\x1b" not in str(err.value) and len(str(err.value)) < 250


# ---- CEP patterns ----------------------------------------------------------------------------

REFUSED_PATTERNS = {
    "take{100000}": "repeat_count = 10,000",
    "take{" + "1" + "0" * 30 + "}": "repeat_count",
    "((take{50}){50}){50}": "automaton_size = 10,000",
    "(" * 30 + "a" + "".join(f" AND b{i})" for i in range(30)): "automaton_size",
    "(" * 1000 + "a" + ")" * 1000: "pattern_depth = 64",
    "NOT " * 10_000 + "a": "pattern_depth",
    "a -> b(x > " + "9" * 5000 + ")": "number_digits",
    "a" + "{2}" * 200: "pattern_depth",
    "a{" + "0" * 5000 + "5} -> b{" + "0" * 6000 + "}": "at least 1",
}


@pytest.mark.parametrize("text", sorted(REFUSED_PATTERNS), ids=lambda t: t[:20])
def test_hostile_patterns_are_refused_quickly(text: str, tmp_path: Path, events: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.cep"
    path.write_text("p: " + text + "\n")
    code, _, err = _run(["cep", str(path), str(events)], capsys)
    line = _one_line_error(code, err)
    assert "p.cep" in line and REFUSED_PATTERNS[text] in line and len(line) < 400


def test_large_patterns_within_the_limits_compile_and_match(events: Path) -> None:
    start = time.perf_counter()
    compile_pattern(Pattern("t", parse_text("take{10000}")))
    compile_pattern(Pattern("o", parse_text(" OR ".join(f"a{i}" for i in range(5000)))))
    assert time.perf_counter() - start < 20
    pattern = Pattern("p", parse_text(" OR ".join(f"x{i}" for i in range(3000)) + " OR a"))
    assert len(find_matches([pattern], [{"type": "a", "t": 0}, {"type": "b", "t": 1}])) == 1
    two = Pattern("two", parse_text("(a -> b){2}"))
    assert [m.indices for m in find_matches([two], [{"type": t, "t": i} for i, t in enumerate("abab")])] == \
        [[0, 1, 2, 3]]


def test_automaton_size_is_estimated_before_building() -> None:
    start = time.perf_counter()
    with pytest.raises(PatternError, match="automaton_size"):
        compile_pattern(Pattern("big", parse_text("((a -> b){1000}){1000}")))
    # refused in under a millisecond; building its 2 million transitions first would take minutes (generous bound)
    assert time.perf_counter() - start < 10
    set_limits({"automaton_size": 20_000, "repeat_count": 20_000})
    assert len(compile_pattern(Pattern("t", parse_text("take{15000}"))).edges) == 15_000


def test_json_patterns(tmp_path: Path, events: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {
        "times": ([{"id": "p", "ast": {"op": "times", "n": 10**7, "arg": {"atom": "a"}}}], "repeat_count"),
        "test_object": ([{"id": "p", "ast": {"atom": "a", "tests": [["x", "==", {}]]}}], "tests[0][2]"),
        "test_list": ([{"id": "p", "ast": {"op": "follows", "args": [
            {"atom": "a", "tests": [["x", "==", [1]]]}, {"atom": "b"}]}}], "args[0].tests[0][2]"),
    }
    for name, (doc, expected) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        code, _, err = _run(["cep", str(path), str(events)], capsys)
        assert expected in _one_line_error(code, err), name
    deep = tmp_path / "deep.json"
    deep.write_text('[{"id": "p", "ast": ' + '{"op": "not", "arg": ' * 10_000 + '{"atom": "a"}'
                    + "}" * 10_000 + "}]")
    code, _, err = _run(["cep", str(deep), str(events)], capsys)
    assert "json_depth" in _one_line_error(code, err)
    raw = tmp_path / "raw.json"
    raw.write_text("[" * 10_000 + "]" * 10_000)
    code, _, err = _run(["cep", str(raw), str(events)], capsys)
    assert "json_depth" in _one_line_error(code, err)
    nested = {"atom": "a"}
    for _ in range(80):
        nested = {"op": "within", "window": 1, "arg": nested}
    with pytest.raises(PatternError, match="pattern_depth"):
        parse_ast(nested)


def test_pattern_references_cannot_blow_up(tmp_path: Path) -> None:
    lines = ["p0: a -> b"] + [f"p{k}: @p{k - 1} -> @p{k - 1}" for k in range(1, 40)]
    path = tmp_path / "refs.cep"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(PatternError, match="pattern_size"):
        load_patterns(path)


def test_defines_and_constants(tmp_path: Path) -> None:
    path = tmp_path / "d.cep"
    path.write_text("define X = {}\np: a(x == $X)\n")
    with pytest.raises(PatternError, match="line 1.*define X"):
        load_patterns(path)
    path.write_text("define X = " + "[" * 5000 + "]" * 5000 + "\np: a(x == $X)\n")
    with pytest.raises(PatternError, match="json_depth"):
        load_patterns(path)
    path.write_text("p: a(x == 1e999)\n")
    with pytest.raises(PatternError, match="too large"):
        load_patterns(path)
    path.write_text("define X = 5\np: a(x == $X)\n")
    assert load_patterns(path)[0].ast == parse_text("a(x == 5)")


def test_plain_event_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pattern = tmp_path / "p.cep"
    pattern.write_text("p: a -> b\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": [1], "t": 0}\n{"type": "b", "t": 1}\n')
    code, _, err = _run(["cep", str(pattern), str(bad)], capsys)
    assert "event 0.type" in _one_line_error(code, err)
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"type": "a", "t": 0, "x": "\\ud800\\n"}\n{"type": "b", "t": 1}\n')
    code, out, _ = _run(["cep", str(pattern), str(odd)], capsys)
    assert code == 0 and out.count("\n") == 2 and "\\ud800\\n" in out
    out.encode("utf-8")


# ---- the settings --------------------------------------------------------------------------


def test_limit_option_and_environment(tmp_path: Path, ok: Path, events: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.cep"
    path.write_text("p: a{20000}\n")
    code, _, err = _run(["cep", str(path), str(events)], capsys)
    assert "repeat_count" in _one_line_error(code, err)
    code, out, _ = _run(["cep", str(path), str(events), "--limit", "repeat_count=20000",
                         "--limit", "automaton_size=20000"], capsys)
    assert code == 0 and "0 matches" in out
    monkeypatch.setenv("STORMBOUND_LIMITS", "repeat_count=20000,automaton_size=20000")
    code, out, _ = _run(["cep", str(path), str(events)], capsys)
    assert code == 0
    monkeypatch.setenv("STORMBOUND_LIMITS", "bogus=1")
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "all"], capsys)
    assert "STORMBOUND_LIMITS: unknown limit 'bogus'" in _one_line_error(code, err)
    monkeypatch.delenv("STORMBOUND_LIMITS")
    code, _, err = _run(["diff", str(ok), str(ok), "-d", "all", "--limit", "json_depth=100000"], capsys)
    assert "json_depth must be between 1 and 400" in _one_line_error(code, err)


def test_every_limit_has_a_sane_default() -> None:
    for lim in LIMITS.values():
        assert 1 <= lim.default <= lim.maximum and limit(lim.name) == lim.default and lim.what
    with pytest.raises(LimitSettingError, match="whole number"):
        parse_settings("expr_depth=lots", "--limit")


def test_json_depth_follows_the_file_readers_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STORMBOUND_MAX_JSON_DEPTH", "150")
    assert limit("json_depth") == 150
    monkeypatch.setenv("STORMBOUND_LIMITS", "json_depth=120")
    assert limit("json_depth") == 120
    set_limits({"json_depth": 110})
    assert limit("json_depth") == 110


def test_cases_found_by_the_fuzzer() -> None:
    with pytest.raises(PatternError, match=r"ast\.params"):
        parse_ast({"atom": "a", "params": [[{"atom": "a"}]]})
    long_field = "k" + "9" * 5000
    with pytest.raises(Exception) as err:
        parse_expr(f"x.{long_field} == 1").evaluate(x={"a": 1}, y=None)
    assert len(str(err.value)) < 300 and "no field" in str(err.value)
    with pytest.raises(DiffError) as diff_err:
        diff_streams([{"a": 1}, {"a": 2}], [{"a": 2}, {"a": 1}], f"predicate:x.{long_field} == y.a")
    assert len(str(diff_err.value)) < 400


def test_only_ascii_digits_are_numbers() -> None:
    with pytest.raises(ExprError, match="unexpected character"):
        parse_expr("x.¹key == 1")
    with pytest.raises(ExprError):
        parse_expr("¹ == x.a")
    assert parse_expr("x.key¹ == 1").evaluate(x={"key¹": 1}, y=None) is True
    with pytest.raises(LimitSettingError, match="whole number"):
        parse_settings("expr_depth=¹", "--limit")


def test_field_paths_with_huge_or_odd_numbers(ok: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["diff", str(ok), str(ok), "-d", "same_key:a." + "9" * 5000], capsys)
    assert code == 2 and "no field" in err and len(err) < 400
    assert diff_streams([{"a": {"¹": 1}}], [{"a": {"¹": 1}}], "same_key:a.¹").equivalent
