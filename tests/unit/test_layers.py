"""The package rules of the layout (CONTRIBUTING.md, "Code layout"), checked on the source.

- app.core imports nothing of the other packages;
- app.measure, app.diff, app.cep and app.expr import no Qt, and pyspark only inside functions;
  app.measure neither pyspark nor app.spark, lazily included (app.spark runs app.measure's SQL, not the reverse);
- app.spark imports no Qt; no domain package imports app.gui or app.cli;
- app.gui imports no z3 (verification runs in the core, in a worker); a panel's controller
  (app.gui.panels.*_controller) imports no widgets;
- no import circles, lazy imports (inside functions) included.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"
QT = ("PySide6", "shiboken6", "pyqtgraph")
SPARK = ("pyspark", "py4j")
DOMAIN = ("app.core", "app.measure", "app.diff", "app.cep", "app.expr", "app.spark")


def _module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(APP.rglob("*.py"))}


class _Imports(ast.NodeVisitor):
    """Every import of a module: (imported name, at module level, only for type checking)."""

    def __init__(self, module: str, is_package: bool):
        self.package = module if is_package else module.rpartition(".")[0]
        self.found: list[tuple[str, bool, bool]] = []
        self._depth = 0
        self._type_checking = False

    def _add(self, name: str) -> None:
        self.found.append((name, self._depth == 0, self._type_checking))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]  # same walk for async functions

    def visit_If(self, node: ast.If) -> None:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            self._type_checking = True
            for child in node.body:
                self.visit(child)
            self._type_checking = False
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
        for alias in node.names:
            full = f"{base}.{alias.name}"
            self._add(full if full in MODULES else base)


def imports_of(module: str) -> list[tuple[str, bool, bool]]:
    path = MODULES[module]
    visitor = _Imports(module, path.name == "__init__.py")
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return visitor.found


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, ("app.core",))])
def test_core_imports_nothing_of_the_other_packages(module: str) -> None:
    others = [name for name, _, _ in imports_of(module)
              if name.startswith("app.") and not _within(name, ("app.core",))]
    assert not others, f"{module} imports {others}"


@pytest.mark.parametrize("module", [m for m in MODULES
                                    if _within(m, ("app.measure", "app.diff", "app.cep", "app.expr"))])
def test_measured_run_packages_have_no_qt_and_no_spark_at_module_level(module: str) -> None:
    found = imports_of(module)
    assert not [n for n, _, _ in found if _within(n, QT)], f"{module} imports Qt"
    assert not [n for n, top, _ in found if top and _within(n, SPARK)], f"{module} imports pyspark at module level"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, ("app.measure",))])
def test_measure_imports_no_spark_at_all(module: str) -> None:
    found = [n for n, _, _ in imports_of(module) if _within(n, SPARK + ("app.spark",))]
    assert not found, f"{module} imports {found} (Spark code belongs in app.spark, which imports app.measure)"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, DOMAIN)])
def test_domain_packages_import_no_gui_and_no_cli(module: str) -> None:
    found = [n for n, _, _ in imports_of(module)]
    assert not [n for n in found if _within(n, QT + ("app.gui", "app.cli"))], f"{module} imports {found}"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, ("app.gui",))])
def test_gui_imports_no_z3(module: str) -> None:
    assert not [n for n, _, _ in imports_of(module) if _within(n, ("z3",))], f"{module} imports z3"


CONTROLLERS = [m for m in MODULES if m.startswith("app.gui.panels.") and m.endswith("_controller")]


def test_panels_have_controllers() -> None:
    assert {"app.gui.panels.runs_controller", "app.gui.panels.verification_controller"} <= set(CONTROLLERS)


@pytest.mark.parametrize("module", CONTROLLERS)
def test_panel_controllers_import_no_widgets(module: str) -> None:
    found = [n for n, _, _ in imports_of(module) if _within(n, ("PySide6.QtWidgets", "pyqtgraph"))]
    assert not found, f"{module} imports {found}: widgets belong in the panel's view"


def test_no_import_circles() -> None:
    graph = {m: sorted({n for n, _, typing_only in imports_of(m) if n in MODULES and n != m and not typing_only})
             for m in MODULES}
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in graph[module]:
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                circle = visit(target)
                if circle:
                    return circle
        path.pop()
        state[module] = 2
        return None

    for module in graph:
        if module not in state:
            circle = visit(module)
            assert circle is None, "import circle: " + " -> ".join(circle)
