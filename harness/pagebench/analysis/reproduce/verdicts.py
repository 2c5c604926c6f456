"""`pagebench reproduce`'s answer: the catalogue (`claims`) evaluated on stored runs.

`gather` reads the runs of each scenario (which runs: the mapping the CLI kept while it
ran them, or the latest stored ones) into `measures.Data`; `evaluate` gives one `Row` per
claim and variant, with the measured value's 95 % interval, the verdict and, where the
verdict is not "reproduced", the reason in one line; `html` draws the seeds' figures
from the same data. Read-only: it never runs anything.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from rich.markup import escape as escape_markup
from rich.table import Table

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import document, figure, legend, section
from pagebench.analysis.reproduce.claims import Claim
from pagebench.analysis.reproduce.measures import Data, sweep_cells, throughput, transfer_bytes
from pagebench.analysis.reproduce.scenarios import ERA, SCENARIO_BY_NAME, TODAY, VARIANT_NOTES
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core import encodings, modes
from pagebench.results.rows import RunRow
from pagebench.results.store import Store

#: (scenario, variant, run label) -> run id
RunMap = dict[tuple[str, str, str], str]
#: Claims measured from the resources of a load, not only the load row.
NEEDS_RESOURCES = ("000-transfer", "000-first-image", "004-window", "001-files", "001-delta")
META_KEY = "reproduce"


@dataclass(frozen=True)
class Row:
    """One line of the answer: a claim in one variant."""

    claim: Claim
    variant: str
    measured: Interval | None
    verdict: str  # reproduced / differs / can't tell / no data
    reason: str

    def value(self) -> str:
        return "—" if self.measured is None else show(self.measured, self.claim.unit)


def show(value: Interval, unit: str) -> str:
    """`52 % [48, 55]`, `4.02 RTT [3.98, 4.05]`, `2.11 Mbit/s [2.09, 2.12]`."""
    if unit == "%":
        def f(x: float) -> str:
            return "?" if math.isnan(x) else f"{x * 100:.0f}"
        text, low, high, suffix = f(value.estimate), f(value.low), f(value.high), " %"
    else:
        def f(x: float) -> str:
            return "?" if math.isnan(x) else f"{x:.2f}"
        text, low, high, suffix = f(value.estimate), f(value.low), f(value.high), f" {unit}"
    if value.low == value.high == value.estimate:
        return text + suffix
    return f"{text}{suffix} [{low}, {high}]"


def gather(store: Store, runs: RunMap) -> dict[str, Data]:
    """Each scenario's measured loads: ok, unflagged, warm-ups excluded."""
    found: dict[str, Data] = {}
    for (scenario, variant, label), run_id in runs.items():
        data = found.setdefault(scenario, Data({}))
        loads = [load for load in store.loads(run_id) if load.ok and not load.flagged]
        if scenario in NEEDS_RESOURCES:
            for resource in store.run_resources(run_id):
                data.resources.setdefault(resource.load_id, []).append(resource)
        data.loads[(variant, label)] = loads
        for condition in store.conditions(run_id):
            data.profiles[condition.condition.profile] = condition.profile_fields
    return found


def latest_runs(store: Store, scenarios: Iterable[str]) -> RunMap:
    """The latest complete stored run of each scenario, variant and label (from the runs'
    `reproduce` meta), for re-reading a reproduction without running it again."""
    wanted, runs = set(scenarios), {}
    for listed in store.runs():
        if listed.status != "complete":
            continue
        meta = (listed.meta or {}).get(META_KEY)
        if not meta or meta.get("scenario") not in wanted:
            continue
        key = (meta["scenario"], meta["variant"], meta.get("label", ""))
        runs.setdefault(key, listed.run_id)
    return runs


def facts(store: Store, runs: RunMap, command: str, minutes: float) -> dict[str, str]:
    """What the HTML answer states about how it was measured: when, with what, how long."""
    ids = list(runs.values())
    first: RunRow | None = min((store.experiment(i) for i in ids), key=lambda e: e.created_at or 0, default=None)
    when = datetime.fromtimestamp(first.created_at if first is not None else time.time(), timezone.utc)
    found = {"measured": when.strftime("%Y-%m-%d %H:%M UTC"), "command": command,
             "runs": f"{len(ids)} ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})",
             "wall time": f"{minutes:.1f} min"}
    for key, name in (("git_commit", "commit"), ("chromium_version", "chromium"), ("nginx_version", "nginx"),
                      ("kernel", "kernel"), ("backend", "link backend")):
        if first is not None and getattr(first, key):
            found[name] = str(getattr(first, key))
    return found


