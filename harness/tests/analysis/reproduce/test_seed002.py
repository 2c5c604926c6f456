"""Seed 002's appendix, fit and claims, on hand-made loads: every claim's row turns
"differs" on the far side of its falsifier and "reproduced" (or "demonstrated") inside."""

from __future__ import annotations

import pytest

from pagebench.analysis.reproduce import seed002, verdicts
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY, claims_of
from pagebench.analysis.reproduce.scenarios import EC2_2013, ERA, PAGE002_SITE, REAL002_SITE, VLAB_2013
from pagebench.analysis.reproduce.seed002 import APPENDIX_B, APPENDIX_C, APPENDIX_D_COLD, APPENDIX_D_WARM
from pagebench.core.modes import H2, KEEPALIVE
from tests.analysis.reproduce.loads import data, load


def test_the_appendix_tables_give_the_reports_averages():
    assert (round(APPENDIX_B.http_mean, 4), round(APPENDIX_B.spdy_mean, 4)) == (7.5861, 5.9723)  # its "Average" row
    assert sum(APPENDIX_B.http_tcp) / 20 == 9.7 and sum(APPENDIX_B.spdy_tcp) / 20 == 4.15
    assert round(APPENDIX_C.http_mean, 4) == 8.9173 and round(APPENDIX_C.spdy_mean, 4) == 5.1293
    assert sum(APPENDIX_D_COLD.http_tcp) / 10 == 41.3 and sum(APPENDIX_D_COLD.spdy_tcp) / 10 == 44.5
    assert sum(APPENDIX_D_WARM.http_tcp) / 10 == 15.6 and sum(APPENDIX_D_WARM.spdy_tcp) / 10 == 31.5
    cut = seed002.mean_cut(APPENDIX_B.http_s, APPENDIX_B.spdy_s)  # the text's 21 %
    assert round(cut.estimate, 2) == 0.21 and cut.low < 0.21 < cut.high


def test_the_fit_is_the_swept_link_nearest_both_of_the_appendix_s_means():
    b = (APPENDIX_B.http_mean, APPENDIX_B.spdy_mean)
    http = {(100, 16.8): [b[0] * 0.8, b[0] * 1.3], (140, 16.8): [b[0] * 1.04], (140, 22): [b[0]],
            (180, 12): [b[0]]}
    spdy = {(100, 16.8): [b[1]], (140, 16.8): [b[1] * 0.97], (140, 22): [b[1] * 0.9], (180, 12): [b[1]]}
    found = seed002.fit(http, spdy, APPENDIX_B)
    assert found is not None and (found.rtt_ms, found.mbit) == (140, 16.8)  # 4 % off, where 140/22 is 10 % off
    assert found.http_residual == pytest.approx(0.04) and found.spdy_residual == pytest.approx(-0.03)
    assert found.worst == pytest.approx(0.04)
    assert seed002.fits(http, spdy, APPENDIX_B)[0].http_s == pytest.approx(b[0] * 1.05)  # a link's mean, both loads
    assert (180, 12) not in {(f.rtt_ms, f.mbit) for f in seed002.fits(http, spdy, APPENDIX_B)}  # below the floor
    far = seed002.fit(http, {link: [t * 2 for t in times] for link, times in spdy.items()}, APPENDIX_B)
    assert far is not None and far.worst > 0.5  # no link near: the fit says how far, it does not hide it
    assert seed002.fit({(180, 12): [b[0]]}, {(180, 12): [b[1]]}, APPENDIX_B) is None


def pages(site: str, profile: str, cache: str, h1: tuple[float, int], h2: tuple[float, int]) -> list:
    """Five loads a mode: (load time in ms, TCP connections), a little jitter on the time."""
    return [load(mode, ms + jitter, site=site, profile=profile, cache=cache, connections_link=tcp)
            for mode, (ms, tcp) in ((KEEPALIVE, h1), (H2, h2)) for jitter in (-20, -10, 0, 10, 20)]


#: claim -> (site, profile, cache, (HTTP/1.1, h2) inside the falsifier, (HTTP/1.1, h2) beyond it)
CASES = {
    "002-4.1-time-http": (PAGE002_SITE, EC2_2013, "cold", ((7600, 5), (6000, 2)), ((9000, 5), (6000, 2))),
    "002-4.1-time-spdy": (PAGE002_SITE, EC2_2013, "cold", ((7600, 5), (6000, 2)), ((7600, 5), (4500, 2))),
    "002-4.1-load": (PAGE002_SITE, EC2_2013, "cold", ((7600, 5), (6000, 2)), ((7600, 5), (7400, 2))),
    "002-4.1-connections": (PAGE002_SITE, EC2_2013, "cold", ((7600, 7), (6000, 3)), ((7600, 5), (6000, 2))),
    "002-4.2-connections": (PAGE002_SITE, VLAB_2013, "cold", ((8900, 7), (5100, 2)), ((8900, 5), (5100, 2))),
    "002-4.2-load": (PAGE002_SITE, VLAB_2013, "cold", ((8900, 7), (5100, 2)), ((8900, 7), (7000, 2))),
    "002-4.3-cold": (REAL002_SITE, EC2_2013, "cold", ((5000, 41), (2500, 45)), ((5000, 41), (4000, 45))),
    "002-4.3-warm": (REAL002_SITE, EC2_2013, "warm", ((1800, 16), (2500, 32)), ((1800, 16), (1800, 32))),
    "002-4.3-connections": (REAL002_SITE, EC2_2013, "cold", ((5000, 41), (2500, 45)), ((5000, 41), (2500, 34))),
    "002-4.3-connections-warm": (REAL002_SITE, EC2_2013, "warm", ((1800, 16), (2500, 32)),
                                 ((1800, 30), (2500, 30))),
}


def test_every_seed_002_claim_has_a_case():
    assert set(CASES) == {claim.key for claim in claims_of(["002"])}


@pytest.mark.parametrize("key", sorted(CASES))
def test_each_claim_turns_on_its_falsifier(key):
    claim = CLAIM_BY_KEY[key]
    site, profile, cache, inside, beyond = CASES[key]
    verdict = {}
    for side, (h1, h2) in (("inside", inside), ("beyond", beyond)):
        found = {claim.scenario: data({(ERA, ""): pages(site, profile, cache, h1, h2)})}
        [row, _today] = verdicts.evaluate([claim], found)
        verdict[side] = row.verdict
    assert verdict == {"inside": "demonstrated" if claim.demonstrated else "reproduced", "beyond": "differs"}


def test_every_claim_states_the_papers_condition_and_ours():
    for claim in claims_of(["002"]):
        assert claim.condition and claim.ours and claim.line and claim.falsifies, claim.key
        assert "§" in claim.condition and claim.section.startswith("§4."), claim.key


def test_the_figure_sets_the_reports_times_beside_ours():
    found = {"002-page": data({(ERA, ""): pages(PAGE002_SITE, EC2_2013, "cold", (7600, 5), (6000, 2))})}
    [figure] = seed002.figures(found)
    assert figure.name == "times-002" and figure.svg.startswith("<svg") and "Appendix B" in figure.legend
    assert seed002.figures({}) == []
