"""The rate check (section 5 of the timed-counter-network semantics): instant, exact, no solver.

One package, one concept per module:

* `flows`: the exact figures of a topology (capacities, long-run and every-run inflows, queue bounds);
* `cycles`: a strongly connected component solved exactly;
* `curves`: arrival curves, the bounds under failures and replays;
* `failures_check`: the verdicts under failures;
* `verdicts`: the status of one bolt and its explanation;
* `suggest`: the smallest parallelism that keeps every queue bounded;
* `report`: `RateAnalysis` (one snapshot's figures and failure model, computed once) and `rate_check`,
  the report the CLI, the GUI and the search read;
* `idle`: the max_idle_time warning;
* `windows`: a windowed bolt's pending tuples and hold time against the message timeout (count and duration);
* `joins`: a join's branches, its slowest branch, its cache's growth or bound, its wait for the slowest branch.

docs/boundedness.md proves every verdict.
"""

from app.core.emission import sigma_bounds
from app.core.numbers import exact
from app.core.rates.flows import RateFigures, keeps_up
from app.core.rates.idle import IDLE_SHARE_LIMIT, IdleWarning, idle_warning
from app.core.rates.report import (
    BoltRates,
    LoadMargins,
    RateAnalysis,
    RateReport,
    bounded_bolts,
    failure_margins,
    load_margins,
    margins,
    no_parallelism_reason,
    nominal_margins,
    queue_bounds,
    rate_check,
    repeating_margins,
)
from app.core.rates.suggest import TARGET_CAPACITY, at_target
from app.core.rates.verdicts import STATUS_SHORT, STATUS_WORDS, Status
from app.core.rates.windows import DurationFigures, WindowFigures, duration_figures, window_figures

__all__ = [
    "IDLE_SHARE_LIMIT", "STATUS_SHORT", "STATUS_WORDS", "TARGET_CAPACITY", "BoltRates", "IdleWarning", "LoadMargins",
    "RateAnalysis", "at_target",
    "RateFigures",
    "RateReport", "Status", "bounded_bolts", "exact", "failure_margins", "idle_warning", "keeps_up", "load_margins",
    "margins", "no_parallelism_reason", "nominal_margins", "queue_bounds", "rate_check", "repeating_margins",
    "sigma_bounds", "WindowFigures", "window_figures", "DurationFigures", "duration_figures",
]
