"""One error hierarchy in one place (app/core/errors.py): every refusal a user can act on derives from
StormboundError, which the CLI turns into one line and exit 2; every cancellation from Cancelled; no exception
class is defined twice; the exceptions that are neither are listed."""

from __future__ import annotations

import ast
from pathlib import Path

from app.cli import main

APP = Path(__file__).resolve().parents[2] / "app"
# exceptions that are no refusal of input: control flow, internal signals, or shown where they arise
NOT_REFUSALS = {
    "Cancelled", "_Stop", "_OtherHost", "_NotFinite", "JsonLimitError", "RunCancelled", "HostError",
    "MissingField", "NotAString", "ExprEvalError", "SelftestError", "RenderError", "ExportError", "FieldError",
    "ConnectionRefused",
}


def _definitions() -> list[tuple[str, list[str], str]]:
    """Every class of app/: (name, its bases' names, its module path)."""
    found: list[tuple[str, list[str], str]] = []
    for path in sorted(APP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found.append((node.name, [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                                          for b in node.bases], path.relative_to(APP.parent).as_posix()))
    return found


def _classes() -> dict[str, list[str]]:
    """Every class of app/ by name, with its bases' names."""
    return {name: bases for name, bases, _ in _definitions()}


def test_no_exception_class_is_defined_twice_and_every_cancellation_is_one() -> None:
    classes = _classes()

    def derives(name: str, root: str, seen: frozenset[str] = frozenset()) -> bool:
        return name == root or any(b == root or (b in classes and b not in seen and derives(b, root, seen | {name}))
                                   for b in classes.get(name, []))

    builtin = ("Exception", "ValueError", "RuntimeError", "OSError", "KeyError", "TypeError", "LookupError")
    exceptions = [(n, path) for n, _, path in _definitions()
                  if any(derives(n, root) for root in builtin) or n.endswith(("Error", "Cancelled"))]
    names = [n for n, _ in exceptions]
    twice = sorted({f"{n}: {[p for m, p in exceptions if m == n]}" for n in names if names.count(n) > 1})
    assert not twice, f"one exception class per name (app/core/errors.py holds the shared ones): {twice}"
    stray = sorted(n for n in names if n.endswith("Cancelled") and not derives(n, "Cancelled"))
    assert not stray, f"a cancellation derives from app.core.errors.Cancelled: {stray}"


def test_every_refusal_derives_from_the_one_root() -> None:
    classes = _classes()

    def rooted(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == "StormboundError":
            return True
        return any(rooted(b, seen | {name}) for b in classes.get(name, []) if b in classes and b not in seen)

    errors = [n for n, bases in classes.items() if n.endswith(("Error", "Refused", "Unavailable", "Busy"))
              or any(b in ("Exception", "ValueError", "RuntimeError", "OSError") for b in bases)]
    loose = sorted(n for n in errors if n not in NOT_REFUSALS and n != "StormboundError" and not rooted(n))
    assert not loose, f"refusals outside the one root (app/core/errors.py): {loose}"
    assert len(errors) > 20  # the walk found the classes


def test_a_refusal_no_command_catches_is_one_line_and_exit_2(capsys, monkeypatch) -> None:
    """A subcommand that lets a refusal through (here a unit error from deep inside) still exits 2, not 3."""
    from app.cli import build_parser
    from app.core.units import UnitError

    def refuse(_args: object) -> int:
        raise UnitError("'5ms' is not a number")

    parser = build_parser()
    monkeypatch.setattr("app.cli.build_parser", lambda: _with_func(parser, refuse))
    code = main(["check", "models/getting-started.storm.json"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().count("\n") == 0 and "'5ms' is not a number" in err and "internal" not in err


def _with_func(parser, func):  # noqa: ANN001, ANN202 - argparse's own objects
    for action in parser._subparsers._group_actions:  # noqa: SLF001 - the subcommand table
        for name, sub in action.choices.items():
            if name == "check":
                sub.set_defaults(func=func)
    return parser