def evaluate(claims: Sequence[Claim], data: Mapping[str, Data]) -> list[Row]:
    """One row per claim and variant, era first."""
    rows = []
    for claim in claims:
        scenario = SCENARIO_BY_NAME.get(claim.scenario)
        variants = scenario.variants if scenario else (ERA, TODAY)
        measured = {v: claim.measure(data[claim.scenario], v) if claim.scenario in data else None for v in variants}
        verdicts = {v: _verdict(claim, m) for v, m in measured.items()}
        for variant in variants:
            rows.append(Row(claim, variant, measured[variant], verdicts[variant],
                            _reason(claim, variant, measured, verdicts)))
    return rows


def _verdict(claim: Claim, measured: Interval | None) -> str:
    if measured is None:
        return "no data"
    if math.isnan(measured.low) or math.isnan(measured.high):
        return "can't tell"
    return claim.rule.verdict(measured)


def _reason(claim: Claim, variant: str, measured: Mapping[str, Interval | None], verdicts: Mapping[str, str]) -> str:
    verdict = verdicts[variant]
    if verdict == "reproduced":
        return ""
    if verdict == "no data":
        return "no usable loads (failed or flagged): see pagebench report"
    if verdict == "can't tell":
        return f"the interval straddles {claim.rule.reading or 'the range'}: more repetitions would tell"
    others = [v for v in measured if v != variant]
    contrast = ""
    if others and measured[others[0]] is not None:
        other = others[0]
        contrast = f"{other} {show(measured[other], claim.unit)} ({verdicts[other]}); "  # type: ignore[arg-type]
    return contrast + claim.why


# The terminal's table -------------------------------------------------------------------

HEADERS = ("seed", "claim", "paper", "variant", "measured (95 % CI)", "verdict", "why it differs")


def table_rows(rows: Sequence[Row]) -> list[list[str]]:
    return [[f"{r.claim.seed} {r.claim.section}", r.claim.claim, r.claim.paper, r.variant, r.value(), r.verdict,
             r.reason] for r in rows]


def markdown(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table (docs/reproductions.md)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"


VERDICT_STYLES = {"reproduced": "green", "differs": "yellow", "can't tell": "cyan", "no data": "red"}


def terminal_table(rows: Sequence[Row], title: str) -> Table:
    """The rows for the terminal, verdicts coloured."""
    table = Table(title=title, show_lines=False)
    for header in HEADERS:
        table.add_column(header, overflow="fold", no_wrap=header in ("variant", "verdict"))
    for row, cells in zip(rows, table_rows(rows)):
        style = VERDICT_STYLES.get(row.verdict)
        cells[5] = f"[{style}]{cells[5]}[/]" if style else cells[5]
        table.add_row(*(escape_markup(c) if i != 5 else c for i, c in enumerate(cells)))
    return table


# The HTML answer --------------------------------------------------------------------------


def html(rows: Sequence[Row], data: Mapping[str, Data], title: str, facts: Mapping[str, str]) -> str:
    """The rows and the seeds' figure shapes, self-contained (inline SVG, no script)."""
    body = [f"<h1>{escape(title)}</h1>",
            '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts.items())
            + "</dl>",
            section("Claims", _table(rows), "claims")]
    drawn = "".join(figure(f.name, f.svg, escape(f.caption), f.legend) for f in figures(data))
    body.append(section("The seeds' figures, measured", drawn or "<p>No scenario data.</p>", "figures"))
    notes = "".join(f"<li>{escape(seed)} {escape(variant)}: {escape(text)}</li>"
                    for (seed, variant), text in VARIANT_NOTES.items())
    body.append(section("Variants", f"<ul>{notes}</ul>", "variants"))
    return document(title, body, viewport=False)


@dataclass(frozen=True)
class Figure:
    """One of the seeds' figures as measured: an SVG, its caption, its HTML legend."""

    name: str
    svg: str
    caption: str
    legend: str = ""


def figures(data: Mapping[str, Data]) -> list[Figure]:
    """Every figure the scenarios' data can draw (`--html` embeds them, `--figures` writes
    each as an SVG file)."""
    return [*_latency_figures(data.get("000-latency"), "remote", "6-1", "6-2"),
            *_latency_figures(data.get("000-local"), "local", "6-4", None),
            *_throughput_figures(data.get("000-transfer")),
            *_sweep_figure(data.get("002-sweep")), *_pool_figure(data.get("004-pool")),
            *_modem_figure(data.get("001-files"))]


def _table(rows: Sequence[Row]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADERS)
    lines = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in table_rows(rows))
    return f'<table class="conditions"><thead><tr>{head}</tr></thead><tbody>{lines}</tbody></table>'


