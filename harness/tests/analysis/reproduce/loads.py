"""A scenario's measured loads made by hand (no store): a load of a mode with the
condition fields and metrics a test names, its resources beside it, and `Data` of them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

from pagebench.analysis.reproduce.measures import Data
from pagebench.core.modes import Mode
from pagebench.core.records import Condition, Resource
from pagebench.results.rows import LoadRow, ResourceRow
from tests.helpers import load_row

CONDITION_FIELDS = ("site", "profile", "cache", "encoding", "version")


class Page(NamedTuple):
    """A load and its resources (load ids filled in by `data`)."""

    load: LoadRow
    resources: tuple[ResourceRow, ...] = ()


def load(mode: Mode, load_ms: float, resources: tuple[ResourceRow, ...] | list[ResourceRow] = (),
         **fields: Any) -> Page:
    """A load of site `s`, profile `remote`, cold (unless `fields` say otherwise)."""
    condition = Condition(**{"site": "s", "mode": mode, "topology": "direct", "profile": "remote", "cache": "cold"}
                          | {k: v for k, v in fields.items() if k in CONDITION_FIELDS})
    metrics = {k: v for k, v in fields.items() if k not in CONDITION_FIELDS}
    return Page(load_row(condition, load_ms, **metrics), tuple(resources))


def resource(position: int, body: int, start: float, response_start: float | None, end: float | None, *,
             encoded: int | None = None, transfer: int = 0, from_cache: bool = False,
             timing: dict[str, float] | None = None) -> ResourceRow:
    return ResourceRow(0, position, Resource(
        url=f"https://s.test/{position}", origin="https://s.test", protocol="http/1.1", connection_id=1,
        from_cache=from_cache, status=200, resource_type="Image", start_ms=start, response_start_ms=response_start,
        end_ms=end, transfer_bytes=transfer, body_bytes=body, encoded_bytes=encoded, timing=timing or {}))


def data(pages: dict[tuple[str, str], list[Page]], profiles: dict[str, dict[str, Any]] | None = None) -> Data:
    """Data of a scenario's runs: (variant, label) -> its pages."""
    return Data({key: [page.load for page in listed] for key, listed in pages.items()}, profiles or {},
                {page.load.id: [replace(r, load_id=page.load.id) for r in page.resources]
                 for listed in pages.values() for page in listed if page.resources})


def fetched(mode: Mode, retrieval_ms: float, load_ms: float | None = None, **fields: Any) -> Page:
    """A load whose requests span `retrieval_ms` from the first one's start to the last
    byte (the HTML from 5 ms, an image ending last); its load event `load_ms`, else 10 ms
    after the last byte."""
    end = 5 + retrieval_ms
    return load(mode, end + 10 if load_ms is None else load_ms,
                [resource(0, 300, 5, 20, 30), resource(1, 2544, 30, 40, end)], **fields)
