"""Edge-proxy overhead benchmark (issue 4's target: <= 3 ms per request, median).

    sudo .venv/bin/python harness/benchmarks/proxy_overhead.py [--with-normal] > table.md

The figure is the one every proxy run stores (`runner.run.Runner._proxy_overhead`): with no
added delay, the same page is loaded cold directly and through the edge proxy, in the
same origin mode, alternately (5 pairs after one warm-up pair); the overhead per request
is (median proxied load - median direct load) / requests. Here that is repeated in
RUNS separate runs per (site, mode), each a real `pagebench run` into a throwaway
SQLite store, and the median over runs is reported with the range.

--with-normal adds the same cases with the proxy at normal scheduling
($PAGEBENCH_PROXY_RT_PRIORITY=0), its runs interleaved with the real-time ones so both
see the same minutes of this machine.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

from page_loads import run

from pagebench.core.modes import H2, KEEPALIVE
from pagebench.results.rows import ProxyOverheadRow

RUNS = 5
CASES = [("seed000-small-n20", H2.name), ("seed000-small-n20", KEEPALIVE.name), ("modern", H2.name)]


def overhead(site: str, mode: str, workdir: Path, index: int, priority: str | None) -> ProxyOverheadRow:
    spec = {"name": f"overhead-{site}-{mode}-{index}", "sites": [site], "modes": [mode], "topology": "proxy",
            "repetitions": 1, "warmup": 0, "timeouts": {"link_check": False}}
    os.environ.pop("PAGEBENCH_PROXY_RT_PRIORITY", None)
    if priority is not None:
        os.environ["PAGEBENCH_PROXY_RT_PRIORITY"] = priority
    store, run_id = run(spec, workdir)
    [row] = store.proxy_overheads(run_id)
    return row


def main() -> None:
    priorities = [None, "0"] if "--with-normal" in sys.argv[1:] else [None]
    print("| site | mode | proxy scheduling | requests | per request (ms), median of runs | range | "
          "direct load (ms) | proxied load (ms) |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for site, mode in CASES:
            rows: dict[str | None, list[ProxyOverheadRow]] = {p: [] for p in priorities}
            for i in range(RUNS):
                for priority in priorities if i % 2 == 0 else priorities[::-1]:
                    rows[priority].append(overhead(site, mode, Path(tmp), i, priority))
            for found in rows.values():
                per = [r.per_request_ms for r in found]
                direct = statistics.median(t for r in found for t in r.direct_ms)
                proxied = statistics.median(t for r in found for t in r.proxy_ms)
                print(f"| {site} | {mode} | {found[0].scheduling} | {found[0].requests} | "
                      f"{statistics.median(per):.2f} | {min(per):.2f} .. {max(per):.2f} | {direct:.0f} | "
                      f"{proxied:.0f} |", flush=True)


if __name__ == "__main__":
    main()
