"""SQL the dashboards share: the chosen run, which loads count and which are left out, the
median with its distribution-free 95 % interval (with the text that explains it, for
descriptions), and a chart's medians per condition. Statistics follow `pagebench report`:
warm-up, flagged and failed loads never count; medians interpolate (percentile_cont)."""

from __future__ import annotations

from collections.abc import Sequence

from boards import conditions

#: The CTE `run`: the experiment of the dashboard's `run` variable.
RUN = """run AS (
  SELECT id FROM experiments WHERE run_id = '$run'
)"""

#: The loads (alias l) every statistic is made of.
USABLE = "NOT l.warmup AND l.ok AND NOT l.flagged"

#: The run variable's query: every run, newest first, so the newest is the default.
RUNS = """-- Every run, newest first: the newest is the default.
SELECT e.run_id AS __value,
       e.run_id || '  ' || coalesce(e.spec->>'name', '') || '  ' || left(coalesce(e.git_commit, ''), 12) AS __text
FROM experiments e
ORDER BY e.created_at DESC, e.id DESC"""

#: The CTE `excluded` (needs `run`): per condition, its measured loads left out, counted as
#: the report counts them.
EXCLUDED = """excluded AS (  -- measured loads left out, counted as the report counts them
  SELECT l.condition_id,
         count(*) FILTER (WHERE l.ok AND l.flagged) AS flagged,
         count(*) FILTER (WHERE NOT l.ok) AS failed
  FROM loads l JOIN run ON run.id = l.experiment_id
  WHERE NOT l.warmup
  GROUP BY l.condition_id
)"""


def median_interval(keys: Sequence[str]) -> str:
    """The CTEs `ranked`, `bounds` and `summary` over a CTE `samples(<keys>, value)`:
    per group of `keys`, n, the median, the 95 % interval's ends (ci_low, ci_high) and its
    exact coverage (see `INTERVAL`)."""
    listed = ", ".join(keys)
    of_b = ", ".join(f"b.{key}" for key in keys)
    return f"""ranked AS (    -- r: the rank of a sample among its group's n samples, 1..n
  SELECT {listed}, value,
         row_number() OVER (PARTITION BY {listed} ORDER BY value) AS r,
         count(*) OVER (PARTITION BY {listed}) AS n
  FROM samples
),
bounds AS (    -- the interval's ends as ranks: n/2 -/+ 1.96 sqrt(n)/2, clamped to 1..n
  SELECT DISTINCT {listed}, n,
         greatest(1, round(n / 2.0 - 0.98 * sqrt(n)))::int AS lo,
         least(n, round(1 + n / 2.0 + 0.98 * sqrt(n)))::int AS hi
  FROM ranked
),
summary AS (
  SELECT {of_b}, b.n,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY r.value) AS median,
         min(r.value) FILTER (WHERE r.r = b.lo) AS ci_low,
         min(r.value) FILTER (WHERE r.r = b.hi) AS ci_high,
         -- the exact coverage of [x(lo), x(hi)]: P(lo <= Binomial(n, 1/2) < hi)
         coalesce((SELECT sum(factorial(b.n) / (factorial(i) * factorial(b.n - i)))
                   FROM generate_series(b.lo, b.hi - 1) AS i), 0) / power(2::numeric, b.n) AS coverage
  FROM bounds b JOIN ranked r USING ({listed})
  GROUP BY {of_b}, b.n, b.lo, b.hi
)"""


#: What `median_interval` computes, for the descriptions of panels that show it.
INTERVAL = """**95 % interval of the median**, computed in SQL and distribution-free (order statistics):
sort a condition's n usable loads; the interval runs from the j-th to the k-th smallest, with
j = round(n/2 − 0.98·√n) and k = round(1 + n/2 + 0.98·√n), clamped to 1..n (0.98·√n is 1.96·√n/2:
the normal approximation to the binomial count of loads below the median). **coverage** is the
exact probability that [x(j), x(k)] holds the true median, Σ C(n,i)/2ⁿ for i = j..k−1: below 95 %
the interval is just min..max and n is too small to tell (n = 3: 75 %, n = 5: 94 %; 6 loads are
the fewest that reach 95 %). The medians interpolate like `pagebench report` (percentile_cont);
its bootstrap interval is a different method and agrees for larger n."""



def chart_medians(comment: str, medians: Sequence[tuple[str, str]]) -> str:
    """A chart's rows: per condition of the chosen run, its name (the protocol modes side
    by side) and the median of each (expression over loads l, column name) over its
    usable loads."""
    listed = ",\n       ".join(f'percentile_cont(0.5) WITHIN GROUP (ORDER BY {expression}) AS "{name}"'
                               for expression, name in medians)
    return f"""{comment}
WITH {RUN},
{conditions.varying()}
SELECT {conditions.chart_name()},
       {listed}
FROM conditions c
JOIN run ON run.id = c.experiment_id
CROSS JOIN varying v
JOIN loads l ON l.condition_id = c.id AND {USABLE}
GROUP BY {conditions.chart_group()}
ORDER BY {conditions.chart_order()}
"""
