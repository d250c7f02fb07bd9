"""File ▸ Import ▸ Flux… / From Storm UI…, Save Parallelism to Flux File…, and the amber marking of unannotated
values."""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from storm_ui_server import StormUIServer

ROOT = Path(__file__).resolve().parents[2]
WORDCOUNT_FLUX = ROOT / "models" / "wordcount.flux.yaml"


@pytest.fixture()
def flux_copy(tmp_path: Path) -> Path:
    target = tmp_path / "wordcount.yaml"
    shutil.copy(WORDCOUNT_FLUX, target)
    return target


def _import_flux(window: Any, path: Path) -> None:
    window.dialogs.answers["open_file"] = str(path)
    window.findChild(type(window.action_save), "action_import_flux").trigger()


def test_file_menu_has_the_import_submenu_and_save_to_flux(make_window: Callable[..., Any]) -> None:
    window = make_window()
    file_menu = window.menu("File")
    submenu = next(a.menu() for a in file_menu.actions()
                   if a.menu() is not None and a.menu().objectName() == "menu_import")
    assert [a.text() for a in submenu.actions()] == ["&D-VerT JSON…", "&Flux…", "From &Storm UI…",
                                                   "&Timings or Storm UI Tables…"]
    save = window.storm_io.action_save_flux
    assert save in file_menu.actions() and not save.isEnabled()
    names = [a.objectName() for a in file_menu.actions()]
    assert names.index("action_save_parallelism_to_flux") == names.index("action_save_as") + 1


def test_import_flux_shows_unannotated_values_amber(make_window: Callable[..., Any], flux_copy: Path) -> None:
    from app.gui.canvas.items import UNANNOTATED_TEXT

    window = make_window()
    _import_flux(window, flux_copy)
    topo = window.document.topology()
    assert [b.name for b in topo.bolts] == ["split", "count", "report"]
    assert window.document.path is None and window.storm_io.action_save_flux.isEnabled()
    count = topo.bolt_by_name("count")
    node = window.scene.nodes[count.id]
    assert node.unannotated_fields() == ["alpha", "sigma"]
    assert node.parameter_colour() == UNANNOTATED_TEXT
    assert node.parameter_lines()[0] == "α ? · σ ? · 1 exec"
    assert "not annotated: α, σ" in node.toolTip()
    assert window.scene.nodes[topo.spouts[0].id].parameter_lines() == ["rate ? · burst ?"]
    assert "not annotated" in window.status_problems.text()
    window.editing.suggest_parallelism()  # refused politely, no rate check on placeholders
    assert "needs every value annotated" in window.statusBar().currentMessage()
    window.scene.select_ids({count.id})
    window.inspector.show_element(count.id)
    alpha = window.inspector.row("alpha")
    assert alpha.edit.property("unannotated") is True and alpha.edit.text() == ""
    assert not window.inspector.row("parallelism").edit.property("unannotated")
    alpha.edit.setFocus()
    alpha.edit.textEdited.emit("0.02")  # typing a value annotates it
    assert window.document.component(count.id).unannotated == ["sigma"]
    assert alpha.edit.property("unannotated") is False
    window.document.undo_stack.undo()
    assert window.document.component(count.id).unannotated == ["alpha", "sigma"]
    assert window.inspector.row("alpha").edit.property("unannotated") is True


def test_import_flux_asks_for_the_properties_file(make_window: Callable[..., Any], tmp_path: Path) -> None:
    text = WORDCOUNT_FLUX.read_text().replace('name: "wordcount"', 'name: "${topology.name}"')
    flux = tmp_path / "filtered.yaml"
    flux.write_text(text)
    props = tmp_path / "dev.properties"
    props.write_text("topology.name=wordcount-dev\n")
    window = make_window()
    window.dialogs.answers["open_file"] = [str(flux), str(props)]
    window.storm_io.action_import_flux.trigger()
    topo = window.document.topology()
    assert topo.name == "wordcount-dev" and topo.storm.flux_filter == str(props.resolve())


def test_bad_flux_file_is_one_message_and_keeps_the_document(make_window: Callable[..., Any], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: t\nspouts:\n  - {id: s, className: S}\nbolts:\n  - {id: b, className: B}\nstreams:\n"
                   "  - {from: s, to: b, grouping: {type: SPRAY}}\n")
    window = make_window()
    before = window.document.topology()
    _import_flux(window, bad)
    kind, title, text = window.dialogs.shown[-1]
    assert (kind, title) == ("error", "Cannot import Flux file")
    assert text.startswith(f"{bad}: line 7: streams[0].grouping.type: unknown grouping 'SPRAY'") and "\n" not in text
    assert window.document.topology() == before


