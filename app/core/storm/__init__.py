"""Storm's side of the model, the Storm-integration room: what Storm does with a topology (its defaults per version,
backpressure, receive queues, max.spout.pending, timeouts: forecast.py) and the words `check`, `verify`, the report
and the app say it in (words.py, lines.py); Flux files (flux/: parser -> model -> builder, ticks, export, repair);
the Storm UI (ui/: the REST client and the reader of a running topology); `storm rebalance` lines (rebalance.py)."""
