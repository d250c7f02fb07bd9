"""One error root: every refusal a user can act on derives from app.core.errors.StormboundError, which the CLI
turns into one line and exit 2 (docs: app/core/errors.py); the exceptions that are not refusals are listed."""

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


def _classes() -> dict[str, list[str]]:
    """Every exception-like class of app/ by name, with its bases' names."""
    found: dict[str, list[str]] = {}
    for path in APP.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                found[node.name] = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
    return found


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
