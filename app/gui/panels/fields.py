"""The inspector's fields: what each editable parameter is (`FieldSpec`, the settings' `SECTIONS`), how its text
is read and written (`parse_value`, `format_value`, a component's streams), and the row that edits one
(`FieldRow`: a line edit with its validation message). Used by app/gui/panels/inspector.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.core.topology import Component, Join, Window
from app.gui.document import FieldError


@dataclass(frozen=True)
class FieldSpec:
    """One editable field: its key in the model, label, value kind and help text."""

    key: str
    label: str
    kind: str  # text, float, int, optional-int, optional-float, duration, optional-duration, rate, window, join
    help: str = ""


SPOUT_FIELDS = [
    FieldSpec("name", "Name", "text", "unique among spouts and bolts"),
    FieldSpec("rate", "Rate (tuples/s)", "rate", "average tuples emitted per second (λ); 1500, 1500/s or 90/min"),
    FieldSpec("burst", "Burst", "int", "max tuples in one emission"),
]
BOLT_FIELDS = [
    FieldSpec("name", "Name", "text", "unique among spouts and bolts"),
    FieldSpec("alpha", "α (per batch)", "duration", "duration of one processing batch (asynchronous: of one tuple on a "
              "thread, the process latency): 20 ms, 0.5 s (a bare number is seconds)"),
    FieldSpec("sigma", "σ (out per in)", "float", "output tuples per input tuple; 0 = sink"),
    FieldSpec("parallelism", "Parallelism", "int", "executors: max tuples taken into one batch (× threads if async)"),
    FieldSpec("threads", "Threads (async)", "optional-int", "internal threads per executor: empty = not async"),
    FieldSpec("window", "Window", "window", "a windowed bolt (Storm's BaseWindowedBolt; α is one "
              "execute(TupleWindow)): count 30/10 (length/slide in tuples), count 3 (tumbling), "
              "duration 10 s/2 s; mixed: count 4/duration 2 s (withWindow(Count(4), Duration 2 s)), "
              "duration 10 s/count 5; empty = not windowed (docs/model.md section 10)"),
    FieldSpec("join", "Join", "join", "a join: all (waits for a part from every input stream per message, Metron's "
              "enrichment join; α and σ per message), with its cache: all cache 100000 retain 10 (maxCacheSize, "
              "maxTimeRetain in minutes); window (Storm's JoinBolt over its window); empty = not a join "
              "(docs/model.md section 11)"),
    FieldSpec("min_ttf", "Min time to failure", "optional-duration",
              "the bolt may fail once this long has passed since its last failure ended: 30 s, 5 min; "
              "empty = it never fails (docs/model.md section 7)"),
]
# a component's declared streams besides `default`, typed as "status=0.1, tika=0.5" (a name alone: σ not annotated)
STREAMS_FIELD = {
    "spout": FieldSpec("streams", "Streams (ratio)", "text",
                       "declared streams besides 'default' (which carries the emissions), each with the tuples on "
                       "it per tuple emitted: status=0.1, errors=0.01"),
    "bolt": FieldSpec("streams", "Streams (σ)", "text",
                      "declared streams besides 'default' (whose σ is above), each with its σ, output tuples on it "
                      "per input tuple: status=0.1, tika=0.5"),
}
DEFAULT_STREAM_TEXT = "default"
EMISSION_CHOICES = [("exact", "exact (σ per tuple)"), ("dvert", "D-VerT (carry rounded up)")]
REPLAY_CHOICES = [("paced", "paced (with fresh tuples)"), ("at-once", "at once"), ("none", "none (no acking)")]
SECTIONS: list[tuple[str, str, list[FieldSpec]]] = [
    ("topology", "Topology", [
        FieldSpec("name", "Name", "text"),
        FieldSpec("description", "Description", "text"),
    ]),
    ("settings", "Timing", [
        FieldSpec("tolerance", "Tolerance τ", "float", "relative jitter of every duration, 0 ≤ τ < 1"),
        FieldSpec("max_idle_time", "Max idle time", "duration",
                  "a bolt with waiting tuples takes within this delay: 10 ms, 0.01 s (a bare number is seconds)"),
        FieldSpec("init_queues", "Initial queues", "int", "every queue's size at time 0"),
    ]),
    ("settings", "Failures", [
        FieldSpec("min_reboot_time", "Min reboot time", "optional-duration",
                  "shortest failure of a bolt with a min time to failure: 10 s"),
        FieldSpec("max_reboot_time", "Max reboot time", "optional-duration", "longest failure: 100 s"),
    ]),
    ("verification", "Verification", [
        FieldSpec("k", "Bound k", "optional-int",
                  "a single bound (positions of the lasso); empty = search k_min..k_max"),
        FieldSpec("k_min", "k min", "int"),
        FieldSpec("k_max", "k max", "int"),
        FieldSpec("queue_threshold", "Queue reaches N", "optional-int",
                  "also check: some queue can reach N; empty = off"),
        FieldSpec("timeout_s", "Timeout", "optional-duration", "30 s, 2 min; empty = no timeout"),
    ]),
]


MIN_FIELD_CHARS = 10  # an edit box shows at least this many digits
MIN_PANEL_WIDTH = 250


def parse_value(spec: FieldSpec, text: str) -> Any:
    """The typed text as a value of the field's kind, or FieldError saying what is wrong (a window: its fields)."""
    text = text.strip()
    if spec.kind == "text":
        return text
    if spec.kind == "window":
        return parse_window(text)
    if spec.kind == "join":
        return parse_join(text)
    if spec.kind.startswith("optional") and text == "":
        return None
    if text == "":
        raise FieldError(spec.key, "a value is required")
    if spec.kind in ("duration", "optional-duration", "rate"):
        from app.core.units import UnitError, parse_duration, parse_rate

        try:
            return parse_rate(text) if spec.kind == "rate" else parse_duration(text)
        except UnitError as err:
            raise FieldError(spec.key, str(err)) from None
    return parse_number(spec, text)


