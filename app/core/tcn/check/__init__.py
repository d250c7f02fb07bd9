"""The checker room: every independent checker of a verdict, and nothing that builds one.

- `certify.py` (with `certify_clocks.py`, `certify_failures.py`, `certify_replay.py`, `certify_rules.py`): the
  trace certifier, which replays a lasso or a threshold run against every rule of docs/model.md;
- `linear.py`: the linear program's Farkas certificates ("no repeating run grows");
- `rate_growth.py`: growth proven by rates;
- `flood.py`: a flood ("unbounded": a bolt that backs up, then floods the one below);
- `latency_witness.py`: a latency witness (docs/latency.md);
- `files.py`: a certificate file, each entry by the checker of its kind;
- `lassos.py`: the lassos the certifier accepted within one verification, not replayed again when embedded;
- `content.py`: the content hash, the one definition (builders and `stormbound-verified/1` use it from here);
- `ratios.py`: the checkers' own output ratios σ_lo, σ_hi; `reading.py`: how a checker reads its input.

The room imports no builder (`app.core.tcn` outside this package: encoding, search, linear program, growth
by rates, simulation), no rate check (`app.core.rates`), no `app.core.emission` and no `app.core.failures`:
a mistake in the code that builds a verdict cannot hide in the code that checks it
(tests/unit/test_layers.py, `test_the_checker_room_imports_no_builder`). Plain Python and exact fractions, no
z3. docs/verifier.md, "The checker room".
"""
