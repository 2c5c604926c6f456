"""The HTML report in real Chromium: it renders offline, every chart drawn, nothing
fetched, no script, no label over another (the page itself: `test_html.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from pagebench.analysis.report.html import write_html_report
from pagebench.lab.browser import CHROMIUM
from tests.analysis.report.pages import fill_hostile

CHARTS = {"distribution", "rtt", "connections", "waterfall"}


def test_the_page_renders_offline_in_chromium(store, tmp_path):
    if not Path(CHROMIUM).exists():  # the install puts it there
        pytest.fail(f"no Chromium at {CHROMIUM}: run `sudo harness/bootstrap test` (it installs it)")
    fill_hostile(store)
    path = tmp_path / "report.html"
    write_html_report(store, "r1", path)
    errors: list[str] = []
    failed: list[str] = []
    requested: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        try:
            page = browser.new_context(offline=True).new_page()
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
            page.on("requestfailed", lambda request: failed.append(request.url))
            page.on("request", lambda request: requested.append(request.url))
            page.goto(path.as_uri(), wait_until="load")
            charts = page.evaluate(_FIGURES_JS)
            references = page.evaluate(_REFERENCES_JS)
            overlaps = page.evaluate(_OVERLAPS_JS)
            scripts = page.evaluate("document.querySelectorAll('script').length")  # HTML and SVG
        finally:
            browser.close()
    assert errors == [] and failed == []
    assert requested == [path.as_uri()]
    assert {chart["name"] for chart in charts} == CHARTS and len(charts) == 3 + 8  # a waterfall per condition
    for chart in charts:
        assert chart["width"] > 100 and chart["height"] > 50 and chart["marks"] > 0, chart
    assert references == [] and scripts == 0
    assert overlaps == []


_FIGURES_JS = """() => [...document.querySelectorAll('figure.chart')].map(figure => {
  const svg = figure.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  return {name: figure.dataset.chart, width: box.width, height: box.height,
          marks: svg ? svg.querySelectorAll('rect, circle, line, path').length : 0};
})"""

#: Every attribute that could make the page fetch something, and every CSS url().
_REFERENCES_JS = """() => {
  const names = ['src', 'href', 'xlink:href', 'srcset', 'data', 'poster', 'action', 'background'];
  const found = [];
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      if (names.includes(attribute.name) && !attribute.value.startsWith('#')) found.push(attribute.value);
      if (attribute.name === 'style' && attribute.value.includes('url(')) found.push(attribute.value);
    }
  }
  for (const sheet of document.styleSheets)
    for (const rule of sheet.cssRules) if (rule.cssText.includes('url(')) found.push(rule.cssText);
  return found;
}"""

#: Pairs of SVG labels whose glyphs would overlap (line boxes trimmed to the glyphs' ink).
_OVERLAPS_JS = """() => {
  const found = [];
  for (const svg of document.querySelectorAll('figure.chart > svg')) {
    const boxes = [...svg.querySelectorAll('text')].map(text => {
      const b = text.getBoundingClientRect();
      return {text: text.textContent, left: b.left, right: b.right, top: b.top + b.height * 0.2,
              bottom: b.bottom - b.height * 0.2};
    });
    for (let i = 0; i < boxes.length; i++)
      for (let j = i + 1; j < boxes.length; j++) {
        const a = boxes[i], b = boxes[j];
        if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
          found.push(svg.closest('figure').dataset.chart + ': ' + a.text + ' / ' + b.text);
      }
  }
  return found;
}"""
