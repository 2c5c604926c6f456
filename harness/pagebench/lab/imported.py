"""Imported and recorded sites on disk (`pagebench site import-har`, `site record`): a HAR
file read and imported (`core.har`), and the site directory written so that nothing
half-written is ever left and nothing that is not a site is ever replaced.

    <into>/site.yaml, <into>/recording.json, <into>/<lab host>/_replay/0001.css, ...

Specs find such a site by name under `<data dir>/sites/` (`lab.sites.find_imported`).
"""

from __future__ import annotations

import gzip
import os
import shutil
import zlib
from pathlib import Path

from pagebench.core.har.fidelity import FIDELITY_FILE, Fidelity
from pagebench.core.har.importer import ImportedSite, import_har
from pagebench.core.har.parse import HarError, parse_har
from pagebench.core.sites.model import Site, SiteError, manifest_yaml, parse_manifest
from pagebench.core.sites.recording import RECORDING_FILE
from pagebench.lab.sites import BASE_MTIME, load_site, store, write_sidecars


def read_har(path: Path, name: str, page: str | None = None, synthesize_all: bool = False,
             server_time: bool = True) -> ImportedSite:
    """A HAR file's page (`.har`, or gzip-compressed `.har.gz`; `page`: its id, title or
    number, None: the default, `core.har.pages`) imported as the site `name`
    (`synthesize_all`: every body made, a stand-in page; `server_time`: the replay delays
    each response by its think time); a one-line HarError naming the
    file for anything unreadable or malformed."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise HarError(f"{path}: cannot read ({error.strerror})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except EOFError:
            raise HarError(f"{path}: gzip cut short: the file ends before its compressed data does (copy or "
                           "export it again)") from None
        except (OSError, zlib.error) as error:
            raise HarError(f"{path}: not a readable gzip file ({error})") from None
    return import_har(parse_har(data, str(path)), name, str(path), page, synthesize_all, server_time)


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
            store(path, body, BASE_MTIME)
        (tmp / RECORDING_FILE).write_text(site.recording.model_dump_json(indent=1) + "\n")
        (tmp / "site.yaml").write_text(manifest_yaml(site.manifest))
        if site.fidelity is not None:
            (tmp / FIDELITY_FILE).write_text(site.fidelity.model_dump_json(indent=1) + "\n")
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


def read_fidelity(site: Site) -> Fidelity | None:
    """A synthesized site's fidelity report (None: the site is not a stand-in); a one-line
    SiteError for a report that cannot be read."""
    path = site.root / FIDELITY_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise SiteError(f"{path}: cannot read ({error.strerror})") from None
    try:
        return Fidelity.model_validate_json(text)
    except ValueError as error:
        raise SiteError(f"{path}: not a fidelity report ({str(error).splitlines()[0]})") from None


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

