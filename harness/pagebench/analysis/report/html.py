"""`report --html`: one run as a single HTML file a person can read at a glance, anywhere.

Everything is inline (CSS, SVG drawn by `charts`), with no script and nothing fetched, so
the file can be mailed, archived or opened offline. `gather` reads what the page shows
from the store (one query per table plus one per condition for the waterfall of its
median load, so large runs stay fast); `render` is a pure function of that. Statistics
skip flagged and failed loads and count them, as `summary` does; with one load a
median has no interval (it is shown missing, not as zero width).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from pathlib import Path
from typing import Any

from pagebench.analysis.report import charts
from pagebench.analysis import stats
from pagebench.analysis import encoding as encoding_mod
from pagebench.analysis.report.text import human_bytes, ms, proxy_line, proxy_settings
from pagebench.analysis.summary import (CONDITION_FIELDS, MIN_N, counts, is_default, key_of, shown, summarize,
                                        warnings)
from pagebench.core import encodings, modes
from pagebench.core.records import PlannedLoad
from pagebench.results.store import META_COLUMNS, Store

DASH = "—"
OTHER_MODE = "#555555"
#: A median's interval needs at least this many loads.
MIN_FOR_INTERVAL = 2
COUNTS = (("browser", "#332288"), ("link", "#44AA99"), ("server", "#DDAA33"))
TABLE_FIELDS = ("site", "mode", "topology", "profile", "cache", "tls")
#: Shown beside the TLS and cache only when a run has a value other than the default.
OPTIONAL_FIELDS = ("encoding", "version")
#: Bars of the encodings (Okabe-Ito, as the modes' colours): identity grey.
ENCODING_COLOURS = {"identity": "#999999", "gzip": "#E69F00", "br": "#56B4E9", "zstd": "#009E73", "dcz": "#CC79A7"}

Row = Mapping[str, Any]


@dataclass(frozen=True)
class _Condition:
    """A condition's summary (from `summarize`) with what the page adds to it."""

    summary: dict[str, Any]
    label: str
    used: tuple[Row, ...]  # ok, not flagged: the loads the statistics are made of
    flagged: tuple[Row, ...]
    median: float | None
    ci: stats.Interval | None  # None below MIN_FOR_INTERVAL loads
    iqr: float | None
    bound_ratio: float | None
    rtt_ms: float | None


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, as plain values read from the store (`gather`)."""

    run_id: str
    experiment: Mapping[str, Any]
    loads: Sequence[Row]
    plan: Sequence[PlannedLoad]
    profiles: Mapping[str, Any]  # profile name -> its fields
    link_checks: Sequence[Row]
    proxy_overheads: Sequence[Row]
    resources: Mapping[int, Sequence[Row]]  # load id -> its resources, for each median load
    #: Each condition against identity (`encoding.savings`), when the run has several encodings.
    encodings: Sequence[encoding_mod.EncodingSaving] = ()


def write_html_report(store: Store, run_id: str, path: Path) -> None:
    """Write the run's report to `path` (UTF-8). Raises UnknownRun for an unknown run."""
    path.write_text(render(gather(store, run_id)), encoding="utf-8")


def gather(store: Store, run_id: str) -> ReportData:
    """What `render` needs, read from the store."""
    loads = store.loads(run_id)
    plan = store.plan(run_id)
    profiles = {c["profile"]: c["profile_fields"] for c in store.conditions(run_id)}
    summary = summarize(run_id, loads, plan)
    medians = [_median_load(c) for c in _conditions(summary["conditions"], loads, profiles, ["mode"]) if c.used]
    savings: list[encoding_mod.EncodingSaving] = []
    if encoding_mod.several_encodings(item.condition for item in plan):  # reads every resource: only then
        savings = encoding_mod.savings(encoding_mod.loads_by_condition(loads, store.run_resources(run_id)))
    return ReportData(run_id, store.experiment(run_id), loads, plan, profiles, store.link_checks(run_id),
                      store.proxy_overheads(run_id), {load["id"]: store.resources(load["id"]) for load in medians},
                      savings)


