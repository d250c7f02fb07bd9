"""The status bar's summary of the open document (right of the messages): its first problems, its values left
unannotated, or the rate check's counts, the bolts it proves unbounded and `check`'s idle-time warning; in Live
Mode, the measured verdicts as on the nodes. The whole words are in its tooltip."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel

from app.core.rates import idle_warning
from app.core.topology import unannotated_problems
from app.core.words import listed
from app.gui.canvas import CanvasScene
from app.gui.canvas.items import LIVE_WORDS
from app.gui.document import DocumentModel

#: the summary's width in pixels, whatever its text (the status bar's messages take the rest)
WIDTH = 560


class StatusSummary(QLabel):
    """The summary label; `refresh` after every change of the document or of Live Mode's verdicts."""

    def __init__(self, document: DocumentModel, scene: CanvasScene):
        super().__init__()
        self.setObjectName("status_problems")
        # its text changes with every edit: a width that followed it would lay the window out again, and the canvas
        # with it (a whole repaint of a 3,000-bolt canvas per edit); the whole words are in the tooltip
        self.setFixedWidth(WIDTH)
        self.document = document
        self.scene = scene
        document.changed.connect(self.refresh)
        document.analysis_ready.connect(self.refresh)
        scene.live_changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        problems = self.document.problems()
        topo = self.document.topology()
        if problems:
            self.setText("⚠ " + "; ".join(str(p) for p in problems[:2]))
            self.setToolTip("\n".join(str(p) for p in problems))
            return
        missing = unannotated_problems(topo)
        if missing:  # an import's placeholders: no rate check until they are set
            self.setText(f"⚠ {len(missing)} value(s) not annotated (amber): "
                         + ", ".join(p.path for p in missing[:3]) + (" …" if len(missing) > 3 else ""))
            self.setToolTip("\n".join(str(p) for p in missing))
            return
        if self.document.analysis() is None:  # a large document's edit, analysed in a worker
            self.setText(f"{len(topo.spouts)} spouts, {len(topo.bolts)} bolts · rate check: analysing the edit…")
            self.setToolTip("The rate check runs in the background on a document this large; the canvas keeps its "
                            "colours until it is done.")
            return
        try:
            report = self.document.report()  # the snapshot's one analysis, as `check` prints it (canvas too)
        except Exception as err:  # keep editing possible whatever the analysis thinks
            self.setText(f"rate check failed: {err}")
            return
        counts = {s: sum(1 for b in report.bolts.values() if b.status == s)
                  for s in ("bounded", "no-repeating-growth", "may-grow", "grows")}
        steady = counts["no-repeating-growth"]
        text = (f"{len(topo.spouts)} spouts, {len(topo.bolts)} bolts · rate check: {counts['bounded']} bounded, "
                + (f"{steady} without repeating growth, " if steady else "")
                + f"{counts['may-grow']} may grow, {counts['grows']} grow")
        floods = self.document.floods()  # what `check` prints under "Unbounded" (red on the canvas)
        if floods:
            text += f" · unbounded: {listed(floods)}"
        if self.scene.live_verdicts:  # Live Mode: the verdicts of the measured figures, as on the nodes
            shown = [f"{n} {LIVE_WORDS.get(v, v)}" for n, v in self.scene.live_verdicts.items() if v != "ok"]
            text = ("Live: " + (", ".join(shown) if shown else "every bolt keeps up")
                    + f" · the document's rate check: {counts['grows']} grow")
        tips = [b.explanation for b in report.bolts.values()]
        warning = idle_warning(topo)  # what `check` prints on stderr: the same words, in the tooltip
        if warning is not None:
            text += f" · ⚠ max idle time over α/10 of {warning.bolts[0]}"
            tips.insert(0, "⚠ " + warning.message)
        self.setText(text)
        self.setToolTip("\n".join(tips))
