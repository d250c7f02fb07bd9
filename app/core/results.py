"""What a verification reports: progress while searching, and the final result (plain data: the
verifier in app/core/tcn/ fills it; the CLI, the GUI and the verified-configuration format read it).

These models cross threads (GUI worker -> panel) and processes (CLI JSON), so
they hold only plain data: never z3 objects.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from app.core.formats.trace import CompressedTrace, Trace
from app.core.words import Words

Verdict = Literal["counterexample", "unbounded", "none-up-to-k", "no-repeating-growth", "bounded", "unknown"]
PropertyKind = Literal["growth", "threshold"]


class LinearCertificate(BaseModel):
    """Farkas multipliers proving that no lasso makes `target`'s queue grow (docs/verifier.md, "Linear
    program"): the rows of one loop pass, named, each weighted by an exact fraction ("p/q"), whose sum
    is a contradiction. `content_hash` is the SHA-256 of the semantics of the topology the rows were
    built from (the target's cone of influence); `app/core/tcn/check/linear.py` checks it."""

    target: str
    content_hash: str
    rows: dict[str, str] = Field(default_factory=dict, description="row name -> multiplier 'p/q' (zeros left out)")
    cases: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="a join target (docs/verifier.md, 'A join as the target'): per branch "
        "('[component/stream]'), the multipliers of the case where its cache grows with that branch the slowest; "
        "`rows` is the case where its queue grows")


class RateGrowthBranch(BaseModel):
    """One branch of a join whose cache a rate-growth certificate proves growing: its input stream and the least
    and most parts per second it delivers under the schedule ("p/q")."""

    sender: str
    stream: str
    rate_low: str
    rate_high: str


class RateGrowthLine(BaseModel):
    """One bolt of a rate-growth certificate: its role under the schedule and its exact long-run figures
    there ("p/q" strings): the least and the most it receives per second (a join: the messages its branches
    complete), and the capacity the role uses (the target's smallest, every other bolt's largest). A target
    join whose cache grows (`cache grows`) states its branches' figures in `branches`."""

    role: Literal["target", "cache grows", "saturated", "keeps up"]
    inflow_low: str
    inflow_high: str
    capacity: str
    branches: list[RateGrowthBranch] = Field(default_factory=list)


class RateGrowthCertificate(BaseModel):
    """A legal schedule under which `target`'s queue grows (docs/verifier.md, "Growth proven by rates"):
    spouts emit one tuple at their shortest period, every other bolt of the cone takes at once and processes
    as fast as it may, the target waits as long as it may and processes as slowly as it may. `spouts` holds
    each spout's emission rate under it, `bolts` each bolt's figures; strict inequalities between them
    prove that a lasso in which the target grows exists. `app/core/tcn/check/rate_growth.py` checks it."""

    target: str
    content_hash: str
    spouts: dict[str, str] = Field(default_factory=dict, description="spout name -> tuples/s emitted ('p/q')")
    bolts: dict[str, RateGrowthLine] = Field(default_factory=dict)
    rounds: int | None = Field(default=None, description=(
        "with a cycle in the cone: the figures are those of this many rounds of the iteration from below and "
        "from above (docs/verifier.md, \"Growth proven by rates\", cycles); None: one pass in topological order"))


class FloodTerm(BaseModel):
    """One input stream of a flooded bolt while its source drains: the sender's rate (the source's largest
    capacity C/(α(1−τ)), or a spout's least emission rate 1/(a(1+τ))) and the stream's least output ratio
    σ_lo, both "p/q"; the stream carries at least rate × ratio tuples per second, up to a constant."""

    sender: str
    stream: str
    rate: str
    ratio: str


class StormRun(BaseModel):
    """A finite legal run of the target's cone in which its queue reaches `threshold` while the failing bolt fails
    as its storm plan says (docs/boundedness.md, "The threshold run of a replay storm"); `reached` is the target's
    largest queue in it. The trace is a threshold witness (loop_start k+1): `trace_index` into the result's traces
    in memory and in `verify --json`, `trace` its JSON in a certificate file; `app/core/tcn/check/storm.py`
    certifies it."""

    threshold: int
    reached: int
    trace_index: int | None = None
    trace: dict[str, Any] | None = None


