"""Unit: the regression gate's logic and its outputs, on the summaries of synthetic load rows."""

from __future__ import annotations

import dataclasses
import random
import statistics
from dataclasses import replace
import xml.etree.ElementTree as ET

import pytest

from pagebench.analysis import compare as compare_mod
from pagebench.analysis.compare import CompareError, Status, Verdict, junit, markdown
from pagebench.analysis.stats import mann_whitney
from pagebench.analysis.summary import summarize
from pagebench.core.encodings import GZIP, IDENTITY
from pagebench.core import modes
from pagebench.core.measure.budgets import parse_budgets, parse_expression
from pagebench.core.records import Condition
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store
from pagebench.yamlfiles import load_budgets
from tests.helpers import fill_sharded, load_row, pagebench

H2 = Condition("s", modes.H2, "direct", "p", "cold", "1.3")
H1 = replace(H2, mode=modes.HTTP10)


def loads(condition: Condition, times: list[float], **extra) -> list[LoadRow]:
    return [load_row(condition, t, **extra) for t in times]


def compare(base: list[LoadRow], candidate: list[LoadRow], **settings) -> compare_mod.Comparison:
    """Two runs' loads compared as the CLI compares runs: by their summaries."""
    return compare_mod.compare(summarize("base", base), summarize("candidate", candidate), **settings)


def noisy(center: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(center, center * 0.03) for _ in range(n)]


def test_the_medians_are_the_summarys_and_conditions_without_values_are_left_out():
    base = loads(H2, [300.0, 310.0, 320.0, 330.0, 340.0, 350.0]) + loads(H1, [None] * 6)
    result = compare(base, loads(H2, [400.0] * 6))
    [verdict] = result.verdicts  # http1.0 has no load time on either side: not compared
    summary = summarize("base", base)
    assert verdict.base_median == summary.conditions[-1].metrics["load_ms"].median == 325.0
    assert verdict.candidate_median == 400.0 and verdict.base == (300.0, 310.0, 320.0, 330.0, 340.0, 350.0)


def test_slower_and_significant_is_a_regression_small_or_noisy_is_not():
    base = loads(H2, noisy(300, 20, 1)) + loads(H1, noisy(900, 20, 2))
    slower = loads(H2, noisy(345, 20, 3)) + loads(H1, noisy(905, 20, 4))
    result = compare(base, slower)
    assert {v.condition.mode.name: str(v.status) for v in result.verdicts} == {"h2": "regression", "http1.0": "ok"}
    regression = result.regressions[0]
    assert regression.condition.mode.name == "h2" and regression.ratio == pytest.approx(1.15, abs=0.03)
    assert regression.delta > 0.8 and regression.p_holm < 0.001


def test_below_the_threshold_is_not_a_regression_even_when_significant():
    result = compare(loads(H2, [300.0 + i * 0.1 for i in range(20)]), loads(H2, [309.0 + i * 0.1 for i in range(20)]))
    assert result.verdicts[0].p_holm < 0.001 and str(result.verdicts[0].status) == "ok"  # +3 % < 5 %


def test_flagged_failed_and_warmup_loads_never_count():
    bad = loads(H2, [5000.0] * 10, flagged=True) + loads(H2, [5000.0] * 10, warmup=True)
    bad += [load_row(H2, None, ok=False)]
    result = compare(loads(H2, noisy(300, 10, 1)), loads(H2, noisy(300, 10, 2)) + bad)
    assert str(result.verdicts[0].status) == "ok" and len(result.verdicts[0].candidate) == 10


def test_too_few_loads_and_unmatched_conditions_are_said_not_judged():
    result = compare(loads(H2, [300.0] * 3) + loads(H1, [900.0] * 8), loads(H2, [600.0] * 3))
    statuses = {v.condition.mode.name: str(v.status) for v in result.verdicts}
    assert statuses == {"h2": "can't tell", "http1.0": "only in base"}
    with pytest.raises(CompareError, match="no condition of the candidate run matches"):
        compare(loads(H2, [300.0] * 8), loads(H1, [300.0] * 8))


