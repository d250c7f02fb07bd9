"""The package rules of the layout (CONTRIBUTING.md, "Code layout"), checked on the source.

- app.core imports nothing of the other packages;
- app.measure, app.diff, app.cep and app.expr import no Qt, and pyspark only inside functions;
  app.measure neither pyspark nor app.spark, lazily included (app.spark runs app.measure's SQL, not the reverse);
- app.spark imports no Qt; no domain package imports app.gui or app.cli;
- app.gui imports no z3 (verification runs in the core, in a worker); a panel's controller
  (app.gui.panels.*_controller) imports no widgets;
- no import circles, lazy imports (inside functions) included; none either when the imports made only for the
  type checker count (but for the few of TYPE_CHECKING_CIRCLES, being removed);
- the checker room (app.core.tcn.check) imports no builder, no rate check, no emission.py (only the document,
  the result models, the formats);
- no module imports another's private name (`from x import _name`), but for PRIVATE_IMPORTS (being removed).
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


CHECKER_ROOM = "app.core.tcn.check"
#: what a checker may read: the document, the result models it checks, the file formats, and the GC pause
CHECKER_MAY_IMPORT = ("app.core.tcn.check", "app.core.topology", "app.core.results", "app.core.formats.trace",
                      "app.core.formats.trace_compress", "app.core.formats.trace_numbers", "app.core.gc_pause",
                      "app.core.errors", "app.core.numbers", "app.core.words")


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, (CHECKER_ROOM,))])
def test_the_checker_room_imports_no_builder(module: str) -> None:
    """The checkers (app/core/tcn/check/) import no builder of what they check: nothing of app.core.tcn outside
    the room (encoding, search, linear program, growth by rates, simulation), no app.core.rates, no
    app.core.emission, no app.core.failures; lazy imports included (docs/verifier.md, "The checker room")."""
    found = [n for n, _, _ in imports_of(module) if _within(n, ("app",)) and not _within(n, CHECKER_MAY_IMPORT)]
    assert not found, f"{module} imports {found}: a checker shares no code with the builders"


def test_the_checker_room_reaches_no_builder() -> None:
    """Nor does anything the room imports lead (transitively, lazy imports included) to a builder, the rate check
    or emission.py."""
    seen = {m for m in MODULES if _within(m, (CHECKER_ROOM,))}
    todo = list(seen)
    while todo:
        for n, _, _ in imports_of(todo.pop()):
            if n in MODULES and n not in seen:
                seen.add(n)
                todo.append(n)
    builders = ("app.core.rates", "app.core.emission", "app.core.failures", "app.core.headroom")
    reached = sorted(m for m in seen if _within(m, builders)
                     or (_within(m, ("app.core.tcn",)) and not _within(m, (CHECKER_ROOM,)) and m != "app.core.tcn"))
    assert not reached, f"the checker room reaches {reached}"


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


# Circles closed only by imports under `if TYPE_CHECKING:` (a runtime circle fails the test above). Each
# couples two modules as tightly as a runtime circle does; these are being broken on other branches.
TYPE_CHECKING_CIRCLES: list[set[str]] = []

# `from module import _name` across modules: each is being removed on another branch.
PRIVATE_IMPORTS: list[tuple[str, str, str]] = []


def _strongly_connected(graph: dict[str, list[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components of more than one module (the import circles)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in graph[module]:
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(component)

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_strongly_connected_finds_circles() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e"]}
    assert _strongly_connected(graph) == [{"a", "b", "c"}]


def test_no_import_circles_with_type_checking_imports() -> None:
    """Lazy and TYPE_CHECKING imports included: every circle is one of TYPE_CHECKING_CIRCLES."""
    graph = {m: sorted({n for n, _, _ in imports_of(m) if n in MODULES and n != m}) for m in MODULES}
    circles = _strongly_connected(graph)
    unexpected = [sorted(c) for c in circles if c not in TYPE_CHECKING_CIRCLES]
    assert not unexpected, f"import circles: {unexpected}"
    gone = [sorted(c) for c in TYPE_CHECKING_CIRCLES if c not in circles]
    assert not gone, f"no longer circles, remove them from TYPE_CHECKING_CIRCLES: {gone}"


def _private_imports(module: str, source: str, is_package: bool = False) -> list[tuple[str, str, str]]:
    """(module, imported module, name) of every `from x import _name` of an app module, lazy ones included."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
        if not _within(base, ("app",)):
            continue
        found += [(module, base, alias.name) for alias in node.names
                  if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_private_imports_finds_them() -> None:
    source = ("from app.core.rates import _Exact, Status\nimport os\nfrom os import _exit\n"
              "def lazy():\n    from .tcn.encode import __all__, _Hidden\n")
    assert _private_imports("app.core.replay_check", source) == [
        ("app.core.replay_check", "app.core.rates", "_Exact"),
        ("app.core.replay_check", "app.core.tcn.encode", "_Hidden")]


def test_no_module_imports_another_modules_private_names() -> None:
    found = [hit for m, path in MODULES.items()
             for hit in _private_imports(m, path.read_text(encoding="utf-8"), path.name == "__init__.py")]
    unexpected = [hit for hit in found if hit not in PRIVATE_IMPORTS]
    assert not unexpected, f"imports of private names (make the name public, or move it): {unexpected}"
    gone = [hit for hit in PRIVATE_IMPORTS if hit not in found]
    assert not gone, f"no longer imported, remove them from PRIVATE_IMPORTS: {gone}"
