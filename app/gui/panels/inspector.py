"""The inspector: edits every parameter of the selected element and of the topology.

Each field is a line edit so that any text can be typed; the value is checked by
the same pydantic model as files, and a refused value shows the validation
message next to the field (the document keeps its last valid value). Typing
merges into one undo step per field and editing session. The panel is never narrower
than its fields need (no edit box is cut off; the dock grows instead).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, get_args

from pydantic import BaseModel
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.core.topology import Grouping
from app.gui.commands import (
    SetComponentFieldsCommand,
    SetSectionFieldsCommand,
    SetSubscriptionFieldsCommand,
)
from app.gui.document import DocumentModel, FieldError
from app.gui.panels.explanation import ExplanationBox
from app.gui.panels.fields import (
    BOLT_FIELDS,
    DEFAULT_STREAM_TEXT,
    EMISSION_CHOICES,
    MIN_FIELD_CHARS,
    MIN_PANEL_WIDTH,
    REPLAY_CHOICES,
    SECTIONS,
    SPOUT_FIELDS,
    STREAMS_FIELD,
    FieldRow,
    FieldSpec,
    format_streams,
    kind_title,
    parse_streams,
    parse_value,
    stream_values,
)


class Inspector(QScrollArea):
    """Shows and edits the selected component or subscription, then the topology's settings."""

    _sessions = itertools.count(1)

    def __init__(self, document: DocumentModel, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.setObjectName("inspector")
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the width fits instead
        body = self.body = QWidget()
        self.body_layout = QVBoxLayout(body)
        self.body_layout.setContentsMargins(6, 6, 6, 6)
        self.setWidget(body)
        self.selected_id: str | None = None
        self.selected_kind: str | None = None  # spout, bolt, subscription
        self.element_box = QGroupBox("Selection")
        self.element_form = QFormLayout(self.element_box)
        self.element_rows: dict[str, FieldRow] = {}
        self.checked_box: QCheckBox | None = None
        self.grouping_combo: QComboBox | None = None
        self.stream_combo: QComboBox | None = None
        self.hint = QLabel("Select a spout, bolt or link on the canvas to edit it.")
        self.hint.setWordWrap(True)
        self.element_form.addRow(self.hint)
        self.body_layout.addWidget(self.element_box)
        self.explanation = ExplanationBox()  # the selection in words (what its tooltip says, its verdicts)
        self.element_box.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)  # scrolls, no squeeze
        self.body_layout.addWidget(self.explanation)
        self.sections = SettingsSections(self)
        # (the settings' widgets, by the names the window and the tests use)
        self.section_rows, self.emission_combo = self.sections.rows, self.sections.emission_combo
        self.failures_box, self.replay_combo = self.sections.failures_box, self.sections.replay_combo
        self.body_layout.addStretch(1)
        self._session = next(self._sessions)
        self._fit_width()
        document.node_changed.connect(self._on_node_changed)
        document.node_removed.connect(self._on_node_removed)
        document.edge_removed.connect(self._on_edge_removed)
        document.edge_added.connect(self._on_edge_added)
        document.settings_changed.connect(self.refresh_sections)
        document.document_replaced.connect(self._on_replaced)
        self.refresh_sections()

    def _fit_width(self) -> None:
        """At least as wide as the fields need beside the vertical scroll bar, so nothing is clipped."""
        needed = self.body.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width() \
            + 2 * self.frameWidth() + 4  # a few pixels for styles that draw the bar wider than its hint
        self.setMinimumWidth(max(MIN_PANEL_WIDTH, needed))

    # ---- selection --------------------------------------------------------------------
    def show_element(self, ident: str | None) -> None:
        """Edit the component or subscription `ident` (None: nothing selected)."""
        self._clear_element()
        self.selected_id = ident
        self.explanation.show_for(ident if ident is not None and self.document.has_component(ident) else None)
        self.selected_kind = None
        if ident is None:
            self.element_box.setTitle("Selection")
            self.hint = QLabel("Select a spout, bolt or link on the canvas to edit it.")
            self.hint.setWordWrap(True)
            self.element_form.addRow(self.hint)
            return
        if self.document.has_component(ident):
            comp = self.document.component(ident)
            self.selected_kind = comp.kind
            self.element_box.setTitle(f"{kind_title(comp)} {comp.name}")
            for spec in [*(SPOUT_FIELDS if comp.kind == "spout" else BOLT_FIELDS), STREAMS_FIELD[comp.kind]]:
                row = FieldRow(spec, self._on_component_edit, self._end_session)
                self.element_form.addRow(spec.label, row)
                self.element_rows[spec.key] = row
            if comp.kind == "bolt":
                self.checked_box = QCheckBox("check this bolt's queue")
                self.checked_box.setObjectName("field_checked")
                self.checked_box.setToolTip("Verify growth of this bolt's queue; when no bolt is checked, all are")
                self.checked_box.toggled.connect(self._on_checked_toggled)
                self.element_form.addRow("Verify", self.checked_box)
        else:
            sub = self.document.subscription(ident)
            self.selected_kind = "subscription"
            topo = self.document.topology()
            self.element_box.setTitle(f"Subscription {topo.name_of(sub.source)} → {topo.name_of(sub.target)}")
            self.grouping_combo = QComboBox()
            self.grouping_combo.setObjectName("field_grouping")
            self.grouping_combo.addItems(list(get_args(Grouping)))
            self.element_form.addRow("Grouping", self.grouping_combo)
            row = FieldRow(FieldSpec("fields", "Fields", "text", "comma-separated field names (fields grouping)"),
                           self._on_subscription_edit, self._end_session)
            self.element_form.addRow("Fields", row)
            self.element_rows["fields"] = row
            self.grouping_combo.currentTextChanged.connect(self._on_grouping_changed)
            self.stream_combo = QComboBox()
            self.stream_combo.setObjectName("field_stream")
            self.stream_combo.setToolTip("the stream of the source this link reads (the source's declared streams)")
            self.element_form.addRow("Stream", self.stream_combo)
            self.stream_combo.currentTextChanged.connect(self._on_stream_changed)
        self.refresh_element()
        self._fit_width()

    def _clear_element(self) -> None:
        # deleteLater, not removeRow: the widget whose signal led here may still be on the stack
        while self.element_form.rowCount():
            taken = self.element_form.takeRow(0)
            for item in (taken.labelItem, taken.fieldItem):
                widget = item.widget() if item is not None else None
                if widget is not None:
                    widget.hide()
                    widget.deleteLater()
        self.element_rows = {}
        self.checked_box = None
        self.grouping_combo = None
        self.stream_combo = None

    def refresh_element(self) -> None:
        ident = self.selected_id
        if ident is None:
            return
        if self.selected_kind in ("spout", "bolt"):
            comp = self.document.component(ident)
            self.element_box.setTitle(f"{kind_title(comp)} {comp.name}")
            sources = self.document.topology().storm.sources
            for key, row in self.element_rows.items():
                if key == "streams":
                    row.set_value(format_streams(comp))
                    row.set_unannotated(any(n not in stream_values(comp) for n in comp.streams))
                    continue
                row.set_value(None if key in comp.unannotated else getattr(comp, key))
                row.set_unannotated(key in comp.unannotated, sources.get(f"{comp.kind}s.{comp.name}.{key}"))
            if self.checked_box is not None:
                self.checked_box.blockSignals(True)
                self.checked_box.setChecked(ident in self.document.topology().verification.checked)
                self.checked_box.blockSignals(False)
        elif self.selected_kind == "subscription":
            sub = self.document.subscription(ident)
            if self.grouping_combo is not None:
                self.grouping_combo.blockSignals(True)
                self.grouping_combo.setCurrentText(sub.grouping)
                self.grouping_combo.blockSignals(False)
            self.element_rows["fields"].set_value(", ".join(sub.fields))
            if self.stream_combo is not None:
                source = self.document.component(sub.source)
                names = [DEFAULT_STREAM_TEXT, *source.streams]
                current = sub.stream or DEFAULT_STREAM_TEXT
                if current not in names:
                    names.append(current)  # an undeclared stream: shown, and reported by the problems list
                self.stream_combo.blockSignals(True)
                self.stream_combo.clear()
                self.stream_combo.addItems(names)
                self.stream_combo.setCurrentText(current)
                self.stream_combo.blockSignals(False)

    def refresh_sections(self) -> None:
        self.sections.refresh()
        if self.checked_box is not None and self.selected_id is not None:
            self.refresh_element()

    # ---- editing ----------------------------------------------------------------------
    def _push(self, row: FieldRow, make: Callable[[], Any]) -> bool:
        try:
            command = make()
        except FieldError as err:
            row.show_error(err.message)
            return False
        command.session = self._session
        self.document.undo_stack.push(command)
        row.show_error(None)
        return True

    def _on_component_edit(self, row: FieldRow, text: str) -> None:
        ident = self.selected_id
        assert ident is not None
        try:
            value = parse_value(row.spec, text)
        except FieldError as err:
            row.show_error(err.message)
            return
        comp = self.document.component(ident)
        if row.spec.key in ("streams", "window", "join"):
            try:
                fields = parse_streams(comp.kind, text) if row.spec.key == "streams" else {row.spec.key: value}
            except FieldError as err:
                row.show_error(err.message)
                return
            if all(_same(getattr(comp, k), v) for k, v in fields.items()):
                row.show_error(None)
                return
            self._push(row, lambda: SetComponentFieldsCommand(self.document, ident, fields))
            return
        if getattr(comp, row.spec.key) == value and row.spec.key not in comp.unannotated:
            row.show_error(None)
            return
        self._push(row, lambda: SetComponentFieldsCommand(self.document, ident, {row.spec.key: value}))

    def _on_subscription_edit(self, row: FieldRow, text: str) -> None:
        ident = self.selected_id
        assert ident is not None
        fields = [f.strip() for f in text.split(",") if f.strip()]
        if self.document.subscription(ident).fields == fields:
            row.show_error(None)
            return
        self._push(row, lambda: SetSubscriptionFieldsCommand(self.document, ident, {"fields": fields}))

    def _on_grouping_changed(self, grouping: str) -> None:
        ident = self.selected_id
        row = self.element_rows["fields"]
        if ident is None or self.document.subscription(ident).grouping == grouping:
            return
        fields = [f.strip() for f in row.edit.text().split(",") if f.strip()]
        self._end_session(row)
        ok = self._push(row, lambda: SetSubscriptionFieldsCommand(
            self.document, ident, {"grouping": grouping, "fields": fields}, merge=False))
        if not ok and self.grouping_combo is not None:
            self.grouping_combo.blockSignals(True)
            self.grouping_combo.setCurrentText(self.document.subscription(ident).grouping)
            self.grouping_combo.blockSignals(False)

    def _on_stream_changed(self, text: str) -> None:
        ident = self.selected_id
        stream = None if text in ("", DEFAULT_STREAM_TEXT) else text
        if ident is None or (self.document.subscription(ident).stream or None) == stream \
                or (stream is None and self.document.subscription(ident).stream == DEFAULT_STREAM_TEXT):
            return
        row = self.element_rows["fields"]
        self._end_session(row)
        self._push(row, lambda: SetSubscriptionFieldsCommand(self.document, ident, {"stream": stream}, merge=False))

    def _on_checked_toggled(self, on: bool) -> None:
        ident = self.selected_id
        assert ident is not None
        checked = list(self.document.topology().verification.checked)
        if on and ident not in checked:
            checked.append(ident)
        elif not on and ident in checked:
            checked.remove(ident)
        self.document.undo_stack.push(
            SetSectionFieldsCommand(self.document, "verification", {"checked": checked}, merge=False))

    def _end_session(self, row: FieldRow | None = None) -> None:
        """Leaving a field ends its merge window; the next edit is a new undo step."""
        self._session = next(self._sessions)

    # ---- following the document ------------------------------------------------------
    def _on_node_changed(self, ident: str) -> None:
        if ident == self.selected_id:
            self.refresh_element()

    def _on_node_removed(self, ident: str) -> None:
        if ident == self.selected_id:
            self.show_element(None)

    def _on_edge_removed(self, ident: str) -> None:
        pass  # a grouping edit is remove + add of the same id; the window follows the canvas selection

    def _on_edge_added(self, ident: str) -> None:
        if ident == self.selected_id and self.selected_kind == "subscription":
            self.refresh_element()

    def _on_replaced(self) -> None:
        self.show_element(None)
        for row in self.section_rows.values():
            row.show_error(None)
        self.refresh_sections()

    def row(self, key: str, section: str | None = None) -> FieldRow:
        """The field row for `key` of the selection (or of `section`); for tests and focus."""
        return self.section_rows[(section, key)] if section else self.element_rows[key]


