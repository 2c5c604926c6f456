"""Seed 001 on real successive versions of real pages: the web site of toybox
(https://landley.net/toybox/, its repository's `www/`, 0BSD), kept as data in
`data/toybox-www.tar.xz` (`tests/fixtures/make_toybox_history.py` made it and states the
rule: every text page of `www/` with at least 5 instances, its last 5; provenance and
licence in `data/README.md`).

The seed's traces computed a delta "based on the previous status-200 instance" of the
same URL (section 5.4), so each built-in `seed001-toybox-<page>-<k>` (k = 2..5) is a pair:
version 1 is the page's instance k - 1, version 2 its instance k; a warm load of version 2
after version 1 is the delta-eligible response. Pure: the archive is the package's own
data, read once (as a module's bytes would be), never written.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from functools import cache
from importlib import resources

from pagebench.core import encodings
from pagebench.core.sites.model import GeneratedSite, SiteError, SiteManifest
from pagebench.core.sites.pages import manifest

HOST = "www.toybox.test"
ARCHIVE = "toybox-www.tar.xz"
#: The archive's pages (checked against it by the tests), so the catalogue of built-in
#: names needs no read; and the instances kept of each.
PAGES = ("about.html", "cleanup.html", "code.html", "design.html", "faq.html", "header.html", "license.html",
         "news.html", "release.txt", "roadmap.html")
INSTANCES = 5
PREFIX = "seed001-toybox-"


@dataclass(frozen=True)
class Instance:
    """One version of a page as the site's history has it: the commit that made it."""

    page: str
    number: int  # 1 .. INSTANCES, oldest first
    commit: str
    date: str  # YYYY-MM-DD
    body: bytes


@cache
def instances() -> dict[str, tuple[Instance, ...]]:
    """page -> its instances, oldest first (members `<page>/<k>-<commit>-<date>`)."""
    data = resources.files("pagebench.core.sites").joinpath("data", ARCHIVE).read_bytes()
    found: dict[str, list[Instance]] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as tar:
        for member in tar.getmembers():
            page, stem = member.name.split("/", 1)
            number, commit, date = stem.split("-", 2)
            body = tar.extractfile(member).read()  # type: ignore[union-attr]
            found.setdefault(page, []).append(Instance(page, int(number), commit, date, body))
    return {page: tuple(sorted(found[page], key=lambda i: i.number)) for page in sorted(found)}


def stem(page: str) -> str:
    return page.rsplit(".", 1)[0]


def pair_names() -> tuple[str, ...]:
    """Every pair's built-in name, page by page, oldest first."""
    return tuple(f"{PREFIX}{stem(page)}-{k}" for page in PAGES for k in range(2, INSTANCES + 1))


def pair_of(site: str) -> tuple[str, int]:
    """`seed001-toybox-news-3` -> ("news.html", 3); ("", 0) for a name not a pair's."""
    name, _, k = site.removeprefix(PREFIX).rpartition("-")
    page = next((p for p in PAGES if stem(p) == name), "") if site.startswith(PREFIX) else ""
    return (page, int(k)) if page and k.isdigit() else ("", 0)


def content_type(site: str) -> str:
    """The Content-Type a pair's page is served as (seed 001 table 5-5's rows), or ""."""
    page = pair_of(site)[0]
    return "" if not page else "text/plain" if page.endswith(".txt") else "text/html"


def pair(page: str, k: int) -> GeneratedSite:
    """The page's instance k - 1 as version 1 and instance k as version 2."""
    if page not in PAGES or not 2 <= k <= INSTANCES:
        raise SiteError(f"seed001-toybox: page must be one of {', '.join(PAGES)} and k 2..{INSTANCES} "
                        f"(got {page!r}, {k})")
    before, after = instances()[page][k - 2], instances()[page][k - 1]
    path = f"{HOST}/{page}"
    changed = [path] if after.body != before.body else []
    site = manifest(f"{PREFIX}{stem(page)}-{k}", [HOST], f"/{page}")
    site = SiteManifest.model_validate(site.model_dump() | {
        "versions": 2, "dictionaries": {path: encodings.available_dictionary(before.body)},
        "changed": {2: changed}})
    return GeneratedSite(site, {path: before.body}, later=({path: after.body},))
