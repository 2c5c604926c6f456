"""HTTP/1.x across the link: the request text and the in-order response reader (pure),
then HTTP/1.0, keep-alive and pipelining against the loopback server (`loopback.py`)
that closes as nginx does at its `keepalive_requests` limit."""

from __future__ import annotations

import asyncio

import pytest

from pagebench.core.modes import HTTP10, KEEPALIVE, PIPELINING
from pagebench.edge.http1 import ResponseReader, closes, request_bytes
from pagebench.edge.messages import Request, Response
from pagebench.edge.strategy import Strategy
from tests.edge.loopback import fetch_all


def test_the_request_drops_hop_headers_and_frames_a_body():
    request = Request("GET", "/a?b=1", (("Accept", "*/*"), ("Connection", "keep-alive"), ("Host", "other"),
                                        ("TE", "trailers")))
    assert request_bytes(request, "www.a.test", "1.0") == b"GET /a?b=1 HTTP/1.0\r\nHost: www.a.test\r\nAccept: */*\r\n\r\n"
    assert request_bytes(Request("POST", "/form", ()), "www.a.test", "1.1") == \
        b"POST /form HTTP/1.1\r\nHost: www.a.test\r\nContent-Length: 0\r\n\r\n"
    assert request_bytes(Request("PUT", "/x", (), b"abc"), "h", "1.1").endswith(b"Content-Length: 3\r\n\r\nabc")


def test_the_reader_parses_pipelined_responses_in_order_and_one_ended_by_the_close():
    got: list[Response] = []
    reader = ResponseReader(got.append)
    reader.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n"
                b"HTTP/1.1 200 OK\r\nContent-Len")
    assert [(r.status, r.body) for r in got] == [(200, b"a"), (304, b"")]
    reader.feed(b"gth: 2\r\nConnection: close\r\n\r\nbc")
    assert got[2] == Response(200, (("Content-Length", "2"), ("Connection", "close")), b"bc") and closes(got[2])
    closing: list[Response] = []
    until_close = ResponseReader(closing.append)
    until_close.feed(b"HTTP/1.0 200 OK\r\n\r\nall of it")
    assert closing == []
    until_close.eof()
    assert closing == [Response(200, (), b"all of it")] and not closes(closing[0])


def test_pipelining_retries_what_a_closing_server_left_unanswered(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy(PIPELINING, 1, 10), 3, 10, tmp_path))
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/1.1" for i in range(10)]
    assert len(upstream.connections) == len(seen) == 4  # 3 + 3 + 3 + 1, one connection at a time
    assert seen[0].waiting_at_first_answer > 1  # really pipelined
    assert sum(e.retries for e in upstream.exchanges) > 0
    assert max(c.max_in_flight for c in upstream.connections) > 1


def test_keepalive_keeps_one_request_in_flight_per_connection(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy(KEEPALIVE, 2, 10), 100, 6, tmp_path))
    assert len(responses) == 6 and len(upstream.connections) == 2
    assert {c.max_in_flight for c in upstream.connections} == {1}
    assert all(s.waiting_at_first_answer == 1 for s in seen)
    assert sum(e.retries for e in upstream.exchanges) == 0


def test_http10_opens_a_connection_per_request(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy(HTTP10, 3, 1), 100, 5, tmp_path))
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/1.0" for i in range(5)]
    assert len(upstream.connections) == len(seen) == 5
    assert {e.protocol for e in upstream.exchanges} == {"http/1.0"}


@pytest.mark.parametrize("mode", [HTTP10, KEEPALIVE, PIPELINING], ids=str)
def test_a_cleartext_strategy_speaks_plain_http_to_a_plain_server(tmp_path, mode):
    # the server parses what arrives as HTTP: a TLS ClientHello would answer nothing
    responses, upstream, seen = asyncio.run(fetch_all(Strategy(mode, 1, 4, cleartext=True), 100, 3, tmp_path))
    version = "1.0" if mode is HTTP10 else "1.1"
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/{version}" for i in range(3)]
    assert len(seen) == (3 if mode is HTTP10 else 1)
