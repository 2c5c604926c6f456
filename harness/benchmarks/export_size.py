"""The size of `pagebench reproduce --export` (issue 26: at most 2 MB for a full
reproduction, committed as docs/reproductions-export.json.xz), measured on real stored
reproduction runs and extrapolated to a full reproduction's load and resource counts.

    .venv/bin/python harness/benchmarks/export_size.py --db URL [SEED ...]

Reads the latest stored runs of the seeds' scenarios (as `reproduce --reuse` does) and
encodes them twice: as `--export` writes them (resources only where a claim reads them),
and with every scenario's resources, which prices a resource on real pages. Prints a
Markdown table: loads, resources, bytes, and bytes per load and per resource.
"""

from __future__ import annotations

import argparse

from pagebench.analysis.reproduce import claims, verdicts
from pagebench.analysis.reproduce.export import Export, encode
from pagebench.results.store import Store

#: A full reproduction's loads (docs/reproductions.md: 1588 stored, warm-ups included).
FULL_LOADS = 1600


def size(seeds: tuple[str, ...], data: dict, runs: dict) -> int:
    return len(encode(Export(seeds, False, data, runs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("seeds", nargs="*", default=list(claims.SEEDS))
    args = parser.parse_args()
    seeds = tuple(args.seeds)
    store = Store(args.db)
    names = [scenario.name for scenario in claims.scenarios_of(seeds)]
    runs = verdicts.latest_runs(store, names)
    needed = verdicts.gather(store, runs)
    verdicts.NEEDS_RESOURCES = tuple(names)  # every scenario's resources: a resource's price
    every = verdicts.gather(store, runs)
    bare = {name: type(d)(d.loads, d.profiles, {}) for name, d in needed.items()}

    def counts(data: dict) -> tuple[int, int]:
        return (sum(len(v) for d in data.values() for v in d.loads.values()),
                sum(len(v) for d in data.values() for v in d.resources.values()))

    loads, _ = counts(needed)
    print("| export | loads | resources | bytes | per load | per resource |\n|---|---|---|---|---|---|")
    base = size(seeds, bare, runs)
    print(f"| loads only | {loads} | 0 | {base} | {base / max(loads, 1):.0f} | |")
    for what, data in (("as `--export` writes it", needed), ("every scenario's resources", every)):
        n_loads, n_resources = counts(data)
        total = size(seeds, data, runs)
        per = (total - base) / n_resources if n_resources else 0
        print(f"| {what} | {n_loads} | {n_resources} | {total} | | {per:.1f} |")
    per_load = base / max(loads, 1)
    per_resource = (size(seeds, every, runs) - base) / max(counts(every)[1], 1)
    for per_page in (0, 5, 20, 41):
        estimate = FULL_LOADS * (per_load + per_page * per_resource)
        print(f"\n{FULL_LOADS} loads with {per_page} resources each: about {estimate / 1e6:.2f} MB", end="")
    print()


if __name__ == "__main__":
    main()
