"""What a comparison reports: its verdict, the first certain difference and the unmatched items."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.diff.values import short_json


class StreamItem(BaseModel):
    """An item of one side with its 1-based index in that side and in the connected stream."""

    side: Literal["left", "right"]
    index: int
    position: int | None = None
    item: Any


class Difference(BaseModel):
    """The first certain difference: `item` arrived at `position` and conflicts with `other`."""

    position: int
    item: StreamItem
    other: StreamItem | None
    reason: str


class DiffResult(BaseModel):
    """Verdict of a comparison plus the evidence: first difference and unmatched items."""

    equivalent: bool
    detected_at: int | Literal["end"] | None = Field(
        description="1-based position in the connected stream where non-equivalence became certain, "
                    "'end' if only the leftovers at the end show it, None when equivalent")
    first_difference: Difference | None = None
    unmatched_left: list[StreamItem] = Field(default_factory=list)
    unmatched_right: list[StreamItem] = Field(default_factory=list)
    unmatched_left_count: int = Field(0, description="all unmatched left items (the list may be cut short)")
    unmatched_right_count: int = 0
    left_count: int = 0
    right_count: int = 0
    matched: int = 0
    peak_unmatched: int | None = Field(0, description="most items held at once (None: not measured, Spark)")
    engine: Literal["local", "spark"] = "local"
    dependence: str = ""
    equality: str = ""
    stopped_early: bool = Field(False, description="input after the first difference was not matched")

    def summary(self) -> str:
        """One or a few human lines: the verdict and the first difference."""
        peak = "" if self.peak_unmatched is None else f", peak unmatched {self.peak_unmatched}"
        head = (f"{self.left_count} left / {self.right_count} right items, {self.matched} matched{peak} "
                f"(dependence {self.dependence}, equality {self.equality})")
        if self.equivalent:
            return f"equivalent: {head}"
        lines = [f"NOT equivalent: {head}"]
        if self.first_difference is not None:
            d = self.first_difference
            lines.append(f"first difference at position {d.position}: {d.reason}")
            lines.append(f"  {d.item.side} #{d.item.index}: {short_json(d.item.item)}")
            if d.other is not None:
                lines.append(f"  {d.other.side} #{d.other.index}: {short_json(d.other.item)}")
        else:
            lines.append("no order conflict; the streams differ by the unmatched items below")
        return "\n".join(lines)
