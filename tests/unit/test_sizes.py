"""The house sizes (CONTRIBUTING.md, "Habits"), checked on the source of app/: no module over
MAX_MODULE_LINES lines, no class over MAX_CLASS_LINES lines (from its `class` line to its last line), no
function or method over MAX_FUNCTION_LINES lines (from its `def` to its last line, nested functions
included), but for the entries of TO_BE_SPLIT, each of which must still need its place: an entry that
fits, or whose module, class or function is gone, fails the test until it is removed.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 300
MAX_FUNCTION_LINES = 100

# "module path" or "module path::qualified class or function name": not split yet (none now; an entry needs
# the reason "to be split" and fails the test once it fits)
TO_BE_SPLIT: dict[str, str] = {}


def function_lengths(source: str) -> dict[str, int]:
    """Lines of every function and method by qualified name (`Class.method`, `outer.inner`), from its
    `def` line (decorators not counted) to its last line."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                found[name] = max(found.get(name, 0), (child.end_lineno or child.lineno) - child.lineno + 1)
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def class_lengths(source: str) -> dict[str, int]:
    """Lines of every class by qualified name (`Outer.Inner`, `function.Local`), from its `class` line
    (decorators not counted) to its last line."""
    found: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                found[name] = max(found.get(name, 0), (child.end_lineno or child.lineno) - child.lineno + 1)
                visit(child, name + ".")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def oversized() -> dict[str, int]:
    """Every module, class and function of app/ over its limit, by TO_BE_SPLIT's keys, with its lines."""
    found: dict[str, int] = {}
    for path in sorted(APP.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        lines = len(source.splitlines())
        if lines > MAX_MODULE_LINES:
            found[module] = lines
        found.update({f"{module}::{name}": n for name, n in class_lengths(source).items()
                      if n > MAX_CLASS_LINES})
        found.update({f"{module}::{name}": n for name, n in function_lengths(source).items()
                      if n > MAX_FUNCTION_LINES})
    return found


def test_function_lengths_counts_def_to_end_with_qualified_names() -> None:
    source = ("@decorated\ndef top(x):\n    def inner():\n        return 1\n    return inner\n\n"
              "class Panel:\n    def build(self):\n        pass\n\n    async def run(self):\n"
              "        if True:\n            def deep():\n                pass\n")
    assert function_lengths(source) == {"top": 4, "top.inner": 2, "Panel.build": 2, "Panel.run": 4,
                                        "Panel.run.deep": 2}


def test_class_lengths_counts_class_to_end_with_qualified_names() -> None:
    source = ("@dataclass\nclass Outer:\n    x: int\n\n    class Inner:\n        y: int\n\n"
              "def make():\n    class Local:\n        pass\n    return Local\n")
    assert class_lengths(source) == {"Outer": 5, "Outer.Inner": 2, "make.Local": 2}


def test_no_module_class_or_function_over_its_limit_but_those_to_be_split() -> None:
    over = {name: n for name, n in oversized().items() if name not in TO_BE_SPLIT}
    assert not over, (f"over {MAX_MODULE_LINES} lines a module, {MAX_CLASS_LINES} a class or "
                      f"{MAX_FUNCTION_LINES} a function "
                      f"(split it into well-named parts): {over}")


def test_every_entry_to_be_split_still_needs_its_place() -> None:
    over = oversized()
    done = sorted(name for name in TO_BE_SPLIT if name not in over)
    assert not done, f"within the limits (or gone) now, remove them from TO_BE_SPLIT: {done}"
    assert all(why == "to be split" for why in TO_BE_SPLIT.values())
