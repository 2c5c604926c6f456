"""The example app's files (examples/shop): the committed static build is what build.py
writes, its bundle has a real bundle's size and compressibility, each regression of
regressions.yaml is a one-line edit that applies to app.py and is documented, and the
two specs are specs whose sites are there."""

from __future__ import annotations

import gzip
import re
import subprocess
import sys

import pytest

from pagebench.core.spec.model import parse
from pagebench.yamlfiles import spec_document
from tests.helpers import SHOP, SHOP_REGRESSIONS, shop_copy

BUILD = SHOP / "static-build"


def test_the_committed_build_is_what_build_py_writes():
    result = subprocess.run([sys.executable, str(SHOP / "build.py"), "--check"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr


def test_the_page_names_files_of_the_build():
    html = (BUILD / "index.html").read_text()
    assets = re.findall(r'(?:src|href)="/(assets/[^"]+)"', html)
    assert {a.rsplit(".", 1)[1] for a in assets} == {"js", "css"}
    for asset in assets:
        assert (BUILD / asset).is_file(), asset
    bundle = next(BUILD / a for a in assets if a.endswith(".js")).read_bytes()
    assert 100_000 <= len(bundle) <= 300_000
    assert 3 <= len(bundle) / len(gzip.compress(bundle, 6)) <= 5  # as minified code compresses
    assert len(list((BUILD / "assets" / "img").glob("*.png"))) == 12
    assert (BUILD / "api" / "products").read_bytes() == (SHOP / "catalogue.json").read_bytes()


@pytest.mark.parametrize("name", sorted(SHOP_REGRESSIONS))
def test_each_regression_is_one_documented_line_of_the_app(tmp_path, name):
    edit = SHOP_REGRESSIONS[name]
    original = (SHOP / edit["file"]).read_text()
    assert original.count(edit["old"]) == 1 and "\n" not in edit["old"] + edit["new"]
    copy = shop_copy(tmp_path / "shop", name)
    edited = (copy / edit["file"]).read_text()
    changed = [(a, b) for a, b in zip(original.splitlines(), edited.splitlines()) if a != b]
    assert len(changed) == 1 and len(original.splitlines()) == len(edited.splitlines())
    compile(edited, edit["file"], "exec")
    readme = (SHOP / "README.md").read_text()
    assert edit["old"] in readme and edit["new"] in readme and name in readme
    shop_copy(copy)  # reverted
    assert (copy / edit["file"]).read_text() == original


@pytest.mark.parametrize("spec", ["pagebench.yaml", "pagebench-static.yaml"])
def test_the_specs_are_valid(spec):
    experiment = parse(spec_document(SHOP / spec), spec)
    assert experiment.modes == ["h2"] and experiment.cache == ["cold"] and experiment.repetitions == 10
    site = experiment.sites[0]
    assert isinstance(site, dict)
    if "path" in site:
        assert (SHOP / site["path"] / "index.html").is_file()
    else:
        assert "{port}" in site["app"]["command"] and (SHOP / site["app"]["command"].split()[1].split(":")[0]
                                                       ).with_suffix(".py").is_file()
