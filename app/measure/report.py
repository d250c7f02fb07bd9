"""The HTML report of a measured run (`stormbound analyze RUN --report OUT.html`), without Qt.

One self-contained file: a style sheet inline, the plots as inline SVG (drawn by the
caller, app/gui/trace_plots.py), no script, no external reference, every text from the
run escaped. Sections: the measured queues with the model's prediction, model versus
measured per bolt, the parameters, per-component measurements, the reliability
summary and the shipped monitor patterns' matches (docs/spark-runs.md, "Reports").
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from app.measure.analysis import Analysis
from app.measure.model_vs_measured import BoltComparison, Comparison
from app.measure.reliability import ReliabilityReport


class PatternCount(BaseModel):
    """How often one monitor pattern matched."""

    pattern: str
    text: str = ""
    matches: int


class PatternSummary(BaseModel):
    """The monitor patterns' matches over the run (counts, and the first matches in words)."""

    events: int
    counts: list[PatternCount]
    first: list[str] = Field(default_factory=list, description="the first matches, one line each")


class Section(BaseModel):
    """A part of the report that could not be made, with why (it is shown instead of the part)."""

    title: str
    reason: str


def predicted_queue(series: Sequence[tuple[float, float]], start: float,
                    growth: float | None) -> list[tuple[float, float]]:
    """The model's queue over the run: from the first measured value, rising at `growth` tuples/s.

    `growth` is the rate check's growth at the measured rates, α and σ (0 for a bolt that
    keeps up, so its line stays flat); None (no prediction) gives no line.
    """
    if growth is None or not series:
        return []
    t0, q0 = series[0][0] - start, series[0][1]
    t1 = series[-1][0] - start
    return [(t0, q0), (t1, q0 + growth * (t1 - t0))]


