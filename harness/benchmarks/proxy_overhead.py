"""Edge-proxy overhead benchmark (issue 4's target: <= 3 ms per request, median).

    sudo .venv/bin/python harness/benchmarks/proxy_overhead.py > table.md

The figure is the one every proxy run stores (`runner.Runner._proxy_overhead`): with no
added delay, the same page is loaded cold directly and through the edge proxy, in the
same origin mode, alternately (5 pairs after one warm-up pair); the overhead per request
is (median proxied load - median direct load) / requests. Here that is repeated in
RUNS separate runs per (site, mode), each a real `pagebench run` into a throwaway
SQLite store, and the median over runs is reported with the range.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from page_loads import run

RUNS = 5
CASES = [("seed000-small-n20", "h2"), ("seed000-small-n20", "keepalive"), ("modern", "h2")]


def overhead(site: str, mode: str, workdir: Path, index: int) -> dict:
    spec = {"name": f"overhead-{site}-{mode}-{index}", "sites": [site], "modes": [mode], "topology": "proxy",
            "repetitions": 1, "warmup": 0, "timeouts": {"link_check": False}}
    store, run_id = run(spec, workdir)
    [row] = store.proxy_overheads(run_id)
    return row


def main() -> None:
    print("| site | mode | requests | per request (ms), median of runs | range | direct load (ms) | "
          "proxied load (ms) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for site, mode in CASES:
            rows = [overhead(site, mode, Path(tmp), i) for i in range(RUNS)]
            per = [r["per_request_ms"] for r in rows]
            direct = statistics.median(t for r in rows for t in r["direct_ms"])
            proxied = statistics.median(t for r in rows for t in r["proxy_ms"])
            print(f"| {site} | {mode} | {rows[0]['requests']} | {statistics.median(per):.2f} | "
                  f"{min(per):.2f} .. {max(per):.2f} | {direct:.0f} | {proxied:.0f} |", flush=True)


if __name__ == "__main__":
    main()
