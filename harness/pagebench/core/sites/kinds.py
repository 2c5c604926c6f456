"""The kinds of site an experiment spec's `sites:` entry can name, as one table: how an
entry is recognised and parsed into a typed reference, in the order the kinds are tried.

    kind       a spec names one as                 reference      the lab finds it by
    builtin    a built-in name: modern             BuiltinRef     generating it
    generated  {generate: {images: 20, ...}}       GeneratedRef   generating it
    folder     {name: docs, path: ./site}          FolderRef      its index.html (a copy is served)
    directory  a path (with a /): ./mine           DirectoryRef   its site.yaml, if there
    recorded   a name: mine                        RecordedRef    <data dir>/sites/mine, if imported
    app        {name: shop, app: {command: ...}}   AppRef         starting it (`lab.servers.apps`)
    corpus     {corpus: hars/*.har}                CorpusRef      importing each HAR (`lab.corpus`): many sites

Pure: a kind recognises an entry by its shape alone (a mapping's key, a path, a name) and
parses it into its reference, or raises a one-line SiteError for an entry of its kind
that is malformed. A mapping is the kind whose `key` it holds (the first in the table's
order), and that kind parses the whole mapping: its other keys are its to allow. Whether a directory or an imported site is there is the lab's
question: `lab.sites.resolve` asks each candidate kind's finder in this order and the
first site found wins (a built-in name is never an imported site's); when none is found,
`unknown` lists how each kind is named.

A kind to come is a row here and its finder in `lab.sites.FINDERS` (a finder is also given
the spec's directory). A keyed kind is named by a mapping holding its key and parses the
whole mapping (`{name: docs, path: ./site}`, `{name: shop, app: {...}}`). `app`, served by
a program rather than from files, has its own branch in `lab.sites.materialize` (nothing
to write) and in the server configuration. `summary` is how `site show` and the run's
report describe a site of the kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.sites.app import AppEntry, parse_app
from pagebench.core.sites.app import anchored as app_anchored
from pagebench.core.sites.builtin import CATALOGUE, HINT
from pagebench.core.sites import corpus, folder
from pagebench.core.sites.corpus import CorpusRef, parse_corpus
from pagebench.core.sites.folder import FolderRef, parse_folder
from pagebench.core.sites.generate import GenParams, parse_generate
from pagebench.core.sites.model import SITE_NAME, SiteError


@dataclass(frozen=True)
class BuiltinRef:
    """A built-in site, by name (`builtin.CATALOGUE`)."""

    name: str


@dataclass(frozen=True)
class GeneratedRef:
    """A parametric page: `generate:`'s parameters, validated."""

    params: GenParams


@dataclass(frozen=True)
class DirectoryRef:
    """A site directory of one's own (site.yaml plus a content directory per origin)."""

    path: Path


@dataclass(frozen=True)
class RecordedRef:
    """A site imported from a HAR or recorded from a live page, by its name under the
    data directory's sites/."""

    name: str


@dataclass(frozen=True)
class AppRef:
    """The user's own server process (`core.sites.app`), run from the spec's directory."""

    entry: AppEntry


SiteRef = BuiltinRef | GeneratedRef | FolderRef | DirectoryRef | RecordedRef | AppRef | CorpusRef


@dataclass(frozen=True, eq=False)
class SiteKind:
    """One row of the table: a kind of site a spec can name."""

    name: str
    summary: str
    #: How a spec names one, for the message about an entry no kind found (`{sites}`:
    #: the directory imported sites are kept in).
    hint: str
    #: The entry (a string, or for a `key`ed kind the whole mapping) as this kind's
    #: reference, or None: not one of this kind.
    parse: Callable[[Any], SiteRef | None]
    #: The mapping key a spec names this kind by (`{generate: {...}}`, `{name, path}`);
    #: None: by a string.
    key: str | None = None
    #: A keyed entry with its relative paths made absolute from the spec file's directory
    #: (`anchored`); None: the kind names no path.
    anchor: Callable[[Mapping[str, Any], Path], dict[str, Any]] | None = None


