"""The built-in catalogue (pure): its names, one-line errors for names it lacks, and every
file of a built-in site fetched by a cold load."""

from __future__ import annotations

import pytest

from pagebench.core.sites.builtin import builtin, builtin_sites
from pagebench.core.sites.model import SiteError


def test_builtin_names():
    names = builtin_sites()
    assert len(names) == 128 and "seed000-small-n1" in names and "seed000-large-n40" in names
    assert {"seed001-a", "seed001-b", "seed001-c", "seed001-d", "seed002", "modern", "paint-progressive",
            "paint-at-end"} <= set(names)
    assert "seed001-toybox-news-2" in names and "seed001-toybox-release-5" in names


@pytest.mark.parametrize("name", ["nope", "seed000-small-n41", "seed000-small-n0", "seed000-small-n05", "seed000-x-n1"])
def test_unknown_site_is_one_line_listing_known(name: str):
    with pytest.raises(SiteError) as error:
        builtin(name)
    message = str(error.value)
    assert repr(name) in message and "seed000-{small,large}-n1..40" in message and "modern" in message
    assert "\n" not in message


def test_every_file_of_every_builtin_kind_is_referenced():
    """A cold load fetches every file: each URL appears in the HTML, a CSS or a script."""
    for name in ("seed002", "modern", "seed000-large-n3"):
        site = builtin(name)
        texts = b"".join(b for p, b in site.files.items() if p.endswith((".html", ".css", ".js"))).decode()
        entry_path = site.manifest.entry.split("/", 3)[-1]
        for path in site.files:
            host, rel = path.split("/", 1)
            if rel in ("index.html", entry_path):
                continue
            assert f"//{path}" in texts or f'"/{rel}"' in texts or f'"{rel}"' in texts, (name, path)


def test_the_paint_twins_differ_only_in_how_the_page_shows_itself():
    progressive, at_end = builtin("paint-progressive"), builtin("paint-at-end")
    assert progressive.files.keys() == at_end.files.keys() and progressive.total_bytes == at_end.total_bytes
    different = [path for path in progressive.files if progressive.files[path] != at_end.files[path]]
    assert different == ["www.paint.test/index.html"]
    assert b"opacity: 0" in at_end.files[different[0]] and b"opacity" not in progressive.files[different[0]]
