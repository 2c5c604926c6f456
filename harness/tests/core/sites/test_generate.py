"""The parametric page (pure): named from its parameters, deterministic, one-line errors
for bad parameters, valid JavaScript."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.generate import GenParams, generate, parse_generate
from pagebench.core.sites.model import SiteError
from tests.core.sites.decoders import check_media
from tests.helpers import program


def test_generated_site_is_named_from_its_parameters_and_deterministic():
    params = GenParams(images=20, image_bytes=2544, origins=3, css=1, js=2, late=5, html_bytes=30_000)
    assert params.name == "gen-i20-b2544-o3-c1-j2-l5-h30000"
    assert GenParams(images=20, image_bytes=2544).name == "gen-i20-b2544-o1"
    site = generate(params)
    assert site.digest() == generate(params).digest()
    assert site.manifest.origins == ("www.gen.test", "o2.gen.test", "o3.gen.test")
    assert site.manifest.entry == "https://www.gen.test/"
    images = sorted(p for p in site.files if p.endswith(".png"))
    assert len(images) == 25 and {len(site.files[p]) for p in images} == {2544}
    per_origin = {host: sum(1 for p in images if p.startswith(host + "/")) for host in site.manifest.origins}
    assert per_origin == {"www.gen.test": 9, "o2.gen.test": 8, "o3.gen.test": 8}  # round-robin
    html = site.files["www.gen.test/index.html"]
    assert len(html) == 30_000
    assert html.decode().count('<link rel="stylesheet"') == 1 and html.decode().count("<script src=") == 2
    late = site.files["www.gen.test/late.js"].decode()
    assert late.count("//") == 5 and site.requests == 1 + 25 + 1 + 2 + 1
    for path, body in site.files.items():
        check_media(path, body)


def test_generate_rejects_bad_parameters_in_one_line():
    with pytest.raises(SiteError, match=r"^generate: pictures: unknown field$"):
        parse_generate({"pictures": 3})
    with pytest.raises(SiteError, match=r"^generate: origins: "):
        parse_generate({"origins": 0})
    with pytest.raises(SiteError, match=r"^generate: image_bytes: "):
        parse_generate({"image_bytes": 50})
    with pytest.raises(SiteError, match=r"html_bytes: at least \d+"):
        generate(GenParams(images=5, html_bytes=100))
    with pytest.raises(SiteError, match=r"^generate: \(images \+ late\) x image_bytes must be at most"):
        parse_generate({"images": 1000, "image_bytes": 50_000_000})
    assert parse_generate({"images": 4}) == GenParams(images=4)


def test_generated_scripts_are_valid_javascript(tmp_path: Path):
    site = generate(GenParams(images=1, js=1, late=1, html_bytes=20_000, versions=(0.1,), changed=1))
    scripts = {**{p: b for p, b in builtin("modern").files.items() if p.endswith(".js")},
               **{f"v2/{p}": b for p, b in site.version(2).items() if p.endswith(".js")}}
    assert any(site.version(2)[p] != site.files[p] for p in site.files if p.endswith(".js"))
    node = program("node", "nodejs")
    for path, body in scripts.items():
        (tmp_path / "check.js").write_bytes(body)
        result = subprocess.run([node, "--check", str(tmp_path / "check.js")], capture_output=True, text=True)
        assert result.returncode == 0, (path, result.stderr)
