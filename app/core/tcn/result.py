"""What a verification reports: progress while searching, and the final result.

These models cross threads (GUI worker -> panel) and processes (CLI JSON), so
they hold only plain data: never z3 objects.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from app.core.formats.trace import Trace

Verdict = Literal["counterexample", "none-up-to-k", "bounded", "unknown"]
PropertyKind = Literal["growth", "threshold"]


class Progress(BaseModel):
    """A progress report from a running search (sent through a callback)."""

    k: int
    elapsed_s: float
    stats: dict[str, float | int] = Field(default_factory=dict, description="z3 statistics of the last check")
    message: str = ""


class VerifyResult(BaseModel):
    """The verdict of one property, derived by the search, the certifier or the rate proof."""

    property: PropertyKind = "growth"
    verdict: Verdict
    k: int | None = None
    loop_start: int | None = None
    growing: list[str] = Field(default_factory=list)
    growth_per_loop: dict[str, int] = Field(default_factory=dict)
    certified: bool = False
    elapsed_s: float = 0.0
    rate_check: dict[str, Any] = Field(default_factory=dict)
    message: str = Field(default="", description="one paragraph in words: what was found and why")
    notes: list[str] = Field(default_factory=list, description="rate-check disagreements, suggestions, defects")
    kept: list[str] = Field(default_factory=list, description="components kept by the cone of influence")
    checked: list[str] = Field(default_factory=list)
    threshold: int | None = None
    trace: Trace | None = None

    def to_public_json(self) -> dict[str, Any]:
        """The JSON `stormbound verify --json` prints (the trace goes to --trace-out)."""
        return self.model_dump(mode="json", exclude={"trace"})
