"""What Caddy's replay keys a recorded target by (pure): the request URI as Go re-encodes
it. The routes themselves are checked against real Caddy in `tests/lab/servers/test_replay.py`."""

from __future__ import annotations

import pytest

from pagebench.core.servers.caddyreplay import go_request_uri

ODD = "/odd%20dir/a+b.js?q=a%20b+c&x=1;y=$z&w={v}|\"'\\"  # a path Go keeps; the query is never re-encoded


@pytest.mark.parametrize("target,seen", [
    ("/a.css?x=1", "/a.css?x=1"), (ODD, ODD), ("/pipe|x.txt", "/pipe%7Cx.txt"), ("/%7Efoo|?q=|", "/~foo%7C?q=|"),
    ("/a%2Fb", "/a%2Fb"), ('/q"{x}', "/q%22%7Bx%7D"), ("/ok?", "/ok?"),
])
def test_caddy_sees_the_target_as_go_encodes_it(target: str, seen: str):
    assert go_request_uri(target) == seen