def _add(series: list[charts.Series], entries: list[tuple[str, str]], label: str, colour: str,
         points: list[charts.Point], dashed: bool) -> None:
    """One line of a figure and its legend entry (era dashed)."""
    series.append(charts.Series(label, colour, tuple(points), dashed))
    entries.append((charts.legend_swatch(colour, dashed), escape(label)))


def _median_point(x: float, values: list[float]) -> charts.Point | None:
    if not values:
        return None
    found = bootstrap_ci(lambda m: m, [values])
    return charts.Point(x, found.estimate, found.low, found.high)


def _latency_figures(data: Data | None, profile: str, small_fig: str, large_fig: str | None) -> list[Figure]:
    """Load time against N images per protocol (seed 000 figures 6-1, 6-2, 6-4); era dashed."""
    if data is None:
        return []
    out = []
    for kind, size, fig in (("small", 2544, small_fig), ("large", 45566, large_fig)):
        if fig is None:
            continue
        series, entries = [], []
        for variant in (ERA, TODAY):
            for mode in modes.MODES:
                points = []
                for load_n in sorted({int(site.rsplit("-n", 1)[1]) for l in data.loads.get((variant, ""), [])
                                      if (site := l.condition.site).startswith(f"seed000-{kind}-n")}):
                    values = [l.load_ms / 1000 for l in data.select(variant, mode=mode,
                                                                    site=f"seed000-{kind}-n{load_n}")
                              if l.load_ms is not None]
                    point = _median_point(load_n, values)
                    if point is not None:
                        points.append(point)
                if points:
                    _add(series, entries, f"{mode.name} {variant}", mode.colour, points, variant == ERA)
        if series:
            svg = charts.line_plot(series, "images on the page (N)", "load time (s)", {})
            out.append(Figure(f"fig-{fig}", svg, f"Like the seed's figure {fig}: load time against N {size}-byte "
                               f"images, {profile} profile, medians with 95 % intervals; era dashed.",
                               legend(entries)))
    return out


#: Seed 001 table 6-3's files: bytes as stored (the x of its figure here).
FILE_BYTES = {"a": 17545, "b": 6017, "c": 374144, "d": 97125}
#: The encodings of seed 001's table 6-3, drawn in the encodings table's colours.
MODEM_ENCODINGS = (encodings.IDENTITY, encodings.GZIP)


def _modem_figure(data: Data | None) -> list[Figure]:
    """Seed 001 table 6-3 as a figure: each file's load time on the modem, as stored and
    gzipped, against its size."""
    if data is None:
        return []
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    for variant in (ERA, TODAY):
        for encoding in MODEM_ENCODINGS:
            points = [point for f, size in sorted(FILE_BYTES.items(), key=lambda kv: kv[1])
                      for point in [_median_point(size / 1000, [l.load_ms / 1000 for l in data.select(
                          variant, site=f"seed001-{f}", profile="modem", encoding=encoding)
                          if l.load_ms is not None])] if point is not None]
            if points:
                _add(series, entries, f"{encoding.name} {variant}", encoding.colour, points, variant == ERA)
    if not series:
        return []
    svg = charts.line_plot(series, "file size as stored (KB)", "load time (s)", {})
    return [Figure("fig-001-6-3", svg, "Like the seed's table 6-3: files A-D over the 28.8 kbit/s modem, as stored "
                   "and gzipped, medians with 95 % intervals; era dashed. The paper's modem compressed the stored "
                   "files itself (V.42bis); this link does not.", legend(entries))]


