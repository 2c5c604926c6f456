"""A store's artifact directory: the files each load leaves as evidence (its HAR, its
frames, its Chrome trace), gzip-compressed, one directory per run, named by the store's
`loads.har`/`loads.frames`/`loads.trace` relative to the directory so they move together.

Where it is, one rule per kind of store: SQLite `X.sqlite` keeps `X.artifacts/` beside the
file; PostgreSQL keeps `$PAGEBENCH_ARTIFACTS`, else `<data dir>/artifacts/<host>-<port>-
<database>/` (a server has no "beside"; each measuring machine keeps its own loads'
files); an in-memory SQLite store keeps none.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from pagebench.results.database import StoreError
from pagebench.system import places

ARTIFACTS_ENV = "PAGEBENCH_ARTIFACTS"
SUFFIX = ".artifacts"
HAR = ".har.gz"
TRACE = ".trace.json.gz"
FRAMES = ".frames.json.gz"
#: Fast and small enough: a 20-request HAR is a few kB at level 6, written in about a millisecond.
LEVEL = 6


def directory_of(url: str) -> Path | None:
    """The artifact directory of the store at `url` (see the module's docstring)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database
        if not database or database == ":memory:" or database.startswith("file:"):
            return None
        return Path(database).with_suffix(SUFFIX)
    if os.environ.get(ARTIFACTS_ENV):
        return Path(os.environ[ARTIFACTS_ENV])
    name = "-".join(str(part) for part in (parsed.host or "local", parsed.port or "default", parsed.database or ""))
    return places.data_dir() / "artifacts" / name


def load_name(run_id: str, seq: int, client: int, suffix: str) -> str:
    """A load's file, relative to the artifact directory: written before its row, so the
    row names it in the same insert, and a resumed run's load overwrites a half-kept one."""
    if "/" in run_id or run_id.startswith("."):
        raise StoreError(f"run id {run_id!r} cannot name a directory")
    return f"{run_id}/{seq}-{client}{suffix}"


@dataclass(frozen=True)
class Evidence:
    """What one load leaves to keep: its HAR (`core.measure.har`), its Chrome trace, its
    frames (`core.measure.visual.kept`)."""

    har: dict[str, Any] | None = None
    trace: Any = None
    frames: dict[str, Any] | None = None


@dataclass(frozen=True)
class Artifacts:
    """One store's artifact directory."""

    root: Path

    def prepare(self, run_id: str) -> None:
        """The run's directory, made before its first load: one that cannot be written is
        an error before anything is measured, not after."""
        path = self.root / run_id
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"cannot keep the loads' evidence in {path}: {error.strerror} "
                             f"(for PostgreSQL, set ${ARTIFACTS_ENV} to a writable directory)") from None
        if not os.access(path, os.W_OK):
            raise StoreError(f"cannot keep the loads' evidence in {path}: not writable")

    def write(self, name: str, document: Any) -> str:
        """`document` as gzip-compressed JSON at `name`; returns `name`."""
        path = self.root / name
        data = gzip.compress(json.dumps(document, separators=(",", ":")).encode(), LEVEL, mtime=0)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(path.name + ".part")
            partial.write_bytes(data)
            partial.replace(path)
        except OSError as error:
            raise StoreError(f"cannot write {path}: {error.strerror}") from None
        return name

    def keep(self, run_id: str, seq: int, client: int, evidence: Evidence) -> dict[str, str | None]:
        """A load's evidence written; the `loads` columns that name it."""
        return {column: None if document is None else self.write(load_name(run_id, seq, client, suffix), document)
                for column, document, suffix in (("har", evidence.har, HAR), ("trace", evidence.trace, TRACE),
                                                 ("frames", evidence.frames, FRAMES))}

    def path(self, name: str | None) -> Path | None:
        """Where a row's file is, if it is there (None: never kept, or since deleted)."""
        if name is None:
            return None
        path = self.root / name
        return path if path.is_file() else None

    def read(self, name: str | None) -> Any | None:
        """A kept document, or None when missing; a damaged file is a one-line error."""
        path = self.path(name)
        if path is None:
            return None
        try:
            return json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError, ValueError) as error:
            raise StoreError(f"{path}: not a readable gzip-compressed JSON file ({error})") from None