def _builtin(name: str) -> BuiltinRef | None:
    return BuiltinRef(name) if name in CATALOGUE else None


def _generated(entry: Mapping[str, Any]) -> GeneratedRef:
    if set(entry) != {"generate"}:
        raise SiteError(f"site {dict(entry)!r}: generate: takes no other keys")
    return GeneratedRef(parse_generate(entry["generate"]))


def _directory(name: str) -> DirectoryRef | None:
    return DirectoryRef(Path(name)) if "/" in name else None


def _app(entry: Mapping[str, Any]) -> AppRef:
    return AppRef(parse_app(entry))


def _recorded(name: str) -> RecordedRef | None:
    return RecordedRef(name) if SITE_NAME.match(name) else None


BUILTIN = SiteKind("builtin", "a page of the built-in catalogue, generated in memory", HINT, _builtin)
GENERATED = SiteKind("generated", "a parametric page, generated in memory from its parameters",
                     "generate: {images: N, image_bytes: B, origins: K, ...}", _generated, key="generate")
FOLDER = SiteKind("folder", "a static build of one's own (a folder with index.html), served from a copy",
                  "{name: N, path: DIR} (a folder with index.html)", parse_folder, key="path",
                  anchor=folder.anchored)
DIRECTORY = SiteKind("directory", "a site directory of one's own, served where it is",
                     "a directory with site.yaml", _directory)
RECORDED = SiteKind("recorded", "a page imported from a HAR or recorded live, kept in the data directory",
                    "the name of a site imported by `pagebench site import-har` (into {sites})", _recorded)

APP = SiteKind("app", "the user's own server process, started in the lab behind its terminators "
               "(nginx, Caddy, the edge proxy), its responses passed through",
               "{name: NAME, app: {command: \"... {port}\", ready: /health}}", _app, key="app",
               anchor=app_anchored)
CORPUS = SiteKind("corpus", "a page of a corpus of HARs, imported as `site import-har` would (a stand-in "
                  "page where the HAR saved no bodies)", "{corpus: hars/*.har} (a glob or a directory of HARs)",
                  parse_corpus, key="corpus", anchor=corpus.anchored)

#: Every kind, in the order an entry is tried against them.
KINDS: tuple[SiteKind, ...] = (BUILTIN, GENERATED, FOLDER, DIRECTORY, RECORDED, APP, CORPUS)


def candidates(entry: str | Mapping[str, Any]) -> list[tuple[SiteKind, SiteRef]]:
    """The kinds `entry` may name, in the order they are tried, each with the entry as its
    reference; a one-line SiteError for a mapping no kind takes, or for an entry its kind
    cannot parse (`generate:` parameters out of range)."""
    if isinstance(entry, Mapping):
        keyed = [kind for kind in KINDS if kind.key is not None]
        for kind in keyed:
            if kind.key in entry and (ref := kind.parse(entry)) is not None:
                return [(kind, ref)]
        shapes = " or ".join(kind.hint if kind.hint.startswith("{") else f"{{{kind.hint}}}" for kind in keyed)
        raise SiteError(f"site {dict(entry)!r}: a mapping must be {shapes}")
    found = []
    for kind in KINDS:
        if kind.key is None and (ref := kind.parse(str(entry))) is not None:
            found.append((kind, ref))
    return found


def anchored(entry: Any, base: Path) -> Any:
    """A spec entry as it names the same thing from any working directory: a keyed kind's
    relative paths made absolute from `base`, the spec file's directory (other entries,
    and what no kind takes, as they are: parsing judges them)."""
    if isinstance(entry, Mapping):
        for kind in KINDS:
            if kind.key is not None and kind.key in entry:
                return kind.anchor(entry, base) if kind.anchor is not None else entry
    return entry


def unknown(entry: str, sites: str) -> SiteError:
    """The one-line error for an entry no kind found: every way a site can be named
    (`sites`: the directory imported sites are kept in)."""
    return SiteError(f"unknown site {entry!r}; " + "; or ".join(kind.hint.replace("{sites}", sites)
                                                                for kind in KINDS))
