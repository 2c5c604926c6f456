"""Sites on disk: a site directory (`site.yaml` plus one content directory per origin)
read, a generated site written once (world-readable: nginx's workers run as nobody), and
what a spec names resolved to one or the other.

    <data dir>/sites/<name>/site.yaml          name, entry, origins, headers (per path glob)
    <data dir>/sites/<name>/<origin host>/...  what that origin serves (its nginx root)
    <data dir>/sites/<name>/.digest            sha256 of the generated content
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pagebench.core.sitegen import builtin, generate, parse_generate
from pagebench.core.sites import GeneratedSite, Site, SiteError, manifest_yaml, parse_manifest
from pagebench.lab.tls import data_dir


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
    return Site(manifest, directory)


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
        for rel, body in generated.files.items():
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        (tmp / "site.yaml").write_text(manifest_yaml(generated.manifest))
        (tmp / ".digest").write_text(digest)
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
    return builtin(str(ref))


def materialize(site: GeneratedSite | Site, base: Path | None = None) -> Site:
    """A site on disk, ready for nginx: generated sites are written (once)."""
    return site if isinstance(site, Site) else write_site(site, base)
