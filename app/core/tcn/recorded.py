"""The one way a proof's answer is recorded: after its independent checker (app/core/tcn/check/) has the last word.

Every pass that builds a certificate (a flood, a replay storm, a paced backlog, a spill, growth by rates, the
linear program) or a threshold run for one (`verify --flood-run`) hands the bolt's new verdict and the checker's
objections here: with none, the verdict replaces the bolt's earlier one (and the run's trace joins the traces);
with some, a `defect:` note names what was rejected and the earlier answer stands.
"""

from __future__ import annotations

from app.core.formats.trace import AnyTrace, Trace
from app.core.results import BoltVerdict, StormRun

__all__ = ["before_that", "record_checked", "storm_run_found"]


def before_that(text: str, before: str | None) -> str:
    """A new answer's message `text`, followed by the earlier answer's message `before` when there is one."""
    return f"{text}. Before that: {before}" if before else text


def record_checked(verdicts: dict[str, BoltVerdict], name: str, verdict: BoltVerdict, problems: list[str],
                   notes: list[str], what: str, run: tuple[list[AnyTrace], AnyTrace] | None = None) -> bool:
    """Record `verdict` for `name` in `verdicts` (in place) when its checker found no `problems`, with `run` (the
    traces, the threshold run's trace) appending that trace; else note that `what` (a proof, the threshold run) was
    rejected and discarded, and keep the earlier answer. True when recorded."""
    if problems:
        notes.append(f"defect: {what} for {name} was rejected by its checker and discarded: " + "; ".join(problems[:3]))
        return False
    if run is not None:
        run[0].append(run[1])
    verdicts[name] = verdict
    return True


def storm_run_found(name: str, threshold: int, found: tuple[Trace, int] | str, notes: list[str],
                    traces: list[AnyTrace]) -> tuple[Trace, StormRun] | None:
    """What a threshold run's builder `found` for `name` (a storm's or a spill's: its trace and the target's largest
    queue, or why there is none): the trace and the run's record (its trace to come next in `traces`), or None with
    a note saying what is missing."""
    if isinstance(found, str):
        notes.append(f"no threshold run past {threshold} for {name}: {found}")
        return None
    trace, reached = found
    return trace, StormRun(threshold=threshold, reached=reached, trace_index=len(traces))