class JointFailure(BaseModel):
    """Another failing bolt G of a paced storm (docs/boundedness.md, "Unbounded: several failing bolts on one paced
    spout"): G receives the spout's default stream and fails once every `every` cycles of the storm's failing bolt,
    `offset` seconds after the spout's `emission`-th emission after that bolt's recovery, down `reboot` seconds; each
    such failure loses at least `loss` tuples, which the spout replays into the failing bolt's trees."""

    bolt: str
    reboot: str
    every: int
    emission: int
    offset: str
    loss: int


class StormCertificate(BaseModel):
    """`target` is unbounded by a replay storm (docs/boundedness.md, "Unbounded: a replay storm"): with at-once
    replays, `failing` (fed by `spout`'s default stream) fails every `min_ttf + reboot` seconds while the spout
    emits `emissions` tuples per cycle, one every `gap` seconds, and the failing bolt, at its slowest, completes at
    most `completions` batches per up stretch (`waits`: its first tuple after a recovery comes a whole gap later):
    the tuples pending in its trees grow by `growth` ≥ 1 per cycle. The target is the failing bolt (its queue just
    before each failure) or a bolt that receives the spout's default stream (every replay reaches it, and the
    replays grow every cycle). `content_hash` is that of the target's cone of influence;
    `app/core/tcn/check/storm.py` checks it.

    With `replay` "paced" (docs/boundedness.md, "Unbounded: a paced replay backlog") the same cycle makes the
    spout's replay backlog grow by `growth` per cycle; once it holds any B the failing bolt stops failing, and for
    B·gap seconds the target receives at least Σ rate × ratio of `terms` tuples per second (the spout's streams at
    a fresh tuple and a replay per gap), strictly more than its smallest capacity `capacity`. With `others` the
    backlog grows by the joint count over lcm(every) cycles: that many times `growth` plus each other bolt's `loss`
    per failure (`up`: the failing bolt's time up, when longer than min_ttf)."""

    target: str
    content_hash: str
    failing: str
    spout: str
    reboot: str
    emissions: int
    gap: str
    waits: bool
    completions: int
    growth: int
    replay: Literal["at-once", "paced"] = Field(default="at-once", description="the document's replay mode")
    terms: list[FloodTerm] = Field(default_factory=list, description="paced: the target's input streams from spouts "
                                   "while the backlog drains, each at its sender's rate and the stream's ratio")
    capacity: str | None = Field(default=None, description="paced: the target's smallest capacity ('p/q')")
    up: str | None = Field(default=None, description="the failing bolt's time up per cycle ('p/q'; none: min_ttf)")
    others: list[JointFailure] = Field(default_factory=list, description="paced: other failing bolts whose losses "
                                       "the spout replays, one failure every `every` cycles each; `growth` is then "
                                       "the failing bolt's own, and the joint growth is checked over their cycle")
    run: StormRun | None = Field(default=None, description="on request (verify --flood-run N): a finite run in "
                                                           "which the target's queue reaches N")


class FloodEvidence(BaseModel):
    """Why the flood's source can hold any backlog: its growth proven by rates (`topology`, the document it is
    proven on, and `growth_certificate`), a certified lasso in which it grows (`trace`, the trace's JSON, in a
    certificate file; `trace_index` into the result's traces in memory and in `verify --json`), or its own flood
    (`topology`, its cone, and `flood_certificate`), or a replay storm (`topology`, its cone, and
    `storm_certificate`)."""

    topology: dict[str, Any] | None = None
    growth_certificate: RateGrowthCertificate | None = None
    trace_index: int | None = None
    trace: dict[str, Any] | None = None
    flood_certificate: FloodCertificate | None = Field(
        default=None, description="a chain of floods: the source is itself unbounded, by this certificate (about "
                                  "`topology`, the source's cone, with its own evidence's trace embedded)")
    storm_certificate: StormCertificate | None = Field(
        default=None, description="the source is unbounded by a replay storm, by this certificate (about "
                                  "`topology`, the source's cone)")


class SpillCertificate(BaseModel):
    """`target` is unbounded by a replayed backlog (docs/boundedness.md, "Unbounded: a backlog replayed at once"):
    with at-once replays, `failing` (a bolt with `min_ttf` that `spout`'s trees reach) can hold any backlog
    (`evidence`, as a flood's source: a rate proof, a certified lasso, a flood or a storm), then fails once, and
    `spout` replays all it lost at once with its next emission on its default stream, which the target receives:
    for every N a legal run puts N tuples in the target's queue at one position. `content_hash` is that of the
    target's cone of influence; `app/core/tcn/check/spill.py` checks it."""

    target: str
    content_hash: str
    failing: str
    spout: str
    evidence: FloodEvidence
    run: StormRun | None = Field(default=None, description="on request (verify --flood-run N): a finite run in "
                                                           "which the target's queue reaches N")