def render(data: ReportData) -> str:
    """The page, from values only."""
    loads, profiles = data.loads, data.profiles
    experiment = data.experiment
    summary = summarize(data.run_id, loads, data.plan)
    varying = [f for f in CONDITION_FIELDS if len({str(c[f]) for c in summary["conditions"]}) > 1] or ["mode"]
    conditions = _conditions(summary["conditions"], loads, profiles, varying)
    overheads = data.proxy_overheads
    body = [
        _header(experiment, varying, summary),
        _section("Warnings", _warnings(warnings(summary)), "warnings"),
        _section("Conditions", _condition_table(conditions, varying) + _excluded(loads), "conditions"),
        _section("Protocols against each other", _mode_ratios(conditions), "ratios"),
        *([_section("Encodings against identity", _encodings(data.encodings), "encodings")]
          if data.encodings else []),
        _section("Link checks", _link_checks(data.link_checks), "link-checks"),
        *([_section("Edge-proxy overhead", _proxy_overheads(overheads), "proxy-overhead")] if overheads else []),
        _section("Load time", _distribution(conditions), "distributions"),
        _section("Load time against round-trip time", _against_rtt(conditions, varying, profiles), "rtt"),
        _section("Connections", _connections(conditions), "connections"),
        _section("Waterfalls of the median loads", _waterfalls(data.resources, conditions), "waterfalls"),
    ]
    title = f"pagebench run {data.run_id}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_CSS}</style></head>"
            f'<body><main>{"".join(body)}</main></body></html>\n')


# -- data ------------------------------------------------------------------------


def _key(row: Row) -> tuple[str, ...]:
    return key_of(row)


def _words(fields: Sequence[str], values: Sequence[Any], present: Iterable[str] = ()) -> str:
    """Values as a label: versions as `v2`; an identity encoding and version 1 left out
    unless the field is `present` (has another value somewhere in the run)."""
    keep = set(present)
    return " ".join(shown(f, v) for f, v in zip(fields, values) if f in keep or not is_default(f, v))


def _present(conditions: Sequence[_Condition]) -> list[str]:
    """The optional fields (encoding, version) some condition of the run has a non-default value of."""
    return [f for f in OPTIONAL_FIELDS if any(not is_default(f, c.summary[f]) for c in conditions)]


def _conditions(summaries: Sequence[dict[str, Any]], loads: Iterable[Row], profiles: Mapping[str, Any],
                varying: Sequence[str]) -> list[_Condition]:
    by_key: dict[tuple[str, ...], list[Row]] = {}
    for load in loads:
        if not load.get("warmup"):
            by_key.setdefault(_key(load), []).append(load)
    result = []
    for summary in summaries:
        rows = by_key.get(_key(summary), [])
        used = tuple(r for r in rows if counts(r) and r["load_ms"] is not None)
        times = [r["load_ms"] for r in used]
        rtt = (profiles.get(summary["profile"]) or {}).get("rtt_ms")
        result.append(_Condition(
            summary=summary,
            label=" ".join(shown(f, summary[f]) for f in varying),
            used=used,
            flagged=tuple(r for r in rows if r["ok"] and r["flagged"] and r["load_ms"] is not None),
            median=statistics.median(times) if times else None,
            ci=stats.median_ci(times) if len(times) >= MIN_FOR_INTERVAL else None,
            iqr=stats.iqr(times) if times else None,
            bound_ratio=(summary.get("load_over_bound") or {}).get("median"),
            rtt_ms=None if rtt is None else float(rtt),
        ))
    return result


