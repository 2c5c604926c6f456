"""The two formats a CI job reads, written one way for every verdict pagebench gives
(`compare`'s regressions, a run's budgets): a markdown table for a job summary or a
pull-request comment, and a JUnit XML suite for test reporters."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr


@dataclass(frozen=True)
class Case:
    """One JUnit test case: passed, failed (`failure`: the message) or skipped (`skipped`: why)."""

    name: str
    failure: str | None = None
    skipped: str | None = None
    detail: str = ""  # the failure's text: the verdict's row


def junit(suite: str, classname: str, cases: Sequence[Case]) -> str:
    """A JUnit XML suite of the cases."""
    lines = []
    for case in cases:
        body = ""
        if case.failure is not None:
            body = f"<failure message={quoteattr(case.failure)}>{escape(case.detail)}</failure>"
        elif case.skipped is not None:
            body = f"<skipped message={quoteattr(case.skipped)}/>"
        lines.append(f"  <testcase classname={quoteattr(classname)} name={quoteattr(case.name)}>{body}</testcase>")
    failures = sum(case.failure is not None for case in cases)
    skipped = sum(case.failure is None and case.skipped is not None for case in cases)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuite name="{escape(suite)}" tests="{len(cases)}" failures="{failures}" skipped="{skipped}" '
            'errors="0">\n' + "".join(line + "\n" for line in lines) + "</testsuite>\n")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table's lines (a `|` in a cell escaped)."""
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)]
