"""`pagebench site ...`: your own page in the lab: a HAR imported, a live page recorded,
and what a site holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pagebench.cli.common import command, err, out, reported

if TYPE_CHECKING:
    from pagebench.core.har.importer import ImportedSite
    from pagebench.core.sites.model import Site

site_app = typer.Typer(no_args_is_help=True, help=(
    "Your own page in the lab: import a HAR, record a live page, show what a site holds."))
#: How many of the requests a recording lacks `site import-har` lists (recording.json has all).
SHOWN_MISSING = 5
#: How many of a HAR's pages `site import-har` lists.
SHOWN_PAGES = 20
NameOpt = Annotated[str, typer.Option("--name", help="The site's name, as experiment specs name it.")]
IntoOpt = Annotated[Optional[Path], typer.Option("--into", help=(
    "The site directory to write (default: <data dir>/sites/NAME, where specs find it by name)."))]
ForceOpt = Annotated[bool, typer.Option("--force", help="Replace another site directory already at --into.")]


def _say(text: str) -> None:
    out.print(escape(text), highlight=False, soft_wrap=True)


def _print_written(site: Site, imported: ImportedSite, missing_note: str) -> None:
    """What an imported or recorded site holds: entry, hosts, requests, and the requests
    that will 404 (`missing_note` says why)."""
    from pagebench.analysis.report.text import human_bytes

    recording = imported.recording
    if len(imported.pages) > 1 and imported.page is not None:
        _say(f"  page {imported.page + 1} of {len(imported.pages)} (--page ID|TITLE|N imports another):")
        for number, line in enumerate(imported.pages[:SHOWN_PAGES]):
            _say(f"    {line}{'   <- imported' if number == imported.page else ''}")
        if len(imported.pages) > SHOWN_PAGES:
            _say(f"    and {len(imported.pages) - SHOWN_PAGES} more")
    _say(f"  entry: {site.entry}")
    width = max(len(original) for original in recording.hosts)
    for number, (original, lab) in enumerate(recording.hosts.items()):
        _say(f"  {'hosts:' if number == 0 else '':<6} {original:<{width}} -> {lab}")
    _say(f"  {len(recording.exchanges)} request(s), {human_bytes(imported.total_bytes)} of bodies, "
         f"{len(site.origins)} origin(s)")
    if recording.missing:
        _say(f"  {len(recording.missing)} request(s) will 404 ({missing_note}):")
        for line in recording.missing[:SHOWN_MISSING]:
            _say(f"    {line if len(line) <= 160 else line[:157] + '...'}")
        if len(recording.missing) > SHOWN_MISSING:
            _say(f"    and {len(recording.missing) - SHOWN_MISSING} more (all in {site.root / 'recording.json'})")
    for why, count in imported.left_out.items():
        _say(f"  {count} request(s) left out: {why}")


@command(site_app, "import-har")
def site_import_har(
    har: Annotated[Path, typer.Argument(help=(
        "The HAR file, .har or gzip-compressed .har.gz (Chrome DevTools, Firefox, WebPageTest, browsertime, "
        "Playwright with content embedded, mitmproxy's savehar); bodies it did not save are made."))],
    name: NameOpt,
    into: IntoOpt = None,
    force: ForceOpt = False,
    page: Annotated[Optional[str], typer.Option("--page", help=(
        "The page to import from a HAR of several: its id, its title (or a unique start of it, "
        "e.g. 'Run 2, Repeat View'), or its number N in the order the pages started (default: "
        "WebPageTest's first view of the first run, else the first page)."))] = None,
    synthesize: Annotated[bool, typer.Option("--synthesize", help=(
        "Make every body (a stand-in page of the recorded sizes, parents and kinds) even where the HAR "
        "saved them; a HAR without bodies is synthesized anyway."))] = False,
    no_server_time: Annotated[bool, typer.Option("--no-server-time", help=(
        "Answer every response at once. By default each waits its server think time, the HAR's "
        "timings.wait less one round trip (the link adds the lab's own), in the modes nginx serves."))] = False,
) -> None:
    """Import a page of a HAR as a site: every recorded response is replayed, in every
    protocol mode, by the lab's servers; a request the HAR lacks is a 404, counted per load.
    Bodies the HAR did not save (WebPageTest, Firefox, the HTTP Archive) are made: a stand-in
    page with a fidelity report."""
    from pagebench.lab import sites as sitefiles
    from pagebench.lab.imported import read_har, write_imported

    imported = read_har(har, name, page, synthesize_all=synthesize, server_time=not no_server_time)
    site = write_imported(imported, into if into is not None else sitefiles.sites_dir() / name, replace=force)
    _say(f"imported {site.name} from {har} into {site.root}")
    _print_written(site, imported, "the HAR cannot replay them")
    if imported.integrity_removed:
        _say(f"  {imported.integrity_removed} integrity attribute(s) removed from HTML (rewritten bodies "
             "would fail their SRI hashes)")
    if imported.dropped_headers:
        shown = ", ".join(f"{name} ({count})" for name, count in list(imported.dropped_headers.items())[:8])
        more = len(imported.dropped_headers) - 8
        _say(f"  dropped headers: {shown}" + (f" and {more} more" if more > 0 else ""))
    for warning in imported.warnings:
        _say(f"  warning: {warning}")
    if imported.fidelity is not None:
        for line in imported.fidelity.lines():
            _say(f"  {line}")
    _say_think(site)


def _say_think(site: Site) -> None:
    """The site's server think time, and where it is not applied."""
    from pagebench.core.modes import MODES
    from pagebench.core.servers.replay import think_note

    line = think_note(site, MODES)
    if line is not None:
        _say(line)