def test_storm_ui_annotates_the_open_document_in_the_background(make_window: Callable[..., Any], qtbot: Any,
                                                                flux_copy: Path) -> None:
    window = make_window()
    _import_flux(window, flux_copy)
    with StormUIServer() as ui:
        window.dialogs.answers["storm_ui"] = {"url": ui.url, "topology": "wordcount"}
        window.storm_io.action_import_storm_ui.trigger()
        worker = window.storm_io.worker
        assert worker is not None
        qtbot.waitUntil(lambda: not worker.isRunning() and window.storm_io.action_import_storm_ui.isEnabled(),
                        timeout=15000)
    topo = window.document.topology()
    assert all(not c.unannotated for c in topo.components)
    assert topo.bolt_by_name("count").alpha == 0.02 and topo.storm.flux_file == str(flux_copy.resolve())
    kind, title, text = window.dialogs.shown[-1]
    assert title == "Imported from Storm UI" and "bolts.count.alpha = 0.02   (20 ms executeLatency" in text
    node = window.scene.nodes[topo.bolt_by_name("count").id]
    assert node.unannotated_fields() == [] and node.rates is not None and node.rates.status == "grows"
    window.inspector.show_element(topo.bolt_by_name("count").id)
    assert "From: 20 ms executeLatency" in window.inspector.row("alpha").edit.toolTip()
    window.document.undo_stack.undo()
    assert window.document.topology().bolt_by_name("count").unannotated == ["alpha", "sigma"]
    window.document.undo_stack.redo()

    # repair: suggested parallelism, then Save Parallelism to Flux File…
    before = flux_copy.read_text()
    window.editing.suggest_parallelism()
    window.dialogs.answers["confirm"] = True
    window.storm_io.action_save_flux.trigger()
    after = flux_copy.read_text()
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed and all("parallelism:" in line for line in changed)
    assert "+    parallelism: 5    # one counter: the bottleneck" in changed  # max_idle_time 0 (the imports')
    # beside the Flux edit, Storm's commands: split shrinks by rebalance; count (1 task) needs a redeploy
    question = next(text for kind, title, text in window.dialogs.shown if title == "Save parallelism to Flux file")
    assert "storm rebalance wordcount -e split=1" in question
    assert "count: has 1 task, and rebalance cannot raise its executors above that" in question
    assert window.statusBar().currentMessage() == "Saved parallelism to wordcount.yaml"


def test_storm_ui_into_an_empty_window_and_a_refusal(make_window: Callable[..., Any], qtbot: Any) -> None:
    window = make_window()
    with StormUIServer() as ui:
        window.dialogs.answers["storm_ui"] = {"url": ui.url, "topology": "wordcount"}
        window.storm_io.action_import_storm_ui.trigger()
        qtbot.waitUntil(lambda: window.storm_io.action_import_storm_ui.isEnabled(), timeout=15000)
    topo = window.document.topology()
    assert topo.name == "wordcount" and len(topo.bolts) == 3 and not window.storm_io.action_save_flux.isEnabled()
    with StormUIServer("forbidden") as ui:
        window.dialogs.answers["storm_ui"] = {"url": ui.url, "topology": "wordcount"}
        window.storm_io.action_import_storm_ui.trigger()
        qtbot.waitUntil(lambda: window.storm_io.action_import_storm_ui.isEnabled(), timeout=15000)
    kind, title, text = window.dialogs.shown[-1]
    assert (kind, title) == ("error", "Cannot import from Storm UI")
    assert text == f"{ui.url}/api/v1/topology/summary: 403 Forbidden: this user may not read it"
    assert window.document.topology() == topo


def test_the_app_imports_what_the_cli_imports(make_window: Callable[..., Any], tmp_path: Path) -> None:
    """Issue 32, point 9: File ▸ Import ▸ Flux shows *.flux and asks for the folder of classpath resources a
    StormCrawler crawler needs (crawler-default.yaml in src/main/resources, not beside crawler.flux); unsaved
    work is only put at stake once the file imports."""
    from app.gui.dialogs import FLUX_FILTER

    assert "*.flux" in FLUX_FILTER
    wild = ROOT / "tests" / "data" / "flux" / "stormcrawler"
    project = tmp_path / "crawler"
    resources = project / "src" / "main" / "resources"
    resources.mkdir(parents=True)
    for name in ("crawler.flux", "crawler-conf.yaml", "opensearch-conf.yaml"):
        shutil.copy(wild / name, project / name)
    shutil.copy(wild / "crawler-default.yaml", resources)
    window = make_window()
    window.add_component("bolt")  # unsaved work
    assert window.document.is_modified()
    before = window.document.topology()
    # a file that cannot be imported (its resource folder refused): one message, no question about the work
    window.dialogs.answers.update({"open_file": str(project / "crawler.flux"), "folder": ""})
    window.storm_io.action_import_flux.trigger()
    kinds = [(kind, title) for kind, title, _ in window.dialogs.shown]
    assert ("error", "Cannot import Flux file") in kinds and ("question", "Unsaved changes") not in kinds
    assert window.document.topology() == before
    # given the folder (the dialog starts in the one found in the project), it imports, then asks about the work
    window.dialogs.shown.clear()
    window.dialogs.answers.update({"open_file": [str(project / "crawler.flux"), ""], "folder": str(resources),
                                   "save_changes": "discard"})
    window.storm_io.action_import_flux.trigger()
    asked = [text for kind, title, text in window.dialogs.shown if kind == "question"]
    assert asked[0] == str(resources) and any("unsaved changes" in text for text in asked)
    topo = window.document.topology()
    assert topo.name == "crawler" and len(topo.bolts) == 11
    assert topo.storm.flux_resources == [str(resources.resolve())]


