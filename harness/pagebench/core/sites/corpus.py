"""A corpus: a folder of HAR files (the pages a study measures), named in a spec as

    sites:
      - corpus: hars/*.har        # a glob, or a directory (its *.har and *.har.gz), relative
                                  # to the spec file's directory
        synthesize: false         # optional: true makes every body (a stand-in page) even
                                  # where the HAR saved them, as `site import-har --synthesize`
        server_time: true         # optional: false drops the servers' think time, as
                                  # `site import-har --no-server-time`

Every HAR is one page, imported as `site import-har` would (a HAR without bodies becomes a
stand-in page) and measured as its own site, named after its file (`page_name`). A spec
naming a corpus runs page by page (`Experiment.by_page`): each page's loads in a lab of
its own, so that a page's origins, not the corpus's, are what the lab's address space
must hold.

Pure: the entry parsed and anchored, a file's site name, and what is kept of a page for
the report (`traits`). `lab.corpus` finds the files and imports them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from pagebench.core.sites.model import entry_error

#: The file names a corpus directory's HARs have (gzip-compressed ones too).
SUFFIXES = (".har", ".har.gz")
#: The page traits the run's meta keeps for the report, in the order it shows them.
TRAITS = ("requests", "origins", "bytes", "depth")


class CorpusEntry(BaseModel):
    """The spec entry, validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    corpus: str = Field(min_length=1)
    synthesize: StrictBool = False
    server_time: StrictBool = True


@dataclass(frozen=True)
class CorpusRef:
    """A corpus as a spec names it: a glob or a directory (absolute once anchored)."""

    pattern: str
    synthesize: bool = False
    server_time: bool = True


def parse_corpus(entry: Mapping[str, Any]) -> CorpusRef:
    """A spec entry `{corpus, synthesize, server_time}` as a reference, or a one-line SiteError naming
    the field (unknown keys listed with those allowed)."""
    try:
        parsed = CorpusEntry.model_validate(dict(entry))
    except ValidationError as error:
        raise entry_error(error, "a corpus", CorpusEntry) from None
    return CorpusRef(parsed.corpus, parsed.synthesize, parsed.server_time)


def anchored(entry: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A corpus entry with its pattern made absolute from `base`, the spec file's directory
    (a resumed run globs the same files wherever it is started)."""
    out = dict(entry)
    if isinstance(out.get("corpus"), str):
        out["corpus"] = posixpath.normpath(posixpath.join(base, out["corpus"]))
    return out


def is_har(name: str) -> bool:
    return name.lower().endswith(SUFFIXES)


def page_name(filename: str) -> str:
    """A HAR file's site name under the site-name rules (`model.SITE_NAME`): its name less
    `.har`/`.har.gz`, lower case, every run of other characters a `-`, at most 80."""
    stem = filename
    for suffix in sorted(SUFFIXES, key=len, reverse=True):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    name = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).lstrip("._-")[:80].rstrip(".-")
    return name or "page"


def traits(requests: int, origins: int, size: int, depth: int) -> dict[str, int]:
    """A page's traits as the run's meta keeps them (`TRAITS`): what the per-page report
    shows beside each page's results."""
    return dict(zip(TRAITS, (requests, origins, size, depth)))
