"""One error hierarchy in one place (app/core/errors.py): every exception class of app/ derives from
StormboundError, through BadInput (a refusal: the CLI's one line and exit 2), Cancelled or InternalError; no
exception class is defined twice; a class defined outside the hierarchy fails here."""

from __future__ import annotations

import ast
from pathlib import Path

from app.cli import main

APP = Path(__file__).resolve().parents[2] / "app"
ROOT = "StormboundError"
GROUPS = ("BadInput", "Cancelled", "InternalError")
#: classes that derive from the root itself, not through a group, and why
ROOTED_DIRECTLY = {"HostError": "carries the Spark host's own kind of error ('input', 'cancelled', 'internal')"}
BUILTIN = {"BaseException", "Exception", "ValueError", "RuntimeError", "OSError", "KeyError", "TypeError",
           "LookupError", "ArithmeticError", "IOError", "EnvironmentError", "AttributeError", "IndexError",
           "NotImplementedError", "StopIteration", "Warning", "UserWarning"}


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


def _derives(classes: dict[str, list[str]], name: str, root: str) -> bool:
    """Whether class `name` derives (through classes of app/) from `root` (a name, builtin or of app/)."""
    todo, seen = [name], set()
    while todo:
        n = todo.pop()
        if n == root:
            return True
        if n not in seen:
            seen.add(n)
            todo += classes.get(n, [])
    return False


def _exceptions(classes: dict[str, list[str]]) -> list[str]:
    """The exception classes of app/: those deriving from a builtin exception or from the root."""
    return [n for n in classes if n not in BUILTIN and any(_derives(classes, n, b) for b in BUILTIN | {ROOT})]


def test_no_exception_class_is_defined_twice_and_every_cancellation_is_one() -> None:
    classes = _classes()
    names = [n for n, _, _ in _definitions() if n in set(_exceptions(classes))]
    twice = sorted({f"{n}: {[p for m, _, p in _definitions() if m == n]}" for n in names if names.count(n) > 1})
    assert not twice, f"one exception class per name (app/core/errors.py holds the shared ones): {twice}"
    stray = sorted(n for n in names if n.endswith("Cancelled") and not _derives(classes, n, "Cancelled"))
    assert not stray, f"a cancellation derives from app.core.errors.Cancelled: {stray}"


def test_every_exception_class_is_in_the_one_hierarchy() -> None:
    """Every exception class of app/ derives from StormboundError through one of its groups (or, for the few of
    ROOTED_DIRECTLY, from the root itself); the groups are defined in app/core/errors.py only."""
    classes = _classes()
    exceptions = _exceptions(classes)
    assert len(exceptions) > 30  # the walk found the classes
    outside = sorted(n for n in exceptions if not _derives(classes, n, ROOT))
    assert not outside, f"exception classes outside the hierarchy of app/core/errors.py: {outside}"
    ungrouped = sorted(n for n in exceptions if n not in (ROOT, *GROUPS, *ROOTED_DIRECTLY)
                       and not any(_derives(classes, n, g) for g in GROUPS))
    assert not ungrouped, f"derive from BadInput, Cancelled or InternalError: {ungrouped}"
    homes = {p for n, _, p in _definitions() if n in (ROOT, *GROUPS)}
    assert homes == {"app/core/errors.py"}, homes


def test_the_hierarchy_catches_a_class_defined_outside_it() -> None:
    """The walk above sees a new exception class that does not derive from the root (the test can fail)."""
    classes = {**_classes(), "NewProblem": ["ValueError"], "NewSignal": ["Exception"], "Fine": ["BadInput"]}
    exceptions = _exceptions(classes)
    assert {n for n in exceptions if not _derives(classes, n, ROOT)} == {"NewProblem", "NewSignal"}


def test_the_groups_keep_the_exit_codes() -> None:
    """A refusal is not internal, a cancellation is neither: the CLI's `except BadInput` (exit 2) catches no
    cancellation and no internal error."""
    from app.core.errors import BadInput, Cancelled, InternalError, StormboundError

    for group in (BadInput, Cancelled, InternalError):
        assert issubclass(group, StormboundError)
    assert not issubclass(Cancelled, BadInput) and not issubclass(InternalError, BadInput)


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
