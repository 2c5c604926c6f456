"""A standing side-by-side with a peer (issue 29, item 4): browsertime against pagebench.

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/python harness/benchmarks/peers.py > table.md

The same page (`seed000-small-n20`), link (50 ms RTT, 10/10 Mbit/s), mode (h2 over TLS
1.3) and Chromium build (pagebench's, Debian's headless shell) three ways, LOADS cold loads
each: browsertime with its own defaults, browsertime tuned (the fastest honest
configuration: `TUNED`), both inside `pagebench shell` (the lab's client namespace, the
link emulated), then `pagebench run` of a generated spec with pagebench's defaults, and
again with `--no-frames`: browsertime's configurations capture no frames (no video, no
visual metrics), pagebench's default captures every load's, so the second is like for like.

browsertime is installed from the npm registry at BROWSERTIME_VERSION into the virtualenv
(`.venv/share/browsertime/VERSION`, once), its driver downloads skipped: it drives Debian's
chromedriver (package chromium-driver, installed with apt when missing), which starts
Chromium through pagebench's own launcher (`lab.browser.write_wrapper`: as `nobody`, its
sandbox on). That Chromium trusts the lab's leaf as pagebench's own does, by its key
(the shell's `$PAGEBENCH_SPKI_LIST`), so both tools do the same TLS work; certificate
errors are otherwise never ignored (browsertime ignores them all unless told not to).
(Trusting the lab's authority as a root in an NSS database instead costs about 18 ms per
cold handshake, measured: a slower browsertime for a reason not its own.)

Figures per tool: loads per minute steady (the measured loads' start-to-start intervals:
browsertime's iteration timestamps, pagebench's stored start times) and end to end (the
whole command, its start-up included), the median load time (loadEventEnd; pagebench's
load_ms, loadEventStart) and its coefficient of variation; then pagebench's ratios. Goal
(issue 29): pagebench >= 10x browsertime's default and >= 5x its tuned configuration
(steady), with at most half its CV.

One run's CV is itself noisy, and this host's noise drifts from minute to minute: with
`--rounds N`, the tuned configuration and both pagebench runs are made N - 1 more times,
interleaved (which goes first rotates), and the verdicts on the tuned configuration take
the medians of the rounds (the default configuration, at 4-5 minutes a run, runs once).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

BROWSERTIME_VERSION = "26.3.2"  # 28.3.0 pins an edgedriver the registry no longer serves
NODE_MAJOR = 20  # browsertime 26's engines field
CHROMEDRIVER = Path("/usr/bin/chromedriver")
NOBODY = 65534  # Chromium's home is its own: it runs as nobody (pagebench's launcher)
SITE, MODE, TLS = "seed000-small-n20", "h2", "1.3"
#: docs/benchmarks.md "Page loads": the CV condition.
LINK = {"rtt_ms": 50, "down_mbit": 10, "up_mbit": 10}
LINK_OPTIONS = ["--rtt", str(LINK["rtt_ms"]), "--down", str(LINK["down_mbit"]), "--up", str(LINK["up_mbit"])]
#: npm 11 skips unapproved install scripts; older npm runs them: the drivers' would
#: download binaries (these variables are their install scripts' own switches).
SKIP_DOWNLOADS = {"CHROMEDRIVER_SKIP_DOWNLOAD": "true", "GECKODRIVER_SKIP_DOWNLOAD": "true",
                  "EDGEDRIVER_SKIP_DOWNLOAD": "true"}
NETWORK_ERRORS = ("ENOTFOUND", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "ENETUNREACH")
#: The page-complete check of the tuned configuration: true once the page under test (not
#: the start page, whose load event fired long ago) has fired its load event.
LOADED_CHECK = "return document.documentURI === {url!r} && performance.timing.loadEventEnd > 0;"
#: browsertime's defaults, but for the certificate trust: browsertime tells Chromium to
#: accept any certificate unless told not to, which would also turn its HTTP cache off.
DEFAULT = ["--chrome.ignoreCertificateErrors", "false"]
#: The fastest honest configuration of browsertime 26.3.2 (its `--help`; a zero falls back
#: to the default in its code, so 1 ms is the shortest wait it takes).
TUNED = DEFAULT + [
    "--pageCompleteCheck", LOADED_CHECK,  # ends when the load event has fired (default: 8 s after it)
    "--pageCompleteCheckStartWait", "1",  # first check at once (default: 5 s after navigating)
    "--pageCompleteCheckPollTimeout", "1",  # checks back to back (default: every 1.5 s)
    "--skipHar",  # no HAR (pagebench keeps one per load)
    "--video", "false", "--visualMetrics", "false",  # off by default; said so
    "--screenshot", "false",  # off by default; said so
    "--chrome.cdp.performance", "false",  # no CDP Performance.getMetrics after each load
]
CONFIGURATIONS = (("browsertime, default", DEFAULT), ("browsertime, tuned", TUNED))


# Pure: browsertime's results, the figures, the table -----------------------------


@dataclass(frozen=True)
class Result:
    """One tool's loads: load times (ms), start times of the measured loads (s since the
    epoch) and the whole command's wall time (s)."""

    label: str
    times: tuple[float, ...]
    starts: tuple[float, ...]
    wall_s: float

    @property
    def steady_per_min(self) -> float:
        """Loads per minute over the start-to-start intervals of the measured loads."""
        return 60 * (len(self.starts) - 1) / (max(self.starts) - min(self.starts))

    @property
    def end_to_end_per_min(self) -> float:
        return 60 * len(self.times) / self.wall_s

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times)

    @property
    def cv(self) -> float:
        return statistics.stdev(self.times) / statistics.fmean(self.times)


