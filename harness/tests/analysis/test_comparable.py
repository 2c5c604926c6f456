"""Unit: the comparability guard on runs stored through the store's own API (SQLite), and
through `pagebench compare` as CI calls it: refused with exit 2, one line per difference,
unless the difference's kind is allowed."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from pagebench.analysis import comparable
from pagebench.analysis.comparable import FACTS, KINDS, NotComparable, of_run
from pagebench.analysis.compare import CompareError
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.results.store import Store
from tests.helpers import CHECK, META, PROFILES, SPEC, fake_load, make_plan, pagebench

DOCS = Path(__file__).resolve().parents[3] / "docs" / "compare.md"


def stored(store: Store, run_id: str, *, meta: dict | None = None, profiles: dict | None = None,
           spec: dict | None = None, check: dict | None = CHECK, modes=(KEEPALIVE, H2), slower: float = 1.0) -> str:
    """A run of 5 loads per condition (the helpers' 4 conditions), its link check as given."""
    plan = make_plan(modes=modes, reps=5)
    store.create_experiment(run_id, SPEC | (spec or {}), META | (meta or {}), plan, PROFILES | (profiles or {}))
    if check is not None:
        store.add_link_check(run_id, "3g", check)
    for planned in plan:
        base = 1200.0 if planned.condition.mode is H2 else 2000.0
        result = fake_load(planned, slower * (base + 10 * planned.repetition + (planned.seq % 3)))
        store.record_loads(run_id, planned, [result], started_at=1_790_000_000.0 + planned.seq)
    return run_id


@pytest.fixture
def store(tmp_path):
    with Store(f"sqlite:///{tmp_path}/runs.sqlite") as opened:
        yield opened


def differences(store: Store, base: str, candidate: str) -> list[str]:
    return [str(d) for d in comparable.differences(of_run(store, base), of_run(store, candidate))]


def test_the_same_set_up_is_comparable_whatever_a_team_changes(store):
    stored(store, "a")
    # another spec name, budgets, host, commit, pagebench version, nginx, the loads themselves
    stored(store, "b", spec={"name": "other", "budgets": [{"max": 1}]}, slower=1.2,
           meta={"host": "runner-7", "git_commit": "abc1234", "pagebench_version": "0.2.0", "nginx_version": "1.25"})
    assert differences(store, "a", "b") == []
    assert comparable.check(of_run(store, "a"), of_run(store, "b")) == []


def test_every_difference_is_one_line_with_both_values(store):
    stored(store, "a")
    stored(store, "b", meta={"chromium_version": "chromium-headless-shell 141.0.7390.37", "kernel": "6.8.0-1017-azure",
                             "backend": "netem"},
           profiles={"cable": PROFILES["cable"] | {"rtt_ms": 40.0, "queue_bytes": 30_280}},
           spec={"clients": 2})
    assert differences(store, "a", "b") == [
        "chromium: base 131.0.6778.33, candidate chromium-headless-shell 141.0.7390.37",
        "kernel: base 6.1.0-18-amd64, candidate 6.8.0-1017-azure",
        "backend: base userspace, candidate netem",
        "profile cable rtt_ms: base 28, candidate 40",
        "profile cable queue_bytes: base unset, candidate 30280",
        "clients: base 1, candidate 2",
    ]
    with pytest.raises(NotComparable) as refused:
        comparable.check(of_run(store, "a"), of_run(store, "b"))
    first, *lines = str(refused.value).splitlines()
    assert first.startswith("runs a (base) and b (candidate) were not measured alike")
    assert first.endswith("--allow-different chromium,kernel,backend,conditions")
    assert lines == differences(store, "a", "b")
    assert isinstance(refused.value, CompareError)  # a PagebenchError: exit 2 (core/errors.py)


def test_allowed_kinds_are_compared_across_and_returned_to_be_said(store):
    stored(store, "a")
    stored(store, "b", meta={"kernel": "6.8.0-1017-azure"}, modes=(H2,))
    with pytest.raises(NotComparable, match=r"--allow-different conditions\n") as refused:
        comparable.check(of_run(store, "a"), of_run(store, "b"), {"kernel"})
    assert str(refused.value).splitlines()[1:] == ["modes: base h2 keepalive, candidate h2"]
    allowed = comparable.check(of_run(store, "a"), of_run(store, "b"), {"kernel", "conditions"})
    assert [str(d) for d in allowed] == ["kernel: base 6.1.0-18-amd64, candidate 6.8.0-1017-azure",
                                         "modes: base h2 keepalive, candidate h2"]


def test_a_failed_link_check_refuses_even_when_both_failed_alike(store):
    failed = CHECK | {"valid": False, "problems": ["release lateness p99 2300 µs > 1000 µs"]}
    stored(store, "good")
    stored(store, "bad", check=failed)
    stored(store, "bad2", check=failed)
    stored(store, "unchecked", check=None)
    assert differences(store, "good", "bad") == [
        "link check: base passed, candidate failed: 3g (release lateness p99 2300 µs > 1000 µs)"]
    assert len(differences(store, "bad", "bad2")) == 1
    assert differences(store, "good", "unchecked") == ["link check: base passed, candidate not run"]
    assert comparable.check(of_run(store, "bad"), of_run(store, "bad2"), {"link-check"})[0].kind == "link-check"


def test_a_field_an_older_run_did_not_store_reads_as_its_default(store):
    """PROFILES has no rwnd_bytes, window_scaling... (stored before them): the defaults."""
    stored(store, "old")
    stored(store, "new", profiles={name: fields | {"rwnd_bytes": None, "window_scaling": True, "sack": True}
                                   for name, fields in PROFILES.items()})
    assert differences(store, "old", "new") == []


def test_devices_are_compared_by_what_they_do_not_by_their_calibration(store):
    """A preset's fields both runs stored are compared (the achieved CPU factor is the
    host's: never); a run stored before devices ran as desktop and has no fields to compare."""
    from pagebench.core.devices import DESKTOP
    from pagebench.yamlfiles import builtin_devices

    phone = builtin_devices().devices["moto-g-power"].fields()
    devices = {"desktop": DESKTOP.fields(), "moto-g-power": phone}
    stored(store, "old")
    stored(store, "new", meta={"devices": {"desktop": DESKTOP.fields()}})
    assert differences(store, "old", "new") == []
    stored(store, "a", meta={"devices": devices | {"moto-g-power": phone | {"calibration": {"achieved": 4.1}}}})
    stored(store, "b", meta={"devices": devices | {"moto-g-power": phone | {"calibration": {"achieved": 3.6}}}})
    assert differences(store, "a", "b") == []
    stored(store, "c", meta={"devices": devices | {"moto-g-power": phone | {"cpu_slowdown": 6.0, "width": 360}}})
    assert differences(store, "a", "c") == ["device moto-g-power width: base 412, candidate 360",
                                            "device moto-g-power cpu_slowdown: base 4, candidate 6"]


def test_allow_different_vocabulary():
    assert comparable.parse_allowed("kernel, chromium") == {"kernel", "chromium"}
    assert comparable.parse_allowed(None) == frozenset()
    with pytest.raises(CompareError, match=r"^--allow-different: unknown 'kernels'; allowed: chromium, kernel, "
                                           r"backend, link-check, conditions$"):
        comparable.parse_allowed("kernels")


def test_the_docs_table_lists_every_fact_and_kind():
    text = DOCS.read_text()
    for fact in FACTS:
        assert re.search(rf"^\| `{re.escape(fact.name)}` \| `{fact.kind}` \| {re.escape(fact.source)} \|", text,
                         re.MULTILINE), fact.name
    for kind in KINDS:
        assert f"`{kind}`" in text


# Through the CLI, as CI calls it ---------------------------------------------------------


def test_compare_refuses_runs_not_measured_alike_unless_allowed(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.sqlite"
    with Store(url) as store:
        stored(store, "base")
        stored(store, "cand", meta={"kernel": "6.8.0-1017-azure"},
               profiles={"3g": PROFILES["3g"] | {"loss_pct": 1.0}})
    refused = pagebench("compare", "base", "cand", "--db", url)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        "error: runs base (base) and cand (candidate) were not measured alike; re-measure the baseline, or "
        "compare anyway with --allow-different kernel,conditions",
        "kernel: base 6.1.0-18-amd64, candidate 6.8.0-1017-azure",
        "profile 3g loss_pct: base 0, candidate 1",
    ]
    partly = pagebench("compare", "base", "cand", "--db", url, "--allow-different", "kernel")
    assert partly.returncode == 2 and partly.stderr.splitlines()[1:] == ["profile 3g loss_pct: base 0, candidate 1"]
    allowed = pagebench("compare", "base", "cand", "--db", url, "--allow-different", "kernel,conditions")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stderr.splitlines() == [
        "warning: compared across a difference (--allow-different kernel): kernel: base 6.1.0-18-amd64, "
        "candidate 6.8.0-1017-azure",
        "warning: compared across a difference (--allow-different conditions): profile 3g loss_pct: base 0, "
        "candidate 1"]
    assert "no regression" in allowed.stdout
    helped = pagebench("compare", "--help", env={"COLUMNS": "400"})
    assert f"comma-separated: {', '.join(KINDS)} (refused otherwise)" in " ".join(helped.stdout.split())
    typo = pagebench("compare", "base", "cand", "--db", url, "--allow-different", "kernal")
    assert typo.returncode == 2 and typo.stderr.splitlines() == [
        "error: --allow-different: unknown 'kernal'; allowed: chromium, kernel, backend, link-check, conditions"]


def test_compare_says_what_its_n_could_tell(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.sqlite"
    with Store(url) as store:
        stored(store, "base")
        stored(store, "same")
    result = pagebench("compare", "base", "same", "--db", url, "--markdown")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| demo ")]
    assert len(rows) == 4
    # 4 conditions at 5 loads each: Holm asks p < 0.05 / 4 of a lone regression; 2/252 is below it
    assert all(re.search(r"\| 5 loads each: slowdowns under [\d.]+% cannot be told \|", row) for row in rows), rows


def test_a_replaced_fact_is_a_difference(store):
    """`differences` compares the store's rows as read: a changed RunRow is enough."""
    stored(store, "a")
    base = of_run(store, "a")
    moved = replace(base, run=replace(base.run, backend=None))
    assert [str(d) for d in comparable.differences(base, moved)] == ["backend: base userspace, candidate unknown"]
