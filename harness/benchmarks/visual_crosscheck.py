"""Visual metrics cross-checked (issue 27, item 6): pagebench's SpeedIndex against
speedline-core (Lighthouse's implementation) on the same frames, and its CLS and TBT
(what the page's PerformanceObservers saw) against Chromium's own trace of the same load.

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/python harness/benchmarks/visual_crosscheck.py > table.md

Pages, each loaded cold ROUNDS times (rounds interleaved) with a full trace by pagebench's
own Driver, over HTTPS on loopback from one server in this process (every `.test` host
mapped to it; every response held back LATENCY_S plus its size at RATE, so late images
paint late): the built-in `modern` and `seed000-large-n12` sites, `article` (made here:
text first, a hero image without dimensions that pushes it down, an ad slot inserted by
script, hydration's long tasks), and two builds no one here made, from the npm registry:
swagger-ui-dist's app (its API description, which it fetches from petstore.swagger.io,
served from `petstore.test`) and reveal.js's demo deck.

Per load: pagebench's SpeedIndex (`visual.visual` of `visual.frames_of(trace)`, counted
from the main frame's navigationStart), and speedline-core's on the same trace events with
that navigationStart as its `timeOrigin`, exact (every frame's progress computed) and with
`fastMode` (Lighthouse's setting: frames between two similar ones interpolated); CLS from
the trace's LayoutShift events (session windows: 1 s gap, 5 s cap); TBT from the page's
renderer main thread's RunTask events (the thread that emitted navigationStart), beyond
50 ms after the trace's first contentful paint. Then, to tell which definitional
difference accounts for a SpeedIndex difference, pagebench's own code again with each of
speedline's choices in turn (white from 249, no colour slop, every changed frame a visual
change: `STEPS`).

Both count from the same instant: the main frame's navigationStart (pagebench's frames
start there; speedline is given it as `timeOrigin`, as Lighthouse does; by default it would
count from the trace's first event, which the table's last line says is ~0.1 s earlier).
speedline-core and the npm builds are installed once into CACHE, outside the repository;
`--keep DIR` copies the traces out, `--curves` prints both progress curves of each load.
Writes nothing into the repository.
"""

from __future__ import annotations

import argparse
import json
import mimetypes
import os
import shutil
import ssl
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from pagebench.core.measure import visual
from pagebench.core.records import RawLoad
from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.media import jpeg, png
from pagebench.lab.browser import Driver, Setup
from pagebench.lab.tls import Authority

ROUNDS = 5
#: SpeedIndex agrees when within this fraction of speedline's (the issue's 5 %).
SI_TOLERANCE = 0.05
#: Each response waits this long, plus its size at RATE bytes/s (20 Mbit/s), before it is sent.
LATENCY_S = 0.04
RATE = 2_500_000
SPEEDLINE = "speedline-core@1.4.3"
PACKAGES = {"swagger": "swagger-ui-dist@5.17.14", "reveal": "reveal.js@5.1.0"}
CACHE = Path(os.environ.get("PAGEBENCH_CROSSCHECK_CACHE", "/var/cache/pagebench/crosscheck"))

#: Runs speedline-core on each (trace file, navigationStart µs) given as JSON on stdin.
SPEEDLINE_JS = """
const speedline = require('speedline-core');
const fs = require('fs');
(async () => {
  const out = [];
  for (const job of JSON.parse(fs.readFileSync(0, 'utf-8'))) {
    const events = JSON.parse(fs.readFileSync(job.trace, 'utf-8')).traceEvents;
    const exact = await speedline(events, {timeOrigin: job.origin, fastMode: false, include: 'all'});
    const fast = await speedline(events, {timeOrigin: job.origin, fastMode: true, include: 'speedIndex'});
    out.push({si: exact.speedIndex, psi: exact.perceptualSpeedIndex, fast: fast.speedIndex,
              first: exact.first, complete: exact.complete,
              curve: exact.frames.map(f => [f.getTimeStamp() - exact.beginning, f.getProgress()])});
  }
  process.stdout.write(JSON.stringify(out));
})().catch(error => { console.error(error); process.exit(1); });
"""