def parse_number(spec: FieldSpec, text: str) -> float:
    """The typed text as a finite number (a whole one for an int kind), or FieldError saying what is wrong."""
    text = text.strip()
    if text == "":
        raise FieldError(spec.key, "a value is required")
    try:
        value = float(text)
    except ValueError:
        raise FieldError(spec.key, f"'{text}' is not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FieldError(spec.key, f"'{text}' is not a finite number")
    if spec.kind.endswith("int"):
        if not value.is_integer():
            raise FieldError(spec.key, "must be a whole number")
        return int(value)
    return value


def stream_values(comp: Component) -> dict[str, float]:
    """A component's σ (bolt) or ratio (spout) per declared stream."""
    return dict(comp.stream_sigma if comp.kind == "bolt" else comp.stream_ratio)


def format_streams(comp: Component) -> str:
    """"status=0.1, tika" for the inspector: each declared stream with its σ (ratio), if annotated."""
    values = stream_values(comp)
    return ", ".join(f"{n}={format_value(values[n])}" if n in values else n for n in comp.streams)


def parse_streams(kind: str, text: str) -> dict[str, Any]:
    """The fields "status=0.1, tika" sets: `streams` and `stream_sigma` (bolt) or `stream_ratio` (spout)."""
    names: list[str] = []
    values: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, eq, number = (x.strip() for x in part.partition("="))
        if not name:
            raise FieldError("streams", f"'{part}' has no stream name")
        if name in names:
            raise FieldError("streams", f"stream '{name}' is named twice")
        names.append(name)
        if eq:
            try:
                values[name] = parse_number(FieldSpec(f"streams.{name}", name, "float"), number)
            except FieldError as err:
                raise FieldError("streams", f"{name}: {err.message}") from None
            if values[name] < 0:
                raise FieldError("streams", f"{name}: must be at least 0, not {number}")
    return {"streams": names, ("stream_sigma" if kind == "bolt" else "stream_ratio"): values}


def format_window(window: Window) -> str:
    """A window as the inspector shows it: "count 30/10" (length/slide), "count 3" (tumbling), "duration 10 s/2 s";
    a mixed window names both kinds (docs/model.md section 10.4): "count 4/duration 2 s", "duration 10 s/count 5"."""
    def size(value: float, kind: str) -> str:
        if kind == "count":
            return f"{value:g}"
        from app.core.units import format_duration

        return format_duration(value)
    if window.slide is None:
        return f"{window.kind} {size(window.length, window.kind)}"
    slide = f"{window.trigger} " if window.mixed else ""
    return f"{window.kind} {size(window.length, window.kind)}/{slide}{size(window.slide, window.trigger)}"


def parse_window(text: str) -> dict[str, Any] | None:
    """The `window` "count 30/10", "count 3", "duration 10 s/2 s" or a mixed "count 4/duration 2 s" sets (None:
    empty, no window), or FieldError."""
    text = text.strip()
    if not text:
        return None
    kind, _, sizes = text.partition(" ")
    usage = ("write count LENGTH[/SLIDE] (tuples) or duration LENGTH[/SLIDE] (10 s/2 s); a mixed window names the "
             "slide's kind: count 4/duration 2 s")
    if kind not in ("count", "duration") or not sizes.strip():
        raise FieldError("window", usage)
    parts = [p.strip() for p in sizes.split("/")]
    if len(parts) > 2:
        raise FieldError("window", "a window has a length and at most one sliding interval")
    kinds = [kind] * len(parts)
    if len(parts) == 2:
        first, _, rest = parts[1].partition(" ")
        if first in ("count", "duration"):
            if not rest.strip():
                raise FieldError("window", usage)
            kinds[1], parts[1] = first, rest.strip()
    values = [parse_value(FieldSpec("window", "Window", "int" if k == "count" else "duration"), p)
              for k, p in zip(kinds, parts, strict=True)]
    window: dict[str, Any] = {"kind": kind, "length": values[0]}
    if len(values) == 2:
        window["slide"] = values[1]
        if kinds[1] != kind:
            window["slide_kind"] = kinds[1]
    return window


def format_join(join: Join) -> str:
    """A join as the inspector shows it: "all", "all cache 100000 retain 10" (minutes), "window"."""
    text: str = join.kind
    if join.max_cache is not None:
        text += f" cache {join.max_cache}"
    if join.max_time is not None:
        text += f" retain {join.max_time:g}"
    return text


def parse_join(text: str) -> dict[str, Any] | None:
    """The `join` "all", "all cache 100000 retain 10" or "window" sets (None: empty, not a join), or FieldError."""
    words = text.split()
    if not words:
        return None
    if words[0] not in ("all", "window") or len(words) % 2 == 0:
        raise FieldError("join", "write all [cache N] [retain MINUTES] (Metron's join) or window (Storm's JoinBolt)")
    join: dict[str, Any] = {"kind": words[0]}
    for name, number in zip(words[1::2], words[2::2], strict=True):
        key = {"cache": "max_cache", "retain": "max_time"}.get(name)
        if key is None or words[0] != "all":
            raise FieldError("join", f"'{name}': only a join waiting for every branch (all) takes cache N and "
                             "retain MINUTES")
        join[key] = parse_number(FieldSpec("join", "Join", "int" if key == "max_cache" else "float"), number)
        if join[key] <= 0:
            raise FieldError("join", f"{name}: must be above 0, not {number}")
    return join


def kind_title(comp: Component) -> str:
    if comp.kind == "bolt" and comp.threads is not None:
        return "Asynchronous bolt"
    if comp.kind == "bolt" and comp.join is not None:
        return "Join"
    return "Windowed bolt" if comp.kind == "bolt" and comp.window is not None else comp.kind.capitalize()


def format_value(value: Any, kind: str = "") -> str:
    """A value as the field shows it: a time in milliseconds below a second (the Storm UI's unit)."""
    if value is None:
        return ""
    if kind == "window" and isinstance(value, Window):
        return format_window(value)
    if kind == "join" and isinstance(value, Join):
        return format_join(value)
    if kind in ("duration", "optional-duration") and isinstance(value, (int, float)):
        from app.core.units import format_duration

        return format_duration(float(value))
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e15 else repr(value)
    return str(value)


class FieldRow(QWidget):
    """A line edit with its error label underneath."""

    def __init__(self, spec: FieldSpec, on_edit: Callable[[FieldRow, str], None], on_done: Callable[[FieldRow], None]):
        super().__init__()
        self.spec = spec
        self.edit = QLineEdit()
        self.edit.setObjectName(f"field_{spec.key}")
        self.edit.setToolTip(spec.help)
        self.edit.setMinimumWidth(self.edit.fontMetrics().horizontalAdvance("0" * MIN_FIELD_CHARS))
        self.error = QLabel()
        self.error.setObjectName("fieldError")
        self.error.setWordWrap(True)
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(1)
        layout.addWidget(self.edit)
        layout.addWidget(self.error)
        self.edit.textEdited.connect(lambda text: on_edit(self, text))
        self.edit.editingFinished.connect(lambda: on_done(self))

    def set_value(self, value: Any) -> None:
        """Show the document's value unless the user is typing in this field."""
        if self.edit.hasFocus() and self.error.isVisible():
            return
        text = format_value(value, self.spec.kind)
        if self.edit.text() != text and not (self.edit.hasFocus() and self._same(text)):
            self.edit.setText(text)

    def _same(self, text: str) -> bool:
        try:
            return bool(parse_value(self.spec, self.edit.text()) == parse_value(self.spec, text))
        except FieldError:
            return False

    def set_unannotated(self, on: bool, source: str | None = None) -> None:
        """Amber while the value is an import's placeholder; the tooltip says where a value came from."""
        if bool(self.edit.property("unannotated")) != on:
            self.edit.setProperty("unannotated", on)
            self.edit.style().unpolish(self.edit)
            self.edit.style().polish(self.edit)
        tip = self.spec.help
        if on:
            tip += ("\nNot annotated: the import had no value (Flux has no timing). Import it from the Storm UI, "
                    "calibrate it from a run, or type it.")
        if source:
            tip += f"\nFrom: {source}"
        self.edit.setToolTip(tip)
        self.edit.setPlaceholderText("not annotated" if on else "")

    def show_error(self, message: str | None) -> None:
        self.edit.setProperty("invalid", message is not None)
        self.edit.style().unpolish(self.edit)
        self.edit.style().polish(self.edit)
        if message:
            self.error.setText(f"{self.spec.label}: {message}")
            self.error.show()
        else:
            self.error.clear()
            self.error.hide()
