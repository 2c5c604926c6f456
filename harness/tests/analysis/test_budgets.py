"""Unit: a run's budgets checked from its summary, and what the gate writes (the lines
before the run's last line, markdown, JUnit)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

from pagebench.analysis import budgets as gate
from pagebench.analysis.summary import summarize
from pagebench.core import modes
from pagebench.core.measure.budgets import parse_expression
from pagebench.core.records import Condition, PlannedLoad
from tests.helpers import load_row

H2 = Condition("s", modes.H2, "direct", "p", "cold", "1.3")
H1 = replace(H2, mode=modes.HTTP10)


def run(budgets: list[str]) -> gate.Checked:
    """Three h2 loads (load 1000-1200, lcp 700-900), three http1.0 loads (2000-2200, no
    lcp), and a planned warm condition with no load recorded."""
    rows = [load_row(H2, 1000.0 + 100 * i, lcp_ms=700.0 + 100 * i) for i in range(3)]
    rows += [load_row(H1, 2000.0 + 100 * i) for i in range(3)]
    rows += [load_row(H2, 9000.0, warmup=True, lcp_ms=9000.0)]  # a warm-up never counts
    plan = [PlannedLoad(0, replace(H2, cache="warm"), 0, False)]
    return gate.check_run(summarize("r1", rows, plan), [parse_expression(text) for text in budgets])


def test_lcp_ms_is_among_the_summary_s_metrics():
    [h2] = [c for c in summarize("r", [load_row(H2, 1000.0, lcp_ms=700.0 + i) for i in range(3)]).conditions]
    assert h2.metrics["lcp_ms"].median == 701.0 and h2.medians()["lcp_ms"] == 701.0


def test_each_condition_s_median_against_the_budgets_that_match_it():
    checked = run(["load_ms<=1500", "lcp_ms<=850@mode=h2", "load_ms<=1050@mode=h2,cache=warm"])
    found = {(c.condition.mode.name, c.condition.cache, c.metric): (c.median, c.limit, c.passed)
             for c in checked.checks}
    assert found == {
        ("h2", "cold", "load_ms"): (1100.0, 1500, True),
        ("h2", "cold", "lcp_ms"): (800.0, 850, True),
        ("h2", "warm", "lcp_ms"): (None, 850, False),
        ("http1.0", "cold", "load_ms"): (2100.0, 1500, False),
        ("h2", "warm", "load_ms"): (None, 1050, False),  # planned, nothing recorded: does not pass
    }
    assert [(c.condition.mode.name, c.condition.cache, c.metric) for c in checked.breached] == [
        ("http1.0", "cold", "load_ms"), ("h2", "warm", "load_ms"), ("h2", "warm", "lcp_ms")]  # the report's order
    assert checked.unmatched == ()


def test_all_within_and_a_budget_that_matches_nothing_is_said_not_passed():
    checked = run(["load_ms<=5000@cache=cold", "ttfb_ms<=100@mode=h3"])
    assert checked.breached == [] and len(checked.checks) == 2
    assert [b.expression for b in checked.unmatched] == ["ttfb_ms<=100@mode=h3"]
    assert gate.warnings(checked) == [
        "--budget 'ttfb_ms<=100@mode=h3': budget ttfb_ms<=100@mode=h3 matches no condition of run r1"]


def test_lines_markdown_and_junit_name_each_check():
    checked = run(["load_ms<=1500@cache=cold", "lcp_ms<=750@mode=h2", "bytes<=1@mode=h3"])
    assert gate.lines(checked) == [
        "budget breached: s http1.0 direct p cold tls1.3: load_ms median 2100 over the budget 1500 (n=3)",
        "budget ok: s h2 direct p cold tls1.3: load_ms median 1100 within the budget 1500 (n=3)",
        "budget breached: s h2 direct p cold tls1.3: lcp_ms median 800 over the budget 750 (n=3)",
        "budget breached: s h2 direct p warm tls1.3: lcp_ms: no value in 0 usable loads, budget 750 (n=0)"]
    text = gate.markdown(checked)
    assert text.splitlines()[0] == ("**pagebench run r1**, budgets: 3 of 4 breached: `load_ms` in "
                                    "`s http1.0 direct p cold tls1.3`, `lcp_ms` in `s h2 direct p cold tls1.3`, "
                                    "`lcp_ms` in `s h2 direct p warm tls1.3`")
    assert "| s h2 direct p cold tls1.3 | lcp_ms | 3 | 800 | 750 | breached |" in text.splitlines()
    assert text.splitlines()[-1] == ("- warning: --budget 'bytes<=1@mode=h3': budget bytes<=1@mode=h3 matches no "
                                     "condition of run r1")
    suite = ET.fromstring(gate.junit(checked))
    assert (suite.get("name"), suite.get("tests"), suite.get("failures"), suite.get("skipped")) == (
        "pagebench run r1 budgets", "5", "3", "1")
    cases = {case.get("name"): case for case in suite}
    failure = cases["s h2 direct p cold tls1.3 lcp_ms"].find("failure")
    assert failure is not None and failure.get("message") == "lcp_ms median 800 over the budget 750"
    assert list(cases["s h2 direct p cold tls1.3 load_ms"]) == []  # passed
    assert cases["--budget 'bytes<=1@mode=h3'"].find("skipped") is not None


def test_no_budget_writes_an_empty_gate():
    checked = run([])
    assert gate.lines(checked) == [] and gate.markdown(checked) == "**pagebench run r1**, budgets: none checked\n"
    assert ET.fromstring(gate.junit(checked)).get("tests") == "0"
