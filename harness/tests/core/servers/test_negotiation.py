"""What both servers negotiate by (pure): Accept-Encoding's tokens and q values, and a
site's dictionaries, their match patterns, ids and the entry page's Link."""

from __future__ import annotations

import re

import pytest

from pagebench.core import encodings
from pagebench.core.servers import negotiation
from pagebench.core.servers.binding import PlanError
from pagebench.core.sites.model import Site
from tests.core.servers.samples import DICTIONARIES, V1_CSS, V


@pytest.mark.parametrize("value,named", [
    ("gzip, deflate, br, zstd, dcb, dcz", True), ("dcz", True), ("DCZ;q=0.5", True), ("br, dcz ; q=1.0", True),
    ("dcz;q=0", False), ("dcz;q=0.000, zstd", False), ("dczx, xdcz", False), ("", False), ("gzip", False),
])
def test_accept_encoding_names_a_token_with_a_non_zero_q(value: str, named: bool):
    assert bool(re.search(negotiation.accepts_pattern("dcz"), value, re.IGNORECASE)) == named


def test_dictionaries_match_their_path_and_an_index_its_directory():
    assert negotiation.dictionary_paths(V, "www.v.test") == ["/css/a.css", "/index.html"]
    assert negotiation.use_as_dictionary("/css/a.css") == 'match="/css/a.css"'
    assert negotiation.use_as_dictionary("/index.html") == 'match="/{index.html}?"'  # the entry is loaded as /
    assert negotiation.entry_file(V) == ("www.v.test", "/index.html")
    assert negotiation.dictionary_links(V) == (
        "<https://www.v.test/css/a.css.pbdict>; rel=compression-dictionary, "
        "<https://www.v.test/index.html.pbdict>; rel=compression-dictionary, "
        "<https://img.v.test/x.js.pbdict>; rel=compression-dictionary")
    assert negotiation.dictionary_ids([V])[DICTIONARIES["www.v.test/css/a.css"]] == encodings.dictionary_id(V1_CSS)
    odd = Site(V.manifest.model_copy(update={"dictionaries": {"www.v.test/a*b.css": DICTIONARIES["img.v.test/x.js"]}}),
               V.root)
    with pytest.raises(PlanError, match=r"dictionary path '/a\*b.css' must be printable ASCII without"):
        negotiation.dictionary_paths(odd, "www.v.test")
