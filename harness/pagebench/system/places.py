"""Where pagebench's own files are, found from the installed package rather than from
where a source file happens to sit: the checkout an editable install runs from (what
`harness/bootstrap` installs), the machine's data directory, and programs installed
beside the Python that runs pagebench (a virtualenv's `bin/`, where the bootstrap builds
Caddy). A package installed from a wheel has no checkout; it still finds all of these."""

from __future__ import annotations

import json
import os
import shutil
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

DATA_DIR_ENV = "PAGEBENCH_DATA_DIR"
DEFAULT_DATA_DIR = Path("/var/lib/pagebench")


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
