"""StormCrawler's archetype crawler (tests/data/flux/stormcrawler/crawler.flux) with its FetcherBolt asynchronous:
50 threads of 2 s fetches (25 URLs/s) fed 30 URLs/s. Prints how long `verify` takes to find the fetcher's growth,
the lasso's length and batches, and that the certifier accepts it (docs/model.md section 8; bench/RESULTS.md).

    PYTHONPATH=. python bench/async_fetcher.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from test_async_bolts import annotated_crawler  # noqa: E402

from app.core.tcn.check.certify import certify  # noqa: E402
from app.core.tcn.search import SearchOptions, verify  # noqa: E402
from app.core.topology import parse_topology  # noqa: E402


def main() -> None:
    for rate in (20, 30):
        data = annotated_crawler(rate)
        data["verification"]["checked"] = [b["id"] for b in data["bolts"] if b["name"] == "fetcher"]
        started = time.perf_counter()
        result = verify(parse_topology(data), SearchOptions(timeout_s=300))
        elapsed = time.perf_counter() - started
        fetcher = result.bolts["fetcher"]
        line = f"{rate} URLs/s: {fetcher.verdict} by {fetcher.method} in {elapsed:.2f} s"
        if result.traces:
            trace = result.traces[0]
            loop = trace.positions[trace.loop_start:trace.k + 1]
            batches = sorted({p.bolts["fetcher"].batch for p in loop if p.bolts["fetcher"].take})
            line += (f"; lasso k = {trace.k}, loop batches {batches}, growth {fetcher.growth_per_loop} per loop, "
                     f"certified again: {certify(trace).ok}")
        print(line)


if __name__ == "__main__":
    main()
