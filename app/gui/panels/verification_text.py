"""What the Verification panel says in words (app/gui/panels/verification.py): the headline over the list, the
selected row's details, the capacity and timeouts lines under it (`SummaryLines`) and the progress of a
verification (`SearchProgress`)."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget

from app.core.formats.verified import bolt_verdict_words
from app.gui.app_words import in_app_words
from app.gui.panels.property_table import VERDICT_TEXT_COLOURS
from app.gui.panels.verification_controller import PropertyState, VerificationController


def html(text: str) -> str:
    """`text` as HTML: its markup characters escaped, its line breaks kept."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\n", "<br>")


def shown_in_headline(states: Sequence[PropertyState]) -> list[PropertyState]:
    """The properties the headline shows: those with a result, running, with verdicts so far, or with the instant
    rate check's `unbounded` bolts."""
    return [s for s in states if s.result is not None or s.running or s.partial or s.instant]


def headline_html(states: Sequence[PropertyState]) -> str:
    """Each shown property's verdict at a glance, in its marker's colour, one line each."""
    return "<br>".join(f"<span style='font-size:large; font-weight:bold; color:{VERDICT_TEXT_COLOURS[s.colour]}'>"
                       f"{html(s.verdict_text)}</span>" for s in shown_in_headline(states))


def details_html(state: PropertyState, bolt: str | None) -> str:
    """The details of property `state` (of its checked bolt `bolt`, when given), in the app's words."""
    parts = [f"<b>{html(state.verdict_text)}</b>"]
    if state.verdict_words and state.verdict_words != state.verdict_text.removeprefix("stale: "):
        parts.append(f"{html(state.spec.title)}: {html(state.verdict_words)}")
    else:
        parts.append(html(state.spec.title))
    if state.stale:
        parts.append("<i>The model changed since this result: verify again.</i>")
    if state.error:
        parts.append(f"<span style='color:#b26a00'>{html(state.error)}</span>")
    result = state.result
    verdict = state.bolt_verdict(bolt) if bolt is not None else None
    if bolt is not None and verdict is not None:
        parts.append(f"<b>{html(bolt)}</b>: {html(bolt_verdict_words(verdict))}")
        if verdict.message:
            parts.append(html(verdict.message))
        if state.instant_verdict(bolt) is not None:
            parts.append("<i>Proven by the rate check, without a search: what <tt>stormbound check</tt> prints under "
                         "\"Unbounded\".</i>")
        if verdict.verdict == "counterexample":
            parts.append(html(f"found by the {verdict.method}; certified" if verdict.certified
                              else f"found by the {verdict.method}; not certified"))
    if state.capacity and not state.stale:
        parts.append("<b>Capacity</b> (in Storm's terms):<ul>"
                     + "".join(f"<li>{html(line)}</li>" for line in state.capacity) + "</ul>")
    if result is not None:
        if result.message:
            parts.append(html(result.message))
        facts = []
        if result.growing:
            facts.append("growing queues: " + ", ".join(result.growing))
        if result.growth_per_loop:
            facts.append("growth per loop: " + ", ".join(f"{n} +{d}" for n, d in result.growth_per_loop.items()))
        if result.verdict == "counterexample":
            facts.append(("certified lasso" if result.traces else "certified proof of growth by rates")
                         if result.certified else "not certified")
        if result.worker_death_lassos:  # docs/model.md 9.5: not a verdict of the bolts, which are about no deaths
            facts.append("grows with worker deaths (a certified lasso; Show trace opens it): "
                         + ", ".join(result.worker_death_lassos))
        if result.kept:
            facts.append("components kept (cone of influence): " + ", ".join(result.kept))
        facts.append(f"elapsed {result.elapsed_s:.2f} s")
        parts.append("<br>".join(html(f) for f in facts))
        if result.notes:
            parts.append("Notes:<ul>" + "".join(f"<li>{html(n)}</li>" for n in result.notes) + "</ul>")
    return in_app_words("<p>" + "</p><p>".join(parts) + "</p>")


class SummaryLines(QWidget):
    """Two lines under the property list, hidden until a result brings them: the capacity in Storm's terms (the
    headroom; Storm's response in its tooltip) and, per spout, whether a tuple tree can outlast the message
    timeout (docs/latency.md; the reasons in its tooltip)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.capacity_label = QLabel("")
        self.timeouts_label = QLabel("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label in (self.capacity_label, self.timeouts_label):
            label.setWordWrap(True)
            label.setVisible(False)
            layout.addWidget(label)

    def show_capacity(self, lines: list[str]) -> None:
        """The headroom as a short line, with the worker-death verdict; what Storm does (when overloaded) in its
        tooltip."""
        from app.core.storm.lines import capacity_suffix

        if not lines:
            return
        short = lines[0].split(": every bolt")[0]
        rest = lines[0].split("; ", 1)[1] if "; " in lines[0] else ""
        self.capacity_label.setText(in_app_words(f"Capacity: {short}") + (f"; {in_app_words(rest)}" if rest else "")
                                    + capacity_suffix(lines))
        self.capacity_label.setToolTip(in_app_words("\n".join(lines)))
        self.capacity_label.setVisible(True)

    def show_timeouts(self, timeouts: tuple[list[str], list[str]]) -> None:
        """Per spout its answer against the message timeout in a few words; the sentences in the tooltip."""
        short, lines = timeouts
        if not short:
            return
        self.timeouts_label.setText("Timeouts: " + "; ".join(short))
        self.timeouts_label.setToolTip("\n".join(lines))
        self.timeouts_label.setVisible(True)

    def mark_stale(self) -> None:
        for label in (self.capacity_label, self.timeouts_label):
            if label.isVisible() and not label.text().startswith("(stale)"):
                label.setText("(stale) " + label.text())

    def clear(self) -> None:
        self.capacity_label.setVisible(False)
        self.timeouts_label.setVisible(False)


class SearchProgress(QWidget):
    """The progress of a verification: in words (what the remaining time is spent on, refreshed every 100 ms
    while a search runs) and as a bar of the bound k reached, shown while it runs. Follows the controller."""

    def __init__(self, controller: VerificationController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.label = QLabel("Not run.")
        self.label.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        self.bar.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self.elapsed_timer = QTimer(self)
        self.elapsed_timer.setInterval(100)
        self.elapsed_timer.timeout.connect(self.show_text)
        controller.status_changed.connect(self.label.setText)
        controller.progress_changed.connect(self._on_progress)
        controller.run_started.connect(self._on_run_started)
        controller.all_finished.connect(self._on_all_finished)

    def _on_run_started(self, _row: int) -> None:
        self.bar.setRange(0, self.controller.deepest_bound())
        self.bar.setValue(0)
        self.bar.setFormat("k = %v of %m")
        self.bar.setVisible(True)
        self.elapsed_timer.start()
        self.show_text()

    def _on_progress(self) -> None:
        state = self.controller.worker_state
        value = min(state.progress.k, self.bar.maximum()) if state and state.progress else None
        if value is not None and value != self.bar.value():  # setValue repaints the panel at once
            self.bar.setValue(value)
        self.show_text()

    def show_text(self) -> None:
        text = self.controller.progress_text()
        if text:
            self.label.setText(text)

    def _on_all_finished(self) -> None:
        self.elapsed_timer.stop()
        self.bar.setVisible(False)
