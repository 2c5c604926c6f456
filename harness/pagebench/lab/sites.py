"""Sites on disk: a site directory (`site.yaml` plus one content directory per origin)
read, a generated site written once (world-readable: nginx's workers run as nobody), and
what a spec names resolved to one or the other.

    <data dir>/sites/<name>/site.yaml             name, entry, origins, headers (per path glob)
    <data dir>/sites/<name>/<origin host>/...     what that origin serves in version 1 (its root)
    <data dir>/sites/<name>/v<k>/<origin host>/   version k > 1: every file again
    <data dir>/sites/<name>/.digest               sha256 of the generated content
    <data dir>/sites/<name>/encoding-cost.json    the CPU each encoding cost when written

Every text file (`encodings.is_text`) of every version has its precompressed sidecars
beside it (`style.css.gz`, `.br`, `.zst`), so the servers spend no CPU compressing and
each encoding's cost is measured once, here (seed 001 section 8.4; its table 6-4 asks what
compression costs). In `v<k>`, a text file that differs from version 1 also has its
delta, `style.css.<dictionary_id(v1 body)>.dcz`. The mtimes are fixed so that a server's
ETag and Last-Modified (mtime and size) are the same for a file in every version it is
unchanged in (a revalidation is a 304) and differ where it changed: version 1 and the
unchanged files of later versions (hard links to version 1's) BASE_MTIME, a file changed
in version k (and its sidecars) BASE_MTIME + k days.

What a spec names is found by its kind (`core.sites.kinds`): `resolve` asks each
candidate kind's finder (`FINDERS`), reading but never writing, and `materialize` puts
the site found on disk for the servers. Imported and recorded sites are written by
`lab.imported`.

A folder site (`core.sites.folder`) is never written where it is (a team's build output):
it is served from a copy, `<data dir>/sites/.folders/<name>-<digest>/<host>/...`, made
once per content (its digest: every file's path, bytes and mtime) and replaced when the
folder changes (the team's next build). Files are hard links where the file system allows
and the file is world-readable already (nginx's workers run as nobody; a link's mode is
the user's file's, never changed here), else copies; mtimes are kept, so ETag and
Last-Modified are those a deployment of that build would send. Text files get their
sidecars beside them in the copy. When the entry maps other hosts (`origins:`), text
files naming them are rewritten to their lab hosts (`core.har.rewrite`, as imported
sites are: integrity attributes and <meta> CSP leave the HTML).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pagebench.core import encodings
from pagebench.core.har.rewrite import Rewriter, rewrite_body
from pagebench.core.sites import kinds
from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.folder import INDEX, ExternalHost, FolderRef, FolderSite, FoundUrl, absolute_urls
from pagebench.core.sites.folder import external_hosts, folder_manifest, relative
from pagebench.core.sites.generate import generate
from pagebench.core.sites.kinds import AppRef, BuiltinRef, DirectoryRef, GeneratedRef, RecordedRef, SiteKind
from pagebench.core.sites.model import (
    SITE_NAME,
    GeneratedSite,
    Site,
    SiteError,
    manifest_yaml,
    one_line,
    parse_manifest,
)
from pagebench.core.sites.recording import Recording
from pagebench.system.places import data_dir


def load_site(directory: Path) -> Site:
    """A site directory: `site.yaml` plus one content directory per origin."""
    directory = Path(directory)
    path = directory / "site.yaml"
    try:
        text = path.read_text()
    except OSError as error:
        raise SiteError(f"{path}: cannot read ({error.strerror})") from None
    manifest = parse_manifest(text, str(path))
    for host in manifest.origins:
        if not (directory / host).is_dir():
            raise SiteError(f"{path}: origins: no content directory {directory / host}")
    recording = None
    if manifest.recording is not None:
        recording = parse_recording(directory / manifest.recording)
        unknown = sorted({e.host for e in recording.exchanges} - set(manifest.origins))
        if unknown:
            raise SiteError(f"{directory / manifest.recording}: exchanges: host {unknown[0]} is not one of "
                            "the site's origins")
    return Site(manifest, directory, recording)


def parse_recording(path: Path) -> Recording:
    """A `recording.json`, or a one-line SiteError naming it and the field at fault."""
    try:
        text = path.read_text()
    except OSError as error:
        raise SiteError(f"{path}: cannot read ({error.strerror})") from None
    try:
        return Recording.model_validate_json(text)
    except ValidationError as error:
        raise one_line(str(path), error) from None


def sites_dir(base: Path | None = None) -> Path:
    """Where generated, imported and recorded sites are kept: `<data dir>/sites`."""
    return (Path(base) if base is not None else data_dir()) / "sites"


def find_imported(name: str, base: Path | None = None) -> Site | None:
    """The imported (or recorded) site called `name` under `sites_dir()`, or None; a
    broken one is a one-line SiteError naming its file."""
    directory = sites_dir(base) / name
    if not SITE_NAME.match(name) or not (directory / "site.yaml").is_file():
        return None
    site = load_site(directory)
    return site if site.recording is not None else None


def file_sizes(site: Site) -> dict[str, int]:
    """"<host>/<path>" -> bytes of every file a site's origins hold (version 1; sidecars
    included, hidden files not): what `core.sites.describe` counts for a site on disk."""
    sizes: dict[str, int] = {}
    for host in site.origins:
        root = site.origin_root(host)
        for directory, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in names:
                if not name.startswith("."):
                    path = Path(directory) / name
                    sizes[f"{host}/{path.relative_to(root).as_posix()}"] = path.stat().st_size
    return sizes


# What a spec names ----------------------------------------------------------------------------


def _builtin(ref: BuiltinRef, spec_dir: Path) -> GeneratedSite:
    return builtin(ref.name)


def _generated(ref: GeneratedRef, spec_dir: Path) -> GeneratedSite:
    return generate(ref.params)


def _directory(ref: DirectoryRef, spec_dir: Path) -> Site | None:
    return load_site(ref.path) if (ref.path / "site.yaml").exists() else None


def _recorded(ref: RecordedRef, spec_dir: Path) -> Site | None:
    return find_imported(ref.name)


def _app(ref: AppRef, spec_dir: Path) -> Site:
    """An app site: nothing on disk but the directory its process runs in (`dir`, else the
    spec's; none for an app given by `url`: it runs elsewhere)."""
    where = Path(ref.entry.dir) if ref.entry.dir is not None else spec_dir
    if ref.entry.app.command is not None and not where.is_dir():
        named = f"dir: {where}" if ref.entry.dir is not None else f"{where} (the spec's directory)"
        raise SiteError(f"app site {ref.entry.name}: its working directory {named} is missing")
    return Site(ref.entry.manifest(), where.resolve(), app=ref.entry.app)


def _corpus(ref: Any, spec_dir: Path) -> Site:
    raise SiteError("a corpus is many sites, one per HAR: a spec runs it page by page (`pagebench site "
                    "import-har` imports one of its HARs as a site of its own)")


#: How each kind of site is found: its reference and the spec's directory -> the site, or
#: None (not there; a corpus is many, found by `lab.corpus`).
FINDERS: Mapping[SiteKind, Callable[[Any, Path], GeneratedSite | Site | None]] = {
    kinds.BUILTIN: _builtin,
    kinds.GENERATED: _generated,
    kinds.FOLDER: lambda ref, spec_dir: find_folder(ref),
    kinds.DIRECTORY: _directory,
    kinds.RECORDED: _recorded,
    kinds.APP: _app,
    kinds.CORPUS: _corpus,
}


def found(entry: str | Mapping[str, Any], spec_dir: Path = Path(".")) -> tuple[SiteKind, GeneratedSite | Site]:
    """What an experiment spec names and its kind, validated without writing anything (an
    app runs in `spec_dir`, the spec file's directory)."""
    for kind, ref in kinds.candidates(entry):
        site = FINDERS[kind](ref, spec_dir)
        if site is not None:
            return _recorded_kind(kind, site), site
    raise kinds.unknown(str(entry), str(sites_dir()))


def _recorded_kind(kind: SiteKind, site: GeneratedSite | Site) -> SiteKind:
    """A site directory holding a recording is a recorded site, wherever it is kept."""
    return kinds.RECORDED if isinstance(site, Site) and site.recording is not None else kind


def found_at(directory: Path) -> tuple[SiteKind, Site]:
    """A directory as `site show` names it: a site directory when it holds site.yaml,
    else a folder site named after it (`{name: <its name>, path: <it>}`)."""
    if (directory / "site.yaml").is_file():
        site = load_site(directory)
        return _recorded_kind(kinds.DIRECTORY, site), site
    name = re.sub(r"[^a-z0-9.-]+", "-", directory.absolute().name.lower()).strip(".-") or "site"
    return found({"name": name, "path": str(directory)})


def resolve(entry: str | Mapping[str, Any], spec_dir: Path = Path(".")) -> GeneratedSite | Site:
    """What an experiment spec names, validated without writing anything: a built-in
    name or `{generate: {...}}` (a `GeneratedSite`), a folder with index.html (a
    `FolderSite`), a directory holding `site.yaml`, the name of an imported site or an app
    run in `spec_dir` (a `Site`). `materialize` puts it on disk."""
    return found(entry, spec_dir)[1]


def materialize(site: GeneratedSite | Site, base: Path | None = None) -> Site:
    """A site on disk, ready for nginx: generated sites are written (once), a folder
    site copied (once per content), a site directory gets its missing sidecars, an app
    site has nothing to write (its process is started with the lab)."""
    if isinstance(site, Site) and site.app is not None:
        return site
    if isinstance(site, FolderSite):
        return copy_folder(site, base)
    return write_sidecars(site) if isinstance(site, Site) else write_site(site, base)


# Folder sites ---------------------------------------------------------------------------------

#: Bumped when a folder site's copy is made differently (old copies are then remade).
FOLDER_FORMAT = "1"


def _files(folder: Path) -> list[Path]:
    """A folder's files, hidden ones (and those in hidden directories) left out, sorted."""
    out = []
    for directory, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        out += [Path(directory) / name for name in sorted(names) if not name.startswith(".")]
    return out


def find_folder(ref: FolderRef) -> FolderSite:
    """A folder site, checked and its content digested (read, never written); a one-line
    SiteError naming the field whose folder is missing or lacks index.html."""
    where = {ref.host: "path"} | {lab: f"origins: {host}" for host, lab in ref.lab_hosts().items()}
    digest = hashlib.sha256(f"{FOLDER_FORMAT}\0{ref.name}".encode())
    for host, folder in ref.folders().items():
        if not folder.is_dir():
            raise SiteError(f"{where[host]}: {folder}: " + ("not a directory" if folder.exists() else "no such directory"))
        if host == ref.host and not (folder / INDEX).is_file():
            raise SiteError(f"path: {folder}: no {INDEX} in it (a folder site serves its {INDEX} as {ref.entry})")
        digest.update(f"\0host\0{host}".encode())
        for path in _files(folder):
            try:
                stat = path.stat()
                body = path.read_bytes()
            except OSError as error:
                raise SiteError(f"{where[host]}: {path}: cannot read ({error.strerror})") from None
            digest.update(f"\0{relative(path, folder)}\0{len(body)}\0{stat.st_mtime_ns}\0".encode())
            digest.update(hashlib.sha256(body).digest())
    return FolderSite(folder_manifest(ref), ref.path, ref=ref, digest=digest.hexdigest())


def external(site: FolderSite) -> list[ExternalHost]:
    """The other hosts a folder site's pages name in absolute URLs, served or not."""
    urls: list[FoundUrl] = []
    for host in site.origins:
        folder = site.origin_root(host)
        for path in _files(folder):
            urls += absolute_urls(relative(path, folder), path.read_bytes())
    return external_hosts(site.ref, urls)


def copy_folder(site: FolderSite, base: Path | None = None) -> Site:
    """The copy of a folder site the lab serves (see the module's docstring), made unless
    one of the same content is there; other copies of the site are removed."""
    parent = sites_dir(base) / ".folders"
    name = f"{site.name}-{site.digest[:16]}"
    root = parent / name
    for directory in (parent.parent.parent, parent.parent, parent):
        directory.mkdir(mode=0o755, exist_ok=True)
    with open(parent / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read(root / ".digest") == site.digest:
            return Site(site.manifest, root)
        tmp = parent / f".{name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        mapped = site.ref.lab_hosts()
        rewrite = Rewriter({form: lab for host, lab in mapped.items() for form in (host, f"{host}:443", f"{host}:80")})
        for host in site.origins:
            folder = site.origin_root(host)
            for path in _files(folder):
                _place(path, tmp / host / relative(path, folder), rewrite if mapped else None)
        (tmp / "site.yaml").write_text(manifest_yaml(site.manifest))
        (tmp / ".digest").write_text(site.digest)
        for directory, _, _ in os.walk(tmp):
            os.chmod(directory, 0o755)
        for old in parent.glob(f"{site.name}-*"):
            shutil.rmtree(old)
        os.rename(tmp, root)
    return Site(site.manifest, root)


def _place(source: Path, path: Path, rewrite: Rewriter | None) -> None:
    """One file of the copy, with its source's mtime: rewritten (mapped hosts), else a hard
    link when the source is world-readable, else a copy made 0644; then its sidecars."""
    path.parent.mkdir(parents=True, exist_ok=True)
    made = source.stat()
    body = None
    if rewrite is not None:
        original = source.read_bytes()
        ext = source.suffix.lower().lstrip(".")
        body, _, _ = rewrite_body(original, "html" if ext == "htm" else ext, rewrite)
        body = None if body == original else body
    if body is not None:
        path.write_bytes(body)
    else:
        try:
            if not made.st_mode & 0o004:
                raise PermissionError
            os.link(source, path)
        except OSError:
            shutil.copyfile(source, path)
    if body is not None or not path.samefile(source):
        os.chmod(path, 0o644)
        os.utime(path, ns=(made.st_atime_ns, made.st_mtime_ns))
    if encodings.is_text(path.name):
        _sidecars(path)


# Written for the servers ----------------------------------------------------------------------

BASE_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z
DAY = 86_400
COST_FILE = "encoding-cost.json"


def write_site(generated: GeneratedSite, base: Path | None = None) -> Site:
    """Put a generated site on disk under `<base>/sites/<name>/` unless it is already
    there with the same content; directories 0755 and files 0644 for nginx's workers."""
    parent = sites_dir(base)
    root = parent / generated.name
    digest = generated.digest()
    for directory in (parent.parent, parent):
        directory.mkdir(mode=0o755, exist_ok=True)
    with open(parent / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _read(root / ".digest") == digest:
            return Site(generated.manifest, root)
        tmp = parent / f".{generated.name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        cost: dict[str, dict[str, float]] = {}
        for rel, body in generated.files.items():
            _write(tmp / rel, body, BASE_MTIME, cost)
        for number in range(2, generated.manifest.versions + 1):
            for rel, body in generated.version(number).items():
                path, first = tmp / f"v{number}" / rel, generated.files.get(rel)
                if body == first:
                    _link(tmp / rel, path)
                    continue
                _write(path, body, BASE_MTIME + number * DAY, cost)
                if first is not None and encodings.is_text(rel):
                    delta = encodings.DCZ
                    dcz = path.with_name(f"{path.name}.{encodings.dictionary_id(first)}{delta.suffix}")
                    store(dcz, _timed(cost, delta.name, body, encodings.dcz_encode, first, body),
                          BASE_MTIME + number * DAY)
        (tmp / "site.yaml").write_text(manifest_yaml(generated.manifest))
        (tmp / ".digest").write_text(digest)
        (tmp / COST_FILE).write_text(json.dumps(cost, indent=1, sort_keys=True) + "\n")
        for directory, _, names in os.walk(tmp):
            os.chmod(directory, 0o755)
            for name in names:
                os.chmod(os.path.join(directory, name), 0o644)
        if root.exists():
            old = parent / f".{generated.name}.{os.getpid()}.old"
            os.rename(root, old)
            shutil.rmtree(old)
        os.rename(tmp, root)
    return Site(generated.manifest, root)


def _timed(cost: dict[str, dict[str, float]], name: str, body: bytes, encode: Callable[..., bytes],
           *args: Any) -> bytes:
    """`encode(*args)` (which encodes `body`), adding its CPU time and sizes to `cost[name]`."""
    start = time.process_time()
    out = encode(*args)
    spent = time.process_time() - start
    entry = cost.setdefault(name, {"files": 0, "bytes_in": 0, "bytes_out": 0, "cpu_ms": 0.0})
    entry["files"] += 1
    entry["bytes_in"] += len(body)
    entry["bytes_out"] += len(out)
    entry["cpu_ms"] = round(entry["cpu_ms"] + spent * 1000, 3)
    return out


def store(path: Path, body: bytes, mtime: int) -> None:
    """A file with a fixed mtime (stable ETags and Last-Modified)."""
    path.write_bytes(body)
    os.utime(path, (mtime, mtime))


def _write(path: Path, body: bytes, mtime: int, cost: dict[str, dict[str, float]]) -> None:
    """A file and, for text, its sidecars, all with `mtime`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    store(path, body, mtime)
    if encodings.is_text(path.name):
        for encoding in encodings.SIDECARS:
            encoded = _timed(cost, encoding.name, body, encoding.compress, body)
            store(path.with_name(path.name + encoding.suffix), encoded, mtime)


def _link(source: Path, path: Path) -> None:
    """A file unchanged from version 1, and its sidecars: hard links (same inode, mtime)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.link(source, path)
    if encodings.is_text(source.name):
        for encoding in encodings.SIDECARS:
            os.link(source.with_name(source.name + encoding.suffix), path.with_name(path.name + encoding.suffix))


def write_sidecars(site: Site) -> Site:
    """Precompressed sidecars for the text files of a site directory (every version),
    made in place where one is missing or stale (its mtime is not its file's), with its
    file's mtime; no deltas (dcz needs generated versions)."""
    for number in range(1, site.manifest.versions + 1):
        for host in site.origins:
            for directory, _, names in os.walk(site.origin_root(host, number)):
                for name in names:
                    if encodings.is_text(name) and not name.startswith("."):
                        _sidecars(Path(directory) / name)
    return site


def _sidecars(path: Path) -> None:
    made = path.stat()
    for encoding in encodings.SIDECARS:
        side = path.with_name(path.name + encoding.suffix)
        try:
            if side.stat().st_mtime_ns == made.st_mtime_ns:
                continue
        except FileNotFoundError:
            pass
        tmp = path.with_name(f".{path.name}{encoding.suffix}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(encoding.compress(path.read_bytes()))
            os.chmod(tmp, 0o644)
            os.utime(tmp, ns=(made.st_atime_ns, made.st_mtime_ns))
            os.rename(tmp, side)
        except OSError as error:
            raise SiteError(f"{path.parent}: cannot write the precompressed {side.name} ({error.strerror}); "
                            "make the site directory writable or add its sidecars") from None


def encoding_cost(site: Site) -> dict[str, dict[str, float]]:
    """What each encoding cost to make when the site was written (`COST_FILE`; {} for a
    site directory of one's own, whose sidecars were not timed)."""
    text = _read(site.root / COST_FILE)
    return json.loads(text) if text else {}


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None
