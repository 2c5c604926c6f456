"""Seed 001's modem rows (V.42bis, table 6-3) at the measure level: loads inside the
paper's range give "reproduced", loads past either side "differs" (pure: no lab)."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.scenarios import ERA, MODEM001, SCENARIO_BY_NAME, TODAY
from pagebench.core.encodings import GZIP, IDENTITY
from pagebench.core.modes import HTTP10
from tests.analysis.reproduce.loads import Page, data, load, resource

STORED = {"c": 374144, "d": 97125}
GZIPPED = {"c": 39200, "d": 10223}


def verdict(key: str, pages: list[Page], variant: str = ERA) -> str:
    claim = CLAIM_BY_KEY[key]
    measured = claim.measure(data({(variant, ""): pages}), variant)
    assert measured is not None
    return claim.rule.verdict(measured)


def files(stored_kbit: float, gzip_kbit: float, setup_ms: float = 500) -> list[Page]:
    """Files C and D over the modem, each as stored at `stored_kbit` of goodput (what the
    modem's compression made of the line) and gzipped at `gzip_kbit`, three loads each."""
    pages = []
    for f in ("c", "d"):
        for encoding, size, kbit in ((IDENTITY, STORED[f], stored_kbit), (GZIP, GZIPPED[f], gzip_kbit)):
            pages += [load(HTTP10, setup_ms + size * 8 / kbit + jitter, site=f"seed001-{f}", profile="modem",
                           encoding=encoding) for jitter in (0, 15, 30)]
    return pages


#: The paper's gzipped transfers: C's 39200 B in 25.1 s, D's 10223 B in 6.9 s.
PAPER_GZIP_KBIT = 12.5


@pytest.mark.parametrize("stored_kbit,expected", [
    (45.0, "reproduced"),  # the paper's modem: C in 66.4 s, D in 17.7 s (about 45 kbit/s)
    (27.0, "differs"),     # no modem compression: the stored file at the line's rate
    (110.0, "differs"),    # compression about as strong as gzip's: little left to gain
])
def test_gzips_time_over_stored_turns_on_the_modems_compression(stored_kbit, expected):
    assert verdict("001-7-modem", files(stored_kbit, PAPER_GZIP_KBIT)) == expected


def c_page(rate_kbit: float, jitter_ms: float) -> Page:
    end = STORED["c"] * 8 / rate_kbit + jitter_ms
    return load(HTTP10, end + 300, site="seed001-c", profile="modem", encoding=IDENTITY,
                resources=[resource(0, STORED["c"], 0.0, 400.0, end)])


@pytest.mark.parametrize("rate_kbit,expected", [
    (50.0, "reproduced"),   # between the table's 45.1 and the text's 55.3
    (27.0, "differs"),      # the line carrying the stored bytes: no compression (TLS)
    (110.0, "differs"),     # far more compression than the paper's modem
])
def test_file_cs_rate_over_the_modem(rate_kbit, expected):
    assert verdict("001-7-v42bis", [c_page(rate_kbit, j) for j in (0, 200, 400)]) == expected


def test_the_rate_is_the_bodys_goodput_in_kbit_per_second():
    measured = CLAIM_BY_KEY["001-7-v42bis"].measure(data({(TODAY, ""): [c_page(50.0, 0)]}), TODAY)
    assert measured is not None and measured.estimate == pytest.approx(50.0)
    assert CLAIM_BY_KEY["001-7-v42bis"].measure(data({(ERA, ""): []}), ERA) is None


@pytest.mark.parametrize("variant", [ERA, TODAY])
def test_the_files_scenario_runs_the_v42bis_modem_on_the_userspace_backend(variant):
    [(_, spec)] = SCENARIO_BY_NAME["001-files"].runs(variant, False)
    [modem] = [p for p in spec["profiles"] if p["name"] == "modem"]
    assert modem["base"] == MODEM001 == "modem-28k8-v42bis"
    assert spec["backend"] == "userspace"
    assert spec["repetitions"]["cap"] == (3 if variant == ERA else 2)


def test_the_modem_claims_state_their_conditions_and_line():
    for key in ("001-7-modem", "001-7-v42bis"):
        claim = CLAIM_BY_KEY[key]
        assert claim.condition and claim.ours and claim.falsifies and claim.line == 421 and not claim.demonstrated
