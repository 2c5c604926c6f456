"""Seed 001's claims at the measure level (pure): hand-made loads of the page history on
each side of every rule's falsifier give "reproduced" and "differs"."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.analysis.reproduce.seed001 import PAPER_ELIGIBLE_SHARE, figures, responses
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2, HTTP10
from pagebench.core.sites import history
from pagebench.results.rows import ResourceRow
from tests.analysis.reproduce.loads import Page, data, load, resource


def body(encoded: int) -> list[ResourceRow]:
    """A single-file page whose one response came as `encoded` bytes of body."""
    return [resource(0, 0, 0.0, None, None, encoded=encoded, transfer=encoded + 300)]


def pairs(kept: float, gzipped: float = 0.31, content_type: str = "") -> Data:
    """Every pair of the page history loaded warm: each page's stored size, a dcz body of
    `kept` of it (plus a spread of +-20 % over the pairs), a gzip body of `gzipped` of it."""
    loads: list[Page] = []
    for i, site in enumerate(history.pair_names()):
        if content_type and history.content_type(site) != content_type:
            continue
        stored = 2_000 + 1_000 * i
        spread = 1 + 0.2 * ((i % 5) - 2) / 2
        for encoding, size in ((IDENTITY, stored), (GZIP, round(stored * gzipped)),
                               (DCZ, round(stored * kept * spread))):
            loads.append(load(H2, 100, site=site, encoding=encoding, version=2, cache="warm", resources=body(size)))
    return data({(TODAY, ""): loads})


def verdict(key: str, found: Data, variant: str = TODAY) -> str:
    claim = CLAIM_BY_KEY[key]
    measured = claim.measure(found, variant)
    assert measured is not None, key
    return claim.rule.verdict(measured)


@pytest.mark.parametrize("key,inside,outside", [
    ("001-5-delta-bytes", 0.05, 0.25),  # over 83 % saved: 95 % against 75 %
    ("001-5-delta-all", 0.05, 0.25),  # on the paper's mix: 35 % against 27.6 %
    ("001-6-delta", 0.005, 0.03),  # the median response: 99.5 % against 97 %
])
def test_the_delta_rules_come_out_either_way(key: str, inside: float, outside: float):
    assert verdict(key, pairs(inside)) == "reproduced"
    assert verdict(key, pairs(outside)) == "differs"


def test_the_content_type_rows_read_their_own_pages():
    assert verdict("001-5-delta-html", pairs(0.03, content_type="text/html")) == "reproduced"
    assert verdict("001-5-delta-html", pairs(0.15, content_type="text/html")) == "differs"
    assert verdict("001-5-delta-plain", pairs(0.085, content_type="text/plain")) == "reproduced"
    assert verdict("001-5-delta-plain", pairs(0.2, content_type="text/plain")) == "differs"
    assert verdict("001-5-delta-plain", pairs(0.01, content_type="text/plain")) == "differs"  # too good
    assert CLAIM_BY_KEY["001-5-delta-plain"].measure(pairs(0.01, content_type="text/html"), TODAY) is None


def test_gzip_on_html_comes_out_either_way():
    assert verdict("001-5-gzip-html", pairs(0.01, gzipped=0.31)) == "reproduced"
    assert verdict("001-5-gzip-html", pairs(0.01, gzipped=0.5)) == "differs"
    assert verdict("001-5-gzip-html", pairs(0.01, gzipped=0.15)) == "differs"


def test_the_bytes_are_summed_and_the_median_is_the_papers():
    found = pairs(0.05)
    got = responses(found, TODAY)
    assert len(got) == len(history.pair_names()) and all(r.gzip and r.dcz for r in got)
    stored, sent = sum(r.stored for r in got), sum(r.dcz or 0 for r in got)
    saved = CLAIM_BY_KEY["001-5-delta-bytes"].measure(found, TODAY)
    assert saved is not None and saved.estimate == pytest.approx(1 - sent / stored)
    assert saved.low < saved.estimate < saved.high  # resampled over the responses
    of_all = CLAIM_BY_KEY["001-5-delta-all"].measure(found, TODAY)
    assert of_all is not None and of_all.estimate == pytest.approx(saved.estimate * PAPER_ELIGIBLE_SHARE)
    assert PAPER_ELIGIBLE_SHARE == pytest.approx(0.3675, abs=1e-3)
    median = CLAIM_BY_KEY["001-6-delta"].measure(found, TODAY)
    assert median is not None and median.low <= median.estimate <= median.high
    assert CLAIM_BY_KEY["001-6-delta"].measure(found, ERA) is None  # today only
    other = load(H2, 1, site="seed001-a", encoding=IDENTITY, version=2, resources=body(9))  # not a pair of the history
    assert CLAIM_BY_KEY["001-6-delta"].measure(data({(TODAY, ""): [other]}), TODAY) is None


def test_the_lan_row_comes_out_either_way():
    def lan(stored_ms: float, gzip_ms: float) -> Data:
        loads = [load(HTTP10, ms + d, site="seed001-b", profile="local", encoding=encoding)
                 for encoding, ms in ((IDENTITY, stored_ms), (GZIP, gzip_ms)) for d in (0, 1, 2, 1, 0)]
        return data({(ERA, ""): loads})
    assert verdict("001-7-lan", lan(100, 100), ERA) == "reproduced"
    assert verdict("001-7-lan", lan(100, 80), ERA) == "differs"  # gzip cut 20 %
    assert verdict("001-7-lan", lan(100, 120), ERA) == "differs"  # gzip cost 20 %


def test_every_001_claim_states_its_conditions():
    for claim in (c for c in CLAIM_BY_KEY.values() if c.seed == "001" and c.key != "001-7-modem"):
        assert claim.condition and claim.ours and claim.line and claim.falsifies and claim.why, claim.key
        assert not claim.demonstrated, claim.key


def test_the_savings_figure_draws_one_step_per_response():
    [figure] = figures({"001-delta": pairs(0.05)})
    assert figure.name == "fig-001-5-5" and figure.svg.startswith("<svg")
    assert f"dcz ({len(history.pair_names())} responses)" in figure.legend
    assert figures({}) == []


def test_gzip_on_plain_text_reads_its_own_pages():
    assert verdict("001-5-gzip-plain", pairs(0.01, gzipped=0.44, content_type="text/plain")) == "reproduced"
    assert verdict("001-5-gzip-plain", pairs(0.01, gzipped=0.6, content_type="text/plain")) == "differs"
    assert CLAIM_BY_KEY["001-5-gzip-plain"].measure(pairs(0.01, content_type="text/html"), TODAY) is None
