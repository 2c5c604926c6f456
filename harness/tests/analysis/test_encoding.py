"""Seed 001's estimator (Mogul et al. 1997, 5.4) on hand-made loads: the arithmetic, the
pairing of each encoding with identity, and what happens without a baseline."""

from __future__ import annotations

import dataclasses

import pytest

from pagebench.analysis import encoding as enc
from pagebench.analysis.summary import summarize
from pagebench.core import encodings
from pagebench.core.modes import H2
from pagebench.core.records import Condition, LoadResult, PlannedLoad, Resource
from pagebench.results.rows import ResourceRow
from tests.helpers import load_row

IDENTITY = Condition("demo", H2, "direct", "3g", "warm", encoding=encodings.IDENTITY, version=2)
GZIP = dataclasses.replace(IDENTITY, encoding=encodings.GZIP)
DCZ = dataclasses.replace(IDENTITY, encoding=encodings.DCZ)


def resource(url: str, sent: int | None, first: float = 100.0, last: float = 200.0, *, transfer: int = 0,
             from_cache: bool = False, status: int = 200, offered: bool = False, used: bool = False) -> Resource:
    return Resource(url=url, origin="https://demo.test", protocol="h2", connection_id=1, from_cache=from_cache,
                    status=status, resource_type="Script", start_ms=first - 50, response_start_ms=first,
                    end_ms=last, transfer_bytes=transfer, body_bytes=10_000, encoded_bytes=sent,
                    revalidated=status == 304, dictionary_offered=offered, dictionary_used=used)


def load(load_ms: float, *resources: Resource) -> LoadResult:
    return LoadResult(ok=True, url="https://demo.test/", ttfb_ms=50.0, dcl_ms=None, load_ms=load_ms, fcp_ms=None,
                      lcp_ms=None, requests=len(resources), bytes=0, cache_hits=0, connections_browser=1,
                      connections_link=1, connections_server=1, flagged=False, flags=(), errors=(), link={},
                      resources=resources)


def test_time_saved_is_transfer_time_times_the_fraction_of_bytes_saved():
    assert enc.time_saved_ms(80.0, 10_000, 7_500) == pytest.approx(60.0)
    assert enc.time_saved_ms(80.0, 10_000, -1_000) == pytest.approx(-8.0)  # bigger: the model says slower
    assert enc.time_saved_ms(80.0, 0, 0) == 0.0
    # the paper's fraction of T_high (request to last byte) is the same model
    t_low, t_high = 80.0, 130.0
    assert enc.fraction_saved(t_low, t_high, 10_000, 7_500) * t_high == pytest.approx(
        enc.time_saved_ms(t_low, 10_000, 7_500))


def test_transfer_time_and_bytes_of_a_response():
    r = resource("/a.js", 3_000, first=120.0, last=170.5, transfer=3_400)
    assert enc.transfer_ms(r) == pytest.approx(50.5)
    assert enc.sent_bytes(r) == 3_000
    assert enc.sent_bytes(dataclasses.replace(r, encoded_bytes=None)) == 3_400  # not reported: the wire size
    assert enc.transfer_ms(dataclasses.replace(r, response_start_ms=None)) is None


def test_one_load_sums_its_responses_against_the_baseline_medians():
    baseline = enc.baseline_of([
        load(1000.0, resource("/a.js", 10_000, 100, 200), resource("/b.css", 4_000, 100, 140)),
        load(1100.0, resource("/a.js", 10_000, 100, 300), resource("/b.css", 4_000, 100, 140),
             resource("/logo.png", 5_000, from_cache=True)),  # from the cache: no transfer, no baseline
    ])
    assert baseline == {"/a.js": enc.Baseline(150.0, 10_000), "/b.css": enc.Baseline(40.0, 4_000)}
    saving = enc.load_saving(load(700.0, resource("/a.js", 2_500), resource("/b.css", 1_000),
                                  resource("/new.js", 900), resource("/c.js", 50, from_cache=True)), baseline)
    # a.js: 150 ms x 7500/10000 = 112.5; b.css: 40 ms x 3000/4000 = 30; new.js has no baseline
    assert saving == enc.LoadSaving(bytes=4_400, bytes_saved=10_500, time_saved_ms=pytest.approx(142.5),
                                    matched=2, unmatched=1)


