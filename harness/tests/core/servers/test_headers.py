"""What every response carries (pure): a site rule's path glob as a regex, and its
headers over the common ones."""

from __future__ import annotations

import re

import pytest

from pagebench.core.servers.headers import COMMON_HEADERS, glob_regex, merged


@pytest.mark.parametrize("glob,regex", [
    ("/index.html", r"^/index\.html$"),
    ("/img/*.png", r"^/img/[^/]*\.png$"),
    ("/**.js", r"^/.*\.js$"),
    ("/a?/b-c_d", r"^/a[^/]/b\-c_d$"),
])
def test_glob_regex(glob: str, regex: str):
    assert glob_regex(glob) == regex
    assert re.match(regex, glob.replace("**", "x/y").replace("*", "x").replace("?", "z"))


def test_a_site_rule_replaces_the_same_headers_in_any_case_and_comes_last():
    rule = {"access-control-allow-origin": "https://www.a.test", "X-Extra": "1"}
    assert merged(COMMON_HEADERS, rule) == [("Timing-Allow-Origin", "*"),
                                            ("access-control-allow-origin", "https://www.a.test"), ("X-Extra", "1")]
    assert merged(COMMON_HEADERS, {}) == list(COMMON_HEADERS)