def test_bad_arguments():
    with pytest.raises(CompareError, match="--metric: unknown metric 'speed'"):
        compare(loads(H2, [1.0] * 5), loads(H2, [1.0] * 5), metric="speed")
    with pytest.raises(CompareError, match="--alpha"):
        compare(loads(H2, [1.0] * 5), loads(H2, [1.0] * 5), alpha=1.5)


def test_budgets(tmp_path):
    path = tmp_path / "b.yaml"
    path.write_text("budgets:\n  - {metric: load_ms, max: 320, mode: h2}\n  - {max: 1, mode: h3}\n")
    budgets = load_budgets(path)
    result = compare(loads(H2, noisy(330, 10, 1)) + loads(H1, noisy(900, 10, 2)),
                     loads(H2, noisy(330, 10, 3)) + loads(H1, noisy(900, 10, 4)), budgets=budgets)
    statuses = {v.condition.mode.name: (str(v.status), v.budget) for v in result.verdicts}
    assert statuses == {"h2": ("regression", 320), "http1.0": ("ok", None)}
    assert result.regressions[0].reasons[-1].startswith("load_ms median 3") and "over the budget 320" in \
        result.regressions[0].reasons[-1]


def test_every_budget_is_checked_not_only_the_compared_metric():
    """A ttfb_ms, requests or lcp_ms budget breaks the gate that compares load_ms: the
    candidate's median of each metric against its own limit (the tightest that matches)."""
    base = loads(H2, noisy(300, 10, 1), ttfb_ms=100.0, lcp_ms=250.0) + loads(H1, noisy(900, 10, 2), ttfb_ms=100.0)
    candidate = loads(H2, noisy(300, 10, 3), ttfb_ms=180.0, lcp_ms=260.0) + loads(H1, noisy(900, 10, 4),
                                                                                 ttfb_ms=100.0)
    budgets = [parse_expression(text) for text in (
        "ttfb_ms<=150", "ttfb_ms<=400@mode=h2", "requests<=10", "lcp_ms<=255@mode=h2", "load_ms<=1000")]
    result = compare(base, candidate, budgets=budgets)
    by_mode = {v.condition.mode.name: v for v in result.verdicts}
    h2, h1 = by_mode["h2"], by_mode["http1.0"]
    assert (str(h2.status), h2.budget) == ("regression", 1000)  # the compared metric's limit is shown
    assert h2.reasons == ("ttfb_ms median 180 over the budget 150", "lcp_ms median 260 over the budget 255")
    assert (str(h1.status), h1.reasons) == ("ok", ())  # ttfb 100 and requests 6 within; no lcp budget for it
    assert str(compare(base, candidate, budgets=budgets[2:3]).verdicts[0].status) == "ok"  # requests 6 <= 10


def test_markdown_and_junit_name_the_regressions():
    result = compare(loads(H2, noisy(300, 20, 1)) + loads(H1, noisy(900, 20, 2)),
                     loads(H2, noisy(360, 20, 3)) + loads(H1, noisy(900, 20, 4)))
    text = markdown(result)
    assert text.splitlines()[0].endswith("1 regression: `s h2 direct p cold tls1.3`")
    assert sum(line.startswith("| s ") for line in text.splitlines()) == 2
    suite = ET.fromstring(junit(result))
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    [failure] = suite.findall("testcase/failure")
    assert "beyond 5%" in failure.get("message")


def test_a_rerun_with_half_its_loads_one_round_trip_slower_is_not_a_regression():
    """Seen in CI on this VM: the same code, a rerun two minutes later, seed000-large-n20 h2
    at 70 ms, half the loads one round trip slower. The median moved +5.6 % with p < 0.01,
    but its lower bound did not clear the threshold: no alarm. At +20 ms of RTT, one."""
    base = [666, 663, 664, 657, 664, 663, 661, 733, 668, 661, 660, 662, 658, 669, 666, 664, 668, 663, 663, 668]
    rerun = [675, 666, 667, 668, 666, 660, 742, 737, 732, 748, 731, 726]
    slower = [937, 890, 846, 838, 849, 857, 852, 840, 852, 848, 841, 849]
    verdict = compare(loads(H2, base), loads(H2, rerun)).verdicts[0]
    assert verdict.ratio > 1.05 and verdict.p_holm < 0.05  # what the point estimate alone would flag
    assert verdict.ratio_low < 1.05 and str(verdict.status) == "ok"
    regression = compare(loads(H2, base), loads(H2, slower)).verdicts[0]
    assert str(regression.status) == "regression" and regression.ratio_low > 1.2


