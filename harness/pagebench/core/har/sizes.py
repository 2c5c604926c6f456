"""A HAR body's sizes, decoded and as sent, read in one order of preference from the
fields the writers put them in (`SIZE_FIELDS`): 0, -1 and missing mean unknown, never
empty. Pure: `parse.py` gathers an entry's fields (`size_fields`), `read_size` picks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SizeReading:
    """A body size as read from a HAR, and where from (the fidelity report says)."""

    bytes: int | None  # None: unknown
    source: str | None  # the fields, "_bytesIn - headersSize"
    meaning: str


#: Where a body's sizes are read from, best first: (size, fields, meaning). A row applies
#: when all its fields are above 0 (0 and -1 mean unknown in every writer's HARs, not
#: empty); the size is the first field less the others. Fields are named by where they
#: sit in an entry (`SIZE_PATHS`); `content.text` is the saved body's length.
#: WebPageTest's own field comes before content.size: its HARs (and the HTTP Archive's)
#: put the compressed size in content.size (648 where `_objectSizeUncompressed` is 1256).
SIZE_FIELDS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("decoded", ("_objectSizeUncompressed",), "WebPageTest: the decoded body"),
    ("decoded", ("content.size",), "HAR 1.2: the decoded body"),
    ("decoded", ("content.text",), "the saved body"),
    ("transfer", ("bodySize",), "HAR 1.2: the body as sent"),
    ("transfer", ("_objectSize",), "WebPageTest: the body as sent"),
    ("transfer", ("_bytesIn", "headersSize"), "WebPageTest: bytes in less the headers"),
    ("transfer", ("_transferSize", "headersSize"), "Chrome: bytes in less the headers"),
    ("transfer", ("content.size", "content.compression"), "HAR 1.2: decoded less what compression saved"),
)
#: Where each size field sits: the entry, its response, or the response's content.
SIZE_PATHS = {"content.size": ("response", "content", "size"), "content.compression": ("response", "content",
               "compression"), "bodySize": ("response", "bodySize"), "headersSize": ("response", "headersSize"),
               "_objectSize": ("_objectSize",), "_objectSizeUncompressed": ("_objectSizeUncompressed",),
               "_bytesIn": ("_bytesIn",), "_transferSize": ("response", "_transferSize")}


def size_fields(raw: Mapping[str, Any], body: bytes | None) -> tuple[tuple[str, float], ...]:
    """The size fields an entry gives, as numbers (WebPageTest writes some as strings;
    Chrome puts `_transferSize` on the response, chrome-har on the entry)."""
    out = []
    for name, path in SIZE_PATHS.items():
        value: Any = raw
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None and name == "_transferSize":
            value = raw.get("_transferSize")
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                value = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append((name, float(value)))
    if body:
        out.append(("content.text", float(len(body))))
    return tuple(out)


def read_size(fields: Sequence[tuple[str, float]], kind: str) -> SizeReading:
    """The `kind` size ("decoded" or "transfer") from the first row of `SIZE_FIELDS` of
    that kind whose fields `fields` gives above 0; unknown when none does."""
    given = dict(fields)
    for row_kind, names, meaning in SIZE_FIELDS:
        if row_kind != kind or any(given.get(f, 0) <= 0 for f in names):
            continue
        value = int(given[names[0]] - sum(given[f] for f in names[1:]))
        if value > 0:
            return SizeReading(value, " - ".join(names), meaning)
    return SizeReading(None, None, "unknown")