Files = dict[str, dict[str, bytes]]  # host -> path -> body


@dataclass(frozen=True)
class Page:
    name: str
    url: str
    what: str


Load = tuple[Page, int, Path, RawLoad]  # the page, its round, its trace file, the load


# The pages ----------------------------------------------------------------------------


def _builtin(name: str, files: Files) -> str:
    """A built-in site's files into `files`; its URL."""
    site = builtin(name)
    for host_path, body in site.files.items():
        host, _, path = host_path.partition("/")
        files.setdefault(host, {})["/" + path] = body
    return site.entry


def _article(files: Files) -> str:
    """Text first; a hero image with no dimensions (the text moves down when it comes), an
    ad slot a script inserts above the text, then hydration: three long tasks; a large
    footer image holds `load` back until they are done (the capture ends after `load`)."""
    host = "article.test"
    paragraph = "<p>" + "Measured page loads need frames a person would see. " * 12 + "</p>\n"
    files[host] = {
        "/": ("<!doctype html><html><head><meta charset=utf-8><title>article</title><link rel=icon href='data:,'>"
              "<style>body{font:18px/1.5 serif;margin:0 auto;max-width:900px}h1{color:#234}</style></head><body>"
              "<h1>A story with a late hero</h1><img src='/hero.jpg' style='width:100%'>"
              "<div id=slot></div>" + paragraph * 6 +
              "<img src='/inline.png' width=300 height=200><script src='/hydrate.js' async></script>"
              "<img src='/footer.png' width=900 height=300></body></html>").encode(),
        "/hero.jpg": jpeg(400_000, 900, 300, "article/hero"),
        "/inline.png": png(120_000, 300, 200, "article/inline"),
        "/footer.png": png(2_000_000, 900, 300, "article/footer"),
        "/hydrate.js": (b"const busy = ms => { const end = performance.now() + ms; while (performance.now() < end) {} };\n"
                        b"setTimeout(() => { const ad = document.createElement('div');"
                        b" ad.style.cssText = 'height:120px;background:#c33'; document.getElementById('slot').append(ad);"
                        b" busy(120); setTimeout(() => busy(80), 30); setTimeout(() => busy(200), 120); }, 250);\n"),
    }
    return f"https://{host}/"


def _npm_pack(spec: str) -> Path:
    """The package's tarball, packed once into CACHE from the npm registry."""
    CACHE.mkdir(parents=True, exist_ok=True)
    name = spec.rsplit("@", 1)[0].replace("/", "-").lstrip("@") + "-" + spec.rsplit("@", 1)[1] + ".tgz"
    if not (CACHE / name).exists():
        subprocess.run(["npm", "pack", spec, "--pack-destination", str(CACHE)], cwd=CACHE, check=True,
                       capture_output=True, timeout=300)
    return CACHE / name


def _package_files(spec: str) -> dict[str, bytes]:
    """Every file of an npm package as it ships (`package/...` in its tarball)."""
    found = {}
    with tarfile.open(_npm_pack(spec)) as archive:
        for member in archive.getmembers():
            handle = archive.extractfile(member) if member.isfile() else None
            if handle is not None:
                found["/" + member.name.partition("/")[2]] = handle.read()
    return found


