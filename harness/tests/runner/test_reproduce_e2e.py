"""`pagebench reproduce` end to end: seed 000's scenarios run in the real lab, era and
today, every seed-000 claim gets its rows (about 5 minutes), and its export holds exactly
what the store gives."""

from __future__ import annotations

from dataclasses import replace
from html import escape

from pagebench.analysis.reproduce import claims, export, verdicts as reproduce
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.results.store import Store

from tests.helpers import needs_root, nothing_left, pagebench

pytestmark = needs_root


def test_reproduce_000_quick_answers_every_seed_000_claim_in_both_variants(tmp_path):
    db = f"sqlite:///{tmp_path}/answer.sqlite"
    page, figures, exported = tmp_path / "answer.html", tmp_path / "figures", tmp_path / "answer.json.xz"
    figures.mkdir()
    result = pagebench("reproduce", "000", "--quick", "--db", db, "--html", str(page), "--figures", str(figures),
                       "--export", str(exported), timeout=1500)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "paper against measured" in result.stdout

    store = Store(db)
    runs = reproduce.latest_runs(store, [s.name for s in claims.scenarios_of(["000"])])
    assert {(scenario, variant) for scenario, variant, _ in runs} == {
        (s.name, v) for s in claims.scenarios_of(["000"]) for v in s.variants}
    for (scenario, variant, _), run_id in runs.items():
        tls = {load.condition.tls for load in store.loads(run_id)}
        assert tls == ({"none"} if variant == ERA else {"1.3"}), (scenario, variant)
    gathered = reproduce.gather(store, runs)
    rows = reproduce.evaluate(claims.claims_of(["000"]), gathered)
    seed000 = [c for c in claims.CLAIMS if c.seed == "000"]
    assert [(r.claim.key, r.variant) for r in rows] == [(c.key, v) for c in seed000 for v in (ERA, TODAY)]
    assert all(r.verdict in ("reproduced", "differs", "can't tell") and r.measured is not None for r in rows), \
        [(r.claim.key, r.variant, r.verdict) for r in rows]
    assert all(r.reason for r in rows if r.verdict != "reproduced")

    # Physics, in the direction it allows: TLS 1.3 adds a round trip to each of the two
    # connections before the first image (HTML, then the image's own connection).
    first = {r.variant: r.measured for r in rows if r.claim.key == "000-3-first-image"}
    assert first[TODAY].estimate - first[ERA].estimate > 1.5

    back = export.read(exported)  # what the doc is generated from is what the store holds (evidence aside)
    assert (back.seeds, back.quick, back.runs) == (("000",), True, runs)
    assert back.data == {name: Data({key: [replace(load, har=None, trace=None) for load in loads]
                                     for key, loads in data.loads.items()}, data.profiles, data.resources)
                         for name, data in gathered.items()}
    assert back.facts["command"] == "pagebench reproduce 000 --quick" and back.facts["link backend"] == "userspace"

    html = page.read_text()
    assert all(escape(claim.claim) in html for claim in seed000)
    assert {p.name for p in figures.iterdir()} >= {"fig-6-1.svg", "fig-6-2.svg", "fig-6-4.svg", "fig-3-2.svg"}
    assert nothing_left()
