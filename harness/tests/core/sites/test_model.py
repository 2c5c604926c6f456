"""The site model (pure): manifests read from and written as YAML, one-line errors naming
the field."""

from __future__ import annotations

import pytest
import yaml

from pagebench.core.sites import model as site_model
from pagebench.core.sites.model import SiteError


GOOD = {"name": "mine", "entry": "https://www.mine.test/index.html", "origins": ["www.mine.test", "img.mine.test"],
        "headers": {"/img/*.png": {"Cache-Control": "max-age=60"}}}


def test_manifest_round_trips_through_yaml():
    manifest = site_model.parse_manifest(yaml.safe_dump(GOOD))
    assert manifest.origins == ("www.mine.test", "img.mine.test")
    assert site_model.parse_manifest(site_model.manifest_yaml(manifest)) == manifest


@pytest.mark.parametrize("change,fragment", [
    ({"extra": 1}, "extra: unknown field"),
    ({"origins": ["www.mine.com"]}, "origins: host 'www.mine.com'"),
    ({"origins": ["www.mine.test", "www.mine.test"]}, "origins: must not repeat"),
    ({"entry": "https://img.mine.test/"}, "entry 'https://img.mine.test/': must be https://www.mine.test/"),
    ({"entry": "http://www.mine.test/"}, "must be https://www.mine.test/"),
    ({"name": "Bad Name"}, "name: must match"),
    ({"headers": {"img/*.png": {}}}, "headers: 'img/*.png': a path glob must start with /"),
    ({"headers": {"/a": {"X-Y": "$host"}}}, "headers: /a: X-Y: value must be printable ASCII"),
    ({"headers": {"/a": {"X Y": "1"}}}, "header name 'X Y'"),
])
def test_manifest_errors_are_one_line_naming_the_field(change: dict, fragment: str):
    with pytest.raises(SiteError) as error:
        site_model.parse_manifest(yaml.safe_dump({**GOOD, **change}), "mine/site.yaml")
    message = str(error.value)
    assert message.startswith("mine/site.yaml: ") and fragment in message and "\n" not in message