def test_conditions_pair_with_identity_by_everything_but_the_encoding():
    base_loads = [load(1000.0 + i, resource("/a.js", 10_000, 100, 200)) for i in range(5)]
    gzip_loads = [load(900.0 + i, resource("/a.js", 2_000)) for i in range(5)]
    dcz_loads = [load(850.0 + i, resource("/a.js", 500, offered=True, used=True),
                      resource("/b.css", 0, status=304, offered=True)) for i in range(5)]
    other_site = dataclasses.replace(GZIP, site="other")  # no identity of its own
    version_1 = dataclasses.replace(GZIP, version=1)  # another version: not paired with IDENTITY (v2)
    rows = enc.savings({DCZ: dcz_loads, GZIP: gzip_loads, IDENTITY: base_loads, other_site: gzip_loads,
                        version_1: gzip_loads})
    by = {row.condition: row for row in rows}
    assert [row.condition.encoding.name for row in rows if row.condition.site == "demo" and row.condition.version == 2] \
        == ["identity", "gzip", "dcz"]  # report order: the encodings table's
    base = by[IDENTITY]
    assert base.is_baseline and base.baseline is None and base.bytes_saved is None and base.reason is None
    assert base.bytes.estimate == 10_000 and base.n == base.n_baseline == 5
    gzip = by[GZIP]
    assert gzip.baseline == IDENTITY and gzip.reason is None and (gzip.n, gzip.n_baseline) == (5, 5)
    assert gzip.bytes.estimate == 2_000 and gzip.bytes_saved.estimate == 8_000
    assert gzip.saved_pct.estimate == pytest.approx(80.0)
    assert gzip.estimated_ms.estimate == pytest.approx(80.0)  # 100 ms x 8000 / 10000
    assert gzip.measured_ms.estimate == pytest.approx(100.0)  # 1002 - 902
    assert gzip.measured_ms.low <= 100.0 <= gzip.measured_ms.high
    dcz = by[DCZ]
    assert dcz.estimated_ms.estimate == pytest.approx(95.0) and dcz.unmatched == 5  # b.css: no baseline
    assert (dcz.dictionary_offered, dcz.dictionary_used, dcz.revalidated) == (2, 1, 1)
    assert (gzip.dictionary_offered, gzip.revalidated) == (0, 0)
    for lonely in (by[other_site], by[version_1]):
        assert lonely.bytes.estimate == 2_000  # its own bytes are still shown
        assert lonely.estimated_ms is None and lonely.measured_ms is None and lonely.saved_pct is None
        assert lonely.reason.startswith("no identity condition to compare with")
    assert "other" in by[other_site].reason and "v1" not in by[version_1].reason


def test_an_empty_or_timeless_baseline_gives_no_estimate_and_says_why():
    rows = {row.condition: row for row in enc.savings({IDENTITY: [], GZIP: [load(900.0, resource("/a.js", 2_000))]})}
    assert rows[GZIP].estimated_ms is None and rows[GZIP].reason == "no usable load of its identity condition"
    timeless = load(1000.0, dataclasses.replace(resource("/a.js", 10_000), end_ms=None))
    rows = {row.condition: row for row in enc.savings({IDENTITY: [timeless],
                                                       GZIP: [load(900.0, resource("/a.js", 2_000))]})}
    assert rows[GZIP].reason == "the identity loads have no response with a transfer time"
    assert rows[GZIP].estimated_ms.estimate == 0.0 and rows[GZIP].measured_ms.estimate == pytest.approx(100.0)


def test_several_encodings():
    assert not enc.several_encodings([IDENTITY, dataclasses.replace(IDENTITY, version=1)])
    assert enc.several_encodings([IDENTITY, GZIP])


def test_a_summarys_used_loads_become_records_with_their_resources():
    old = dataclasses.replace(IDENTITY, cache="cold", version=1)
    gzip_load, flagged, old_load = (load_row(GZIP, 900.0), load_row(GZIP, 9000.0, flagged=True),
                                    load_row(old, 1000.0))
    summary = summarize("r1", [gzip_load, flagged, old_load], [PlannedLoad(9, dataclasses.replace(GZIP, site="x"),
                                                                         0, False)])
    sent = resource("/a.js", 5, offered=True)
    grouped = enc.loads_by_condition(summary, [ResourceRow(gzip_load.id, 0, sent), ResourceRow(flagged.id, 0, sent),
                                               ResourceRow(old_load.id, 0, resource("/a.js", None, transfer=10))])
    assert set(grouped) == {GZIP, old}  # a planned condition without loads has none to estimate from
    [gzip] = grouped[GZIP]  # the flagged load is left out
    assert gzip.load_ms == 900.0 and gzip.resources == (sent,) and gzip.resources[0].dictionary_offered
    [stored] = grouped[old]
    assert stored.resources[0].encoded_bytes is None and enc.sent_bytes(stored.resources[0]) == 10