def browsertime_loads(doc: list[dict[str, Any]]) -> tuple[list[float], list[float]]:
    """Each iteration's loadEventEnd (ms) and start time (s; browsertime writes it to the
    second) from a browsertime.json of one URL; a failed iteration is an error."""
    if len(doc) != 1:
        raise ValueError(f"browsertime.json: expected one URL's results, found {len(doc)}")
    page = doc[0]
    if page.get("markedAsFailure") or page.get("failureMessages"):
        raise ValueError(f"browsertime marked the page as failed: {'; '.join(page.get('failureMessages') or [])}")
    times = [float(run["timings"]["loadEventEnd"]) for run in page["browserScripts"]]
    starts = [datetime.fromisoformat(stamp).timestamp() for stamp in page["timestamps"]]
    if len(times) != len(starts):
        raise ValueError(f"browsertime.json: {len(times)} load times for {len(starts)} iterations")
    return times, starts


def lab_argv(options: list[str], url: str, resolver_rules: str, spki: str, chromium: str,
             chromedriver: str) -> list[str]:
    """browsertime's arguments in the lab: the configuration's, then the browser, the
    driver, the host mapping (browsertime adds its own --host-resolver-rules only when
    none is given) and the lab leaf's key trusted as pagebench's browser trusts it, then
    the URL."""
    return [option.format(url=url) for option in options] + [
        "--chrome.binaryPath", chromium, "--chrome.chromedriverPath", chromedriver,
        f"--chrome.args=--host-resolver-rules={resolver_rules}",
        f"--chrome.args=--ignore-certificate-errors-spki-list={spki}", url]


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.1f}x"