VIOLATIONS_SHOWN = 20  # the first violations in time order; `stormbound reliability` lists them all


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], classes: Sequence[str] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{_e(classes[i])}"' if i < len(classes) and classes[i] else ""
        body.append(f"<tr{cls}>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_XML_HEAD = re.compile(r"^\s*<\?xml[^>]*\?>\s*")
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')
_EXTERNAL = re.compile(r'\b(?:src|href)\s*=\s*"(?!#|data:)', re.IGNORECASE)


def inline_svg(svg: str, prefix: str) -> str:
    """An SVG document ready to sit inside HTML: no XML header, ids made unique by `prefix`.

    Several plots in one page would otherwise share ids (pyqtgraph names every clip path
    `ViewBox_1_clip`), and each plot would clip with the first one's path.
    """
    text = _XML_HEAD.sub("", svg)
    text = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", text)
    if _EXTERNAL.search(text):
        raise ValueError("a plot refers to an external file; the report must stand alone")
    return text


def _agrees(b: BoltComparison) -> str:
    return {True: "yes", False: "NO", None: "-"}[b.agrees]


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; padding: 0 1em; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f3f3f3; } tr.disagree td { background: #fde2e2; } tr.violated td { background: #fde2e2; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; } .plot { flex: 1 1 520px; }
.plot svg { width: 100%; height: auto; } .note { color: #666; font-size: 0.9em; }
.ok { color: #1a7f37; } .bad { color: #b42318; } code { background: #f3f3f3; padding: 0 3px; }
"""


def _failure_sections(analysis: Analysis, comparison: Comparison | None) -> list[str]:
    """Failures and replays (a run with killed tasks): what was measured, and model and measurement around them."""
    from app.measure.failures_measured import failure_table, replay_table, segment_table, window_table

    measured = failure_table(analysis)
    if not measured:
        return []
    parts = ["<h2>Failures and replays</h2>",
             '<p class="note">Failures: times a task went down (killed); lost: tuples its queue, batch and arrivals '
             "while down held; failed trees: spout messages whose tree timed out; replays: failed messages the spout "
             "emitted again (docs/spark-runs.md, \"Killing a task\").</p>",
             _table(measured[0], measured[1:])]
    segments = segment_table(analysis)
    if segments:
        parts.append("<h3>Queues between failures and recoveries</h3>")
        parts.append('<p class="note">Each queue\'s trend per stretch of the run; the verdict of the measurements '
                     "table is the last stretch's, after the last failure or recovery.</p>")
        parts.append(_table(segments[0], segments[1:]))
    failures = comparison.failures if comparison is not None else None
    if failures is not None:
        rows = window_table(failures)
        parts.append("<h3>Queues around the failures</h3>")
        parts.append('<p class="note">Before: the mean queue in the window before the failure; drained after: from '
                     "the restart until the queue is back within a tuple (or a tenth) of it; forecast: the backlog "
                     "over the spare capacity the rate check gives at the measured rates.</p>")
        parts.append(_table(rows[0], rows[1:]))
        if failures.replays:
            rows = replay_table(failures)
            parts.append("<h3>Replays: model and measurement</h3>")
            parts.append('<p class="note">The model allows between ceil(lost / Imp(bolt, spout)) and lost replays '
                         "for the tuples a bolt lost from a spout's trees (docs/model.md, section 7.3).</p>")
            parts.append(_table(rows[0], rows[1:], ["disagree" if r.within is False else "" for r in failures.replays]))
    return parts


def render_report(analysis: Analysis, comparison: Comparison | None, plots: dict[str, str],
                  reliability: ReliabilityReport | Section | None, patterns: PatternSummary | Section | None,
                  title: str = "", notes: Sequence[str] = (), source: str = "",
                  capacity: Sequence[str] = ()) -> str:
    """The whole report as one HTML document; `plots` maps a component name to its SVG (already inline-ready).

    `source` names the log as the user gave it (default: the analysis's own, an absolute path); `capacity`
    is the topology's capacity in Storm's terms, a line each (app/core/storm/lines.py, `capacity_lines`).
    """
    parts = _head(analysis, title, notes, source or analysis.source)
    parts += _queues_section(plots)
    parts += _model_section(comparison)
    parts += _capacity_section(capacity)
    parts += _measurements_section(analysis)
    parts += _failure_sections(analysis, comparison)
    parts += _reliability_section(reliability)
    parts += _patterns_section(patterns)
    parts.append('<p class="note">Made by <code>stormbound analyze --report</code>; '
                 "docs/spark-runs.md explains each figure.</p></body></html>")
    return "\n".join(parts) + "\n"


def _head(analysis: Analysis, title: str, notes: Sequence[str], source: str) -> list[str]:
    """The document's head, its title and what the log holds, then the notes."""
    name = title or source
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{_e('Stormbound run report: ' + name)}</title>", f"<style>{STYLE}</style></head><body>",
             f"<h1>Run report: {_e(name)}</h1>",
             f"<p>{_e(source)}: {analysis.events} events, {analysis.queue_samples} queue samples, "
             f"{analysis.duration_s:.1f} s; queues binned every {analysis.bin_s:g} s; a queue counts as growing "
             f"above {analysis.growth_floor:g} tuples/s.</p>"]
    parts += [f'<p class="note">{_e(n)}</p>' for n in [*notes, *analysis.notes]]
    return parts


def _queues_section(plots: dict[str, str]) -> list[str]:
    """The measured and predicted queue plots."""
    parts = ["<h2>Queues: measured and predicted</h2>"]
    if plots:
        parts.append('<p class="note">Dashed: the measured queue (mean per bin). Solid: the model, from the first '
                     "measured value at the growth the rate check predicts with the measured rates, α and σ "
                     "(flat for a bolt that keeps up).</p>")
        parts.append('<div class="plots">' + "".join(f'<div class="plot" id="plot-{_e(n)}">{svg}</div>'
                                                    for n, svg in plots.items()) + "</div>")
    else:
        parts.append("<p>No queue samples in this log.</p>")
    return parts


def _model_section(comparison: Comparison | None) -> list[str]:
    """Model versus measured per bolt, and the parameters annotated and measured."""
    if comparison is None:
        return ["<h2>Model versus measured</h2><p>No topology with annotated parameters was given "
                "(<code>--topology FILE</code>, or the run folder's own), so there is no model to compare.</p>"]
    parts = ["<h2>Model versus measured</h2>"]
    rows: list[list[object]] = []
    classes: list[str] = []
    for b in comparison.bolts:
        rows.append([b.bolt, b.model_status, f"{b.model_growth:.3g}",
                     "-" if b.predicted_growth is None else f"{b.predicted_growth:.3g}",
                     "-" if b.measured_slope is None else f"{b.measured_slope:+.3g}",
                     "-" if b.measured_ci is None else f"{b.measured_ci[0]:+.3g}..{b.measured_ci[1]:+.3g}",
                     b.measured_verdict or "-", _agrees(b), b.measured_note])
        classes.append("disagree" if b.agrees is False else "")
    parts.append(_table(["bolt", "model", "growth/s annotated", "growth/s predicted at measured",
                         "measured slope/s", "95% robust CI", "measured verdict", "agrees", "note"], rows, classes))
    parts.append("<h3>Parameters</h3>")
    parts.append(_table(["component", "parameter", "annotated", "measured", "difference"],
                        [[p.component, p.parameter, f"{p.annotated:g}",
                          "-" if p.measured is None else f"{p.measured:.4g}",
                          "-" if p.relative_error is None else f"{p.relative_error:+.1%}"]
                         for p in comparison.parameters]))
    return parts


def _capacity_section(capacity: Sequence[str]) -> list[str]:
    """The topology's capacity in Storm's terms, when known."""
    if not capacity:
        return []
    return ["<h2>Capacity in Storm's terms</h2>",
            "<ul>" + "".join(f"<li>{_e(line)}</li>" for line in capacity) + "</ul>"]


def _measurements_section(analysis: Analysis) -> list[str]:
    """The measured figures of every component."""
    rows: list[list[object]] = []
    for c in analysis.components.values():
        q = c.queue
        rows.append([c.name, c.kind, c.tasks, "unknown" if c.rate_in is None else f"{c.rate_in:.3g}",
                     f"{c.rate_out:.3g}" + (f" ({c.rate_fresh or 0:.3g} fresh + {c.rate_replayed:.3g} replayed)"
                                            if c.rate_replayed else ""),
                     "-" if c.alpha_mean is None else f"{c.alpha_mean:.3g}",
                     "-" if c.sigma is None else f"{c.sigma:.3g}",
                     "-" if not c.bursts else f"{c.burst_mean:.2f} (max {c.burst_max})",
                     "-" if q is None else f"{q.slope:+.3f} ({q.ci_low:+.3f}..{q.ci_high:+.3f})",
                     "-" if q is None else q.verdict])
    return ["<h2>Measurements per component</h2>",
            _table(["component", "kind", "tasks", "in/s", "out/s", "α mean (s)", "σ", "bursts",
                    "queue slope/s (95% robust CI)", "verdict"], rows)]


def _reliability_section(reliability: ReliabilityReport | Section | None) -> list[str]:
    """Storm's delivery guarantees over the log, or why they were not checked."""
    parts = ["<h2>Reliability</h2>"]
    if isinstance(reliability, Section):
        parts.append(f"<p>{_e(reliability.reason)}</p>")
    elif reliability is not None:
        verdict = ('<span class="ok">every guarantee holds</span>' if reliability.ok
                   else '<span class="bad">guarantees violated</span>')
        parts.append(f"<p>{verdict}</p>")
        parts.append(f"<p>{reliability.events} events checked, the log ends at t = {reliability.log_end:.6g} s; "
                     f"message timeout {reliability.config.message_timeout_s:g} s.</p>")
        cannot = reliability.cannot_decide
        parts.append(_table(["property", "holds", "violations", "undecided at the end of the log"],
                            [[p, f"cannot be decided from this log: {cannot[p]}" if p in cannot
                              else "yes" if ok else "NO", reliability.counts.get(p, 0),
                              reliability.undecided.get(p, 0)] for p, ok in reliability.properties.items()],
                            ["" if ok or p in cannot else "violated" for p, ok in reliability.properties.items()]))
        lines = [*reliability.notes, *(v.describe() for v in reliability.violations[:VIOLATIONS_SHOWN])]
        if lines:
            parts.append(f"<pre>{_e(chr(10).join(lines))}</pre>")
    return parts


def _patterns_section(patterns: PatternSummary | Section | None) -> list[str]:
    """The matches of the shipped Storm monitor patterns, or why they were not matched."""
    parts = ["<h2>Pattern matches (shipped Storm monitors)</h2>"]
    if isinstance(patterns, Section):
        parts.append(f"<p>{_e(patterns.reason)}</p>")
    elif patterns is not None:
        parts.append(f"<p>{sum(c.matches for c in patterns.counts)} matches over {patterns.events} events.</p>")
        parts.append(_table(["pattern", "matches", "definition"],
                            [[c.pattern, c.matches, c.text] for c in patterns.counts]))
        if patterns.first:
            parts.append("<h3>First matches</h3><pre>" + _e("\n".join(patterns.first)) + "</pre>")
    return parts
