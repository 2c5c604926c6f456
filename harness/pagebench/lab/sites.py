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
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import shutil
import time
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pagebench.core import encodings
from pagebench.core.har.importer import HarError, ImportedSite, import_har, parse_har
from pagebench.core.sites.recording import RECORDING_FILE, Recording
from pagebench.core.sites.generate import builtin, generate, parse_generate
from pagebench.core.sites.model import (
    SITE_NAME,
    GeneratedSite,
    Site,
    SiteError,
    manifest_yaml,
    one_line,
    parse_manifest,
)
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


# On disk ------------------------------------------------------------------------------------


def sites_dir(base: Path | None = None) -> Path:
    return (Path(base) if base is not None else data_dir()) / "sites"


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
                    dcz = path.with_name(f"{path.name}.{encodings.dictionary_id(first)}.dcz")
                    _store(dcz, _timed(cost, "dcz", body, encodings.dcz_encode, first, body), BASE_MTIME + number * DAY)
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


BASE_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z
DAY = 86_400
COST_FILE = "encoding-cost.json"


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


def _store(path: Path, body: bytes, mtime: int) -> None:
    path.write_bytes(body)
    os.utime(path, (mtime, mtime))


def _write(path: Path, body: bytes, mtime: int, cost: dict[str, dict[str, float]]) -> None:
    """A file and, for text, its sidecars, all with `mtime`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _store(path, body, mtime)
    if encodings.is_text(path.name):
        for encoding in encodings.SIDECARS:
            encoded = _timed(cost, encoding.name, body, encodings.encode, encoding.name, body)
            _store(path.with_name(path.name + encoding.suffix), encoded, mtime)


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
            tmp.write_bytes(encodings.encode(encoding.name, path.read_bytes()))
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


def resolve(ref: str | Mapping[str, Any]) -> GeneratedSite | Site:
    """What an experiment spec names, validated without writing anything: a built-in
    name or `{generate: {...}}` (a `GeneratedSite`), or a directory holding `site.yaml`
    (a `Site`). `materialize` puts it on disk."""
    if isinstance(ref, Mapping):
        if set(ref) != {"generate"}:
            raise SiteError(f"site {dict(ref)!r}: a mapping must be {{generate: {{...}}}}")
        return generate(parse_generate(ref["generate"]))
    if isinstance(ref, str) and "/" in ref and (Path(ref) / "site.yaml").exists():
        return load_site(Path(ref))
    try:
        return builtin(str(ref))
    except SiteError as error:
        imported = find_imported(str(ref))
        if imported is not None:
            return imported
        raise SiteError(f"{error}; or the name of a site imported by `pagebench site import-har` "
                        f"(into {sites_dir()})") from None


def materialize(site: GeneratedSite | Site, base: Path | None = None) -> Site:
    """A site on disk, ready for nginx: generated sites are written (once), a site
    directory gets its missing sidecars."""
    return write_sidecars(site) if isinstance(site, Site) else write_site(site, base)


# Imported sites (`pagebench site import-har`) ---------------------------------------------


def find_imported(name: str, base: Path | None = None) -> Site | None:
    """The imported (or recorded) site called `name` under `sites_dir()`, or None; a
    broken one is a one-line SiteError naming its file."""
    directory = sites_dir(base) / name
    if not SITE_NAME.match(name) or not (directory / "site.yaml").is_file():
        return None
    site = load_site(directory)
    return site if site.recording is not None else None


def read_har(path: Path, name: str) -> ImportedSite:
    """A HAR file (`.har`, or gzip-compressed `.har.gz`) imported as the site `name`; a
    one-line HarError naming the file for anything unreadable or malformed."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise HarError(f"{path}: cannot read ({error.strerror})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise HarError(f"{path}: not a readable gzip file ({error})") from None
    return import_har(parse_har(data, str(path)), name, str(path))


def write_imported(site: ImportedSite, into: Path, replace: bool = False) -> Site:
    """Write an imported site's directory: built in a temporary directory beside `into`,
    checked by reading it back, then renamed into place, so nothing half-written is ever
    left (on any error the temporary directory goes). Bodies get BASE_MTIME (stable ETags)
    and text bodies their sidecars; directories 0755, files 0644 (nginx runs as nobody).
    `into` may already hold the imported site of the same name (a re-import replaces it);
    any other site directory (or an empty directory) only with `replace`; anything else never."""
    into = Path(into)
    check_destination(into, site.manifest.name, replace)
    parent = into.parent
    tmp = parent / f".{into.name}.{os.getpid()}.tmp"
    old = parent / f".{into.name}.{os.getpid()}.old"
    try:
        parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(mode=0o755)
        for host in site.manifest.origins:
            (tmp / host).mkdir(mode=0o755)
        for rel, body in site.files.items():
            path = tmp / rel
            if ".." in Path(rel).parts or Path(rel).parts[0] not in site.manifest.origins:
                raise SiteError(f"{into}: file {rel!r} is not inside one of the site's origins")
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
            _store(path, body, BASE_MTIME)
        (tmp / RECORDING_FILE).write_text(site.recording.model_dump_json(indent=1) + "\n")
        (tmp / "site.yaml").write_text(manifest_yaml(site.manifest))
        for directory, _, names in os.walk(tmp):
            os.chmod(directory, 0o755)
            for name in names:
                os.chmod(os.path.join(directory, name), 0o644)
        write_sidecars(load_site(tmp))
        if into.exists() or into.is_symlink():
            os.rename(into, old)
            try:
                os.rename(tmp, into)
            except OSError:
                os.rename(old, into)
                raise
            _remove(old)
        else:
            os.rename(tmp, into)
    except OSError as error:
        raise SiteError(f"{into}: cannot write the site ({error.strerror or error})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return load_site(into)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def check_destination(into: Path, name: str, replace: bool) -> None:
    """Whether `write_imported` may write the site `name` at `into` (a one-line SiteError
    if not): asked again by `site record` before it spends a load."""
    if into.exists() or into.is_symlink():
        _check_replaceable(into, name, replace)


def _check_replaceable(into: Path, name: str, replace: bool) -> None:
    """Refuse to overwrite what is not the imported site `name` (without `replace`), and
    anything that is not a site directory or an empty directory (even with it)."""
    manifest = None
    if into.is_dir() and not into.is_symlink() and (into / "site.yaml").is_file():
        try:
            manifest = parse_manifest((into / "site.yaml").read_text(), str(into / "site.yaml"))
        except (SiteError, OSError):
            manifest = None
        if manifest is not None and manifest.name == name and manifest.recording is not None:
            return
        if replace:
            return
        raise SiteError(f"{into}: already holds another site; replace it with --force, or choose another "
                        "directory")
    if into.is_dir() and not into.is_symlink() and not any(into.iterdir()):
        return
    raise SiteError(f"{into}: exists and is not a site directory; refusing to replace it (choose another "
                    "directory)")


def file_sizes(site: Site) -> dict[str, int]:
    """"<host>/<path>" -> bytes of every file a site's origins hold (version 1; sidecars
    included, hidden files not): what `core.har.describe` counts for a site on disk."""
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