def _petstore() -> bytes:
    """An API description shaped like the Swagger petstore's: three tags, 14 operations."""
    ops = {"pet": ["post /pet", "put /pet", "get /pet/findByStatus", "get /pet/{petId}", "delete /pet/{petId}",
                   "post /pet/{petId}/uploadImage"],
           "store": ["get /store/inventory", "post /store/order", "get /store/order/{orderId}"],
           "user": ["post /user", "get /user/login", "get /user/logout", "get /user/{username}", "put /user/{username}"]}
    paths: dict[str, Any] = {}
    for tag, entries in ops.items():
        for entry in entries:
            method, path = entry.split()
            paths.setdefault(path, {})[method] = {
                "tags": [tag], "summary": f"{method} {path.split('/')[-1] or tag}", "produces": ["application/json"],
                "responses": {"200": {"description": "successful operation"}, "400": {"description": "invalid input"}}}
    return json.dumps({"swagger": "2.0", "info": {"title": "Swagger Petstore", "version": "1.0.7",
                                                   "description": "A sample server Petstore server."},
                       "host": "petstore.test", "basePath": "/v2",
                       "tags": [{"name": tag, "description": f"Everything about {tag}"} for tag in ops],
                       "schemes": ["https"], "paths": paths}).encode()


def pages(files: Files) -> list[Page]:
    """The pages, their files put into `files`."""
    swagger = _package_files(PACKAGES["swagger"])
    swagger["/swagger-initializer.js"] = swagger["/swagger-initializer.js"].replace(
        b"https://petstore.swagger.io/v2/swagger.json", b"https://petstore.test/v2/swagger.json")
    files["swagger.test"] = swagger
    files["petstore.test"] = {"/v2/swagger.json": _petstore()}
    files["reveal.test"] = _package_files(PACKAGES["reveal"])
    return [
        Page("modern", _builtin("modern", files), "built-in: 69 requests, 10 origins, fonts, late thumbs and ads"),
        Page("seed000-large-n12", _builtin("seed000-large-n12", files), "built-in: 12 images of 45 KB"),
        Page("article", _article(files), "made here: a hero without dimensions, an ad slot, long tasks"),
        Page("swagger-ui", "https://swagger.test/", f"npm {PACKAGES['swagger']}: the app, rendered by script"),
        Page("reveal-demo", "https://reveal.test/demo.html", f"npm {PACKAGES['reveal']}: its demo deck (dark)"),
    ]


# Serving ------------------------------------------------------------------------------


def _handler(files: Files) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            host = (self.headers.get("Host") or "").split(":")[0]
            path = self.path.split("?")[0].split("#")[0]
            site = files.get(host, {})
            body = site.get(path) or site.get(path.rstrip("/") + "/index.html")
            if body is None and path == "/":
                body = site.get("/")
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            time.sleep(LATENCY_S + len(body) / RATE)
            kind = "text/html" if path.endswith("/") else mimetypes.guess_type(path)[0] or "application/octet-stream"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            """No access log on the table's stream."""

    return Handler


@contextmanager
def serving(files: Files, authority: Authority) -> Iterator[int]:
    """An HTTPS server for every host of `files` on loopback, in a thread: its port."""
    leaf = authority.leaf(sorted(files))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf.chain_path, leaf.key_path)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(files))
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


# What the trace says ------------------------------------------------------------------


def _main_thread(events: Sequence[dict[str, Any]]) -> tuple[float, tuple[int, int]]:
    """navigationStart (µs) and the (pid, tid) of the renderer main thread that emitted it."""
    start = visual.navigation_start(events)
    event = next(e for e in events if e.get("name") == "navigationStart" and float(e["ts"]) == start)
    return float(start or 0.0), (event["pid"], event["tid"])


def trace_cls(events: Sequence[dict[str, Any]]) -> float:
    """CLS from the trace's LayoutShift events (not after input), the worst session window."""
    start, _ = _main_thread(events)
    shifts = sorted(((float(e["ts"]) - start) / 1000, e["args"]["data"]["weighted_score_delta"]) for e in events
                    if e.get("name") == "LayoutShift" and not e["args"]["data"].get("had_recent_input"))
    worst, windows = 0.0, []  # windows: [first, last, sum]
    for ms, score in shifts:
        if windows and ms - windows[-1][1] <= visual.SESSION_GAP_MS and ms - windows[-1][0] <= visual.WINDOW_MS:
            windows[-1][1:] = [ms, windows[-1][2] + score]
        else:
            windows.append([ms, ms, score])
        worst = max(worst, windows[-1][2])
    return worst


