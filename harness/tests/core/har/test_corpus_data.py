"""The HAR corpus (tests/fixtures/hars/): public HARs of real pages, without bodies, taken
from packages on the registries, for issue 25's stand-in pages, page selection and corpus
runs. Its README's table is checked here against what pagebench's parser reads, so that
the figures there are never typed: a file added, a figure changed or a parser that reads a
file differently fails this test, whose message is the table's checked columns as they
should be (`python -m tests.core.har.test_corpus_data` prints them too)."""

from __future__ import annotations

import gzip
import ipaddress
import json
import re
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from pagebench.core.har.pages import choose_page
from pagebench.core.har.parse import HarError, parse_har
from tests.core.har.hars import FIXTURES

CORPUS = FIXTURES / "hars"
README = CORPUS / "README.md"
# The README table's columns that this file computes; the others (where the file comes
# from, its licence, what is odd about it) are read by a person.
CHECKED = ("creator", "pages", "entries", "read", "origins", "page 1", "site", "bodies", "read as empty",
           "_bytesIn", "_initiator", "parse")


def har_files() -> list[Path]:
    return sorted(p for p in CORPUS.iterdir() if p.name.endswith((".har", ".har.gz")))


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


@cache
def inventory(path: Path) -> dict[str, str]:
    """The checked columns of one file's row: `creator`, `pages` and `entries` as the JSON
    says, the rest as pagebench's parser reads it (`parse`: ok, or its one-line refusal)."""
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    log = json.loads(data)["log"]
    creator = log.get("creator") or {}
    raw = log.get("entries") or []
    row = {"creator": f"{creator.get('name', '')} {creator.get('version', '')}".strip(),
           "pages": str(len(log.get("pages") or [])), "entries": str(len(raw)),
           "_bytesIn": str(sum("_bytesIn" in e for e in raw if isinstance(e, dict)))}
    try:
        har = parse_har(data, path.name)
        first = list(choose_page(har, path.name).entries)  # the page `site import-har` picks by default
    except HarError as error:
        return row | dict.fromkeys(CHECKED[3:-1], "-") | {"parse": str(error)}
    entries = har.entries
    return row | {
        "read": str(len(entries)),
        "origins": str(len({_origin(e.url) for e in entries})),
        "page 1": f"{len(first)} / {len({_origin(e.url) for e in first})}",
        "site": urlsplit(first[0].url).hostname or "",
        "bodies": str(sum(bool(e.body) for e in entries)),
        "read as empty": str(sum(e.body == b"" for e in entries)),
        "_initiator": str(sum(e.initiator is not None for e in entries)),
        "parse": "ok",
    }


def readme_rows() -> tuple[list[str], dict[str, dict[str, str]]]:
    """The README's inventory table: its columns, and each row by file name."""
    lines = [line.strip() for line in README.read_text(encoding="utf-8").splitlines()]
    start = next(i for i, line in enumerate(lines) if line.startswith("| file |"))
    columns = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        row = dict(zip(columns, cells, strict=True))
        rows[row["file"].strip("`")] = row
    return columns, rows


def table(paths: list[Path]) -> str:
    """The checked columns as Markdown rows, to compare with (or paste into) the README."""
    lines = ["| file | " + " | ".join(CHECKED) + " |"]
    for path in paths:
        row = inventory(path)
        lines.append(f"| `{path.name}` | " + " | ".join(row[c] for c in CHECKED) + " |")
    return "\n".join(lines)


def public(host: str) -> bool:
    """A host on the public web: a dotted name, not an IP literal."""
    try:
        ipaddress.ip_address(host)
        return False
    except ValueError:
        return "." in host


def test_the_readme_lists_every_file_with_the_figures_the_parser_reads() -> None:
    columns, rows = readme_rows()
    assert set(CHECKED) <= set(columns)
    paths = har_files()
    assert sorted(rows) == [p.name for p in paths], "README rows vs files:\n" + table(paths)
    wrong = [(p.name, c, rows[p.name][c], got) for p in paths for c, got in inventory(p).items()
             if rows[p.name][c] != got]
    assert not wrong, f"README figures that differ {wrong[:5]}; the checked columns are:\n" + table(paths)


def test_every_row_names_its_package_and_a_licence_file_that_is_here() -> None:
    _, rows = readme_rows()
    named = set()
    for name, row in rows.items():
        assert re.fullmatch(r"\S+ \S+ \((npm|PyPI)\)", row["package"]), (name, row["package"])
        links = re.findall(r"\]\((LICENSES/[^)]+)\)", row["licence"])
        assert links and all((CORPUS / link).is_file() for link in links), (name, row["licence"])
        named.update(links)
    assert sorted(named) == sorted(f"LICENSES/{p.name}" for p in (CORPUS / "LICENSES").iterdir())


def test_at_least_20_real_sites_none_with_a_body_and_the_readme_says_how_many() -> None:
    rows = [inventory(p) for p in har_files()]
    assert all(row["parse"] == "ok" and row["bodies"] == "0" for row in rows)
    sites = {row["site"].removeprefix("www.") for row in rows if public(row["site"])}
    assert len(sites) >= 20
    stated = re.search(r"(\d+)\s+distinct\s+public\s+sites", README.read_text(encoding="utf-8"))
    assert stated and int(stated.group(1)) == len(sites), sorted(sites)


def test_a_webpagetest_har_of_a_large_page() -> None:
    """Issue 25's large page: hundreds of requests from tens of origins in its first view."""
    large = []
    for path in har_files():
        row = inventory(path)
        requests, origins = (int(n) for n in row["page 1"].split(" / "))
        if row["creator"].startswith("WebPagetest") and requests >= 200 and origins >= 20:
            large.append(path.name)
    assert large


if __name__ == "__main__":
    print(table(har_files()))