def table(results: list[Result], ours: list[Result]) -> str:
    """The markdown table: one row per tool, then each of ours against each other."""
    lines = ["| tool | loads | loads/min steady | loads/min end to end | median load time | CV of load time |",
             "|---|---|---|---|---|---|"]
    for r in [*results, *ours]:
        lines.append(f"| {r.label} | {len(r.times)} | {r.steady_per_min:.1f} | {r.end_to_end_per_min:.1f} | "
                     f"{r.median_ms:.0f} ms | {100 * r.cv:.1f} % |")
    for mine in ours:
        for r in results:
            lines.append(f"| {mine.label} / {r.label} | | {ratio(mine.steady_per_min, r.steady_per_min)} | "
                         f"{ratio(mine.end_to_end_per_min, r.end_to_end_per_min)} | "
                         f"{mine.median_ms / r.median_ms:.2f} | {mine.cv / r.cv:.2f} |")
    return "\n".join(lines)


def verdicts(default: Result, tuned: Result, ours: Result) -> list[str]:
    """Issue 29's goals, each met or not."""
    def said(met: bool) -> str:
        return "met" if met else "NOT met"
    who = "" if ours.label == "pagebench" else f"{ours.label}: "
    return [f"- {who}{line}" for line in [
        f"steady >= 10x browsertime's default: {ratio(ours.steady_per_min, default.steady_per_min)}, "
        f"{said(ours.steady_per_min >= 10 * default.steady_per_min)}",
        f"steady >= 5x browsertime tuned: {ratio(ours.steady_per_min, tuned.steady_per_min)}, "
        f"{said(ours.steady_per_min >= 5 * tuned.steady_per_min)}",
        f"CV <= half of browsertime's: {100 * ours.cv:.1f} % against {100 * default.cv:.1f} % (default: "
        f"{said(2 * ours.cv <= default.cv)}) and {100 * tuned.cv:.1f} % (tuned: {said(2 * ours.cv <= tuned.cv)})",
    ]]


def _medians(rounds: list[Result]) -> tuple[float, float]:
    return statistics.median(r.steady_per_min for r in rounds), statistics.median(r.cv for r in rounds)


def rounds_table(tuned: list[Result], ours: list[Result]) -> str:
    """One row per round of the tuned configuration against one of ours, then their medians."""
    label = ours[0].label
    lines = [f"| round | browsertime tuned: loads/min steady, CV | {label}: loads/min steady, CV | "
             "steady ratio | CV ratio |", "|---|---|---|---|---|"]
    for k, (theirs, mine) in enumerate(zip(tuned, ours), 1):
        lines.append(f"| {k} | {theirs.steady_per_min:.1f}, {100 * theirs.cv:.1f} % | {mine.steady_per_min:.1f}, "
                     f"{100 * mine.cv:.1f} % | {ratio(mine.steady_per_min, theirs.steady_per_min)} | "
                     f"{mine.cv / theirs.cv:.2f} |")
    (theirs_steady, theirs_cv), (my_steady, my_cv) = _medians(tuned), _medians(ours)
    lines.append(f"| median | {theirs_steady:.1f}, {100 * theirs_cv:.1f} % | {my_steady:.1f}, {100 * my_cv:.1f} % | "
                 f"{ratio(my_steady, theirs_steady)} | {my_cv / theirs_cv:.2f} |")
    return "\n".join(lines)


def round_verdicts(tuned: list[Result], ours: list[Result]) -> list[str]:
    """The goals on the tuned configuration, on the medians of the rounds."""
    (theirs_steady, theirs_cv), (my_steady, my_cv) = _medians(tuned), _medians(ours)
    who = f"{ours[0].label}, over {len(ours)} rounds"
    return [f"- {who}, steady >= 5x browsertime tuned: {ratio(my_steady, theirs_steady)} (medians), "
            f"{'met' if my_steady >= 5 * theirs_steady else 'NOT met'}",
            f"- {who}, CV <= half of browsertime tuned's: {100 * my_cv:.1f} % against "
            f"{100 * theirs_cv:.1f} % (medians), {'met' if 2 * my_cv <= theirs_cv else 'NOT met'}"]


# I/O: what browsertime needs -------------------------------------------------------


def fail(message: str) -> SystemExit:
    return SystemExit(f"peers: {message}")