def trace_fcp(events: Sequence[dict[str, Any]]) -> float | None:
    """The trace's first contentful paint (ms after navigationStart) in the page's renderer."""
    start, thread = _main_thread(events)
    return min(((float(e["ts"]) - start) / 1000 for e in events
                if e.get("name") == "firstContentfulPaint" and e.get("pid") == thread[0] and float(e["ts"]) >= start),
               default=None)


def trace_tbt(events: Sequence[dict[str, Any]], fcp: float | None) -> tuple[float, int]:
    """(TBT ms, tasks over 50 ms) from the renderer main thread's RunTask events: each long
    task's part after `fcp`, less 50 ms (all of it without an FCP, as `visual.blocking`)."""
    start, thread = _main_thread(events)
    tasks = [((float(e["ts"]) - start) / 1000, e["dur"] / 1000) for e in events
             if e.get("name") == "ThreadControllerImpl::RunTask" and (e.get("pid"), e.get("tid")) == thread
             and float(e["ts"]) >= start and e.get("dur", 0) > visual.BLOCKING_MS * 1000]
    total = sum(max(0.0, begin + duration - max(begin, fcp or 0.0) - visual.BLOCKING_MS) for begin, duration in tasks)
    return total, len(tasks)


def origin_gap_ms(events: Sequence[dict[str, Any]]) -> float:
    """How long before navigationStart the trace's first event is: where speedline counts
    from when given no `timeOrigin`."""
    return (_main_thread(events)[0] - min(float(e["ts"]) for e in events if e.get("ts"))) / 1000


# speedline-core -----------------------------------------------------------------------


def speedline_dir() -> Path:
    """Where speedline-core is installed (once, from the npm registry, without its scripts)."""
    where = CACHE / "speedline"
    if not (where / "node_modules" / "speedline-core").is_dir():
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(where), "--ignore-scripts", "--no-audit", "--no-fund",
                        SPEEDLINE], check=True, capture_output=True, timeout=300)
    return where


def speedline(jobs: Sequence[tuple[Path, float]]) -> list[dict[str, Any]]:
    """speedline-core's results for each (trace file, time origin µs), in one node process."""
    where = speedline_dir()
    script = where / "crosscheck.js"
    script.write_text(SPEEDLINE_JS)
    out = subprocess.run(["node", str(script)], input=json.dumps([{"trace": str(t), "origin": o} for t, o in jobs]),
                         capture_output=True, text=True, check=True, cwd=where, timeout=1800)
    return json.loads(out.stdout)


# From pagebench's definition to speedline's ---------------------------------------------

#: pagebench's own visual code (WebPageTest's definition), one difference from speedline's
#: removed at a time (cumulative): which of them accounts for how much of a SpeedIndex
#: difference. Each is (label, visual's constants).
STEPS: tuple[tuple[str, dict[str, float]], ...] = (
    ("white from 249 (speedline's)", {"WHITE": 249}),
    ("no colour slop", {"WHITE": 249, "SLOP_BELOW": 0, "SLOP_ABOVE": 0}),
    ("every changed frame counts", {"WHITE": 249, "SLOP_BELOW": 0, "SLOP_ABOVE": 0, "CHANGED": 0}),
)


