"""`pagebench reproduce` end to end: seed 000's scenarios run in the real lab, in their
variants (era, today, the cleartext control), every seed-000 claim gets its rows (about 6
minutes), and its export holds exactly what the store gives; an interrupted reproduction
resumed (about 30 s)."""

from __future__ import annotations

from dataclasses import replace
from html import escape

import pytest

from pagebench.analysis.reproduce import claims, export, verdicts as reproduce
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import CLEARTEXT, ERA, SCENARIO_BY_NAME, TODAY
from pagebench.results.store import Store
from pagebench.runner import reproduce as runner
from pagebench.runner.prepare import Prepared, prepare
from pagebench.system.places import TAG_ENV

from tests.helpers import needs_root, nothing_left, pagebench

pytestmark = needs_root


def test_reproduce_000_quick_answers_every_seed_000_claim_in_each_variant(tmp_path):
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
        assert tls == ({"1.3"} if variant == TODAY else {"none"}), (scenario, variant)
    gathered = reproduce.gather(store, runs)
    rows = reproduce.evaluate(claims.claims_of(["000"]), gathered, reproduce.levels(store, runs))
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

    back = export.read(exported)  # what the doc is generated from is what the store holds (evidence aside)
    assert (back.seeds, back.quick, back.runs) == (("000",), True, runs)
    assert back.data == {name: Data({key: [replace(load, har=None, trace=None, frames=None) for load in loads]
                                     for key, loads in data.loads.items()}, data.profiles, data.resources)
                         for name, data in gathered.items()}
    assert back.facts["command"] == "pagebench reproduce 000 --quick" and back.facts["link backend"] == "userspace"

    html = page.read_text()
    assert all(escape(claim.claim) in html for claim in seed000)
    assert {p.name for p in figures.iterdir()} >= {"fig-6-1.svg", "fig-6-2.svg", "fig-6-3.svg", "fig-6-4.svg",
                                                   "fig-3-2.svg", "fig-3-2-mss536.svg", "fig-3-3.svg"}
    assert nothing_left()


def _tiny(name: str, repetitions: int) -> Prepared:
    return prepare({"name": name, "sites": ["seed000-small-n1"], "modes": ["h2"], "seed": 5,
                    "profiles": [{"name": "r5", "rtt_ms": 5}], "repetitions": repetitions, "warmup": 0,
                    "timeouts": {"link_check": False}}, name)


def test_an_interrupted_reproduction_keeps_its_complete_runs_resumes_the_interrupted_and_starts_the_rest(
        tmp_path, monkeypatch, session_tag):
    """Three tiny runs (about 30 s): interrupted at run b's first load, then resumed."""
    monkeypatch.setenv(TAG_ENV, session_tag)  # the labs built in this process are the session's
    a, b, c = ("000-first-image", ERA, "a"), ("000-first-image", ERA, "b"), ("000-first-image", TODAY, "")
    planned = [(a, _tiny("a", 2)), (b, _tiny("b", 3)), (c, _tiny("c", 2))]
    store = Store(f"sqlite:///{tmp_path}/answer.sqlite")

    def interrupting(done, total, load, result, status):
        if result is not None and done == 3:  # run b's first load is recorded: Ctrl-C
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.reproduce(store, planned, interrupting, about={"seeds": ["000"], "quick": True})
    found = reproduce.stored_reproduction(store)
    assert (set(found.runs), found.seeds, found.quick) == ({a, b}, ["000"], True)
    assert [store.experiment(found.runs[k]).status for k in (a, b)] == ["complete", "interrupted"]
    kept = [load.id for load in store.loads(found.runs[a])]

    shown: list[tuple[int, int]] = []
    ids = runner.reproduce(store, planned, lambda done, total, *_: shown.append((done, total)),
                           reproduction=found.reproduction, stored=found.runs)
    assert (ids[a], ids[b]) == (found.runs[a], found.runs[b]) and ids[c] not in found.runs.values()
    assert [load.id for load in store.loads(ids[a])] == kept  # complete: not run again
    assert [load.seq for load in store.loads(ids[b])] == [0, 1, 2]  # exactly the plan, its first load kept
    assert all(store.experiment(run).status == "complete" for run in ids.values())
    assert store.experiment(ids[c]).meta["reproduce"]["reproduction"] == found.reproduction
    assert shown[0][0] >= 2 and shown[-1] == (7, 7)  # the bar counts the whole reproduction
    assert nothing_left()
