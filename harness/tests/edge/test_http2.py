"""HTTP/2 across the link (pure part): the header list a request is sent with. The
connection itself is checked against real nginx in `test_upstream` and `test_proxy_e2e`."""

from __future__ import annotations

from pagebench.edge.http2 import request_headers
from pagebench.edge.messages import Request


def test_pseudo_headers_first_then_the_request_s_own_in_lower_case_without_hop_headers():
    request = Request("GET", "/a?b=1", (("Accept", "*/*"), ("Connection", "keep-alive"), ("Host", "other"),
                                        (":authority", "spoofed"), ("If-None-Match", '"x"')))
    assert request_headers(request, "https", "www.a.test") == [
        (":method", "GET"), (":scheme", "https"), (":authority", "www.a.test"), (":path", "/a?b=1"),
        ("accept", "*/*"), ("if-none-match", '"x"')]
    assert request_headers(Request("GET", "/", ()), "http", "www.a.test")[1] == (":scheme", "http")
