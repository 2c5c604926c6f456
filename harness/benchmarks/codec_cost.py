"""What encoding and decoding cost on this machine, beside seed 001's tables 6-1 and 6-4
(Mogul et al. 1997: KB per second of elapsed time on a 50 MHz 486, a 90 MHz Pentium and a
400 MHz AlphaStation, text files from its packet-level trace).

    .venv/bin/python harness/benchmarks/codec_cost.py > table.md

No lab, no root: the codecs the lab uses (`core.encodings`: gzip -9, brotli 11, zstd 19,
and dcz, zstd 19 with the previous instance as dictionary), called in-process as the
paper's "library" rows were, on seed 001's real page history (`core.sites.history`: the
50 instances of toybox's 10 text pages for compression, their 40 successive pairs for
deltas) and on the rebuilt files A-D (table 6-4). As the paper did: each file's
throughput is its size over the elapsed time (a delta's: the mean size of its two
inputs), the median of 10 trials; the table shows the mean and standard deviation over
files, so small files' fixed costs weigh as much as large files'.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

from pagebench.core import encodings
from pagebench.core.encodings import BR, GZIP, ZSTD
from pagebench.core.sites import history
from pagebench.core.sites.builtin import builtin

TRIALS = 10

#: Table 6-1's text columns (KB/s, mean and standard deviation) for the paper's three
#: machines: 50 MHz 80486 BSD/OS, 90 MHz Pentium Linux, 400 MHz AlphaStation 500.
PAPER_6_1 = {
    "gzip": ((72.9, 43.4), (100.5, 78.6), (252.0, 151.6)),
    "gunzip": ((145.4, 124.2), (199.6, 220.6), (412.9, 563.5)),
    "vdelta": ((63.4, 46.4), (183.1, 160.1), (149.6, 331.9)),
    "vupdate": ((100.3, 97.3), (272.0, 301.6), (331.9, 529.0)),
    "vdelta (compress)": ((102.4, 58.6), (134.2, 105.5), (121.5, 117.4)),
    "vupdate (decomp)": ((181.4, 154.9), (172.7, 197.3), (155.5, 87.1)),
    "vdelta (library)": (None, (924.8, 781.6), (2640.3, 1879.5)),
    "vupdate (library)": (None, None, (5189.5, 5325.3)),
}
#: Table 6-4 (seconds on the 50 MHz 486): gzip compress, gunzip, vdelta compress, vupdate.
PAPER_6_4 = {"a": (0.151, 0.065, 0.121, 0.042), "b": (0.061, 0.031, 0.044, 0.020),
             "c": (2.028, 0.319, 1.438, 0.020), "d": (0.481, 0.100, 0.290, 0.020)}


def elapsed(step: Callable[[], bytes]) -> float:
    """The median elapsed seconds of `TRIALS` calls."""
    times = []
    for _ in range(TRIALS):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def throughputs(cases: list[tuple[float, Callable[[], bytes]]]) -> tuple[float, float]:
    """Mean and standard deviation over the cases of KB / elapsed seconds (KB = 1024 B)."""
    rates = [size / 1024 / elapsed(step) for size, step in cases]
    return statistics.mean(rates), statistics.stdev(rates)


def codecs() -> dict[str, tuple[str, list[tuple[float, Callable[[], bytes]]]]]:
    """Our step -> (the paper's row beside it, the cases it runs)."""
    pages = [i.body for listed in history.instances().values() for i in listed]
    pairs = [(a.body, b.body) for listed in history.instances().values() for a, b in zip(listed, listed[1:])]
    out: dict[str, tuple[str, list[tuple[float, Callable[[], bytes]]]]] = {}
    for encoding, paper in ((GZIP, "gzip"), (BR, ""), (ZSTD, "vdelta (compress)")):
        packed = [encoding.compress(p) for p in pages]
        out[f"{encoding.name} compress"] = (paper, [(len(p), lambda p=p, e=encoding: e.compress(p)) for p in pages])
        out[f"{encoding.name} decompress"] = (
            {"gzip": "gunzip", "vdelta (compress)": "vupdate (decomp)"}.get(paper, ""),
            [(len(p), lambda z=z, e=encoding: encodings.decode(e.token, z)) for p, z in zip(pages, packed)])
    deltas = [encodings.dcz_encode(a, b) for a, b in pairs]
    out["dcz delta (create)"] = ("vdelta", [((len(a) + len(b)) / 2, lambda a=a, b=b: encodings.dcz_encode(a, b))
                                            for a, b in pairs])
    out["dcz delta (apply)"] = ("vupdate", [((len(a) + len(b)) / 2, lambda a=a, d=d: encodings.dcz_decode(a, d))
                                           for (a, b), d in zip(pairs, deltas)])
    return out


def shown(cell: tuple[float, float] | None) -> str:
    return "-" if cell is None else f"{cell[0]:,.0f} ({cell[1]:,.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    started = time.monotonic()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; {TRIALS} trials per file, medians; KB/s of elapsed time, mean (std. dev.) "
          "over files.\n")
    print("| step (this machine) | KB/s here | paper's row | 50 MHz 486 | 90 MHz Pentium | 400 MHz Alpha | "
          "here / Alpha |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for step, (paper, cases) in codecs().items():
        here = throughputs(cases)
        rows = [(paper, PAPER_6_1.get(paper, (None, None, None)))]
        if paper == "vdelta":
            rows.append(("vdelta (library)", PAPER_6_1["vdelta (library)"]))
        if paper == "vupdate":
            rows.append(("vupdate (library)", PAPER_6_1["vupdate (library)"]))
        for i, (name, cells) in enumerate(rows):
            alpha = cells[2]
            ratio = f"{here[0] / alpha[0]:,.0f} x" if alpha else "-"
            print(f"| {step if i == 0 else ''} | {shown(here) if i == 0 else ''} | {name or '-'} | "
                  f"{' | '.join(shown(c) for c in cells)} | {ratio} |")
    print("\nTable 6-4's files A-D (rebuilt, `seed001-a..d`), seconds per file here against the paper's 486:\n")
    print("| file | bytes | gzip -9 here | gzip on the 486 | gunzip here | gunzip on the 486 | "
          "zstd 19 here | vdelta (compress) on the 486 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for letter, (gz, gunzip, vdelta, _) in PAPER_6_4.items():
        body = next(iter(builtin(f"seed001-{letter}").files.values()))
        packed = GZIP.compress(body)
        print(f"| {letter.upper()} | {len(body):,} | {elapsed(lambda: GZIP.compress(body)):.5f} | {gz} | "
              f"{elapsed(lambda: encodings.decode('gzip', packed)):.5f} | {gunzip} | "
              f"{elapsed(lambda: ZSTD.compress(body)):.5f} | {vdelta} |")
    print(f"\n{(time.monotonic() - started):.0f} s.")


if __name__ == "__main__":
    main()
