"""`pagebench reproduce` end to end: seed 000's scenarios run in the real lab, in their
variants (era, today, the cleartext control), and every seed-000 claim gets its rows
(about 6 minutes)."""

from __future__ import annotations

from html import escape

from pagebench.analysis.reproduce import claims, verdicts as reproduce
from pagebench.analysis.reproduce.scenarios import CLEARTEXT, ERA, SCENARIO_BY_NAME, TODAY
from pagebench.results.store import Store

from tests.helpers import needs_root, nothing_left, pagebench

pytestmark = needs_root


def test_reproduce_000_quick_answers_every_seed_000_claim_in_each_variant(tmp_path):
    db = f"sqlite:///{tmp_path}/answer.sqlite"
    page, figures = tmp_path / "answer.html", tmp_path / "figures"
    figures.mkdir()
    result = pagebench("reproduce", "000", "--quick", "--db", db, "--html", str(page), "--figures", str(figures),
                       timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "paper against measured" in result.stdout

    store = Store(db)
    runs = reproduce.latest_runs(store, [s.name for s in claims.scenarios_of(["000"])])
    assert {(scenario, variant) for scenario, variant, _ in runs} == {
        (s.name, v) for s in claims.scenarios_of(["000"]) for v in s.variants}
    for (scenario, variant, _), run_id in runs.items():
        tls = {load.condition.tls for load in store.loads(run_id)}
        assert tls == ({"1.3"} if variant == TODAY else {"none"}), (scenario, variant)
    rows = reproduce.evaluate(claims.claims_of(["000"]), reproduce.gather(store, runs))
    seed000 = [c for c in claims.CLAIMS if c.seed == "000"]
    assert [(r.claim.key, r.variant) for r in rows] == [
        (c.key, v) for c in seed000 for v in SCENARIO_BY_NAME[c.scenario].variants]
    assert all(r.verdict in ("reproduced", "differs", "can't tell") and r.measured is not None for r in rows), \
        [(r.claim.key, r.variant, r.verdict) for r in rows]
    assert all(r.reason for r in rows if r.verdict != "reproduced")

    # Physics, in the direction it allows: TLS 1.3 adds a round trip to each of the two
    # connections before the first image (HTML, then the image's own connection); with
    # TLS set back (the control) today's TCP and browser need the era's four.
    first = {r.variant: r.measured for r in rows if r.claim.key == "000-3-first-image"}
    assert first[TODAY].estimate - first[ERA].estimate > 1.5
    assert abs(first[CLEARTEXT].estimate - first[ERA].estimate) < 0.5
    # An open connection (warm pool) saves the two round trips of the image's own connection.
    assert [r.verdict for r in rows if r.claim.key == "000-4-first-image-open"][0] == "reproduced"

    html = page.read_text()
    assert all(escape(claim.claim) in html for claim in seed000)
    assert {p.name for p in figures.iterdir()} >= {"fig-6-1.svg", "fig-6-2.svg", "fig-6-3.svg", "fig-6-4.svg",
                                                   "fig-3-2.svg", "fig-3-2-mss536.svg", "fig-3-3.svg"}
    assert nothing_left()