def _median_load(condition: _Condition) -> Row:
    """The load whose time is the median (the lower of the middle two for even n)."""
    ordered = sorted(condition.used, key=lambda r: (r["load_ms"], r["seq"]))
    return ordered[(len(ordered) - 1) // 2]


# -- formatting ------------------------------------------------------------------


def _e(value: Any) -> str:
    return escape(DASH if value is None else str(value))


def _num(value: float | None) -> str:
    return DASH if value is None else charts.number(round(value, 3))


def _utc(epoch: float | None) -> str:
    if epoch is None:
        return DASH
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _section(title: str, content: str, anchor: str) -> str:
    return f'<section id="{anchor}"><h2>{escape(title)}</h2>{content}</section>'


def _figure(name: str, svg: str, caption: str, legend: str = "", condition: str | None = None) -> str:
    about = "" if condition is None else f' data-condition="{escape(condition)}"'
    return (f'<figure class="chart" data-chart="{escape(name)}"{about}>{svg}{legend}'
            f"<figcaption>{caption}</figcaption></figure>")


def _legend(entries: Iterable[tuple[str, str]]) -> str:
    """An HTML legend: (swatch markup, escaped text) pairs."""
    return '<ul class="legend">' + "".join(f"<li>{swatch}{text}</li>" for swatch, text in entries) + "</ul>"


def _chip(colour: str, opacity: float = 1.0) -> str:
    return f'<span class="chip" style="background:{colour};opacity:{opacity}"></span>'


def _mode_colour(mode: str) -> str:
    found = modes.BY_NAME.get(mode)
    return found.colour if found else OTHER_MODE


def _n_label(condition: _Condition) -> str:
    return f"{condition.label}  n={condition.summary['n']}"


# -- sections --------------------------------------------------------------------


def _header(experiment: Mapping[str, Any], varying: Sequence[str], summary: Mapping[str, Any]) -> str:
    status = str(experiment["status"])
    reason = experiment.get("reason")
    facts = [("status", f'<span class="status {escape(status)}">{escape(status)}</span>'
                        + (f" {escape(str(reason))}" if reason else "")),
             ("loads recorded / planned", f"{experiment['recorded']} / {experiment['planned']} (warm-ups included)"),
             ("created", escape(_utc(experiment["created_at"])))]
    constant = [f"{f} {summary['conditions'][0][f]}" for f in CONDITION_FIELDS
                if f not in varying and summary["conditions"] and not is_default(f, summary["conditions"][0][f])]
    if constant:
        facts.append(("every condition", escape(", ".join(constant))))
    proxy = proxy_settings(dict(experiment))
    if proxy is not None:  # which pool the proxied loads ran with: cold and warm differ by handshakes
        facts.append(("edge proxy", escape(proxy_line(proxy).removeprefix("edge proxy: "))))
    meta = dict(experiment.get("meta") or {})
    environment = [(key, meta.get(key) if experiment.get(key) is None else experiment[key]) for key in META_COLUMNS]
    environment += [(key, value) for key, value in meta.items()
                    if key not in META_COLUMNS and key not in ("notes", "proxy")]
    facts += [(key.replace("_", " "), _e(value if isinstance(value, (str, int, float)) or value is None
                                         else json.dumps(value)))
              for key, value in environment]
    notes = "".join(f"<li>{_e(note)}</li>" for note in meta.get("notes") or [])
    spec = "\n".join(f"{escape(str(key))}: {escape(json.dumps(value))}"
                     for key, value in (experiment.get("spec") or {}).items())
    return (f'<header><h1>pagebench run <span class="run">{_e(experiment["run_id"])}</span></h1>'
            '<p class="lede">Load times in ms from navigation start; medians with 95 % bootstrap intervals. '
            "Flagged and failed loads are left out of the statistics and counted.</p>"
            '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>"
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + f'<details open><summary>experiment spec</summary><pre class="spec">{spec}</pre></details></header>')


def _warnings(lines: Sequence[str]) -> str:
    if not lines:
        return f'<p class="ok">None: every condition has its planned loads and n ≥ {MIN_N}.</p>'
    return '<ul class="warnings">' + "".join(f"<li>{_e(line)}</li>" for line in lines) + "</ul>"


def _condition_table(conditions: Sequence[_Condition], varying: Sequence[str]) -> str:
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
        s, m = c.summary, c.summary["metrics"]
        load, ttfb = m["load_ms"], m["ttfb_ms"]
        few = ' class="few" title="n too small to tell"' if s["n"] < MIN_N else ""
        cells = [*(f'<td class="f">{_e(s[f])}</td>' for f in fields),
                 f"<td{few}>{s['n']}</td>", f"<td>{s['flagged'] or ''}</td>", f"<td>{s['failed'] or ''}</td>",
                 f"<td><b>{ms(load['median'])}</b></td>",
                 f"<td>{DASH if c.ci is None else f'{ms(c.ci.low)}–{ms(c.ci.high)}'}</td>",
                 f"<td>{ms(load['p90'])}</td>", f"<td>{ms(c.iqr)}</td>",
                 f"<td>{ms(ttfb['median'])}</td>", f"<td>{ms(ttfb['p90'])}</td>",
                 *(f"<td>{_num(m[f'connections_{way}']['median'])}</td>" for way, _ in COUNTS),
                 f"<td>{_num(m['cache_hits']['median'])}</td>", f"<td>{_num(m['requests']['median'])}</td>",
                 f"<td>{DASH if m['bytes']['median'] is None else escape(human_bytes(m['bytes']['median']))}</td>",
                 f"<td>{DASH if c.bound_ratio is None else f'{c.bound_ratio:.2f}×'}</td>"]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="scroll"><table class="numbers">{head}<tbody>{"".join(rows)}</tbody></table></div>'


def _excluded(loads: Iterable[Row]) -> str:
    """The measured loads left out of the statistics, each with its reason."""
    rows = [f"<tr><td>{load['seq']}</td><td class=\"f\">{_e(load['condition'])}</td>"
            f"<td class=\"f\">{'failed' if not load['ok'] else 'flagged'}</td>"
            f"<td class=\"f\">{_e('; '.join(map(str, [*load['errors'], *load['flags']])) or DASH)}</td></tr>"
            for load in loads if not load["warmup"] and (not load["ok"] or load["flagged"])]
    if not rows:
        return ""
    return ('<h3>Left out of the statistics</h3><div class="scroll"><table><thead><tr><th>seq</th>'
            f'<th>condition</th><th>why</th><th>detail</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>')


def _mode_ratios(conditions: Sequence[_Condition]) -> str:
    """Median load time of each mode over the first mode's (in the modes table's order,
    usually HTTP/1.0), per (site, topology, profile, cache, TLS), with a bootstrap 95 %
    interval (missing when either side has fewer than MIN_FOR_INTERVAL loads)."""
    groups: dict[tuple[str, ...], list[_Condition]] = {}
    fields = [f for f in CONDITION_FIELDS if f != "mode"]
    for c in conditions:
        if c.used:
            groups.setdefault(tuple(str(c.summary[f]) for f in fields), []).append(c)
    rows = []
    for key, members in groups.items():
        members.sort(key=lambda c: modes.rank(c.summary["mode"]))
        base = members[0]
        for other in members[1:]:
            ratio = stats.ratio_ci([r["load_ms"] for r in other.used], [r["load_ms"] for r in base.used])
            interval = (f"{ratio.low:.2f} – {ratio.high:.2f}"
                        if min(len(other.used), len(base.used)) >= MIN_FOR_INTERVAL else DASH)
            rows.append(f'<tr><td class="f">{_e(_words(fields, key, _present(conditions)))}</td>'
                        f'<td class="f">{_e(other.summary["mode"])} / {_e(base.summary["mode"])}</td>'
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


def _encodings(rows: Sequence[encoding_mod.EncodingSaving]) -> str:
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
            first = f'<td class="f" rowspan="{len(members)}">{_e(name)}</td>' if i == 0 else ""
            saved = ("<td>baseline</td><td></td><td></td>" if r.is_baseline else
                     f"<td>{_interval(r.saved_pct, lambda v: f'{v:.1f} %', r.n)}</td>"
                     f"<td>{_interval(r.measured_ms, ms, min(r.n, r.n_baseline))}</td>"
                     f"<td>{_interval(r.estimated_ms, ms, r.n)}</td>")
            note = r.reason or (f"{r.unmatched} responses without an identity one" if r.unmatched else "")
            body.append(f'<tr>{first}<td class="f">{_e(r.condition.encoding)}</td><td>{r.n}</td>'
                        f"<td>{_interval(r.bytes, human_bytes, r.n)}</td>{saved}"
                        f"<td>{_num(r.dictionary_offered)} / {_num(r.dictionary_used)}</td>"
                        f'<td>{_num(r.revalidated)}</td><td class="f">{_e(note) if note else ""}</td></tr>')
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
    names = [name for name in encodings.NAMES if any(r.condition.encoding == name for r in rows)]
    names += sorted({r.condition.encoding for r in rows} - set(names))
    bars = [charts.BarGroup(" ".join(shown(f, getattr(baseline, f)) for f in fields),
                            tuple(next((None if r.bytes is None else round(r.bytes.estimate / 1024, 1)
                                        for r in members if r.condition.encoding == name), None)
                                  for name in names))
            for baseline, members in groups]
    colours = [ENCODING_COLOURS.get(name, OTHER_MODE) for name in names]
    svg = charts.grouped_bars(bars, names, colours, "response bytes per load (KiB, median)")
    legend = _legend((_chip(colour), escape(name)) for name, colour in zip(names, colours))
    return table + _figure("encodings", svg, "Response bytes per load (bodies as sent) of each encoding.", legend)


def _proxy_overheads(rows: Sequence[Row]) -> str:
    cells = "".join(
        f'<tr><td class="f">{_e(r["site"])}</td><td class="f">{_e(r["mode"])}</td><td>{r["requests"]}</td>'
        f'<td>{_num(statistics.median(r["direct_ms"]))}</td><td>{_num(statistics.median(r["proxy_ms"]))}</td>'
        f'<td><b>{_num(r["per_request_ms"])}</b></td><td class="f">{_e(r.get("scheduling") or DASH)}</td></tr>'
        for r in rows)
    return ('<table class="numbers"><thead><tr><th>site</th><th>origin mode</th><th>requests</th>'
            '<th>direct load (ms)</th><th>proxied load (ms)</th><th>per request (ms)</th>'
            '<th>proxy scheduling</th></tr></thead>'
            f"<tbody>{cells}</tbody></table>"
            '<p class="note">Measured with this run: the page loaded cold with no added delay, directly and '
            "through the edge proxy alternately (medians of each); per request = difference / requests. "
            "Proxied loads above include this cost.</p>")


def _link_checks(checks: Sequence[Row]) -> str:
    if not checks:
        return '<p class="note">This run stored no link check (timeouts.link_check off?).</p>'
    rows = []
    for check in checks:
        result = check["result"]
        configured, measured = result.get("configured") or {}, result.get("measured") or {}
        rtt, late = measured.get("rtt_ms") or {}, result.get("lateness_us") or {}
        drops = result.get("drops") or {}
        problems = "; ".join(map(str, result.get("problems") or [])) or DASH
        cells = [f'<td class="f">{_e(check["profile"])}</td>', f'<td class="f">{_e(check["backend"])}</td>',
                 f"<td>{_num(configured.get('rtt_ms'))}</td>",
                 f"<td><b>{_num(check['rtt_median_ms'])}</b> / {_num(rtt.get('p95'))}</td>",
                 f"<td>{_num(configured.get('down_mbit'))} / {_num(configured.get('up_mbit'))}</td>",
                 f"<td><b>{_num(check['down_mbit'])}</b> / <b>{_num(check['up_mbit'])}</b></td>",
                 f"<td>{_num(configured.get('loss_pct'))}</td>", f"<td>{_num(check['loss_pct'])}</td>",
                 f"<td>{_num(late.get('p50'))} / {_num(check['lateness_p99_us'])} / {_num(late.get('max'))}</td>",
                 f'<td title="{_e(json.dumps(drops))}">{_num(sum(v for v in drops.values() if isinstance(v, int)))}'
                 "</td>",
                 f'<td class="{"ok" if check["valid"] else "bad"}">{"yes" if check["valid"] else "NO"}</td>',
                 f'<td class="f">{_e(problems)}</td>']
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ('<div class="scroll"><table class="numbers"><thead><tr><th rowspan="2">profile</th>'
            '<th rowspan="2">backend</th><th colspan="2">RTT (ms)</th><th colspan="2">rate down / up (Mbit/s)</th>'
            '<th colspan="2">loss (%)</th><th rowspan="2">lateness (µs)<br>p50 / p99 / max</th>'
            '<th rowspan="2">drops</th><th rowspan="2">valid</th><th rowspan="2">problems</th></tr>'
            "<tr><th>configured</th><th>measured median / p95</th><th>configured</th><th>measured goodput</th>"
            f'<th>configured</th><th>measured</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
            '<p class="note">Goodput is TCP payload: at most rate × 1448/1514. A link is valid when packets '
            "left at most 1 ms late (p99) and the kernel could hand every packet to the emulator.</p>")


def _no_data(what: str) -> str:
    return f'<p class="note">No {escape(what)}: the run has no usable load (with an RTT) yet.</p>'


def _distribution(conditions: Sequence[_Condition]) -> str:
    if not any(c.used for c in conditions):
        return _no_data("load times")
    strips = [charts.Strip(label=_n_label(c), colour=_mode_colour(c.summary["mode"]),
                           values=tuple(r["load_ms"] for r in c.used),
                           excluded=tuple(r["load_ms"] for r in c.flagged),
                           median=c.median,
                           low=None if c.ci is None else c.ci.low, high=None if c.ci is None else c.ci.high)
              for c in conditions]
    legend = _legend([
        ('<span class="dot"></span>', "one load"),
        ('<span class="tick"></span>', "median (value at the right)"),
        (_chip("#0072B2", 0.25), "95 % bootstrap interval of the median"),
        ('<span class="ring"></span>', "flagged load (left out)"),
        *((_chip(mode.colour), escape(mode.name)) for mode in modes.MODES
          if any(c.summary["mode"] == mode.name for c in conditions)),
    ])
    return _figure("distribution", charts.strip_plot(strips, "load time (ms)"),
                   "Every measured load of each condition, on one axis from 0 ms.", legend)


def _against_rtt(conditions: Sequence[_Condition], varying: Sequence[str], profiles: Mapping[str, Any]) -> str:
    placed = [c for c in conditions if c.used and c.rtt_ms is not None]
    if not placed:
        return _no_data("load time against RTT")
    fields = [f for f in varying if f != "profile"] or ["mode"]
    groups: dict[tuple[str, ...], list[_Condition]] = {}
    for c in placed:
        groups.setdefault(tuple(str(c.summary[f]) for f in fields), []).append(c)
    series = []
    looks: dict[tuple[str, str], int] = {}  # series already drawn in the same colour and dash
    for key, members in groups.items():
        mode, cache = members[0].summary["mode"], members[0].summary["cache"]
        same = looks[mode, cache] = looks.get((mode, cache), -1) + 1
        series.append(charts.Series(
            label=" ".join(shown(f, v) for f, v in zip(fields, key)), colour=_mode_colour(mode),
            dashed=cache == "warm",
            marker=charts.MARKERS[same % len(charts.MARKERS)],
            points=tuple(charts.Point(c.rtt_ms, c.median, None if c.ci is None else c.ci.low,
                                      None if c.ci is None else c.ci.high)
                         for c in members if c.rtt_ms is not None and c.median is not None)))
    names: dict[float, list[str]] = {}
    for c in placed:
        if c.summary["profile"] not in names.setdefault(c.rtt_ms, []):
            names[c.rtt_ms].append(c.summary["profile"])
    marks = {rtt: ", ".join(n) for rtt, n in names.items()}
    caption = "Median load time (whiskers: 95 % interval) against the profile's configured RTT."
    if len(marks) == 1:
        caption += f" This run has a single RTT ({_num(next(iter(marks)))} ms): one point per series."
    others = _differing(profiles[name] for rtt in names for name in names[rtt])
    if others:
        caption += f" The profiles also differ in {escape(', '.join(others))}, which this axis does not show."
    legend = _legend((charts.legend_swatch(s.colour, s.dashed, s.marker), escape(s.label)) for s in series)
    svg = charts.line_plot(series, "round-trip time of the profile (ms)", "median load time (ms)", marks)
    return _figure("rtt", svg, caption, legend)


def _differing(profiles: Iterable[Mapping[str, Any]]) -> list[str]:
    """Profile fields other than the RTT (and names) whose values differ between profiles."""
    listed = list(profiles)
    keys = sorted({k for p in listed for k in p} - {"rtt_ms", "name", "source"})
    return [k for k in keys if len({json.dumps(p.get(k)) for p in listed}) > 1]


def _connections(conditions: Sequence[_Condition]) -> str:
    if not any(c.used for c in conditions):
        return _no_data("connection counts")
    groups = [charts.BarGroup(_n_label(c), tuple(c.summary["metrics"][f"connections_{way}"]["median"]
                                                 for way, _ in COUNTS)) for c in conditions]
    svg = charts.grouped_bars(groups, [way for way, _ in COUNTS], [colour for _, colour in COUNTS],
                              "connections per load (median)")
    legend = _legend((_chip(colour), f"{way}") for way, colour in COUNTS)
    caption = ("Connections per load counted three ways: distinct CDP connection ids (browser), new TCP "
               "connections at the router (link), distinct nginx connections (server).")
    return _figure("connections", svg, caption, legend)


def _waterfalls(resources: Mapping[int, Sequence[Row]], conditions: Sequence[_Condition]) -> str:
    parts, missing = [], []
    for c in conditions:
        if c.used:
            load = _median_load(c)
            parts.append(_waterfall(c, load, resources[load["id"]]))
        else:
            missing.append(c.label)
    if missing:
        parts.append(f'<p class="note">No waterfall for {escape(", ".join(missing))}: no usable load.</p>')
    return ('<p class="note">Each row is one request of the condition\'s median load: light while waiting for '
            "the first byte (queueing, connecting, request), solid while receiving. The colour and the #number "
            "are the connection; grey rows used none (served from the cache).</p>" + "".join(parts))


def _lane(resource: Row, lanes: Mapping[int, int]) -> int | None:
    if resource["from_cache"] or resource["connection_id"] is None:
        return None
    return lanes[resource["connection_id"]]


def _waterfall(condition: _Condition, load: Row, resources: Sequence[Row]) -> str:
    lanes: dict[int, int] = {}  # connection id -> lane, numbered in order of first use
    for r in resources:
        if not r["from_cache"] and r["connection_id"] is not None:
            lanes.setdefault(r["connection_id"], len(lanes))
    colours = charts.lane_colours(len(lanes))
    spans = [charts.Span(label=f"{'cache' if lane is None else f'#{lane + 1}':<5} {_bare(r['url'])}",
                         title=f"{r['url']} ({r['protocol']})", lane=lane, start=r["start_ms"],
                         response_start=r["response_start_ms"], end=r["end_ms"])
             for r in resources for lane in [_lane(r, lanes)]]
    events = {name: load[key] for name, key in (("DCL", "dcl_ms"), ("load", "load_ms")) if load[key] is not None}
    svg = charts.waterfall(spans, colours, events, "ms from navigation start")
    by_origin: dict[tuple[str, str], list[int]] = {}  # (origin, protocol) -> its connections' lanes
    for r, span in zip(resources, spans):
        if span.lane is not None:
            found = by_origin.setdefault((_bare(r["origin"]), str(r["protocol"])), [])
            if span.lane not in found:
                found.append(span.lane)
    legend = _legend(
        [("", f"<b>{escape(origin)}</b>&nbsp;{escape(protocol)}: "
              + " ".join(f'<span class="lane">{_chip(colours[lane])}#{lane + 1}</span>' for lane in found))
         for (origin, protocol), found in by_origin.items()]
        + ([(_chip("#999"), "cache / no connection")] if any(s.lane is None for s in spans) else []))
    notes = "".join(f"<li>{_e(text)}</li>" for text in [*load["flags"], *load["notes"]])
    median = condition.summary["metrics"]["load_ms"]["median"]
    caption = (f"Load seq {load['seq']}, {ms(load['load_ms'])} ms "
               f"(median of n={condition.summary['n']}: {ms(median)} ms), "
               f"{_plural(len(resources), 'request')} over {_plural(len(lanes), 'connection')}."
               + (f'<ul class="notes">{notes}</ul>' if notes else ""))
    return f"<h3>{escape(condition.label)}</h3>" + _figure("waterfall", svg, caption, legend, condition.label)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _bare(url: str) -> str:
    """A URL or origin without its scheme: the host says enough, and rows stay short."""
    return str(url).removeprefix("https://").removeprefix("http://")


_CSS = """
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