class FloodRun(BaseModel):
    """A finite legal run of the flooded bolt's cone in which its queue reaches `threshold` (docs/boundedness.md,
    "The threshold run"): the source slow for `slow_s` seconds ("p/q"), then draining at full speed while the
    target processes at its slowest; `reached` is the target's largest queue in it. The trace is a threshold
    witness (loop_start k+1): `trace_index` into the result's traces in memory and in `verify --json`, `trace` its
    JSON in a certificate file; `app/core/tcn/check/flood.py` certifies it."""

    threshold: int
    slow_s: str
    reached: int
    trace_index: int | None = None
    trace: dict[str, Any] | None = None


class FloodCertificate(BaseModel):
    """`target` is unbounded (docs/boundedness.md, "Unbounded: a backlog that floods"): `source`, one of the
    bolts it receives from, can hold any backlog (`evidence`), and while it drains that backlog at full speed
    the target receives at least Σ rate × ratio of `terms` tuples per second (a join, `join`: the least of its
    branches' terms, one term per branch), strictly more than its smallest capacity `capacity`. `content_hash` is
    that of the target's cone of influence; `app/core/tcn/check/flood.py` checks it."""

    target: str
    content_hash: str
    source: str
    terms: list[FloodTerm] = Field(default_factory=list)
    capacity: str
    evidence: FloodEvidence
    via: str | None = Field(default=None, description="a lost backlog (docs/boundedness.md, \"Unbounded: a backlog "
                                                     "lost into a paced spout\"): the source, a failing bolt, fails "
                                                     "once it holds the backlog, and this spout replays the loss, "
                                                     "paced, into the target (None: the source drains into it)")
    join: bool = Field(default=False, description="the target is a join waiting for every branch: it receives the "
                                                  "least of its branches' terms (docs/model.md section 11)")
    run: FloodRun | None = Field(default=None, description="on request (verify --flood-run N): a finite run in "
                                                           "which the target's queue reaches N")


FloodEvidence.model_rebuild()
SpillCertificate.model_rebuild()


BoltVerdictKind = Literal["counterexample", "unbounded", "none-up-to-k", "no-repeating-growth", "bounded", "unknown"]


class BoltVerdict(BaseModel):
    """One checked bolt's own answer: a certified lasso in which it grows (`trace_index` into
    the result's traces, possibly shared with other bolts), a rate proof, or how far the search got."""

    verdict: BoltVerdictKind
    k: int | None = None
    loop_start: int | None = None
    growth_per_loop: int | None = Field(default=None, description="tuples its queue gains per loop pass")
    certified: bool = False
    queue_bound: float | None = Field(default=None, description="bounded: its queue never exceeds this in any run")
    trace_index: int | None = None
    method: Literal["rate check", "solver", "simulation", "linear program", "rate proof", "flood proof",
                    "storm proof", "none"] = Field(
        default="none",
        description="what decided it: the rate-check proof, the SMT search, a lasso built by simulation, the "
                    "linear program over one loop pass (with a certificate), growth proven by rates under a "
                    "fixed schedule (with a growth certificate, no trace), or a flood proof (unbounded: an upstream "
                    "bolt backs up, then floods it; with a flood certificate), or a storm proof (unbounded: at-once "
                    "replays of a failing bolt's losses grow every failure cycle; with a storm certificate, or a "
                    "failing bolt that can hold any backlog fails once and its spout replays it at once: a spill "
                    "certificate)")
    failures: bool | None = Field(
        default=None, description="when bolts may fail (docs/model.md section 7): whether its lasso has failures; "
                                  "None (left out of --json) when nothing can fail or there is no lasso")
    certificate: LinearCertificate | None = Field(
        default=None, description="method 'linear program': the Farkas multipliers that prove it (None otherwise)")
    growth_certificate: RateGrowthCertificate | None = Field(
        default=None, description="method 'rate proof': the schedule and exact rates under which it grows")
    flood_certificate: FloodCertificate | None = Field(
        default=None, description="verdict 'unbounded': the source's evidence and the exact drain inequality")
    storm_certificate: StormCertificate | None = Field(
        default=None, description="verdict 'unbounded' by a replay storm: the failure cycle and the exact growth "
                                  "per cycle")
    spill_certificate: SpillCertificate | None = Field(
        default=None, description="verdict 'unbounded' by a replayed backlog (method 'storm proof'): a failing bolt "
                                  "that can hold any backlog fails once and its spout replays it all at once")
    message: str = ""
    _words: Words | None = PrivateAttr(default=None)  # the message with its figures, when the core wrote one

    @classmethod
    def said(cls, words: Words, **fields: Any) -> BoltVerdict:
        """A verdict whose message is `words` (kept with its figures, so `text` can write them as decimals)."""
        verdict = cls(message=words.text(), **fields)
        verdict._words = words
        return verdict

    def words(self) -> Words:
        """The message as a sentence: with its figures when the core wrote it, else the plain text read back."""
        if self._words is not None and self._words.text() == self.message:  # (not a copy whose message changed)
            return self._words
        return Words.of(self.message)

    def text(self, exact: bool = True) -> str:
        """The message, every rate with its exact value ("2.222 (exactly 20/9)", as --json and the GUI show it)
        or as a decimal only (the CLI's text)."""
        return self.words().text(exact)

    def reworded(self, words: Words) -> BoltVerdict:
        """This verdict with its message `words` (figures kept, as `said` keeps them)."""
        verdict = self.model_copy(update={"message": words.text()})
        verdict._words = words
        return verdict


