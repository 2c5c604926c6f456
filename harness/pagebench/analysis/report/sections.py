"""The HTML report's sections that are text and tables: how the run was made, its
warnings, the conditions (from the one summary; a sharded run's also machine by machine),
the modes against each other, the encodings against identity, a corpus's pages, the link
checks and the edge proxy's overhead.
Pure: `gather`'s values in, markup out.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from pagebench.analysis import encoding as encoding_mod
from pagebench.analysis import pages as pages_mod
from pagebench.analysis import stats
from pagebench.analysis.report import charts
from pagebench.analysis.report.gather import MIN_FOR_INTERVAL, ConditionView
from pagebench.analysis.report.page import DASH, cell, chip, figure, legend, number, utc
from pagebench.analysis.report.text import device_lines, human_bytes, ms, proxy_line, proxy_settings, site_lines
from pagebench.analysis.summary import (
    CONDITION_FIELDS, MACHINE_ALPHA, MACHINE_METRIC, MIN_N, Summary, is_default, shown)
from pagebench.core import encodings, modes
from pagebench.results.rows import LinkCheckRow, ProxyOverheadRow, RunRow
from pagebench.results.schema import META_COLUMNS

#: The three ways connections are counted, and their colours.
COUNTS = (("browser", "#332288"), ("link", "#44AA99"), ("server", "#DDAA33"))
TABLE_FIELDS = ("site", "mode", "topology", "profile", "cache", "tls")
#: Shown beside the TLS and cache only when a run has a value other than the default.
OPTIONAL_FIELDS = ("encoding", "version", "device")


def _words(fields: Sequence[str], values: Sequence[Any], present: Iterable[str] = ()) -> str:
    """Values as a label: versions as `v2`; an identity encoding, version 1 and desktop left
    out unless the field is `present` (has another value somewhere in the run)."""
    keep = set(present)
    return " ".join(shown(f, v) for f, v in zip(fields, values) if f in keep or not is_default(f, v))


def _present(conditions: Sequence[ConditionView]) -> list[str]:
    """The optional fields (encoding, version, device) some condition of the run has a non-default value of."""
    return [f for f in OPTIONAL_FIELDS if any(not is_default(f, getattr(c.condition, f)) for c in conditions)]


def header(experiment: RunRow, summary: Summary) -> str:
    status = experiment.status
    reason = experiment.reason
    facts = [("status", f'<span class="status {escape(status)}">{escape(status)}</span>'
                        + (f" {escape(str(reason))}" if reason else "")),
             ("loads recorded / planned", f"{experiment.recorded} / {experiment.planned} (warm-ups included"
                                          + (f"; {experiment.stopped} stopped early: decisive before the cap)"
                                             if experiment.stopped else ")")),
             ("created", escape(utc(experiment.created_at)))]
    constant = summary.constant()
    if constant:
        facts.append(("every condition", escape(", ".join(constant))))
    proxy = proxy_settings(experiment)
    if proxy is not None:  # which pool the proxied loads ran with: cold and warm differ by handshakes
        facts.append(("edge proxy", escape(proxy_line(proxy).removeprefix("edge proxy: "))))
    facts += [("site", escape(line.removeprefix("site "))) for line in site_lines(experiment)]
    facts += [("device", escape(line.removeprefix("device "))) for line in device_lines(experiment)]
    meta = dict(experiment.meta or {})
    environment = [(key, meta.get(key) if value is None else value) for key, value in experiment.environment().items()]
    environment += [(key, value) for key, value in meta.items()
                    if key not in META_COLUMNS and key not in ("notes", "proxy", "sites", "devices")]
    facts += [(key.replace("_", " "), cell(value if isinstance(value, (str, int, float)) or value is None
                                           else json.dumps(value)))
              for key, value in environment]
    notes = "".join(f"<li>{cell(note)}</li>" for note in meta.get("notes") or [])
    spec = "\n".join(f"{escape(str(key))}: {escape(json.dumps(value))}"
                     for key, value in (experiment.spec or {}).items())
    return (f'<header><h1>pagebench run <span class="run">{cell(experiment.run_id)}</span></h1>'
            '<p class="lede">Load times in ms from navigation start; medians with 95 % bootstrap intervals. '
            "Flagged and failed loads are left out of the statistics and counted.</p>"
            '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + f'<details open><summary>experiment spec</summary><pre class="spec">{spec}</pre></details></header>')


def warnings(lines: Sequence[str]) -> str:
    if not lines:
        return f'<p class="ok">None: every condition has its planned loads and n ≥ {MIN_N}.</p>'
    return '<ul class="warnings">' + "".join(f"<li>{cell(line)}</li>" for line in lines) + "</ul>"


def condition_table(conditions: Sequence[ConditionView], varying: Sequence[str]) -> str:
    """One row per condition: the summary's statistics, the median's interval and IQR."""
    fields = [f for f in TABLE_FIELDS if f != "topology" or "topology" in varying]
    fields += _present(conditions)
    head = ("<thead><tr>" + "".join(f'<th rowspan="2">{f}</th>' for f in fields)
            + '<th rowspan="2">n</th><th rowspan="2">flagged</th><th rowspan="2">failed</th>'
            '<th colspan="4">load (ms)</th><th colspan="2">TTFB (ms)</th><th colspan="3">connections</th>'
            '<th rowspan="2">cache<br>hits</th><th rowspan="2">requests</th><th rowspan="2">bytes</th>'
            '<th rowspan="2" title="median of load_ms / bound_ms, the analytic lower bound">measured<br>/ bound</th>'
            "</tr><tr><th>median</th><th>95 % CI</th><th>p90</th><th>IQR</th>"
            "<th>median</th><th>p90</th><th>browser</th><th>link</th><th>server</th></tr></thead>")
    rows = []
    for c in conditions:
        s, m = c.summary, c.summary.metrics
        load, ttfb = m["load_ms"], m["ttfb_ms"]
        few = ' class="few" title="n too small to tell"' if s.n < MIN_N else ""
        cells = [*(f'<td class="f">{cell(getattr(s.condition, f))}</td>' for f in fields),
                 f"<td{few}>{s.n}</td>", f"<td>{len(s.flagged) or ''}</td>", f"<td>{len(s.failed) or ''}</td>",
                 f"<td><b>{ms(load.median)}</b></td>",
                 f"<td>{DASH if c.ci is None else f'{ms(c.ci.low)}–{ms(c.ci.high)}'}</td>",
                 f"<td>{ms(load.p90)}</td>", f"<td>{ms(c.iqr)}</td>",
                 f"<td>{ms(ttfb.median)}</td>", f"<td>{ms(ttfb.p90)}</td>",
                 *(f"<td>{number(m[f'connections_{way}'].median)}</td>" for way, _ in COUNTS),
                 f"<td>{number(m['cache_hits'].median)}</td>", f"<td>{number(m['requests'].median)}</td>",
                 f"<td>{DASH if m['bytes'].median is None else escape(human_bytes(m['bytes'].median))}</td>",
                 f"<td>{DASH if c.bound_ratio is None else f'{c.bound_ratio:.2f}×'}</td>"]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table class="numbers">{head}<tbody>{"".join(rows)}</tbody></table></div>'


def machines(conditions: Sequence[ConditionView]) -> str:
    """A sharded run's conditions machine by machine: each machine's n, its load median
    against the condition's (all machines'), its TTFB median; the machine a warning names
    marked. Conditions one machine measured are left out."""
    rows = []
    for c in conditions:
        machines, overall = c.summary.machine_medians(), c.median
        differs = c.summary.differing_machine()
        for i, (machine, its) in enumerate(machines.items()):
            load = its.medians["load_ms"]
            against = DASH if load is None or not overall else f"{load / overall - 1:+.1%}"
            marked = ' class="bad" title="differs from the others beyond noise: see the warnings"' if (
                differs is not None and differs.machine == machine) else ""
            first = f'<td class="f" rowspan="{len(machines)}">{cell(c.label)}</td>' if i == 0 else ""
            rows.append(f'<tr>{first}<td class="f"><span{marked}>{cell(machine)}</span></td><td>{its.n}</td>'
                        f"<td><b>{ms(load)}</b></td><td>{against}</td><td>{ms(its.medians['ttfb_ms'])}</td></tr>")
    return ('<div class="scroll"><table class="numbers"><thead><tr><th>condition</th><th>machine</th><th>n</th>'
            "<th>load median (ms)</th><th>against all</th><th>TTFB median (ms)</th></tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            '<p class="note">Each lab machine\'s used loads of each condition (the run was sharded). The intervals '
            "of the conditions' medians and of the modes against each other resample the machines, then the loads "
            "of each, so they carry how much the machines differ. "
            f"A machine whose {MACHINE_METRIC} differs from the others' beyond noise (Mann-Whitney against the "
            f"rest, Holm over the machines, p &lt; {MACHINE_ALPHA:g}) is marked and named in the warnings.</p>")


def excluded(summary: Summary) -> str:
    """The measured loads left out of the statistics, each with its reason, in load order."""
    left_out = sorted((row for c in summary.conditions for row in (*c.flagged, *c.failed)),
                      key=lambda row: (row.seq, row.client))
    rows = [f"<tr><td>{load.seq}</td><td class=\"f\">{cell(load.condition.key)}</td>"
            f"<td class=\"f\">{'failed' if not load.ok else 'flagged'}</td>"
            f"<td class=\"f\">{cell('; '.join(map(str, [*load.errors, *load.flags])) or DASH)}</td></tr>"
            for load in left_out]
    if not rows:
        return ""
    return ('<h3>Left out of the statistics</h3><div class="scroll"><table><thead><tr><th>seq</th>'
            f'<th>condition</th><th>why</th><th>detail</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def mode_ratios(conditions: Sequence[ConditionView]) -> str:
    """Median load time of each mode over the first mode's (in the modes table's order,
    usually HTTP/1.0), per (site, topology, profile, cache, TLS), with a bootstrap 95 %
    interval (missing when either side has fewer than MIN_FOR_INTERVAL loads; a sharded
    run's resamples its machines too)."""
    groups: dict[tuple[str, ...], list[ConditionView]] = {}
    fields = [f for f in CONDITION_FIELDS if f != "mode"]
    for c in conditions:
        if c.used:
            groups.setdefault(tuple(str(getattr(c.condition, f)) for f in fields), []).append(c)
    rows = []
    for key, members in groups.items():
        members.sort(key=lambda c: modes.rank(c.condition.mode))
        base = members[0]
        for other in members[1:]:
            ratio = stats.ratio_ci(other.summary.by_machine("load_ms"), base.summary.by_machine("load_ms"))
            interval = (f"{ratio.low:.2f} – {ratio.high:.2f}"
                        if min(len(other.used), len(base.used)) >= MIN_FOR_INTERVAL else DASH)
            rows.append(f'<tr><td class="f">{cell(_words(fields, key, _present(conditions)))}</td>'
                        f'<td class="f">{cell(other.condition.mode)} / {cell(base.condition.mode)}</td>'
                        f"<td><b>{ratio.estimate:.2f}</b></td><td>{interval}</td></tr>")
    if not rows:
        return '<p class="note">One mode per condition group: nothing to compare.</p>'
    extra = "".join(f", {f}" for f in _present(conditions))
    return (f'<table class="numbers"><thead><tr><th>site, topology, profile, cache, TLS{extra}</th><th>modes</th>'
            "<th>load-time ratio<br>of medians</th><th>95 % interval<br>(bootstrap)</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def _interval(value: stats.Interval | None, show: Any, n: int) -> str:
    """An estimate in bold with its interval (none below MIN_FOR_INTERVAL loads)."""
    if value is None:
        return DASH
    interval = f" <small>{escape(show(value.low))}–{escape(show(value.high))}</small>" if n >= MIN_FOR_INTERVAL else ""
    return f"<b>{escape(show(value.estimate))}</b>{interval}"


def encodings_against_identity(rows: Sequence[encoding_mod.EncodingSaving]) -> str:
    """Per group (everything but the encoding equal), each encoding against identity:
    bytes per load, the share saved, time saved measured and estimated by seed 001's model,
    dictionary use and 304s; and the bytes as bars."""
    fields = [f for f in CONDITION_FIELDS if f != "encoding"
              and len({str(getattr(r.condition, f)) for r in rows}) > 1] or ["mode"]
    groups = encoding_mod.grouped(rows)
    body = []
    for baseline, members in groups:
        name = " ".join(shown(f, getattr(baseline, f)) for f in fields)
        for i, r in enumerate(members):
            first = f'<td class="f" rowspan="{len(members)}">{cell(name)}</td>' if i == 0 else ""
            saved = ("<td>baseline</td><td></td><td></td>" if r.is_baseline else
                     f"<td>{_interval(r.saved_pct, lambda v: f'{v:.1f} %', r.n)}</td>"
                     f"<td>{_interval(r.measured_ms, ms, min(r.n, r.n_baseline))}</td>"
                     f"<td>{_interval(r.estimated_ms, ms, r.n)}</td>")
            note = r.reason or (f"{r.unmatched} responses without an identity one" if r.unmatched else "")
            body.append(f'<tr>{first}<td class="f">{cell(r.condition.encoding)}</td><td>{r.n}</td>'
                        f"<td>{_interval(r.bytes, human_bytes, r.n)}</td>{saved}"
                        f"<td>{number(r.dictionary_offered)} / {number(r.dictionary_used)}</td>"
                        f'<td>{number(r.revalidated)}</td><td class="f">{cell(note) if note else ""}</td></tr>')
    table = ('<div class="scroll"><table class="numbers"><thead><tr>'
             f'<th>{escape(", ".join(fields))}</th><th>encoding</th><th>n</th><th>bytes / load</th>'
             "<th>saved vs<br>identity</th><th>measured<br>saved (ms)</th>"
             '<th title="seed 001: each response\'s identity transfer time (first to last byte) × the share '
             'of its bytes saved, summed over the load">estimated<br>saved (ms)</th>'
             "<th>dictionary<br>offered / used</th><th>304s</th><th>note</th></tr></thead>"
             f'<tbody>{"".join(body)}</tbody></table></div>'
             '<p class="note">Medians per load (small: 95 % bootstrap interval). Bytes are response bodies as '
             "sent (encodedBodySize). Measured saved: median identity load time minus this encoding's, "
             "same site, mode, topology, profile, cache, TLS and version. Estimated saved: Mogul et al. 1997 "
             "(5.4), each response's transfer time under identity (first byte to last) times the share of its "
             "bytes this encoding saves, summed over the load; it leaves out round trips and CPU. Dictionary: "
             "requests that offered one (Available-Dictionary) and answers that used it (dcz), per load.</p>")
    present = [e for e in encodings.ENCODINGS if any(r.condition.encoding is e for r in rows)]
    names = [e.name for e in present]
    bars = [charts.BarGroup(" ".join(shown(f, getattr(baseline, f)) for f in fields),
                            tuple(next((None if r.bytes is None else round(r.bytes.estimate / 1024, 1)
                                        for r in members if r.condition.encoding is encoding), None)
                                  for encoding in present))
            for baseline, members in groups]
    colours = [e.colour for e in present]
    svg = charts.grouped_bars(bars, names, colours, "response bytes per load (KiB, median)")
    key = legend((chip(colour), escape(name)) for name, colour in zip(names, colours))
    return table + figure("encodings", svg, "Response bytes per load (bodies as sent) of each encoding.", key)


def proxy_overheads(rows: Sequence[ProxyOverheadRow]) -> str:
    cells = "".join(
        f'<tr><td class="f">{cell(r.site)}</td><td class="f">{cell(r.mode)}</td><td>{r.requests}</td>'
        f'<td>{number(statistics.median(r.direct_ms))}</td><td>{number(statistics.median(r.proxy_ms))}</td>'
        f'<td><b>{number(r.per_request_ms)}</b></td><td class="f">{cell(r.scheduling or DASH)}</td></tr>'
        for r in rows)
    return ('<table class="numbers"><thead><tr><th>site</th><th>origin mode</th><th>requests</th>'
            '<th>direct load (ms)</th><th>proxied load (ms)</th><th>per request (ms)</th>'
            '<th>proxy scheduling</th></tr></thead>'
            f"<tbody>{cells}</tbody></table>"
            '<p class="note">Measured with this run: the page loaded cold with no added delay, directly and '
            "through the edge proxy alternately (medians of each); per request = difference / requests. "
            "Proxied loads above include this cost.</p>")


def link_checks(checks: Sequence[LinkCheckRow]) -> str:
    if not checks:
        return '<p class="note">This run stored no link check (timeouts.link_check off?).</p>'
    rows = []
    for check in checks:
        result = check.result
        configured, measured = result.get("configured") or {}, result.get("measured") or {}
        rtt, late = measured.get("rtt_ms") or {}, result.get("lateness_us") or {}
        drops = result.get("drops") or {}
        problems = "; ".join(map(str, result.get("problems") or [])) or DASH
        cells = [f'<td class="f">{cell(check.profile)}</td>', f'<td class="f">{cell(check.backend)}</td>',
                 f"<td>{number(configured.get('rtt_ms'))}</td>",
                 f"<td><b>{number(check.rtt_median_ms)}</b> / {number(rtt.get('p95'))}</td>",
                 f"<td>{number(configured.get('down_mbit'))} / {number(configured.get('up_mbit'))}</td>",
                 f"<td><b>{number(check.down_mbit)}</b> / <b>{number(check.up_mbit)}</b></td>",
                 f"<td>{number(configured.get('loss_pct'))}</td>", f"<td>{number(check.loss_pct)}</td>",
                 f"<td>{number(late.get('p50'))} / {number(check.lateness_p99_us)} / {number(late.get('max'))}</td>",
                 f'<td title="{cell(json.dumps(drops))}">{number(sum(v for v in drops.values() if isinstance(v, int)))}'
                 "</td>",
                 f'<td class="{"ok" if check.valid else "bad"}">{"yes" if check.valid else "NO"}</td>',
                 f'<td class="f">{cell(problems)}</td>']
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ('<div class="scroll"><table class="numbers"><thead><tr><th rowspan="2">profile</th>'
            '<th rowspan="2">backend</th><th colspan="2">RTT (ms)</th><th colspan="2">rate down / up (Mbit/s)</th>'
            '<th colspan="2">loss (%)</th><th rowspan="2">lateness (µs)<br>p50 / p99 / max</th>'
            '<th rowspan="2">drops</th><th rowspan="2">valid</th><th rowspan="2">problems</th></tr>'
            "<tr><th>configured</th><th>measured median / p95</th><th>configured</th><th>measured goodput</th>"
            f'<th>configured</th><th>measured</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            '<p class="note">Goodput is TCP payload: at most rate × 1448/1514. A link is valid when packets '
            "left at most 1 ms late (p99) and the kernel could hand every packet to the emulator.</p>")


def pages(rows: Sequence[pages_mod.ModeAcross]) -> str:
    """A corpus run's pages: each mode across the pages (how many it speeds up, by how
    much), then each page with its traits, its medians and its ratio to the base mode."""
    lines = "".join(f"<li>{cell(row.line())}</li>" for row in rows)
    body = []
    for row in rows:
        for page in row.pages:
            ratio = page.ratio
            body.append(
                f'<tr><td class="f">{cell(", ".join(v for _, v in row.group) or DASH)}</td>'
                f'<td class="f">{cell(page.page)}</td><td>{page.traits.get("requests", DASH)}</td>'
                f'<td>{page.traits.get("origins", DASH)}</td><td>{cell(human_bytes(page.traits.get("bytes")))}</td>'
                f'<td class="f">{cell(row.mode)} / {cell(row.base)}</td>'
                f"<td>{cell(ms(page.mode_ms))} / {cell(ms(page.base_ms))}</td>"
                f"<td>{DASH if ratio is None else f'<b>{ratio.estimate:.2f}</b> <small>{ratio.low:.2f}–{ratio.high:.2f}</small>'}</td>"
                f"<td>{cell(page.verdict)}</td></tr>")
    return (f"<ul>{lines}</ul>"
            '<div class="scroll"><table class="numbers"><thead><tr><th>group</th><th>page</th><th>requests</th>'
            "<th>origins</th><th>bytes</th><th>modes</th><th>median load (ms)</th><th>ratio 95 % interval</th>"
            "<th>verdict</th></tr></thead><tbody>" + "".join(body) + "</tbody></table></div>")