def output(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def ensure_node() -> str:
    """Node.js of browsertime's engines; Debian 12's own is 18, so it is not installed here."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise fail(f"node and npm not found: browsertime {BROWSERTIME_VERSION} needs Node.js {NODE_MAJOR} or later")
    version = output(["node", "--version"])
    if int(version.lstrip("v").split(".")[0]) < NODE_MAJOR:
        raise fail(f"node {version}: browsertime {BROWSERTIME_VERSION} needs Node.js {NODE_MAJOR} or later")
    return version


def ensure_chromedriver(chromium: str) -> str:
    """Debian's chromedriver (chromium-driver; it pulls in the full `chromium` package),
    of the same version as the Chromium it drives."""
    if not CHROMEDRIVER.exists():
        install = ["apt-get", "install", "-y", "--no-install-recommends", "chromium-driver"]
        env = os.environ | {"DEBIAN_FRONTEND": "noninteractive"}
        if subprocess.run(install, capture_output=True, env=env).returncode != 0:
            subprocess.run(["apt-get", "update"], capture_output=True)
            done = subprocess.run(install, capture_output=True, text=True, env=env)
            if done.returncode != 0:
                raise fail(f"apt-get install chromium-driver failed: {(done.stderr.strip() or '?').splitlines()[-1]}")
    driver = output([str(CHROMEDRIVER), "--version"]).split()[1]
    browser = output([chromium, "--version"]).split()[1]
    if driver != browser:
        raise fail(f"chromedriver {driver} does not match {chromium} {browser}: install the same Debian version")
    return browser


def ensure_browsertime(share: Path) -> Path:
    """browsertime at BROWSERTIME_VERSION under `share`, installed once (into a staging
    directory first, so an interrupted install is not taken for a finished one);
    returns its bin/browsertime.js."""
    home = share / BROWSERTIME_VERSION
    script = home / "node_modules" / "browsertime" / "bin" / "browsertime.js"
    package = home / "node_modules" / "browsertime" / "package.json"
    if package.exists() and json.loads(package.read_text())["version"] == BROWSERTIME_VERSION:
        return script
    staging = share / f".{BROWSERTIME_VERSION}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    print(f"installing browsertime {BROWSERTIME_VERSION} into {home} ...", file=sys.stderr)
    # --ignore-scripts: the drivers' downloads, and native USB bindings only Android uses
    done = subprocess.run(["npm", "install", "--prefix", str(staging), "--ignore-scripts", "--no-audit",
                           "--no-fund", "--save-exact", f"browsertime@{BROWSERTIME_VERSION}"],
                          capture_output=True, text=True, env=os.environ | SKIP_DOWNLOADS)
    if done.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        errors = [line.removeprefix("npm error ") for line in done.stderr.splitlines() if line.startswith("npm error")]
        said = next((line for line in errors if "reason:" in line), errors[0] if errors else "?")
        if any(code in done.stderr for code in NETWORK_ERRORS):
            raise fail(f"npm cannot reach its registry: {said}")
        raise fail(f"npm install browsertime@{BROWSERTIME_VERSION} failed: {said}")
    shutil.rmtree(home, ignore_errors=True)
    staging.rename(home)
    return script


# I/O: the runs -------------------------------------------------------------------


def pagebench(*args: str) -> list[str]:
    return [sys.executable, "-m", "pagebench", *args]


def run_browsertime(label: str, options: list[str], loads: int, node_script: Path, workdir: Path,
                    keep: Path | None, suffix: str = "") -> Result:
    """One configuration inside `pagebench shell`; the browsertime command's own wall
    time is its end to end (the lab's set-up is the shell's, said apart). `keep`: where
    its browsertime.json is copied (named with `suffix`, a round's)."""
    job = workdir / (label.replace(", ", "-").replace(" ", "-") + suffix)
    job.mkdir()
    spec = {"options": ["-n", str(loads), *options], "script": str(node_script), "home": str(job / "home"),
            "times": str(job / "times.json")}
    (job / "job.json").write_text(json.dumps(spec))
    began = time.time()
    done = subprocess.run(pagebench("shell", "--wait", "--site", SITE, "--mode", MODE, "--tls", TLS, *LINK_OPTIONS,
                                    "--", sys.executable, str(Path(__file__).resolve()), "--in-lab", str(job / "job.json")),
                          stdout=sys.stderr)
    shell_s = time.time() - began
    if done.returncode != 0:
        raise fail(f"{label}: pagebench shell -- browsertime exited {done.returncode} (its log is above)")
    found = job / "out" / "browsertime.json"
    if keep is not None:
        shutil.copy(found, keep / f"{job.name}.browsertime.json")
    times, starts = browsertime_loads(json.loads(found.read_text()))
    clock = json.loads((job / "times.json").read_text())
    wall = clock["end"] - clock["start"]
    print(f"{label}: {wall:.1f} s in browsertime, {shell_s - wall:.1f} s more for the lab around it", file=sys.stderr)
    return Result(label, tuple(times), tuple(starts), wall)


def in_lab(job_path: Path) -> int:
    """Inside the lab's client namespace (as root): run browsertime, its Chromium started
    by pagebench's own launcher (`nobody`, sandbox on, a home of its own), and time it."""
    from pagebench.lab.browser import write_wrapper

    job = json.loads(job_path.read_text())
    home = Path(job["home"])
    home.mkdir(parents=True)
    subprocess.run(["chown", "-R", f"{NOBODY}:{NOBODY}", str(home)], check=True)
    wrapper = write_wrapper(home.parent / "chromium-as-nobody", None, home)  # None: this namespace
    argv = lab_argv(job["options"], os.environ["PAGEBENCH_URL"], os.environ["PAGEBENCH_HOST_RESOLVER_RULES"],
                    os.environ["PAGEBENCH_SPKI_LIST"], str(wrapper), str(CHROMEDRIVER))
    start = time.time()
    done = subprocess.run(["node", job["script"], "--resultDir", str(home.parent / "out"), *argv], cwd=home.parent)
    Path(job["times"]).write_text(json.dumps({"start": start, "end": time.time()}))
    return done.returncode


def run_pagebench(loads: int, workdir: Path, keep: Path | None, suffix: str = "", frames: bool = True) -> Result:
    """`pagebench run` of the same loads, a generated spec with pagebench's defaults
    (warm-up, link check, HAR and frames; without `frames`, `--no-frames`). `keep`: where
    its store is copied (named with `suffix`, a round's)."""
    from pagebench.results.store import Store

    name = "pagebench" if frames else "pagebench-no-frames"
    workdir = workdir / f"{name}{suffix}"
    workdir.mkdir()
    spec = workdir / "peers.yaml"
    spec.write_text(yaml.safe_dump({"name": "peers", "sites": [SITE], "modes": [MODE], "tls": [TLS],
                                    "profiles": [{"name": "r50", **LINK}], "cache": ["cold"], "repetitions": loads}))
    db = f"sqlite:///{workdir}/peers.sqlite"
    began = time.time()
    options = () if frames else ("--no-frames",)
    done = subprocess.run(pagebench("run", str(spec), "--db", db, "--wait", *options), capture_output=True, text=True)
    wall = time.time() - began
    if done.returncode != 0:
        raise fail(f"pagebench run failed: {(done.stderr.strip() or '?').splitlines()[-1]}")
    run_id = next(line for line in done.stdout.splitlines() if line.startswith("run ")).split()[1]
    if keep is not None:
        shutil.copy(workdir / "peers.sqlite", keep / f"{name}{suffix}.sqlite")
    with Store(db) as store:
        measured = [load for load in store.loads(run_id) if load.ok and load.load_ms is not None]
    times = tuple(load.load_ms for load in measured if load.load_ms is not None)
    label = "pagebench" if frames else "pagebench --no-frames"
    return Result(label, times, tuple(load.started_at for load in measured), wall)


def context(node: str, chromium: str, load_before: tuple[float, ...]) -> list[str]:
    """How the figures were made (date, machine, versions, load), hyperfine-style."""
    from pagebench.lab.browser import CHROMIUM

    repo = Path(__file__).resolve().parents[2]
    commit = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "?"
    cores = os.cpu_count()
    return [f"- {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.node()} ({cores} cores, "
            f"Linux {platform.release()}), pagebench {commit}",
            f"- browsertime {BROWSERTIME_VERSION} on Node.js {node}, chromedriver {chromium}; both tools: Chromium "
            f"{chromium}, {CHROMIUM}",
            f"- {SITE}, {MODE} over TLS {TLS}, cold, {LINK['rtt_ms']} ms RTT, {LINK['down_mbit']}/{LINK['up_mbit']} Mbit/s; "
            f"load average (1, 5, 15 min) {' '.join(f'{x:.2f}' for x in load_before)} before, "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} after"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=20, help="cold loads per tool (default 20; at least 2)")
    parser.add_argument("--keep", type=Path, help="a directory to keep the raw results in: each browsertime "
                        "configuration's browsertime.json and pagebench's SQLite store")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of the tuned configuration and of pagebench "
                        "with and without frames, interleaved (default 1; the default configuration runs once)")
    parser.add_argument("--in-lab", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.in_lab is not None:
        raise SystemExit(in_lab(args.in_lab))
    if args.loads < 2:
        raise fail("--loads: at least 2 (the steady rate needs two starts)")
    if args.rounds < 1:
        raise fail("--rounds: at least 1")
    if os.geteuid() != 0:
        raise fail("run as root (sudo): pagebench builds a lab of network namespaces")
    if sys.prefix == sys.base_prefix:
        raise fail("run with the repository's virtualenv (.venv/bin/python): browsertime is kept under it")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    from pagebench.lab.browser import CHROMIUM

    load_before = os.getloadavg()
    node = ensure_node()
    chromium = ensure_chromedriver(CHROMIUM)
    script = ensure_browsertime(Path(sys.prefix) / "share" / "browsertime")
    with tempfile.TemporaryDirectory(prefix="peers-") as tmp:
        workdir = Path(tmp)
        workdir.chmod(0o755)  # Chromium runs as nobody with its home below it
        default, tuned = [run_browsertime(label, options, args.loads, script, workdir, args.keep)
                          for label, options in CONFIGURATIONS]
        tuned_label, tuned_options = CONFIGURATIONS[1]
        tools: list[Callable[[str], Result]] = [
            lambda suffix: run_browsertime(tuned_label, tuned_options, args.loads, script, workdir, args.keep, suffix),
            lambda suffix: run_pagebench(args.loads, workdir, args.keep, suffix),
            lambda suffix: run_pagebench(args.loads, workdir, args.keep, suffix, frames=False)]
        rounds: list[list[Result]] = [[tuned], [tools[1]("")], [tools[2]("")]]
        for k in range(2, args.rounds + 1):
            print(f"round {k} of {args.rounds}", file=sys.stderr)
            shift = k - 1  # who goes first rotates
            for i in [(shift + j) % len(tools) for j in range(len(tools))]:
                rounds[i].append(tools[i](f"-{k}"))
    tuned_rounds, *our_rounds = rounds
    print(table([default, tuned], [ours[0] for ours in our_rounds]))
    print()
    said = [line for ours in our_rounds for line in verdicts(default, tuned, ours[0])]
    if args.rounds > 1:
        for ours in our_rounds:
            print(rounds_table(tuned_rounds, ours))
            print()
            said += round_verdicts(tuned_rounds, ours)
    print("\n".join(said + context(node, chromium, load_before)))


if __name__ == "__main__":
    main()
