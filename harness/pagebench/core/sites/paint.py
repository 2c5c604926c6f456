"""`paint-progressive` and `paint-at-end`: twins built to differ in what a person sees and
in nothing a load time measures. The same bytes and requests over one origin
(`www.paint.test`): a page, and a large hero image whose scan comes last (so it appears
whole, at once, when its last byte arrives: `media.jpeg` pads before the scan).

  progressive  a header band (HEADER_SHARE of the viewport's coloured area) paints at
               once; the hero, the rest of the viewport, when it arrives
  at-end       the same page kept transparent until `load`, then shown whole

So the design predicts their SpeedIndex from the browser's own paint times: the
progressive twin's is FCP + (1 - HEADER_SHARE) x (hero's paint - FCP) (its LCP is the
hero); the at-end twin's is its first paint (everything at once). Their load times are
the same page's (`tests/runner/test_paint_e2e.py` checks both).
"""

from __future__ import annotations

from pagebench.core.sites.media import jpeg
from pagebench.core.sites.model import GeneratedSite
from pagebench.core.sites.pages import html_page, manifest

ORIGIN = "www.paint.test"
#: Playwright's default viewport, which the page fills: a header band over the hero.
WIDTH, HEIGHT, HEADER = 1280, 720, 180
#: The header's share of the coloured pixels when complete (its white title aside).
HEADER_SHARE = HEADER / HEIGHT
HERO_BYTES = 1_500_000
HTML_BYTES = 8_000
#: Far from the hero's grey in every channel (`media.colour("paint/hero")`: 106).
HEADER_COLOUR = "rgb(20, 160, 200)"
VARIANTS = ("progressive", "at-end")


def paint(variant: str) -> GeneratedSite:
    """The twin `variant` (VARIANTS): the same files but for how the page shows itself."""
    at_end = variant == "at-end"
    hidden = ' style="opacity: 0"' if at_end else ""
    reveal = ["<script>addEventListener('load', () => { document.getElementById('page').style.opacity = 1; });"
              "</script>"] if at_end else []
    body = [f'<div id="page"{hidden}>',
            f'<header style="height: {HEADER}px; background: {HEADER_COLOUR}; color: #fff; '
            'font: bold 40px sans-serif; margin: 0">Paint test</header>',
            f'<img src="/hero.jpg" width="{WIDTH}" height="{HEIGHT - HEADER}" alt="" style="display: block">',
            "</div>", *reveal]
    head = ["<style>body { margin: 0; overflow: hidden; }</style>"]
    files = {f"{ORIGIN}/index.html": html_page(f"paint-{variant}", head, body, HTML_BYTES, "paint/index"),
             f"{ORIGIN}/hero.jpg": jpeg(HERO_BYTES, WIDTH, HEIGHT - HEADER, "paint/hero")}
    return GeneratedSite(manifest(f"paint-{variant}", [ORIGIN]), files)


def predicted_speed_index(variant: str, fcp_ms: float, lcp_ms: float) -> float:
    """What the design predicts a load's SpeedIndex to be from its paint times."""
    if variant == "at-end":
        return fcp_ms
    return fcp_ms + (1 - HEADER_SHARE) * (lcp_ms - fcp_ms)
