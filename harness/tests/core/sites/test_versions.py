"""Later versions of a generated site (pure): the chosen text files edited by exactly the
fraction asked, everything else byte-identical, the manifest listing what changed."""

from __future__ import annotations

import pytest

from pagebench.core import encodings
from pagebench.core.sites.generate import GenParams, generate, parse_generate
from pagebench.core.sites.model import SiteError


def test_generated_site_with_versions_is_named_and_edits_the_chosen_files():
    params = parse_generate({"images": 2, "css": 2, "js": 2, "html_bytes": 20_000,
                                     "versions": [0.01, 0.1], "edit": "one", "changed": 0.6})
    assert params.name == "gen-i2-b2544-o1-c2-j2-h20000-v0.01_0.1-eone-x0.6"
    site = generate(params)
    assert site.manifest.versions == 3 and len(site.later) == 2
    texts = sorted(p for p in site.files if p.endswith((".html", ".css", ".js")))
    assert sorted(site.manifest.dictionaries) == texts
    for path in texts:
        assert site.manifest.dictionaries[path] == encodings.available_dictionary(site.files[path])
    for number, fraction in ((2, 0.01), (3, 0.1)):
        files = site.version(number)
        assert set(files) == set(site.files)
        differ = sorted(p for p in files if files[p] != site.files[p])
        assert differ == site.manifest.changed[number]
        assert len(differ) == 3 and "www.gen.test/index.html" in differ  # round(0.6 x 5), HTML always
        for path in differ:
            positions = [i for i, (a, b) in enumerate(zip(site.files[path], files[path])) if a != b]
            assert len(positions) == max(1, round(fraction * len(files[path])))
        assert all(files[p] is site.files[p] for p in files if p.endswith(".png"))
    assert site.digest() != generate(params.model_copy(update={"versions": (0.01, 0.2)})).digest()
    assert site.digest() != generate(GenParams(images=2, css=2, js=2, html_bytes=20_000)).digest()
    assert parse_generate({"versions": [0.01] * 19}).name == "gen-i10-b2544-o1-v19x057cffc5"


def test_generated_versions_errors_are_one_line():
    with pytest.raises(SiteError, match=r"^generate: versions.0: Input should be less than or equal to 0.5$"):
        parse_generate({"versions": [0.6]})
    with pytest.raises(SiteError, match=r"^generate: versions: "):
        parse_generate({"versions": [0.01] * 20})
    with pytest.raises(SiteError, match=r"^generate: edit: "):
        parse_generate({"versions": [0.01], "edit": "some"})
    with pytest.raises(SiteError, match=r"^generate: edit and changed need versions"):
        parse_generate({"changed": 1})
    with pytest.raises(SiteError, match=r"^generate: versions: 0.1 of www.gen.test/index.html \(\d+ bytes\) is "
                                        r"\d+ bytes but it has \d+ bytes of text to edit \(make the page larger"):
        generate(GenParams(versions=(0.1,)))
