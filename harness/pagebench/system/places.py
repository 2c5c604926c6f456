"""Where pagebench's own files are, found from the installed package rather than from
where a source file happens to sit: the checkout an editable install runs from (what
`harness/bootstrap` installs), the machine's data directory, and programs installed
beside the Python that runs pagebench (a virtualenv's `bin/`, where the bootstrap builds
Caddy). A package installed from a wheel has no checkout; it still finds all of these.
And the names a run's lab goes by on this machine: its prefix, with the group's tag."""

from __future__ import annotations

import json
import os
import shutil
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from pagebench.core.layout import new_prefix

DATA_DIR_ENV = "PAGEBENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("/var/lib/pagebench")
TAG_ENV = "PAGEBENCH_TAG"


@cache
def checkout() -> Path | None:
    """The repository an editable install of pagebench points at (PEP 610's
    `direct_url.json`: `harness/` of a checkout), or None when installed from a wheel."""
    # Several may be found: a source tree's own `pagebench.egg-info` (no direct_url.json)
    # beside the installed one, when Python runs from `harness/`.
    texts = [dist.read_text("direct_url.json") for dist in metadata.distributions(name="pagebench")]
    text = next((text for text in texts if text), None)
    if text is None:
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    url = urlparse(str(found.get("url", "")))
    if not found.get("dir_info", {}).get("editable") or url.scheme != "file":
        return None
    project = Path(unquote(url.path))
    return project.parent if (project / "pyproject.toml").is_file() else None


def data_dir() -> Path:
    """Where generated state lives: `$PAGEBENCH_DATA_DIR`, else /var/lib/pagebench."""
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def program(name: str) -> Path | None:
    """A program installed beside this Python (a virtualenv's `bin/`), else on PATH."""
    beside = Path(sys.prefix) / "bin" / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which(name)
    return Path(found) if found else None


def run_prefix() -> str:
    """A fresh prefix for a lab's namespaces and state directory (`pb<hex>`), carrying
    `$PAGEBENCH_TAG` when set (`pb<tag><hex>`): the runs of a group, such as a test
    session, carry its tag so the group finds what it left. The one place pagebench reads
    the variable; the core's `new_prefix` is given the tag."""
    tag = os.environ.get(TAG_ENV, "")
    try:
        return new_prefix(tag)
    except ValueError as error:
        raise ValueError(f"{TAG_ENV}: {error}") from None
