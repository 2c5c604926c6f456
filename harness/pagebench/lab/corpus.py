"""A corpus's pages on disk (`core.sites.corpus`): its HAR files found, and each imported
once into a cache the next run reuses,

    <data dir>/sites/.corpus/<page name>-<digest>/   a site directory as `site import-har` writes

where the digest covers the HAR's bytes, the entry's options and the importer's own
source (`core/har`), so a changed HAR or a changed importer makes the page again and an
unchanged corpus costs a directory read per page. A HAR that cannot be imported is left
out with a note naming the file and why (one bad page does not stop a study of many); a
corpus none of whose HARs imports is a one-line error.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pagebench.core import har as har_package
from pagebench.core.har.fidelity import FIDELITY_FILE
from pagebench.core.har.parse import HarError
from pagebench.core.sites import describe
from pagebench.core.sites.corpus import CorpusRef, is_har, page_name, traits
from pagebench.core.sites.model import Site, SiteError
from pagebench.lab.imported import read_har, write_imported
from pagebench.lab.sites import file_sizes, load_site, sites_dir


@dataclass(frozen=True)
class Page:
    """One page of a corpus: its HAR, its site on disk and its traits."""

    har: Path
    site: Site
    traits: dict[str, int]
    synthesized: bool


def files(ref: CorpusRef) -> list[Path]:
    """The corpus's HAR files, sorted by name: a directory's `*.har` and `*.har.gz`, or
    what the glob matches (HARs only); a one-line SiteError when there are none."""
    where = Path(ref.pattern)
    if where.is_dir():
        found = [path for path in where.iterdir() if path.is_file() and is_har(path.name)]
        if not found:
            raise SiteError(f"corpus: {where}: no *.har or *.har.gz files in it")
    else:
        matched = [Path(p) for p in glob.glob(ref.pattern, recursive=True)]
        found = [path for path in matched if path.is_file() and is_har(path.name)]
        if not found:
            what = f"matches {len(matched)} file(s), none a .har or .har.gz" if matched else "matches nothing"
            raise SiteError(f"corpus: {ref.pattern}: {what}")
    return sorted(found, key=lambda path: (path.name, str(path)))


def _importer_digest() -> bytes:
    """The importer's source: a page imported by another importer is made again."""
    digest = hashlib.sha256()
    for source in sorted(Path(har_package.__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return digest.digest()


def pages(ref: CorpusRef, base: Path | None = None, status: Callable[[str], None] = lambda _: None,
          left_out: Callable[[str], None] = lambda _: None) -> list[Page]:
    """Every page of the corpus, imported (or read from the cache), in file-name order;
    `status` hears each page being imported (not those the cache holds), `left_out` each
    HAR that could not be (with why). One-line SiteErrors: no HARs, two files with one page name, none imported."""
    paths = files(ref)
    named: dict[str, Path] = {}
    for path in paths:
        name = page_name(path.name)
        if name in named:
            raise SiteError(f"corpus: {named[name]} and {path} are both page {name} (a page is named after its "
                            "file); rename one")
        named[name] = path
    parent = sites_dir(base) / ".corpus"
    for directory in (parent.parent.parent, parent.parent, parent):
        directory.mkdir(mode=0o755, exist_ok=True)
    importer = _importer_digest()
    out: list[Page] = []
    with open(parent / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for number, (name, path) in enumerate(named.items(), 1):
            try:
                out.append(_page(path, name, ref, parent, importer,
                                 lambda: status(f"corpus: importing page {number}/{len(named)}: {path.name}")))
            except (HarError, SiteError, OSError) as error:
                left_out(f"corpus: {path}: left out: {str(error).splitlines()[0] if str(error) else error!r}")
    if not out:
        raise SiteError(f"corpus: {ref.pattern}: none of its {len(named)} HAR(s) could be imported (the notes say why)")
    return out


def _page(path: Path, name: str, ref: CorpusRef, parent: Path, importer: bytes,
          importing: Callable[[], None]) -> Page:
    """One page, from the cache when it holds this HAR imported by this importer, else
    imported into it (`importing` hears it; older imports of the same page go)."""
    options = bytes([ref.synthesize, ref.server_time])
    digest = hashlib.sha256(importer + options + path.read_bytes()).hexdigest()[:16]
    into = parent / f"{name}-{digest}"
    if not (into / "site.yaml").is_file():
        importing()
        imported = read_har(path, name, synthesize_all=ref.synthesize, server_time=ref.server_time)
        for old in parent.glob(f"{name}-*"):
            if old.name != into.name and len(old.name) == len(into.name):
                shutil.rmtree(old, ignore_errors=True)
        write_imported(imported, into)
    site = load_site(into)
    summary = describe.describe(site, file_sizes(site))
    synthesized = (into / FIDELITY_FILE).is_file()
    return Page(path, site, traits(summary.requests, len(summary.origins), summary.bytes, summary.depth), synthesized)
