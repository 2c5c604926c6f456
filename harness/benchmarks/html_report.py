"""Build a run's HTML report, time it, and screenshot it in the headless shell, offline.

    sudo .venv/bin/python harness/benchmarks/html_report.py --db URL RUN OUT.html --screenshot docs/report.png

RUN may be `latest`. Prints how long the report took to build and its size; with
--screenshot, the top of the page as Chromium draws it with the network off.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from pagebench.lab.browser import CHROMIUM
from pagebench.analysis.report.html import write_html_report
from pagebench.results.store import Store


TOP_PX = 2600


def screenshot(page_file: Path, png: Path, width: int = 1280) -> None:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        try:
            context = browser.new_context(offline=True, viewport={"width": width, "height": 900})
            page = context.new_page()
            page.goto(page_file.resolve().as_uri())
            png.parent.mkdir(parents=True, exist_ok=True)
            # the top of the page (header, condition table, first charts): a readable PNG for docs/
            height = min(TOP_PX, page.evaluate("document.documentElement.scrollHeight"))
            page.screenshot(path=str(png), full_page=True, clip={"x": 0, "y": 0, "width": width, "height": height})
        finally:
            browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=Store.default_url(), help="results store URL")
    parser.add_argument("run", help="run id, or 'latest'")
    parser.add_argument("out", type=Path, help="the HTML file to write")
    parser.add_argument("--screenshot", type=Path, help="also save a full-page PNG here")
    args = parser.parse_args()
    with Store(args.db) as store:
        run_id = store.runs()[0].run_id if args.run == "latest" else args.run
        started = time.perf_counter()
        write_html_report(store, run_id, args.out)
        took = time.perf_counter() - started
        recorded = store.experiment(run_id).recorded
    print(f"run {run_id}: {recorded} loads, report in {took * 1000:.0f} ms, "
          f"{args.out.stat().st_size / 1024:.0f} KiB -> {args.out}")
    if args.screenshot:
        screenshot(args.out, args.screenshot)
        print(f"screenshot -> {args.screenshot}")


if __name__ == "__main__":
    main()
