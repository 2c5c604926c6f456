"""Unit: budgets as written (a file, an expression, a spec's `budgets:`), what they match,
and a condition's medians checked against them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pagebench.core import modes
from pagebench.core.encodings import GZIP
from pagebench.core.measure.budgets import (Budget, BudgetError, check, parse_budgets, parse_expression, unmatched,
                                            unmatched_line)
from pagebench.core.records import METRICS, Condition
from pagebench.core.spec.model import SpecError, parse

H2 = Condition("modern", modes.H2, "direct", "cable", "cold", "1.3")
H1 = replace(H2, mode=modes.HTTP10)
ALLOWED = ", ".join(METRICS)


def test_an_expression_reads_as_the_file_entry_it_stands_for():
    budget = parse_expression("lcp_ms<=1200@mode=h2,profile=cable")
    assert budget.model_dump() == Budget(metric="lcp_ms", max=1200, mode="h2", profile="cable").model_dump()
    assert budget.expression == "lcp_ms<=1200@mode=h2,profile=cable"
    assert parse_expression(budget.expression).model_dump() == budget.model_dump()
    assert budget.origin == "--budget 'lcp_ms<=1200@mode=h2,profile=cable'"
    assert parse_expression(" load_ms <= 1500.5 ").model_dump() == Budget(max=1500.5).model_dump()
    assert parse_expression("bytes<=2e6@encoding=gzip,version=2").model_dump() == Budget(
        metric="bytes", max=2e6, encoding="gzip", version=2).model_dump()


@pytest.mark.parametrize(("text", "message"), [
    ("load_ms<1500", "want METRIC<=MAX[@FIELD=VALUE,...], e.g. load_ms<=1500@mode=h2,profile=cable"),
    ("<=1500", "want METRIC<=MAX"),
    ("load_ms<=1@mode", "want METRIC<=MAX"),
    ("speed<=3", f"metric: unknown metric 'speed'; allowed: {ALLOWED}"),
    ("load_ms<=fast", "max: Input should be a valid number"),
    ("load_ms<=0", "max: Input should be greater than 0"),
    ("load_ms<=1@mod=h2", "unknown field 'mod'; allowed: site, mode, topology, profile, cache, tls, encoding, "
                          "version, device"),
    ("load_ms<=1@mode=h4", "mode: unknown mode 'h4'; allowed: http1.0, "),
    ("load_ms<=1@mode=h2,mode=h3", "mode given twice"),
])
def test_a_bad_expression_is_one_line_naming_the_option_and_what_is_allowed(text, message):
    with pytest.raises(BudgetError) as caught:
        parse_expression(text)
    assert str(caught.value).startswith(f"--budget {text!r}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_budget_file_names_the_file_and_the_field():
    [first, second] = parse_budgets({"budgets": [{"metric": "ttfb_ms", "max": 200}, {"max": 1, "mode": "h3"}]},
                                    "b.yaml")
    assert (first.origin, second.origin) == ("b.yaml: budgets.0", "b.yaml: budgets.1")
    assert second.metric == "load_ms"  # the default metric
    for document, message in [
        ({"budgets": [{"max": 1}, {"metric": "speed", "max": 3}]}, f"b.yaml: budgets.1.metric: unknown metric 'speed'; "
                                                                   f"allowed: {ALLOWED}"),
        ({"budgets": [{"max": -1}]}, "b.yaml: budgets.0.max: Input should be greater than 0"),
        ({"budgets": [{"metric": "load_ms"}]}, "b.yaml: budgets.0.max: Field required"),
        ({"budgets": [{"max": 1, "maximum": 2}]}, "b.yaml: budgets.0.maximum: unknown field; allowed: metric, max, "),
        ({"limits": []}, "b.yaml: expected `budgets:` and a list of {metric, max, site, mode, ...}"),
        ([], "b.yaml: expected `budgets:`"),
    ]:
        with pytest.raises(BudgetError) as caught:
            parse_budgets(document, "b.yaml")
        assert str(caught.value).startswith(message), caught.value


def test_a_spec_s_budgets_are_the_same_model_and_say_where_they_were_written():
    spec = parse({"sites": ["modern"], "modes": ["h2"], "budgets": [{"max": 1500}, {"metric": "lcp_ms", "max": 1200,
                                                                                     "mode": "h2"}]}, "ci.yaml")
    assert [b.expression for b in spec.budgets] == ["load_ms<=1500", "lcp_ms<=1200@mode=h2"]
    assert [b.origin for b in spec.budgets] == ["ci.yaml: budgets.0", "ci.yaml: budgets.1"]
    assert parse({"sites": ["modern"], "modes": ["h2"]}, "ci.yaml").budgets == []
    for budget, message in [({"metric": "lcp", "max": 1}, f"ci.yaml: budgets.0.metric: unknown metric 'lcp'; "
                                                          f"allowed: {ALLOWED}"),
                            ({"max": 1, "colour": 2}, "ci.yaml: budgets.0.colour: unknown field; allowed: metric, max,")]:
        with pytest.raises(SpecError) as caught:
            parse({"sites": ["modern"], "modes": ["h2"], "budgets": [budget]}, "ci.yaml")
        assert str(caught.value).startswith(message), caught.value


def test_matching_every_set_field_equal_unset_fields_match_all():
    assert Budget(max=1).matches(H2) and Budget(max=1).matches(H1)
    assert Budget(max=1, mode="h2", cache="cold").matches(H2) and not Budget(max=1, mode="h2").matches(H1)
    assert Budget(max=1, mode="spdy").matches(H2)  # an alias is the mode it runs as
    assert not Budget(max=1, encoding="gzip").matches(H2) and Budget(max=1, encoding="gzip").matches(
        replace(H2, encoding=GZIP))
    assert Budget(max=1, version=1).matches(H2) and not Budget(max=1, version=2).matches(H2)
    phone = replace(H2, device="moto-g-power")
    assert Budget(max=1, device="desktop").matches(H2) and not Budget(max=1, device="desktop").matches(phone)
    assert parse_expression("tbt_ms<=300@device=moto-g-power").matches(phone)
    assert parse_expression("tbt_ms<=300@device=moto-g-power").expression == "tbt_ms<=300@device=moto-g-power"


def test_each_metric_against_its_tightest_matching_limit_in_the_report_s_order():
    budgets = [parse_expression(t) for t in ("load_ms<=1500", "load_ms<=1200@mode=h2", "ttfb_ms<=100@mode=http1.0",
                                             "requests<=20", "lcp_ms<=900")]
    medians = {"load_ms": 1300.0, "ttfb_ms": 90.0, "lcp_ms": None, "requests": 12}
    checks = check(budgets, H2, medians, n=5)
    assert [(c.metric, c.limit, c.median, c.passed) for c in checks] == [
        ("load_ms", 1200, 1300.0, False), ("lcp_ms", 900, None, False), ("requests", 20, 12, True)]
    assert [c.reason for c in checks] == ["load_ms median 1300 over the budget 1200",
                                          "lcp_ms: no value in 5 usable loads, budget 900",
                                          "requests median 12 within the budget 20"]
    assert check(budgets, H1, medians, n=5)[0].passed  # 1300 within 1500: the h2 limit is not http1.0's
    assert check([], H2, medians, n=5) == []
    assert check([Budget(max=1300)], H2, {"load_ms": 1300.0}, n=1)[0].passed  # at the limit is within


def test_a_budget_matching_no_condition_is_said():
    typo = parse_expression("load_ms<=1@mode=h3")
    assert unmatched([Budget(max=1), typo], [H2, H1]) == [typo]
    assert unmatched_line(typo, "r1") == ("--budget 'load_ms<=1@mode=h3': budget load_ms<=1@mode=h3 matches no "
                                          "condition of run r1")
