"""Latency bounds: how long a tuple waits at a bolt and how long a spout tuple's tree takes, in every run.

* `netcalc`: exact network-calculus operations on token buckets and rate-latency curves (TFA, SFA);
* `bounds`: per-bolt sojourn bounds and per-spout complete-latency bounds of a topology, against the
  message timeout and max.spout.pending; the waits' suprema in `waits`, a paced spout's replays in lumps in
  `replays`, the failure check's curves and what one failure loses in `losses`, spaced arrivals in `spacing`;
* `witness`: the builder of timeout witnesses (a simulated lasso repeated until a tuple waits too long);
* their independent checker lives with the other checkers (app/core/tcn/check/latency_witness.py;
  no code shared with the builder);
* `report`: per spout the answer `check`, `verify` and the app show, in Storm's terms.

docs/latency.md proves every bound.
"""