def test_verdicts_are_frozen_and_their_statuses_are_members():
    result = compare(loads(H2, noisy(300, 20, 1)) + loads(H1, [900.0] * 3), loads(H2, noisy(360, 20, 3)))
    assert all(isinstance(v, Verdict) and isinstance(v.status, Status) for v in result.verdicts)
    assert {v.condition.mode.name: v.status for v in result.verdicts} == {
        "h2": Status.REGRESSION, "http1.0": Status.ONLY_IN_BASE}
    assert all(isinstance(v.base, tuple) and isinstance(v.candidate, tuple) and isinstance(v.reasons, tuple)
               for v in result.verdicts)
    verdict = result.verdicts[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.status = Status.OK  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.base = ()  # type: ignore[misc]
    assert [str(status) for status in Status] == [
        "ok", "regression", "improvement", "can't tell", "only in base", "only in candidate"]


def test_encodings_and_versions_are_compared_only_with_themselves():
    gzip = replace(H2, encoding=GZIP, version=2)
    base = loads(H2, noisy(300, 10, 1)) + loads(gzip, noisy(200, 10, 2))
    candidate = loads(replace(H2, encoding=IDENTITY, version=1), noisy(300, 10, 3)) + loads(gzip, noisy(260, 10, 4))
    budgets = load_budgets_from([{"max": 250, "encoding": "gzip", "version": 2}])
    result = compare(base, candidate, budgets=budgets)
    by_name = {v.name: v for v in result.verdicts}
    assert set(by_name) == {"s h2 direct p cold tls1.3", "s h2 direct p cold tls1.3 gzip v2"}
    assert str(by_name["s h2 direct p cold tls1.3"].status) == "ok"
    assert by_name["s h2 direct p cold tls1.3"].budget is None
    slower = by_name["s h2 direct p cold tls1.3 gzip v2"]
    assert str(slower.status) == "regression" and slower.budget == 250


def load_budgets_from(budgets: list[dict]) -> list:
    return parse_budgets({"budgets": budgets}, "budgets.yaml")


def test_every_tested_verdict_says_the_smallest_slowdown_its_n_could_tell():
    result = compare(loads(H2, noisy(300, 10, 1)) + loads(H1, noisy(900, 6, 2)),
                     loads(H2, noisy(300, 10, 3)) + loads(H1, noisy(900, 8, 4)))
    by_mode = {v.condition.mode.name: v for v in result.verdicts}
    h2, h1 = by_mode["h2"], by_mode["http1.0"]
    assert str(h2.status) == "ok" and 0.05 < h2.detectable < 0.2
    assert h2.resolution == f"10 loads each: slowdowns under {h2.detectable:.1%} cannot be told"
    assert h1.resolution.startswith("6/8 loads: slowdowns under ")
    assert [row[7] for row in compare_mod.rows(result)] == [h1.resolution, h2.resolution]  # the resolution column



@pytest.mark.parametrize("base,candidate,threshold", [
    (noisy(300, 10, 1), noisy(300, 10, 3), 0.05),  # the bound decides (6.2 %; the rank test alone: 1.2 %)
    (noisy(300, 5, 1), noisy(300, 5, 2), 0.0),  # the rank test decides (4.9 %; the bound: 4.4 %)
    ([300.0] * 8, [300.0] * 8, 0.05)])  # no spread: the threshold itself
def test_the_smallest_slowdown_is_where_the_gate_turns(base, candidate, threshold):
    """The candidate's loads, with their own spread, made just more than the figure slower
    than the base's median are a regression; just less, they are not."""
    told = compare(loads(H2, base), loads(H2, candidate), threshold=threshold).verdicts[0].detectable
    shape = [t / statistics.median(candidate) * statistics.median(base) for t in candidate]
    for factor, status in ((1 + told) * 1.001 + 1e-9, "regression"), ((1 + told) * 0.999, "ok"):
        again = compare(loads(H2, base), loads(H2, [t * factor for t in shape]), threshold=threshold).verdicts[0]
        assert str(again.status) == status, (factor, again)


def test_too_few_loads_for_the_exact_test_among_many_conditions_cannot_tell():
    """5 loads each: the exact test's smallest p is 2/252 = 0.0079: enough alone, not below
    0.05 / 8 = 0.00625 among 8 conditions (Holm), so no slowdown at all could be found."""
    alone = compare(loads(H2, noisy(300, 5, 1)), loads(H2, noisy(300, 5, 2))).verdicts[0]
    assert str(alone.status) == "ok" and alone.resolution.startswith("5 loads each: slowdowns under ")
    sites = [replace(H2, site=f"s{i}") for i in range(8)]
    many = compare([row for i, c in enumerate(sites) for row in loads(c, noisy(300, 5, i))],
                   [row for i, c in enumerate(sites) for row in loads(c, noisy(400, 5, 10 + i))])
    assert {str(v.status) for v in many.verdicts} == {"can't tell"}
    assert many.verdicts[0].reasons == (
        "5 loads each: no slowdown can be told: the exact test's smallest p at this n, 0.0079, is not below "
        "alpha 0.05 / 8 conditions (Holm)",)
    suite = ET.fromstring(junit(many))
    assert suite.get("skipped") == "8" and suite.get("failures") == "0"
    assert "no slowdown can be told" in suite.find("testcase/skipped").get("message")


def test_the_p_is_exact_at_small_n():
    """5 loads each, fully separated: p = 2 / C(10, 5) = 0.0079 exactly (the normal
    approximation said 0.012); the whole shift is a regression."""
    verdict = compare(loads(H2, [300.0, 301.0, 302.0, 303.0, 304.0]),
                      loads(H2, [400.0, 401.0, 402.0, 403.0, 404.0])).verdicts[0]
    assert verdict.p == pytest.approx(2 / 252) and verdict.delta == 1.0
    assert str(verdict.status) == "regression"


def test_a_comparison_is_reproducible():
    """The bootstrap is seeded: the same loads, the same bounds and verdicts, every time."""
    base, candidate = loads(H2, noisy(300, 12, 1)), loads(H2, noisy(318, 12, 2))
    assert compare(base, candidate) == compare(base, candidate)


# A run measured by several lab machines ---------------------------------------------------


def test_the_ratios_bounds_carry_a_sharded_sides_machines_and_one_machine_changes_nothing():
    """The candidate measured by lab-a and lab-b, lab-b 10 % slower: the ratio and the test
    are the pooled loads', its bounds wider (lab-b's share could have been more or less);
    one named machine is the run as before, bound for bound."""
    base = loads(H2, noisy(300, 30, 1))
    fast, slow = noisy(330, 15, 2), noisy(363, 15, 3)
    [pooled] = compare(base, loads(H2, fast + slow)).verdicts
    [sharded] = compare(base, loads(H2, fast, machine="lab-a") + loads(H2, slow, machine="lab-b")).verdicts
    assert (sharded.ratio, sharded.p, sharded.candidate) == (pooled.ratio, pooled.p, pooled.candidate)
    assert sharded.ratio_low < pooled.ratio_low and sharded.ratio_high > pooled.ratio_high
    assert compare(base, loads(H2, fast + slow, machine="lab-a")).verdicts == (pooled,)


def test_compare_warns_of_a_machine_that_differs_on_either_side(tmp_path):
    url = f"sqlite:///{tmp_path}/runs.sqlite"
    with Store(url) as store:
        fill_sharded(store, "base", slower=1.0)
        fill_sharded(store, "cand", slower=1.1)
    result = pagebench("compare", "base", "cand", "--db", url)
    assert result.returncode in (0, 1), result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2 and all(line.startswith("warning: candidate run cand: demo ") for line in warnings)
    # fill_sharded: h2's lab-a 1200 + 10 r (r even), lab-b 1.1 x 1200 + 10 r (r odd), 10 loads each
    p = mann_whitney([1320.0 + 10 * r for r in range(1, 20, 2)], [1200.0 + 10 * r for r in range(0, 20, 2)]).p
    assert ("warning: candidate run cand: demo h2 direct 3g cold tls1.3: machine lab-b's load_ms differs from "
            f"lab-a's (median 1420 vs 1290 ms, p = {p:.2g}): its loads may not be one sample with theirs") in warnings
