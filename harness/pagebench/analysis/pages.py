"""A corpus run across its pages (`core.sites.corpus`): each page's load time in each mode
against the base mode's (the first the run has in the modes table's order, usually
HTTP/1.0), with a bootstrap interval (a sharded run's resamples its machines too), and the
distribution of those ratios across the pages: on how many pages a mode is faster, slower
or not told apart (or has too few usable loads to say), by how much (median and quartiles
of the ratios), each page's traits (requests, origins, bytes, depth) beside.

Pure: the run's one summary and its meta (which sites are a corpus's pages, their traits).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagebench.analysis import stats
from pagebench.analysis.summary import ConditionSummary, Summary, shown
from pagebench.core import modes
from pagebench.core.quantiles import percentile
from pagebench.core.records import CONDITION_FIELDS

#: Fewer usable loads on either side than this: a page's ratio has no interval (and no verdict).
MIN_LOADS = 2
#: The condition fields a page's modes are compared within (all but site and mode).
GROUP_FIELDS = tuple(f for f in CONDITION_FIELDS if f not in ("site", "mode"))
FASTER, SLOWER, UNCLEAR, FEW = "faster", "slower", "can't tell", "too few loads"


@dataclass(frozen=True)
class PageRatio:
    """One page: a mode's median load time over the base mode's, with its interval and
    what the interval says (None below MIN_LOADS on a side)."""

    page: str
    traits: Mapping[str, int]
    base_ms: float | None
    mode_ms: float | None
    ratio: stats.Interval | None

    @property
    def verdict(self) -> str:
        """What the interval says; FEW when a side has too few usable loads (all flagged,
        say), which is no answer rather than an unclear one."""
        if self.ratio is None:
            return FEW
        return FASTER if self.ratio.high < 1 else SLOWER if self.ratio.low > 1 else UNCLEAR


@dataclass(frozen=True)
class ModeAcross:
    """A mode against the base mode across the corpus's pages, in one group of the other
    condition fields (topology, profile, cache, ...)."""

    group: tuple[tuple[str, str], ...]  # (field, shown value) of the group's fields that vary or matter
    mode: str
    base: str
    pages: tuple[PageRatio, ...]

    def count(self, verdict: str) -> int:
        return sum(1 for page in self.pages if page.verdict == verdict)

    def quartiles(self) -> tuple[float, float, float] | None:
        """The ratios' (estimates') 25th, 50th and 75th percentiles (None: no ratio)."""
        ratios = [page.ratio.estimate for page in self.pages if page.ratio is not None]
        if not ratios:
            return None
        return percentile(ratios, 25), percentile(ratios, 50), percentile(ratios, 75)

    def line(self) -> str:
        """'h2 / http1.0 over 25 pages (lte): faster on 14, slower on 3, can't tell 8; ratio median 0.83
        (quartiles 0.71-0.97)'."""
        where = ", ".join(value for _, value in self.group)
        quartiles = self.quartiles()
        spread = (f"; ratio of medians: median {quartiles[1]:.2f} (quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f})"
                  if quartiles else "")
        few = self.count(FEW)
        return (f"{self.mode} / {self.base} over {len(self.pages)} pages" + (f" ({where})" if where else "")
                + f": faster on {self.count(FASTER)}, slower on {self.count(SLOWER)}, "
                  f"can't tell on {self.count(UNCLEAR)}" + (f", too few usable loads on {few}" if few else "")
                + spread)


def corpus_pages(meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The run's corpus pages (site -> what its meta keeps: har, traits), in run order."""
    return {name: dict(info) for name, info in ((meta or {}).get("sites") or {}).items()
            if isinstance(info, Mapping) and info.get("kind") == "corpus"}


def across(summary: Summary, meta: Mapping[str, Any]) -> list[ModeAcross]:
    """Each mode against the base mode across the pages, per group of the other fields;
    [] for a run that is no corpus's or has one mode."""
    pages = corpus_pages(meta)
    if not pages:
        return []
    cells: dict[tuple[str, ...], dict[str, dict[Any, ConditionSummary]]] = {}
    for condition in summary.conditions:
        c = condition.condition
        if c.site in pages:
            key = tuple(str(getattr(c, f)) for f in GROUP_FIELDS)
            cells.setdefault(key, {}).setdefault(c.site, {})[c.mode] = condition
    varying = [f for f in summary.varying() if f in GROUP_FIELDS]
    out = []
    for key, by_page in cells.items():
        present = sorted({mode for per_mode in by_page.values() for mode in per_mode}, key=modes.rank)
        if len(present) < 2:
            continue
        group = tuple((f, shown(f, value)) for f, value in zip(GROUP_FIELDS, key) if f in varying)
        base = present[0]
        for mode in present[1:]:
            rows = [_ratio(page, pages[page], per_mode.get(base), per_mode.get(mode))
                    for page, per_mode in by_page.items()]
            out.append(ModeAcross(group, mode.name, base.name, tuple(rows)))
    return out


def _ratio(page: str, info: Mapping[str, Any], base: ConditionSummary | None,
           other: ConditionSummary | None) -> PageRatio:
    traits = {k: int(v) for k, v in info.items() if k in ("requests", "origins", "bytes", "depth")}
    base_ms = base.metrics["load_ms"].median if base is not None else None
    mode_ms = other.metrics["load_ms"].median if other is not None else None
    ratio = None
    if base is not None and other is not None and min(len(base.values("load_ms")),
                                                      len(other.values("load_ms"))) >= MIN_LOADS:
        ratio = stats.ratio_ci(other.by_machine("load_ms"), base.by_machine("load_ms"))
    return PageRatio(page, traits, base_ms, mode_ms, ratio)


def as_json(rows: Sequence[ModeAcross]) -> list[dict[str, Any]]:
    """The report's `pages`: per mode against the base, the counts (`too_few_loads`: pages
    without MIN_LOADS usable loads on a side), the ratios' quartiles
    and every page with its traits, medians, ratio [low, high] and verdict."""
    out = []
    for row in rows:
        quartiles = row.quartiles()
        out.append({
            "group": dict(row.group), "mode": row.mode, "base": row.base, "pages": len(row.pages),
            FASTER: row.count(FASTER), SLOWER: row.count(SLOWER), "unclear": row.count(UNCLEAR),
            "too_few_loads": row.count(FEW),
            "ratio_quartiles": list(quartiles) if quartiles else None,
            "per_page": [{"page": p.page, **p.traits, "base_ms": p.base_ms, "mode_ms": p.mode_ms,
                          "ratio": None if p.ratio is None else [p.ratio.estimate, p.ratio.low, p.ratio.high],
                          "verdict": p.verdict} for p in row.pages],
        })
    return out