def test_timings_annotate_the_open_document_as_one_undo_step(make_window: Callable[..., Any], flux_copy: Path,
                                                              tmp_path: Path) -> None:
    """Issue 32, point 10: File ▸ Import ▸ Timings or Storm UI Tables… annotates every component at once."""
    window = make_window()
    _import_flux(window, flux_copy)
    timings = tmp_path / "timings.csv"
    timings.write_text("component,rate,alpha,sigma\nsentences,40/s,,\nsplit,,5ms,5\ncount,,20ms,0\nreport,,1ms,0\n")
    window.dialogs.answers["open_file"] = str(timings)
    window.storm_io.action_import_timings.trigger()
    topo = window.document.topology()
    assert topo.spouts[0].rate == 40 and topo.bolt_by_name("split").alpha == 0.005
    assert not any(c.unannotated for c in topo.components if c.kind == "bolt")
    window.document.undo_stack.undo()
    assert window.document.topology().bolt_by_name("split").unannotated == ["alpha", "sigma"]
    timings.write_text("component,alpha\nnobody,5ms\n")
    window.storm_io.action_import_timings.trigger()
    kind, title, text = window.dialogs.shown[-1]
    assert (kind, title) == ("error", "Cannot annotate") and "no component 'nobody'" in text


def test_timings_from_a_pipe_or_a_device_are_refused_at_once(make_window: Callable[..., Any], flux_copy: Path,
                                                             tmp_path: Path) -> None:
    """File ▸ Import ▸ Timings… of a named pipe (which would block the GUI thread for ever) or of a link to
    /dev/zero: an error naming it, at once, the document unchanged."""
    import os
    import time

    window = make_window()
    _import_flux(window, flux_copy)
    before = window.document.topology()
    pipe, zero = tmp_path / "timings.csv", tmp_path / "zero.yaml"
    os.mkfifo(pipe)
    zero.symlink_to("/dev/zero")
    for path, says in ((pipe, "is a named pipe"), (zero, "is a device")):
        window.dialogs.answers["open_file"] = str(path)
        start = time.monotonic()
        window.storm_io.action_import_timings.trigger()
        assert time.monotonic() - start < 60  # generous: refused before reading, never waited on
        kind, title, text = window.dialogs.shown[-1]
        assert (kind, title) == ("error", "Cannot annotate") and says in text and path.name in text
    assert window.document.topology() == before


def test_saving_an_imported_document_stores_its_flux_file_relative_to_it(make_window: Callable[..., Any],
                                                                          flux_copy: Path) -> None:
    """The folder with the document and its Flux file can move: `export flux` still finds the file."""
    import json

    window = make_window()
    _import_flux(window, flux_copy)
    assert Path(window.document.topology().storm.flux_file or "").is_absolute()
    target = flux_copy.parent / "wc.storm.json"
    assert window.save_to(target)
    saved = json.loads(target.read_text())
    assert saved["storm"]["flux_file"] == "wordcount.yaml"


def test_the_import_message_and_the_status_bar_count_the_same_missing_values(make_window: Callable[..., Any],
                                                                            tmp_path: Path) -> None:
    """StormCrawler's crawler: its declared streams' σ are missing too; both messages give one count."""
    import re

    crawler = ROOT / "tests" / "data" / "flux" / "stormcrawler"
    for name in ("crawler.flux", "crawler-conf.yaml", "opensearch-conf.yaml", "crawler-default.yaml"):
        shutil.copy(crawler / name, tmp_path / name)
    window = make_window()
    window.dialogs.answers["open_folder"] = None
    window.dialogs.answers["open_file"] = [str(tmp_path / "crawler.flux"), None]
    messages: list[str] = []
    window.show_message = messages.append
    _import_flux(window, tmp_path / "crawler.flux")
    counts = [re.search(r"(\d+) value\(s\) not annotated", text) for text in (messages[-1],
                                                                           window.status_problems.text())]
    assert all(counts) and counts[0].group(1) == counts[1].group(1), (messages, window.status_problems.text())
