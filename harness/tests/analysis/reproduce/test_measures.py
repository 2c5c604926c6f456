"""What the claims measure, each on a small hand-made run (pure: no lab, no store)."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA
from pagebench.analysis.stats import Interval
from pagebench.core.encodings import GZIP, IDENTITY
from pagebench.core.modes import HTTP10
from pagebench.results.rows import ResourceRow
from tests.analysis.reproduce.loads import data, load, resource


def measure(key: str, found: Data, variant: str = ERA) -> Interval:
    measured = CLAIM_BY_KEY[key].measure(found, variant)
    assert measured is not None
    return measured


def page(encoded: int) -> list[ResourceRow]:
    """A single-file page sent as `encoded` bytes of body."""
    return [resource(0, 0, 0.0, None, None, encoded=encoded, transfer=encoded + 300)]


def test_seed_001_measures_read_the_files_times():
    sizes = {"a": (17545, 6177), "b": (6017, 2033), "c": (374144, 39200), "d": (97125, 10223)}
    loads = []
    for f, (stored, gz) in sizes.items():
        site = f"seed001-{f}"
        for profile, per_byte in (("modem", 0.28), ("local", 0.001)):
            loads += [load(HTTP10, stored * per_byte + 100 + d, site=site, profile=profile, encoding=IDENTITY,
                           resources=page(stored)) for d in (0, 1, 2)]
            loads += [load(HTTP10, gz * per_byte + 100 + d, site=site, profile=profile, encoding=GZIP,
                           resources=page(gz)) for d in (0, 1, 2)]
    found = data({(ERA, ""): loads})
    modem = measure("001-7-modem", found)  # gzip's time over stored, C and D
    expect = ((39200 * 0.28 + 101) / (374144 * 0.28 + 101) + (10223 * 0.28 + 101) / (97125 * 0.28 + 101)) / 2
    assert modem.estimate == pytest.approx(expect)
    lan = measure("001-7-lan", found)  # B on the LAN: 6117 ms against 2133 ms scale: a cut, not "no gain"
    assert lan.estimate == pytest.approx(1 - (2033 * 0.001 + 101) / (6017 * 0.001 + 101))
