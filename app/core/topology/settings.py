"""The settings of the topology document: the timing constants and the failure model, what to verify,
and Storm's own settings with what the Storm UI showed."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_serializer, model_validator

from app.core.topology.fields import STORM_MAX_INT, Number, PositiveSeconds, Seconds, StrictModel, Whole

#: the emission rule of docs/model.md section 2.3 (what a bolt's carry keeps after an emit)
Emission = Literal["dvert", "exact"]

#: what a reliable spout does with the tuples lost at a failed bolt (docs/model.md section 7)
Replay = Literal["paced", "at-once", "none"]


class TopologySettings(StrictModel):
    """Timing constants shared by every component (section 1 of the TCN semantics)."""

    tolerance: Number = Field(default=0.1, ge=0, lt=1, description="relative jitter τ of every duration")
    max_idle_time: Seconds = Field(default=0.01, ge=0,
                                   description="a bolt with waiting tuples takes within this delay (s)")
    init_queues: Whole = Field(default=0, ge=0, le=2**53, description="every queue's size at time 0")
    emission: Emission = Field(
        default="exact",
        description=("how a bolt's carry of processed tuples is kept after an emit: 'exact' (an exact rational, "
                     "so the long-run output ratio is σ) or 'dvert' (rounded up to an integer, as the D-VerT "
                     "prototype modelled it; the ratio can exceed σ); docs/model.md section 2"))
    failures: bool = Field(default=True, description=(
        "bolts with a min_ttf may fail (docs/model.md section 7); false switches every failure off, as the "
        "published D-VerT runs did"))
    min_reboot_time: PositiveSeconds | None = Field(default=None, description="shortest failure (s)")
    max_reboot_time: PositiveSeconds | None = Field(default=None, description="longest failure (s)")
    replay: Replay = Field(default="paced", description=(
        "what a spout does with the spout tuples whose trees lost a tuple at a failed bolt: 'paced' (re-emits "
        "them with its own emissions, at most as many as it emits fresh: Storm's nextTuple), 'at-once' (all "
        "with its next emission) or 'none' (an unreliable topology: lost is lost)"))

    @model_serializer(mode="wrap")
    def _drop_failure_defaults(self, handler: Any) -> Any:
        # files without failures stay byte-identical: the failure fields are written only when set
        data = handler(self)
        if isinstance(data, dict):
            for key, default in _FAILURE_DEFAULTS.items():
                if key in data and data[key] == default:
                    del data[key]
        return data

    @model_validator(mode="after")
    def _reboot_range(self) -> TopologySettings:
        lo, hi = self.min_reboot_time, self.max_reboot_time
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"min_reboot_time ({lo:g} s) is above max_reboot_time ({hi:g} s)")
        return self

    def failure_semantics(self) -> dict[str, Any]:
        """The failure settings that differ from the defaults (what `semantics()` adds for them)."""
        data = {"failures": self.failures, "min_reboot_time": self.min_reboot_time,
                "max_reboot_time": self.max_reboot_time, "replay": self.replay}
        return {k: v for k, v in data.items() if v != _FAILURE_DEFAULTS[k]}

    def semantics(self, failures: bool) -> dict[str, Any]:
        """What the verifier reads of the settings (for `Topology.semantics()`): the failure settings only
        when some bolt may fail (`failures`), and then those that differ from the defaults."""
        data = {k: v for k, v in self.model_dump().items() if k not in _FAILURE_DEFAULTS}
        return {**data, **(self.failure_semantics() if failures else {})}


_FAILURE_DEFAULTS: dict[str, Any] = {"failures": True, "min_reboot_time": None, "max_reboot_time": None,
                                     "replay": "paced"}


def new_settings() -> TopologySettings:
    """The settings of a new document (the app's New, an import from Flux or the Storm UI): no idle time,
    as a Storm executor takes the next tuple as soon as it finishes one. A file without the field keeps
    the older default, 0.01 s (docs/model.md, "Choosing max_idle_time")."""
    return TopologySettings(max_idle_time=0.0)



class VerificationSettings(StrictModel):
    """What to verify and how far to search."""

    k: int | None = Field(default=None, ge=2, description="a single bound (positions of the lasso)")
    k_min: int = Field(default=4, ge=2)
    k_max: int = Field(default=40, ge=2)
    checked: list[str] = Field(default_factory=list, description="ids of checked bolts; empty = all bolts")
    queue_threshold: int | None = Field(default=None, ge=1, description="also check: some queue can reach N")
    timeout_s: PositiveSeconds | None = None

    @model_validator(mode="after")
    def _range(self) -> VerificationSettings:
        if self.k_min > self.k_max:
            raise ValueError(f"k_min ({self.k_min}) is larger than k_max ({self.k_max})")
        return self



class StormObserved(StrictModel):
    """What the Storm UI showed of a running topology over the import's window, beyond the rates (docs/storm.md,
    "A saturated topology"): the signs that its measured rates are throttled."""

    window_seconds: float = Field(gt=0, description="the seconds the counts cover")
    failed: int = Field(default=0, ge=0, description="spout tuples failed in the window (timeouts included)")
    acked: int | None = Field(default=None, ge=0, description="spout tuples acked in the window")
    complete_latency_ms: float | None = Field(default=None, ge=0, description="the spouts' complete latency (ms)")
    busiest_bolt: str | None = Field(default=None, description="the bolt with the highest Storm UI capacity")
    busiest_capacity: float | None = Field(default=None, ge=0, description=(
        "its Storm UI capacity: the fraction of the window its executors were executing (the model's ρ)"))
    lag: dict[str, int] = Field(default_factory=dict, description="each spout's source lag (the lag endpoint)")
    lag_growth: dict[str, float] = Field(default_factory=dict, description=(
        "each spout's lag growth (tuples/s) between two readings of the lag endpoint: offered beyond what it emitted"))


DEFAULT_MESSAGE_TIMEOUT = 30  # topology.message.timeout.secs in Storm's defaults.yaml (1.x and 2.x)


class StormSettings(StrictModel):
    """Storm's own settings and where the document came from (a Flux file, the Storm UI).

    `run` and `reliability` take the four Storm settings as their defaults; the rest of
    the topology config is kept so that an export to Flux writes it back.
    """

    workers: int | None = Field(default=None, ge=1, le=STORM_MAX_INT, description="topology.workers")
    acker_executors: int | None = Field(default=None, ge=0, le=STORM_MAX_INT, description="topology.acker.executors")
    max_spout_pending: int | None = Field(default=None, ge=1, le=STORM_MAX_INT,
                                          description="topology.max.spout.pending")
    message_timeout_secs: int | None = Field(default=None, ge=1, description="topology.message.timeout.secs")
    worker_min_ttf: float | None = Field(default=None, gt=0, le=1e12, allow_inf_nan=False, description=(
        "a worker may die once this long (s) has passed since it last restarted (since time 0 for its first death); "
        "unset = workers never die (from schema_version 4; docs/model.md section 9)"))
    assignment: dict[str, list[int]] = Field(default_factory=dict, description=(
        "executors of each component (by name; `__acker` for the ackers) in each worker, one entry per worker; "
        "empty = Storm's even scheduler (from schema_version 4)"))
    storm_version: str | None = Field(default=None, max_length=40, pattern=r"^[0-9]+(\.[0-9A-Za-z-]+)*$",
                                      description=("the cluster's Storm version (e.g. 2.6.1, 1.2.3 or 2.x): it sets "
                                                   "the defaults the capacity estimates assume; unset: 2.x"))
    config: dict[str, Any] = Field(default_factory=dict, description="the rest of the topology config")
    flux_file: str | None = Field(default=None, max_length=4096,
                                  description="the Flux file this document was imported from")
    flux_filter: str | None = Field(default=None, max_length=4096, description="the properties file used for ${...}")
    flux_env: bool = Field(default=False, description="${ENV-NAME} substituted from the environment")
    flux_resources: list[str] = Field(default_factory=list, description="folders searched for resource includes")
    sources: dict[str, str] = Field(default_factory=dict,
                                    description="where an imported value came from, e.g. 'bolts.split.alpha'")
    running_executors: dict[str, int] = Field(default_factory=dict, description=(
        "executors per component on the cluster (the Storm UI), where `storm rebalance` starts from"))
    observed: StormObserved | None = Field(default=None, description="what the Storm UI showed beyond the rates")

    @model_serializer(mode="wrap")
    def _drop_unset_workers(self, handler: Any) -> Any:
        # files without worker deaths stay byte-identical: the schema_version 4 fields are written only when set
        data = handler(self)
        if isinstance(data, dict):
            for key in WORKER_FIELDS:
                if key in data and data[key] in (None, {}):
                    del data[key]
        return data

    @property
    def message_timeout(self) -> int:
        """topology.message.timeout.secs, Storm's default (30 s) where the document leaves it unset."""
        return self.message_timeout_secs or DEFAULT_MESSAGE_TIMEOUT


#: the storm fields of worker deaths (schema_version 4; docs/model.md section 9)
WORKER_FIELDS = ("worker_min_ttf", "assignment")