@contextmanager
def _constants(changed: dict[str, float]) -> Iterator[None]:
    """visual's module constants set to `changed` meanwhile (diagnosis only)."""
    saved = {name: getattr(visual, name) for name in changed}
    for name, value in changed.items():
        setattr(visual, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(visual, name, value)


def steps(frames: Sequence[visual.Frame]) -> tuple[float | None, ...]:
    """SpeedIndex after each of STEPS."""
    found = []
    for _, changed in STEPS:
        with _constants(changed):
            curve = visual.progress(frames)
        found.append(visual.speed_index(curve) if curve else None)
    return tuple(found)


# The run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """One load: pagebench's figures beside the independent ones."""

    page: str
    round: int
    frames: int
    si: float | None
    curve: tuple[tuple[float, float], ...]
    speedline: dict[str, Any]
    steps: tuple[float | None, ...]
    last_change: float | None
    cls: float | None
    cls_trace: float
    tbt: float | None
    tbt_trace: float
    tbt_trace_page_fcp: float
    long_tasks: int | None
    long_trace: int
    fcp: float | None
    fcp_trace: float | None
    origin_gap: float


def load_all(work: Path, chosen: Sequence[Page], files: Files, rounds: int) -> list[Load]:
    """Each page `rounds` times, rounds interleaved: (page, round, trace file, RawLoad)."""
    authority = Authority(work / "tls")
    done: list[Load] = []
    with serving(files, authority) as port, sync_playwright() as pw:
        setup = Setup(f"MAP *.test 127.0.0.1:{port}, MAP * ~NOTFOUND", authority.spki_list())
        driver = Driver(pw, work / "browser", None, trace=True)
        try:
            for round_ in range(1, rounds + 1):
                for page in chosen:
                    [raw] = driver.cold(setup, page.url, 30.0)
                    if raw.error is not None or not raw.trace:
                        print(f"warning: {page.name} round {round_}: {raw.error}", file=sys.stderr)
                        continue
                    path = work / f"{page.name}-{round_}.json"
                    path.write_text(json.dumps(raw.trace))
                    raw.trace = None
                    done.append((page, round_, path, raw))
        finally:
            driver.close()
    return done


def evaluate(loads: Sequence[Load]) -> list[Row]:
    """Each load's Row: speedline on every trace in one node process, then pagebench's side."""
    origins = [_main_thread(json.loads(path.read_text())["traceEvents"])[0] for _, _, path, _ in loads]
    independent = speedline([(path, origin) for (_, _, path, _), origin in zip(loads, origins)])
    rows = []
    for (page, round_, path, raw), theirs in zip(loads, independent):
        events = json.loads(path.read_text())["traceEvents"]
        frames = visual.frames_of(events)
        fcp = raw.page["paints"].get("first-contentful-paint")
        ours = visual.visual(frames, raw.page, fcp)
        fcp_trace = trace_fcp(events)
        tbt_trace, long_trace = trace_tbt(events, fcp_trace)
        rows.append(Row(page.name, round_, len(frames), ours.speed_index_ms, ours.progress, theirs, steps(frames),
                        ours.last_visual_change_ms, ours.cls, trace_cls(events), ours.tbt_ms, tbt_trace,
                        trace_tbt(events, fcp)[0], ours.long_tasks, long_trace, fcp, fcp_trace,
                        origin_gap_ms(events)))
    return rows


def _f(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def _rel(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else (ours - theirs) / theirs


def _pct(ours: float | None, theirs: float | None) -> str:
    delta = _rel(ours, theirs)
    if delta is None:
        return "-"
    return f"{delta * 100:+.1f} %" + (" **>5 %**" if abs(delta) > SI_TOLERANCE else "")


def table(chosen: Sequence[Page], rows: Sequence[Row]) -> None:
    for page in chosen:
        print(f"- `{page.name}` ({page.url}): {page.what}")
    print()
    print("| page | load | frames | SpeedIndex pagebench | speedline | Δ | speedline fastMode | speedline perceptual "
          "| last change pagebench / speedline | CLS page / trace | TBT page / trace (trace from page's FCP) "
          "| long tasks page / trace | FCP page / trace |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r.speedline
        print(f"| {r.page} | {r.round} | {r.frames} | {_f(r.si)} ms | {_f(s['si'])} ms | {_pct(r.si, s['si'])} "
              f"| {_f(s['fast'])} ms | {_f(s['psi'])} ms | {_f(r.last_change)} / {_f(s['complete'])} ms "
              f"| {_f(r.cls, 4)} / {r.cls_trace:.4f} | {_f(r.tbt)} / {r.tbt_trace:.0f} ({r.tbt_trace_page_fcp:.0f}) ms "
              f"| {_f(r.long_tasks)} / {r.long_trace} | {_f(r.fcp)} / {_f(r.fcp_trace)} ms |")
    print("\nFrom pagebench's definition to speedline's, one difference at a time (cumulative; "
          "SpeedIndex ms, Δ against speedline):\n")
    print("| page | load | pagebench | " + " | ".join(f"+ {label}" for label, _ in STEPS) + " | speedline |")
    print("|---|---|---|" + "---|" * len(STEPS) + "---|")
    for r in rows:
        cells = [f"{_f(v)} ({_pct(v, r.speedline['si'])})" for v in (r.si, *r.steps)]
        print(f"| {r.page} | {r.round} | " + " | ".join(cells) + f" | {_f(r.speedline['si'])} |")
    print("\n| page | n | SpeedIndex pagebench, median | speedline, median | Δ (each load) | within 5 % "
          "| CLS largest Δ | TBT largest Δ (trace from page's FCP) |")
    print("|---|---|---|---|---|---|---|---|")
    for name in dict.fromkeys(r.page for r in rows):
        mine = [r for r in rows if r.page == name]
        deltas = [_rel(r.si, r.speedline["si"]) for r in mine]
        agree = sum(1 for d in deltas if d is not None and abs(d) <= SI_TOLERANCE)
        print(f"| {name} | {len(mine)} | {_f(_median([r.si for r in mine]))} ms "
              f"| {_f(_median([r.speedline['si'] for r in mine]))} ms "
              f"| {', '.join('-' if d is None else f'{d * 100:+.1f}' for d in deltas)} % | {agree} of {len(mine)} "
              f"| {max(abs((r.cls or 0.0) - r.cls_trace) for r in mine):.4f} "
              f"| {max(abs((r.tbt or 0.0) - r.tbt_trace) for r in mine):.0f} "
              f"({max(abs((r.tbt or 0.0) - r.tbt_trace_page_fcp) for r in mine):.0f}) ms |")
    print(f"\nThe trace's first event came {_f(_median([r.origin_gap for r in rows]))} ms (median; "
          f"{_f(min(r.origin_gap for r in rows))} to {_f(max(r.origin_gap for r in rows))}) before navigationStart: "
          "speedline counts from it when given no timeOrigin.")
    beyond = [r for r in rows if (d := _rel(r.si, r.speedline["si"])) is None or abs(d) > SI_TOLERANCE]
    print(f"\nSpeedIndex within {SI_TOLERANCE:.0%} of speedline's: {len(rows) - len(beyond)} of {len(rows)} loads"
          + (f"; beyond: {', '.join(sorted({r.page for r in beyond}))}" if beyond else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS, help="loads of each page")
    parser.add_argument("--curves", action="store_true", help="also print each load's two progress curves")
    parser.add_argument("--keep", type=Path, help="copy each load's trace into this folder")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: Chromium runs as nobody, as in a pagebench run")
    speedline_dir()
    files: Files = {}
    chosen = pages(files)
    work = Path(tempfile.mkdtemp(prefix="pagebench-crosscheck-"))
    os.chmod(work, 0o755)  # Chromium, as nobody, reads its profile beneath
    try:
        loads = load_all(work, chosen, files, args.rounds)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for _, _, path, _ in loads:
                shutil.copy(path, args.keep / path.name)
        rows = evaluate(loads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    table(chosen, rows)
    if args.curves:
        for r in rows:
            print(f"\n{r.page} {r.round}\n  pagebench {[(round(t), round(p, 3)) for t, p in r.curve]}"
                  f"\n  speedline {[(round(t), p) for t, p in r.speedline['curve']]}")


if __name__ == "__main__":
    main()
