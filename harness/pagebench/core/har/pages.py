"""Which page of a HAR becomes the site: the one asked for (`site import-har --page
ID|TITLE|N`), else the first view of the first run in a WebPageTest HAR (its first and
repeat views of several runs are pages), else the first page to start; a page without an
http(s) request (a failed run) is passed over.

A page is named by its id, its title, its number N in the order the pages started (1:
the first), or a case-insensitive start of its title ("Run 2, Repeat View"), tried in that
order; a title or start that several pages share is refused, listing them. Entries
without a `pageref` belong to the page when there is one page (or none: mitmproxy lists
none); in a HAR of several pages nobody knows whose they are, and they are left out and
counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.har.parse import HarEntry, HarError, HarLog, Skipped

#: How many pages a refusal names before "and N more".
NAMED_PAGES = 8


@dataclass(frozen=True)
class PageChoice:
    """The chosen page's requests, and how many of log.entries it left out and why."""

    page: int | None  # index in `HarLog.pages`; None: the HAR lists no pages
    entries: tuple[HarEntry, ...]
    skipped: tuple[Skipped, ...]  # the page's requests no server is asked for
    left_out: dict[str, int]  # reason -> requests of other pages, or of none


def page_line(har: HarLog, index: int) -> str:
    """`N id "title" (R requests)`, as listings and refusals name a page."""
    page = har.pages[index]
    title = f' "{page.title[:100]}"' if page.title else ""
    requests = har.requests(index)
    return f"{index + 1} {page.id[:60]}{title} ({requests} request{'' if requests == 1 else 's'})"


def _listing(har: HarLog) -> str:
    shown = [page_line(har, i) for i in range(min(len(har.pages), NAMED_PAGES))]
    more = len(har.pages) - NAMED_PAGES
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def default_page(har: HarLog) -> int:
    """The page imported when none is asked for: WebPageTest's first view of its first run
    (its first step), else the first page to start; of those with an http(s) request (a
    failed run has none), when any has."""
    loaded = {e.page for e in har.entries}
    usable = [i for i in range(len(har.pages)) if i in loaded] or list(range(len(har.pages)))
    runs = [i for i in usable if har.pages[i].run is not None]
    if not runs:
        return usable[0] if usable else 0
    first_views = [i for i in runs if har.pages[i].repeat is False] or runs
    return min(first_views, key=lambda i: (har.pages[i].run or 0, har.pages[i].step or 1, i))


def find_page(har: HarLog, wanted: str, source: str) -> int:
    """The page `wanted` names (id, title, N, or a start of a title); a one-line HarError
    listing the pages when it names none, or several."""
    pages, name = har.pages, wanted.strip()
    if wanted in (page.id for page in pages):
        return next(i for i, page in enumerate(pages) if page.id == wanted)
    titled = [i for i, page in enumerate(pages) if name and page.title == name]
    if name.isdigit() and not titled and 1 <= int(name) <= max(len(pages), 1):
        return int(name) - 1
    starts = titled or [i for i, page in enumerate(pages) if name and page.title.lower().startswith(name.lower())]
    if len(starts) == 1:
        return starts[0]
    if not pages:
        raise HarError(f"{source}: page {wanted!r}: the HAR lists no pages (its requests are one page, 1)")
    if starts:
        raise HarError(f"{source}: page {wanted!r}: the {'title' if titled else 'start of the titles'} of "
                       f"{len(starts)} pages; name one by id or number: "
                       + "; ".join(page_line(har, i) for i in starts[:NAMED_PAGES]))
    raise HarError(f"{source}: no page {wanted!r} (an id, a title, or 1-{len(pages)}); the HAR's pages: "
                   f"{_listing(har)}")


def choose_page(har: HarLog, source: str, wanted: str | None = None) -> PageChoice:
    """The requests of the page `wanted` names (None: `default_page`); a one-line
    HarError when it names none or has no http(s) request."""
    if not har.pages:
        if wanted is not None:
            find_page(har, wanted, source)
        return PageChoice(None, har.entries, har.skipped, {})
    index = find_page(har, wanted, source) if wanted is not None else default_page(har)
    alone = len(har.pages) == 1

    def mine(page: int | None) -> bool:
        return page == index or (alone and page is None)

    entries = tuple(e for e in har.entries if mine(e.page))
    skipped = tuple(s for s in har.skipped if mine(s.page))
    if not entries:
        raise HarError(f"{source}: page {page_line(har, index)} has no http(s) request; the HAR's pages: "
                       f"{_listing(har)}")
    left_out: dict[str, int] = {}
    refs = [e.page for e in har.entries] + [s.page for s in har.skipped]
    others = sum(ref is not None and not mine(ref) for ref in refs)
    if others:
        left_out[f"of the HAR's {len(har.pages) - 1} other page(s)"] = others
    orphans = refs.count(None) if not alone else 0
    if orphans:
        left_out[f"name no page (no pageref) in a HAR of {len(har.pages)} pages: whose they are is unknown"] = orphans
    return PageChoice(index, entries, skipped, left_out)