@command(site_app, "show")
def site_show(
    site: Annotated[str, typer.Argument(help=(
        "A built-in site's name, an imported site's name, a site directory, a folder with index.html, "
        "or a spec's folder entry as YAML: '{name: docs, path: ./site, origins: {cdn.example.com: ./cdn}}' "
        "(paths relative to here)."))],
) -> None:
    """What a site holds: its kind, origins (with the hosts they were recorded as), requests,
    bytes by type and the dependency levels (the lower bound's round trips); for a folder,
    the other hosts its pages name and whether the lab serves them."""
    from pagebench.analysis.report.text import human_bytes
    from pagebench.core.sites.describe import describe
    from pagebench.core.sites.folder import UNSERVED, FolderSite
    from pagebench.core.sites.model import Site, SiteError
    from pagebench.lab import sites as sitefiles
    from pagebench.lab.imported import read_fidelity

    if site.lstrip().startswith("{"):
        import yaml

        try:
            entry = yaml.safe_load(site)
        except yaml.YAMLError as error:
            raise SiteError(f"{site}: not a YAML mapping ({str(error).splitlines()[0]})") from None
        kind, found = sitefiles.found(entry if isinstance(entry, dict) else site)
    elif "/" in site or Path(site).is_dir():
        kind, found = sitefiles.found_at(Path(site))
    else:
        kind, found = sitefiles.found(site)
    summary = describe(found, sitefiles.file_sizes(found) if isinstance(found, Site) else None)
    where = f" in {found.root}" if isinstance(found, Site) else ""
    out.print(escape(f"{summary.name} ({kind.name}{where}): {summary.entry}"), highlight=False, soft_wrap=True)
    out.print(escape(f"{kind.name}: {kind.summary}"), highlight=False, soft_wrap=True)
    if summary.source:
        out.print(escape(f"recorded from {summary.source}"), highlight=False, soft_wrap=True)
    out.print(f"{summary.requests} request(s), {human_bytes(summary.bytes)}, {len(summary.origins)} origin(s), "
              f"dependency depth {summary.depth}", highlight=False)
    recorded = any(origin.original for origin in summary.origins)
    table = Table(title="origins")
    for column in ("origin", *(("recorded as",) if recorded else ()), "requests", "bytes"):
        table.add_column(column, justify="right" if column in ("requests", "bytes") else "left")
    for origin in summary.origins:
        table.add_row(escape(origin.name), *((escape(origin.original or ""),) if recorded else ()),
                      str(origin.requests), human_bytes(origin.bytes))
    out.print(table)
    table = Table(title="types")
    for column in ("type", "requests", "bytes"):
        table.add_column(column, justify="left" if column == "type" else "right")
    for share in summary.types:
        table.add_row(share.name, str(share.requests), human_bytes(share.bytes))
    out.print(table)
    most = max((n for _, n in summary.levels), default=1)
    out.print("dependency levels (0: the page; each level needs one before it):", highlight=False)
    for level, count in summary.levels:
        out.print(f"  {level:>2}  {count:>5}  {'#' * max(1, round(40 * count / most))}", highlight=False)
    if summary.missing:
        out.print(f"{len(summary.missing)} request(s) the recording lacks will 404", highlight=False)
    report = read_fidelity(found) if isinstance(found, Site) else None
    for line in report.lines() if report is not None else ():
        _say(line)
    if isinstance(found, Site):
        _say_think(found)
    if isinstance(found, FolderSite):
        hosts = sitefiles.external(found)
        out.print(f"other hosts its pages name in absolute URLs: {len(hosts) or 'none'}", highlight=False)
        for host in hosts:
            _say(f"  {host.line()}")
        if any(host.served_as is None for host in hosts):
            _say(UNSERVED)


@command(site_app, "record")
def site_record(
    url: Annotated[str, typer.Argument(help="The page to record (http:// or https://).")],
    name: NameOpt,
    into: IntoOpt = None,
    force: ForceOpt = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1.0, help=(
        "Seconds for the load: to `load`, then until the network is quiet (what came by then is "
        "recorded)."))] = 30.0,  # record.DEFAULT_TIMEOUT_S (not imported here: it loads Playwright)
    resolve: Annotated[Optional[list[str]], typer.Option("--resolve", help=(
        "HOST=IP: connect to IP for HOST (repeatable), e.g. a staging server under its public name; "
        "the certificate is still checked for HOST."))] = None,
    upstream_ca: Annotated[Optional[Path], typer.Option("--upstream-ca", exists=True, dir_okay=False, help=(
        "PEM file of CA certificates trusted besides the system's when checking the site's."))] = None,
) -> None:
    """Record a live page: one cold load in Chromium through mitmproxy (which checks the
    site's certificates), written as a site the way `site import-har` writes one."""
    from pagebench.lab import sites as sitefiles
    from pagebench.lab.record.recorder import parse_resolve, record_site
    from pagebench.system.signals import signals_raise

    mapping = parse_resolve(resolve or [])
    with reported(interrupted="interrupted; nothing was written, mitmproxy and Chromium are stopped"), \
            signals_raise(), err.status(escape(f"recording {url}")) as status:
        recorded = record_site(url, name, into if into is not None else sitefiles.sites_dir() / name,
                               replace=force, timeout_s=timeout, resolve=mapping, extra_ca=upstream_ca,
                               step=lambda text: status.update(escape(text)))
    site, imported = recorded.site, recorded.imported
    _say(f"recorded {site.name} from {url} into {site.root}")
    _print_written(site, imported, "not replayable as recorded")
    for note in (*recorded.notes, *imported.warnings):
        _say(f"  warning: {note}")
    _say_think(site)