def _throughput_figures(data: Data | None) -> list[Figure]:
    """One connection's throughput against transfer length (figures 3-2 and 3-3)."""
    if data is None:
        return []
    out = []
    for profile, fig, slug in (("remote", "3-2", "fig-3-2"), ("remote-mss536", "3-2 (536-byte MSS)", "fig-3-2-mss536"),
                               ("local", "3-3", "fig-3-3")):
        if profile not in data.profiles:
            continue
        series, entries = [], []
        sizes = sorted({transfer_bytes(l.condition.site) for loads in data.loads.values() for l in loads} - {0})
        for variant, colour in ((ERA, "#D55E00"), (TODAY, "#0072B2")):
            points = []
            for nbytes in sizes:
                found = throughput(data, variant, profile, nbytes, of_capacity=False)
                if found is not None:
                    points.append(charts.Point(math.log10(nbytes), found.estimate, found.low, found.high))
            if points:
                _add(series, entries, variant, colour, points, variant == ERA)
        if series:
            marks = {math.log10(n): f"{n / 1024:g} KB" for n in sizes}
            capacity = data.profiles[profile].get("down_mbit")
            svg = charts.line_plot(series, "transfer length (log10 bytes)", "throughput (Mbit/s)", marks)
            out.append(Figure(slug, svg, f"Like the seed's figure {fig}: one new connection's goodput "
                               f"against transfer length, {profile} ({capacity} Mbit/s link), HTTP/1.0.",
                               legend(entries)))
    return out


def _sweep_figure(data: Data | None) -> list[Figure]:
    if data is None:
        return []
    cells = sweep_cells(data, TODAY)
    if not cells:
        return []
    sites = sorted({site for site, _, _ in cells})
    profiles = list(dict.fromkeys(profile for _, profile, _ in cells))
    groups = [charts.BarGroup(_cell_name(data, profile), tuple(
        next((c.estimate * 100 for s, p, c in cells if s == site and p == profile), None) for site in sites))
        for profile in profiles]
    colours = charts.lane_colours(len(sites))
    svg = charts.grouped_bars(groups, sites, colours, "h2's cut of the cold load time against HTTP/1.1 (%)")
    swatches = legend((f'<span class="chip" style="background:{c}"></span>', escape(s)) for s, c in zip(sites, colours))
    return [Figure("sweep-002", svg, "Where seed 002's 21-42 % appears: h2 against HTTP/1.1 (keep-alive), today, "
                    "per RTT and bandwidth.", swatches)]


def _cell_name(data: Data, profile: str) -> str:
    fields = data.profiles[profile]
    return f"{fields['rtt_ms']:g} ms, {fields.get('down_mbit') or 0:g} Mbit/s"


def _pool_figure(data: Data | None) -> list[Figure]:
    """Load time against the pool size C (seed 004 figure 5(b)); HTTP/1.0 crosses the link
    on a connection per request whatever C is."""
    if data is None:
        return []
    series, entries = [], []
    for variant in (ERA, TODAY):
        for mode in (modes.HTTP10, modes.KEEPALIVE):
            points = []
            for label in data.labels(variant):
                size = int(label.removeprefix("C="))
                values = [l.load_ms / 1000 for l in data.select(variant, label, mode=mode)
                          if l.load_ms is not None]
                point = _median_point(math.log2(size), values)
                if point is not None:
                    points.append(point)
            if points:
                _add(series, entries, f"{mode.name} {variant}", mode.colour, points, variant == ERA)
    if not series:
        return []
    sizes = sorted({int(label.removeprefix("C=")) for _, label in data.loads})
    svg = charts.line_plot(series, "pool size C (log2)", "load time (s)", {math.log2(c): f"C={c}" for c in sizes})
    return [Figure("fig-5b", svg, "Like seed 004's figure 5(b): load time of 4 clients' pages against the warm "
                    "pool's size C (keep-alive), beside a connection per request (HTTP/1.0); era dashed.",
                    legend(entries))]

