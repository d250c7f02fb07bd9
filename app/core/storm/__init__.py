"""Storm's side of the model: what Storm does with a topology (its defaults per version, backpressure,
receive queues, max.spout.pending, timeouts) and the words `check`, `verify`, the report and the app say it in."""
