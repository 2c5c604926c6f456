"""A large page from the HAR corpus in every mode: a bodiless WebPageTest HAR (by default
nytimes' first view, 227 requests from 78 origins) is imported as a stand-in page, its
fidelity report printed (`site show`), and the page loaded cold in every protocol mode;
the table gives each mode's median load with its bootstrap interval, and every request
whose status differs from the HAR's is listed (none should), with the HAR's requests the
loads never made and the import's reason for each. The browser's record of a redirected
request is its last response (Chrome's DevTools protocol keeps one request id along the
chain), so a redirect of the HAR shows as its target's status.

    cd harness && sudo ../.venv/bin/python -m benchmarks.har_page [--har FILE] [--reps 3] [--db sqlite:///p.sqlite]
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from benchmarks.replay import HARNESS, pagebench
from pagebench.analysis.stats import median_ci
from pagebench.core.har.pages import choose_page
from pagebench.core.har.parse import parse_har
from pagebench.core.records import Resource
from pagebench.lab import sites as sitefiles
from pagebench.results.store import Store

CORPUS = HARNESS / "tests" / "fixtures" / "hars"
#: Each mode in the topology it runs in (pipelining: through the edge proxy only), one run each.
MODES = {"direct": ["http1.0", "keepalive", "h2", "h3"], "proxy": ["pipelining"]}
PROFILES = ["lte"]


def har_statuses(har: Path) -> dict[str, int]:
    """The status of each URL of the page `site import-har` picks by default, as the HAR
    recorded it (its first request of the URL, as the replay answers it; a warm capture's
    304 as its 200)."""
    data = har.read_bytes()
    log = parse_har(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data, har.name)
    statuses: dict[str, int] = {}
    for entry in choose_page(log, har.name).entries:
        statuses.setdefault(entry.url, 200 if entry.status == 304 else entry.status)
    return statuses


def status_differences(statuses: Mapping[str, int], original_of: Mapping[str, str],
                       resources: Iterable[Resource]) -> list[str]:
    """A load's requests whose status is not the HAR's (`statuses`: original URL -> status;
    `original_of`: lab URL -> original URL, from the site's recording), one line each; a
    request the recording lacks is one too. A request still in flight when the load's
    record closed (status 0: no response yet) is not one: it has no status to compare."""
    out = []
    for r in resources:
        original = original_of.get(r.url)
        if r.status == 0 and original is not None:
            continue
        if original is None:
            out.append(f"{r.url}: {r.status}, a request the HAR does not have")
        elif r.status != statuses[original]:
            out.append(f"{original}: {r.status}, the HAR's {statuses[original]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--har", type=Path, default=CORPUS / "wpt-www.nytimes.com.har.gz")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--db", default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="pagebench-har-page-"))
    work.chmod(0o755)  # nginx's workers read the sites as nobody
    try:
        into = work / "page"
        pagebench("site", "import-har", str(args.har.resolve()), "--name", "page", "--into", str(into))
        print(pagebench("site", "show", str(into)))
        site = sitefiles.load_site(into)
        assert site.recording is not None
        original_of = {e.url: e.original for e in site.recording.exchanges}
        statuses = har_statuses(args.har)
        db = args.db or f"sqlite:///{work}/har-page.sqlite"
        print("| mode | topology | run | n | requests | unrecorded | flagged | median load (ms) [95 % CI] |")
        print("|---|---|---|---|---|---|---|---|")
        differ: Counter[str] = Counter()
        made: set[str] = set()
        unfinished: Counter[str] = Counter()
        for topology, modes in MODES.items():
            spec = {"name": "bench-har-page", "sites": [str(into)], "modes": modes, "profiles": PROFILES,
                    "topology": topology, "tls": ["1.3"], "cache": ["cold"], "repetitions": args.reps, "warmup": 1,
                    "seed": 25}
            (work / "spec.yaml").write_text(yaml.safe_dump(spec))
            out = pagebench("run", str(work / "spec.yaml"), "--db", db)
            run = next(line.split()[1] for line in out.splitlines() if line.startswith("run "))
            with Store(db) as store:
                for mode in modes:
                    rows = [r for r in store.loads(run) if getattr(r.condition.mode, "name", r.condition.mode) == mode]
                    times = [r.load_ms for r in rows if r.ok and r.load_ms is not None]
                    ci = median_ci(times)
                    for row in rows:
                        resources = [x.resource for x in store.resources(row.id)]
                        made |= {original_of.get(x.url, x.url) for x in resources if x.status}
                        unfinished.update(f"{mode}: {original_of.get(x.url, x.url)}" for x in resources if not x.status)
                        differ.update(f"{mode}: {line}" for line in status_differences(statuses, original_of, resources))
                    print(f"| {mode} | {topology} | {run} | {len(times)} | "
                          f"{'/'.join(map(str, sorted({r.requests for r in rows})))} | "
                          f"{sum(r.unrecorded or 0 for r in rows)} | {sum(r.flagged for r in rows)} | "
                          f"{ci.estimate:.0f} [{ci.low:.0f}, {ci.high:.0f}] |")
        print(f"\nstatus differences (loads): {len(differ)}")
        for line, count in sorted(differ.items()):
            print(f"  {line} ({count})")
        print(f"requests in flight when a load's record closed (status 0): {sum(unfinished.values())}")
        for line, count in sorted(unfinished.items()):
            print(f"  {line} ({count})")
        missing = dict(line.split(": ", 1) for line in site.recording.missing)
        never = sorted(set(statuses) - made)
        hops = [url for url in never if 300 <= statuses[url] < 400]
        print(f"the HAR's redirects, seen as their targets' responses: {len(hops)} "
              f"({', '.join(f'{n} x {s}' for s, n in sorted(Counter(statuses[u] for u in hops).items()))})")
        print(f"the HAR's other requests no load made (or finished): {len(never) - len(hops)}")
        for url in never:
            if url not in hops:
                print(f"  {url} ({statuses[url]}): {missing.get(url, 'replayable: not requested before any load ended')}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
