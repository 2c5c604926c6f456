"""A corpus run across its pages: each page's ratio to the base mode with its interval and
verdict, and how many pages each mode speeds up, slows or cannot tell (from the summary
and the run's meta only)."""

from __future__ import annotations

import pytest

from pagebench.analysis import pages
from pagebench.analysis.summary import summarize
from pagebench.core import modes
from pagebench.core.records import Condition
from tests.helpers import load_row

META = {"sites": {
    "fast": {"kind": "corpus", "har": "/h/fast.har", "requests": 40, "origins": 9, "bytes": 900_000, "depth": 3},
    "slow": {"kind": "corpus", "har": "/h/slow.har", "requests": 5, "origins": 1, "bytes": 50_000, "depth": 1},
    "same": {"kind": "corpus", "har": "/h/same.har", "requests": 12, "origins": 3, "bytes": 200_000, "depth": 2},
    "mine": {"kind": "builtin", "summary": "a page of the built-in catalogue"},
}}


def rows(site: str, mode: modes.Mode, times: list[float], profile: str = "lte") -> list:
    return [load_row(Condition(site, mode, "direct", profile, "cold"), t) for t in times]


def run(extra: list | None = None):
    loads = (rows("fast", modes.HTTP10, [1000, 1010, 990, 1005, 995]) + rows("fast", modes.H2, [600, 610, 590, 605, 595])
             + rows("slow", modes.HTTP10, [500, 505, 495, 502, 498]) + rows("slow", modes.H2, [700, 710, 690, 705, 695])
             + rows("same", modes.HTTP10, [800, 900, 700, 850, 750]) + rows("same", modes.H2, [820, 880, 720, 760, 790])
             + rows("mine", modes.HTTP10, [100] * 5) + rows("mine", modes.H2, [50] * 5) + (extra or []))
    return summarize("r", loads)


def test_each_mode_against_the_base_across_the_pages_counts_what_each_interval_says():
    [h2] = pages.across(run(), META)
    assert (h2.mode, h2.base, h2.group) == ("h2", "http1.0", ())
    by_page = {p.page: p for p in h2.pages}
    assert set(by_page) == {"fast", "slow", "same"}  # the built-in site is no corpus page
    assert by_page["fast"].verdict == pages.FASTER and by_page["fast"].ratio.estimate == pytest.approx(0.6)
    assert by_page["slow"].verdict == pages.SLOWER and by_page["slow"].ratio.estimate == pytest.approx(1.4)
    assert by_page["same"].verdict == pages.UNCLEAR and by_page["same"].ratio.low < 1 < by_page["same"].ratio.high
    assert by_page["fast"].traits == {"requests": 40, "origins": 9, "bytes": 900_000, "depth": 3}
    assert (h2.count(pages.FASTER), h2.count(pages.SLOWER), h2.count(pages.UNCLEAR)) == (1, 1, 1)
    low, median, high = h2.quartiles()
    assert low < median < high and median == pytest.approx(by_page["same"].ratio.estimate)
    assert h2.line().startswith("h2 / http1.0 over 3 pages: faster on 1, slower on 1, can't tell on 1; "
                                "ratio of medians: median ")


def test_a_page_with_too_few_loads_on_a_side_has_no_ratio_and_cannot_tell():
    summary = summarize("r", rows("fast", modes.HTTP10, [1000]) + rows("fast", modes.H2, [600, 610])
                        + rows("slow", modes.HTTP10, [500, 510]) + rows("slow", modes.H2, [700, 710]))
    [h2] = pages.across(summary, META)
    by_page = {p.page: p for p in h2.pages}
    assert by_page["fast"].ratio is None and by_page["fast"].verdict == pages.FEW
    assert ", too few usable loads on 1; " in h2.line()
    assert by_page["fast"].base_ms == 1000 and by_page["fast"].mode_ms == 605
    assert by_page["slow"].ratio is not None


def test_groups_of_other_fields_are_compared_apart_and_named():
    extra = rows("fast", modes.HTTP10, [2000] * 3, "3g") + rows("fast", modes.H2, [1000] * 3, "3g")
    found = pages.across(run(extra), META)
    assert {row.group: len(row.pages) for row in found} == {(("profile", "lte"),): 3, (("profile", "3g"),): 1}
    assert "over 1 pages (3g): faster on 1" in next(row for row in found if row.group == (("profile", "3g"),)).line()


def test_no_corpus_or_one_mode_gives_nothing():
    assert pages.across(run(), {"sites": {"mine": META["sites"]["mine"]}}) == []
    assert pages.across(run(), {}) == []
    assert pages.across(summarize("r", rows("fast", modes.H2, [1, 2, 3])), META) == []


def test_the_json_gives_counts_quartiles_and_every_page():
    [h2] = pages.as_json(pages.across(run(), META))
    assert (h2["mode"], h2["base"], h2["pages"], h2["faster"], h2["slower"], h2["unclear"], h2["too_few_loads"]) == (
        "h2", "http1.0", 3, 1, 1, 1, 0)
    fast = next(p for p in h2["per_page"] if p["page"] == "fast")
    assert fast["requests"] == 40 and fast["verdict"] == "faster" and fast["ratio"][1] < fast["ratio"][0] < fast["ratio"][2]
    assert len(h2["ratio_quartiles"]) == 3
