"""The presentation room (app/core/words.py, app/core/numbers.py): "and N more" written by one function, a
decimal read as a fraction by one function, and verdict prose written from figures in the form the reader asks
for (no reader edits the prose afterwards)."""

from __future__ import annotations

import ast
import pathlib
import re
from fractions import Fraction

import pytest

from app.core.numbers import exact, exact_text
from app.core.results import BoltVerdict, VerifyResult
from app.core.words import Exactly, Figure, Words, listed, more

APP = pathlib.Path(__file__).resolve().parents[2] / "app"


def test_listed_counts_what_it_leaves_out() -> None:
    assert listed([]) == ""
    assert listed(["a", "b"]) == "a, b"
    assert listed([str(i) for i in range(7)], 5) == "0, 1, 2, 3, 4 and 2 more"
    assert listed(["a", "b", "c"], 2, "; ") == "a; b and 1 more"
    assert more(3, "growing bolts") == "and 3 more growing bolts"


def test_and_n_more_is_written_in_one_place() -> None:
    """No module but app/core/words.py writes "and {N} more" itself (f-strings included)."""
    pattern = re.compile(r"and \{[^}]*\} more|\{[^}]*\} more \(")
    found = []
    for path in APP.rglob("*.py"):
        if path.name == "words.py" and path.parent.name == "core":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and pattern.search(ast.unparse(node)):
                found.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert not found, f"write 'and N more' with app.core.words.listed / more: {found}"


def test_a_typed_decimal_is_read_once() -> None:
    """`Fraction(str(x))` (a typed decimal as its exact fraction) lives in app/core/numbers.py only (and in
    app/spark/tasks.py, which Spark ships to its workers with nothing of app)."""
    found = []
    for path in APP.rglob("*.py"):
        if path.relative_to(APP).as_posix() in ("core/numbers.py", "spark/tasks.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Fraction"
                    and node.args and isinstance(node.args[0], ast.Call)
                    and isinstance(node.args[0].func, ast.Name) and node.args[0].func.id in ("str", "repr")):
                found.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert not found, f"read a decimal with app.core.numbers.exact: {found}"


@pytest.mark.parametrize(("value", "fraction"), [
    (0.1, Fraction(1, 10)), (0.01, Fraction(1, 100)), (1e-7, Fraction(1, 10**7)), (2.5, Fraction(5, 2)),
    (3, Fraction(3)), ("0.3", Fraction(3, 10)), ("20/9", Fraction(20, 9)), (Fraction(2, 3), Fraction(2, 3)),
    (-0.75, Fraction(-3, 4)), (1e21, Fraction(10**21))])
def test_exact_reads_the_decimal_typed_not_the_binary_float(value: float | int | str | Fraction,
                                                           fraction: Fraction) -> None:
    assert exact(value) == fraction


@pytest.mark.parametrize(("fraction", "text"), [
    (Fraction(1, 4), "0.25"), (Fraction(20, 9), "20/9"), (Fraction(3), "3"), (Fraction(-1, 8), "-0.125"),
    (Fraction(1, 1000), "0.001"), (Fraction(0), "0")])
def test_exact_text_is_the_inverse(fraction: Fraction, text: str) -> None:
    assert exact_text(fraction) == text
    assert exact(text) == fraction


def test_words_write_their_figures_in_the_form_asked() -> None:
    said = Words.of("receives at most ", Fraction(20, 9), " tuples/s and processes ", Figure(Fraction(5, 2)),
                    " or more", Exactly(Fraction(5, 2)))
    assert said.text() == "receives at most 2.222 (exactly 20/9) tuples/s and processes 2.5 or more (exactly 2.5)"
    assert said.text(exact=False) == "receives at most 2.222 tuples/s and processes 2.5 or more"
    joined = Words.joined("; ", [said, Words.of("x")])
    assert joined.text(exact=False) == said.text(exact=False) + "; x"
    assert str(Words.of("a", Words.of(" b ", Fraction(1, 3)))) == "a b 0.3333 (exactly 1/3)"


def test_a_verdict_keeps_its_figures_and_json_keeps_the_exact_form() -> None:
    said = Words.of("b receives at most ", Fraction(20, 9), " tuples/s")
    verdict = BoltVerdict.said(said, verdict="bounded", queue_bound=3.0)
    assert verdict.message == "b receives at most 2.222 (exactly 20/9) tuples/s"
    assert verdict.text(exact=False) == "b receives at most 2.222 tuples/s"
    assert '"message":"b receives at most 2.222 (exactly 20/9) tuples/s"' in verdict.model_dump_json()
    read_back = BoltVerdict.model_validate_json(verdict.model_dump_json())
    assert read_back.text(exact=False) == verdict.message  # a verdict read from JSON has only its text
    summary = Words.of("unknown: out of time")
    result = VerifyResult.said(Words.of(summary, ". Per bolt: ", said, "."), summary=summary, verdict="unknown")
    assert result.summary(exact=False) == "unknown: out of time"
    assert result.text(exact=False) == "unknown: out of time. Per bolt: b receives at most 2.222 tuples/s."
    assert result.message == "unknown: out of time. Per bolt: b receives at most 2.222 (exactly 20/9) tuples/s."


def test_the_cli_edits_no_verdict_prose() -> None:
    """app/cli/verify.py writes verdicts from the core's words (`text(exact=False)`), with no regular expression."""
    source = (APP / "cli" / "verify.py").read_text(encoding="utf-8")
    imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import)
                for alias in node.names}
    assert "re" not in imported and "re.sub" not in source and "Per bolt" not in source
