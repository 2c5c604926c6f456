"""Integration, through the CLI: seed 001's page history in a real run (nginx, h2,
Chromium): two pairs loaded warm, and the bytes the claims count are those the browser
received: instance k gzipped, or as a delta against instance k - 1 (about 30 s)."""

from __future__ import annotations

from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import TODAY
from pagebench.analysis.reproduce.seed001 import responses
from pagebench.core import encodings
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.core.sites import history
from pagebench.results.store import Store

from tests.helpers import good_loads, needs_root, nothing_left, pagebench, run_id_of, write_spec

pytestmark = needs_root

SITES = ("seed001-toybox-header-5", "seed001-toybox-release-5")  # text/html and text/plain, 2 KB and 1.3 KB


def test_the_history_pairs_arrive_as_the_claims_count_them(tmp_path):
    db = f"sqlite:///{tmp_path}/runs.sqlite"
    spec = write_spec(tmp_path, name="history", sites=list(SITES), modes=["h2"], profiles=["lte"],
                      encoding=["identity", "gzip", "dcz"], version=[2], cache=["warm"], repetitions=1, warmup=0,
                      seed=1997, timeouts={"link_check": False})
    run = run_id_of(pagebench("run", str(spec), "--db", db, timeout=300))
    store = Store(db)
    loads = good_loads(store, run, mode=H2)
    found = Data({(TODAY, ""): loads}, {}, {load.id: store.resources(load.id) for load in loads})
    got = {r.site: r for r in responses(found, TODAY)}
    assert sorted(got) == sorted(SITES)
    for site in SITES:
        page, k = history.pair_of(site)
        before, after = (i.body for i in history.instances()[page][k - 2:k])
        assert got[site].stored == len(after)
        assert got[site].gzip == len(GZIP.compress(after))
        assert got[site].dcz == len(encodings.dcz_encode(before, after))  # the delta against instance k - 1
        assert got[site].content_type == ("text/plain" if page.endswith(".txt") else "text/html")
        [dcz] = good_loads(store, run, site=site, encoding=DCZ)
        [document] = [r.resource for r in store.resources(dcz.id) if r.position == 0]
        assert document.content_encoding == "dcz" and document.dictionary_used, document
        [whole] = good_loads(store, run, site=site, encoding=IDENTITY)
        assert [r.resource.content_encoding for r in store.resources(whole.id) if r.position == 0] == [""]
    assert nothing_left()
