"""What every generated page is made of: its HTML frame, its manifest, and the small
scripts that insert content after the load starts (the later waves of requests).

Links across origins are scheme-relative (`//host/path`), so one page serves over TLS and
over cleartext HTTP (`tls: none`); every page has `<link rel="icon" href="data:,">` (no
favicon request).
"""

from __future__ import annotations

from pagebench.core.sites.model import SiteError, SiteManifest
from pagebench.core.sites.text import paragraphs


def html_page(title: str, head: list[str], body: list[str], size: int = 0, seed: str = "") -> bytes:
    """A page with `head` and `body` lines, padded to `size` bytes when given with
    paragraphs of prose (text that compresses as text does, and that versions edit)."""
    text = "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>", '<link rel="icon" href="data:,">', *head, "</head>", "<body>", *body,
    ]) + "\n"
    end = "</body>\n</html>\n"
    if not size:
        return (text + end).encode()
    room = size - len(text.encode()) - len(end)
    if room == 0:
        return (text + end).encode()
    if room < 9:
        raise SiteError(f"html_bytes: at least {len(text.encode()) + len(end) + 9} for this page (got {size})")
    return text.encode() + paragraphs(seed or title, room) + end.encode()



def manifest(name: str, origins: list[str], path: str = "/") -> SiteManifest:
    """A generated site's manifest: its entry is `path` on the first origin."""
    return SiteManifest(name=name, entry=f"https://{origins[0]}{path}", origins=tuple(origins))


def on_ready(code: str) -> str:
    """JavaScript running `code` once the document is parsed."""
    return ("(function () {\n  function run() {\n" + code + "\n  }\n"
            "  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);\n"
            "  else run();\n})();")


def insert_images(box: str, urls: list[str], width: int, height: int) -> str:
    """JavaScript inserting images into the element `box` (requests the HTML does not name)."""
    return (f"    var box = document.getElementById('{box}');\n    {urls!r}.forEach(function (u) {{\n"
            f"      var i = new Image({width}, {height}); i.src = u; i.alt = ''; box.appendChild(i);\n    }});")