class SettingsSections:
    """The topology's settings in the inspector, below the selection: a box per section of SECTIONS with its field
    rows, the emission rule, the switch for every failure and the replay mode; each edit one undo step."""

    def __init__(self, inspector: Inspector) -> None:
        self.inspector = inspector
        self.document = inspector.document
        self.rows: dict[tuple[str, str], FieldRow] = {}
        for section, title, specs in SECTIONS:
            box = QGroupBox(title)
            form = QFormLayout(box)
            for spec in specs:
                row = FieldRow(spec, self._section_editor(section), inspector._end_session)
                form.addRow(spec.label, row)
                self.rows[(section, spec.key)] = row
            if title == "Failures":
                self._add_failure_controls(form)
            if title == "Timing":
                self.emission_combo = QComboBox()
                self.emission_combo.setObjectName("field_emission")
                self.emission_combo.setSizeAdjustPolicy(
                    QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
                self.emission_combo.setMinimumContentsLength(MIN_FIELD_CHARS)
                for value, words in EMISSION_CHOICES:
                    self.emission_combo.addItem(words, value)
                self.emission_combo.setToolTip(
                    "How a bolt keeps processed tuples that σ has not yet turned into output (docs/model.md):\n"
                    "exact: an exact fraction, so a bolt emits σ per tuple in the long run (a real bolt);\n"
                    "D-VerT: rounded up to a whole tuple, as the D-VerT prototype did; the long-run\n"
                    "ratio can exceed σ (kept for files imported from D-VerT)")
                self.emission_combo.currentIndexChanged.connect(self._on_emission_changed)
                form.addRow("Emission", self.emission_combo)
            inspector.body_layout.addWidget(box)

    def _add_failure_controls(self, form: QFormLayout) -> None:
        """The switch for every failure and the replay mode (docs/model.md section 7)."""
        self.failures_box = QCheckBox("Bolts may fail")
        self.failures_box.setObjectName("field_failures")
        self.failures_box.setToolTip("Off: no bolt fails, whatever its min time to failure (the published D-VerT "
                                     "runs had failures off)")
        self.failures_box.toggled.connect(
            lambda on: self._set_setting("failures", on, f"Failures {'on' if on else 'off'}"))
        form.addRow(self.failures_box)
        self.replay_combo = QComboBox()
        self.replay_combo.setObjectName("field_replay")
        for value, words in REPLAY_CHOICES:
            self.replay_combo.addItem(words, value)
        self.replay_combo.setToolTip(
            "What a spout does with the spout tuples whose trees lost a tuple at a failed bolt:\n"
            "paced: re-emits them with its own emissions, at most one per fresh tuple (Storm's nextTuple);\n"
            "at once: all with its next emission; none: the topology does not ack, lost is lost")
        self.replay_combo.currentIndexChanged.connect(
            lambda i: self._set_setting("replay", self.replay_combo.itemData(i), "Set replay mode"))
        form.addRow("Replay", self.replay_combo)

    def _set_setting(self, key: str, value: Any, text: str) -> None:
        if value == self.document.section_values("settings")[key]:
            return
        command = SetSectionFieldsCommand(self.document, "settings", {key: value}, merge=False)
        command.setText(text)
        self.document.undo_stack.push(command)

    def _on_emission_changed(self, index: int) -> None:
        value = self.emission_combo.itemData(index)
        self._set_setting("emission", value, f"Set emission rule to {value}")

    def _section_editor(self, section: str) -> Callable[[FieldRow, str], None]:
        def on_edit(row: FieldRow, text: str) -> None:
            try:
                value = parse_value(row.spec, text)
            except FieldError as err:
                row.show_error(err.message)
                return
            if self.document.section_values(section)[row.spec.key] == value:
                row.show_error(None)
                return
            self.inspector._push(row, lambda: SetSectionFieldsCommand(self.document, section, {row.spec.key: value}))
        return on_edit

    def refresh(self) -> None:
        """Every setting's widget from the document."""
        for (section, key), row in self.rows.items():
            row.set_value(self.document.section_values(section)[key])
        settings = self.document.section_values("settings")
        for combo, value in ((self.emission_combo, settings["emission"]), (self.replay_combo, settings["replay"])):
            combo.blockSignals(True)
            combo.setCurrentIndex(max(0, combo.findData(value)))
            combo.blockSignals(False)
        self.failures_box.blockSignals(True)
        self.failures_box.setChecked(bool(settings["failures"]))
        self.failures_box.blockSignals(False)


def _same(old: Any, new: Any) -> bool:
    """A field's value and what an edit gives it: a window (a model) against the fields typed (a dict)."""
    return bool((old.model_dump(exclude_none=True) if isinstance(old, BaseModel) else old) == new)
