"""Dependency levels of a recorded page's requests: what the analytic lower bound counts
round trips by (0 the entry document and its redirects, 1 what it names, 2 what those
name, ...).

A HAR does not say which request made which; Chrome's (or WebPageTest's) initiator does,
else the Referer, else nothing (level 1). Without initiators the levels err low, so a
lower bound made from them stays a bound.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pagebench.core.har.mime import extension
from pagebench.core.har.parse import HarEntry, HarError
from pagebench.core.sites.recording import REDIRECTS


def _is_html(entry: HarEntry) -> bool:
    """Whether a request's body is an HTML document (by its Content-Type)."""
    return extension(entry.mime_type, entry.resource_type) == "html"


def entry_chain(entries: list[HarEntry], where: str) -> list[HarEntry]:
    """The entry document's requests: the first request whose redirects (followed through
    the recorded requests) end at an HTML response, and that chain."""
    by_url: dict[str, list[HarEntry]] = {}
    for entry in entries:
        by_url.setdefault(entry.url, []).append(entry)
    for start in entries:
        if start.method != "GET" or urlsplit(start.url).scheme.lower() not in ("http", "https"):
            continue
        chain, entry = [start], start
        while entry.status in REDIRECTS and entry.location() and len(chain) < 20:
            seen = {e.index for e in chain}
            later = [e for e in by_url.get(entry.location() or "", []) if e.started >= entry.started
                     and e.index not in seen]
            if not later:
                break
            entry = later[0]
            chain.append(entry)
        if entry.status in (200, 203, 304) and _is_html(entry):
            return chain
    raise HarError(f"{where}: no HTML document among the page's requests")


def dependency_levels(entries: list[HarEntry], chain: list[HarEntry]) -> dict[int, int]:
    """Dependency level of each request (by index), in the order they started:
    - 0: the entry document and its redirects;
    - with an initiator (Chrome's `_initiator`: the document or stylesheet that parsed it,
      or the script at the top of the stack; WebPageTest's URL): the level of the first
      request of that URL + 1 (a document's parser -> 1, a stylesheet's font -> 2, ...);
    - without one, the Referer: a recorded URL's level + 1; an origin alone (the usual
      cross-origin Referer) means a stylesheet or document of that origin: the lowest level
      of those finished before this request started, + 1; no Referer (or no match): 1.
    Script-inserted requests without an initiator carry the document as Referer and get 1:
    the levels err low, so a lower bound made from them stays a bound."""
    levels: dict[int, int] = {e.index: 0 for e in chain}
    by_url: dict[str, int] = {e.url: 0 for e in chain}
    done: list[HarEntry] = []
    for entry in entries:
        if entry.index not in levels:
            level = 1
            if entry.initiator is not None and entry.initiator in by_url:
                level = by_url[entry.initiator] + 1
            else:
                referer = (entry.header("referer", response=False) or "").split("#", 1)[0]
                if referer in by_url:
                    level = by_url[referer] + 1
                elif referer:
                    origin = referer.rstrip("/")
                    parents = [levels[e.index] for e in done if e.url.startswith(origin + "/")
                               and e.ended <= entry.started
                               and extension(e.mime_type, e.resource_type) in ("css", "html")]
                    level = min(parents) + 1 if parents else 1
            levels[entry.index] = min(level, 64)
        by_url.setdefault(entry.url, levels[entry.index])
        done.append(entry)
    return levels
