"""The frame every pagebench HTML page shares (the run report, `reproduce`'s answer): one
self-contained document with its CSS inline, sections, figures with HTML legends, and the
escaping and number formats the cells use. Pure: values in, markup out.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from html import escape
from typing import Any

from pagebench.analysis.report import charts

#: What a missing value shows.
DASH = "—"


def document(title: str, body: Iterable[str], viewport: bool = True) -> str:
    """A whole page: `title`, the CSS, the body's parts in a <main>."""
    meta = '<meta name="viewport" content="width=device-width, initial-scale=1">' if viewport else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">{meta}'
            f"<title>{escape(title)}</title><style>{CSS}</style></head>"
            f'<body><main>{"".join(body)}</main></body></html>\n')


def cell(value: Any) -> str:
    """A value as escaped text, DASH for None."""
    return escape(DASH if value is None else str(value))


def number(value: float | None) -> str:
    """A number as the charts print it (three decimals at most), DASH for None."""
    return DASH if value is None else charts.number(round(value, 3))


def utc(epoch: float | None) -> str:
    if epoch is None:
        return DASH
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def section(title: str, content: str, anchor: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>'


def figure(name: str, svg: str, caption: str, legend: str = "", condition: str | None = None) -> str:
    """A chart (`data-chart` names it, `data-condition` the condition it draws) with its
    legend and caption (markup: escape what it quotes)."""
    about = "" if condition is None else f' data-condition="{escape(condition)}"'
    return (f'<figure class="chart" data-chart="{escape(name)}"{about}>{svg}{legend}'
            f"<figcaption>{caption}</figcaption></figure>")


def legend(entries: Iterable[tuple[str, str]]) -> str:
    """An HTML legend: (swatch markup, escaped text) pairs."""
    return '<ul class="legend">' + "".join(f"<li>{swatch}{text}</li>" for swatch, text in entries) + "</ul>"


def chip(colour: str, opacity: float = 1.0) -> str:
    """A colour swatch for a legend."""
    return f'<span class="chip" style="background:{colour};opacity:{opacity}"></span>'


CSS = """
table.filmstrip { border-collapse: collapse; } table.filmstrip td, table.filmstrip th { padding: 2px 3px;
  text-align: center; vertical-align: top; font-weight: normal; }
table.filmstrip img, table.filmstrip .blank { width: 120px; height: auto; aspect-ratio: auto 16 / 9; display: block;
  border: 2px solid #eee; background: #fff; }
table.filmstrip td.changed img { border-color: #d60; } table.filmstrip small { color: var(--muted); }
:root { color-scheme: light; --ink: #222; --muted: #666; --line: #ddd; --warn: #8a5a00; --bad: #b00020; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink);
       background: #fff; }
main { max-width: 1200px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 2px solid var(--line);
     padding-bottom: 4px; } h3 { font-size: 15px; margin: 16px 0 6px; }
.run { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; }
.lede, .note, figcaption { color: var(--muted); }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 2px 20px; margin: 12px 0; }
.facts dt { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.facts dd { margin: 0 0 6px; font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px;
            overflow-wrap: anywhere; }
.status { padding: 1px 8px; border-radius: 9px; background: #eee; }
.status.complete { background: #d8f0dc; color: #11561f; } .status.running { background: #fff1c7; color: var(--warn); }
.status.interrupted, .status.failed { background: #fbd9dd; color: var(--bad); }
.spec { background: #f6f6f6; padding: 8px 10px; font-size: 12px; overflow-x: auto; }
.warnings li { color: var(--warn); } .ok { color: #11561f; } .bad { color: var(--bad); font-weight: bold; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12.5px; margin: 4px 0 8px; }
th, td { padding: 3px 6px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th { background: #f3f3f3; font-weight: 600; text-align: center; }
td.f { text-align: left; } .numbers td { font-variant-numeric: tabular-nums; }
td.few { color: var(--bad); font-weight: bold; }
tbody tr:nth-child(even) { background: #fafafa; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; } .pair figure.chart { margin-top: 0; }
figure.chart { margin: 12px 0 28px; } figure.chart svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 13px; margin-top: 4px; } figcaption ul.notes { margin: 4px 0; }
ul.legend { list-style: none; padding: 0; margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px 16px;
            font-size: 12px; }
ul.legend li { display: flex; flex-wrap: wrap; align-items: center; gap: 3px 5px; }
ul.legend svg { display: inline-block; }
.lane { white-space: nowrap; } .lane .chip { margin-right: 2px; vertical-align: -1px; }
.chip { display: inline-block; width: 14px; height: 10px; border-radius: 2px; }
.dot { display: inline-block; width: 7px; height: 7px; border-radius: 50%; background: #555; }
.ring { display: inline-block; width: 7px; height: 7px; border-radius: 50%; border: 1.5px solid #c00; }
.tick { display: inline-block; width: 3px; height: 14px; background: #333; }
"""
