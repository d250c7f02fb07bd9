"""The encoding as the modules that state its constraints see it: `Encoder`, what
app/core/tcn/encode.py's `Encoding` holds (its variables, the failure model's part, the
bolts held level, what it exposes to tests), read by app/core/tcn/encode_runs.py
(section 2, the runs) and app/core/tcn/encode_loop.py (section 3, the lasso), so neither
imports the encoding that calls them (a long build stops by raising app/core/errors.py's `Cancelled`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import z3

from app.core.tcn.encode_failures import Failures
from app.core.tcn.encode_vars import EncoderParts


class Encoder(EncoderParts, Protocol):
    """An encoding being built: its parts (app/core/tcn/encode_vars.py) and the rest its constraints read."""

    failures: Failures | None  # the failure model's variables, None when no bolt can fail
    steady: frozenset[str]  # bolts held level (Δ = 0)
    loop_clocks: str  # "equal" or "region"
    cancelled: Callable[[], bool]
    growing: dict[str, z3.BoolRef]  # per bolt: whether its queue grows over a loop pass
    delta: dict[str, z3.ArithRef]  # per bolt: its queue's growth over a loop pass
    loop_clocks_at: dict[str, tuple[z3.BoolRef, z3.ArithRef, z3.ArithRef]]  # region clocks, for tests