class Progress(BaseModel):
    """A progress report from a running search (sent through a callback): a step of the solver (`message`), or,
    without a message, what the search does next (`doing`) with every checked bolt's verdict known so far
    (`verdicts`: the rate check's at once, then each as the search decides it)."""

    k: int
    elapsed_s: float
    stats: dict[str, float | int] = Field(default_factory=dict, description="z3 statistics of the last check")
    message: str = ""
    doing: str = Field(default="", description="what the search does next, in words")
    verdicts: dict[str, BoltVerdict] = Field(default_factory=dict, description="checked bolts decided so far")


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
    bolts: dict[str, BoltVerdict] = Field(default_factory=dict, description="every checked bolt's own verdict")
    trace: Trace | CompressedTrace | None = Field(default=None, description="the first lasso found (traces[0])")
    worker_death_certificates: dict[str, LinearCertificate] = Field(
        default_factory=dict, description="per bolt, the linear program's certificate that no repeating run grows it "
                                          "with worker deaths (docs/model.md 9.4; not a verdict of `bolts`)")
    traces: list[Trace | CompressedTrace] = Field(
        default_factory=list, description="every distinct certified lasso, in order found (a long simulated one "
                                          "compressed: docs/trace-format.md)")
    worker_death_traces: list[Trace | CompressedTrace] = Field(
        default_factory=list, description="certified lassos with worker deaths (docs/model.md 9.5), in which a bolt "
                                          "that no other phase found growing grows")
    worker_death_lassos: dict[str, int] = Field(
        default_factory=dict, description="per bolt that grows with worker deaths, its lasso's index in "
                                          "worker_death_traces (not a verdict of `bolts`)")
    _words: Words | None = PrivateAttr(default=None)  # the message with its figures, when the core wrote one
    _summary: Words | None = PrivateAttr(default=None)  # its first sentence, when the rest only lists the bolts

    @classmethod
    def said(cls, words: Words, summary: Words | None = None, **fields: Any) -> VerifyResult:
        """A result whose message is `words` (kept with its figures); `summary`: the part a headline shows."""
        result = cls(message=words.text(), **fields)
        result._words, result._summary = words, summary
        return result

    def text(self, exact: bool = True) -> str:
        """The message, its rates exact (as --json and the GUI show it) or as decimals only (the CLI's text)."""
        if self._words is None or self._words.text() != self.message:
            return self.message
        return self._words.text(exact)

    def summary(self, exact: bool = True) -> str:
        """What a headline shows of the message: its first part, without the per-bolt list that follows."""
        return self._summary.text(exact) if self._summary is not None else self.text(exact)

    def to_public_json(self, trace_files: list[str] | None = None) -> dict[str, Any]:
        """The JSON `stormbound verify --json` prints (traces go to --trace-out; `trace_files` names them)."""
        data = self.model_dump(mode="json", exclude={"trace", "traces", "worker_death_traces"})
        for bolt in data["bolts"].values():
            if bolt.get("failures") is None:  # nothing can fail: the output reads as before
                bolt.pop("failures", None)
            for key in ("certificate", "growth_certificate", "flood_certificate"):  # only certified methods have one
                if bolt.get(key) is None:
                    bolt.pop(key, None)
        if trace_files is not None:
            data["traces"] = list(trace_files)
        return data
