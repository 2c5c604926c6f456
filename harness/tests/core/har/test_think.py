"""Server think time (pure): a response's wait less the round trip of its connection, else
its origin's smallest handshake, else its origin's smallest wait; never negative; kept
for every import, applied unless `--no-server-time`; long ones named."""

from __future__ import annotations

import gzip
import json

from pagebench.core.har.importer import import_har
from pagebench.core.har.parse import parse_har
from pagebench.core.har.think import LONG_THINK_MS, round_trip, think_times
from tests.core.har.hars import FIXTURES, entry, har, imported


def timed(wait: float, connect: float = -1, ssl: float = -1) -> dict:
    return {"blocked": 1, "dns": -1, "connect": connect, "ssl": ssl, "send": 0, "wait": wait, "receive": 2}


def test_the_round_trip_is_the_connection_s_handshake_else_the_origin_s_smallest_else_its_smallest_wait():
    parsed = parse_har(har(
        entry("https://a.example/", timings=timed(140, connect=90, ssl=50), connection="7"),  # handshake 40
        entry("https://a.example/x.js", at=0.1, timings=timed(300, connect=80, ssl=20), connection="9"),  # 60
        entry("https://a.example/y.js", at=0.2, timings=timed(100), connection="9"),  # on 9: 60
        entry("https://a.example/z.js", at=0.2, timings=timed(100)),  # no id: a.example's smallest, 40
        entry("https://b.example/p.png", at=0.3, timings=timed(70), connection=12),  # preconnected: no handshake
        entry("https://b.example/q.png", at=0.3, timings=timed(45)),
        entry("https://b.example/r.png", at=0.3, timings={"wait": -1}),
    ), "x.har")
    e = parsed.entries
    assert [round_trip(x, e) for x in e] == [40.0, 60.0, 60.0, 40.0, 45.0, 45.0, None]
    assert e[4].connection == "12"
    assert think_times(e) == {0: 100.0, 1: 240.0, 2: 40.0, 3: 60.0, 4: 25.0, 5: 0.0}


def test_a_wait_shorter_than_the_round_trip_thinks_nothing():
    parsed = parse_har(har(entry("https://a.example/", timings=timed(20.04, connect=30, ssl=5)),
                           entry("https://a.example/a.css", at=0.1, timings=timed(25.06))), "x.har")
    assert think_times(parsed.entries) == {0: 0.0, 1: 0.1}


def test_a_page_with_bodies_keeps_its_think_times_and_applies_them_unless_told():
    page = [entry("https://www.example.com/", text="<p>saved</p>", timings=timed(180, connect=60, ssl=30)),
            entry("https://www.example.com/a.js", mime="text/javascript", text="var a;", at=0.3, timings=timed(55))]
    site = imported(*page)
    assert site.fidelity is None  # every body saved: the real replay, not a stand-in
    assert [e.think_ms for e in site.recording.exchanges] == [150.0, 25.0]
    assert site.recording.server_time and [site.recording.delay_ms(e) for e in site.recording.exchanges] == [150, 25]
    assert site.recording.think_line() == ("server think time (HAR wait less one RTT) of 2 response(s): total 175 ms, "
                                           "median 87.5 ms, max 150 ms; on: each response is delayed by it")
    off = import_har(parse_har(har(*page), "x.har"), "mine", "x.har", server_time=False)
    assert [e.think_ms for e in off.recording.exchanges] == [150.0, 25.0]  # kept, to say and to turn on
    assert not off.recording.server_time and [off.recording.delay_ms(e) for e in off.recording.exchanges] == [0, 0]
    assert off.recording.think_line().endswith("; off (--no-server-time): kept, not applied")
    assert json.loads(off.recording.model_dump_json())["server_time"] is False


def test_a_long_held_response_is_named_at_import():
    page = [entry("https://www.example.com/", text="<p>x</p>", timings=timed(80, connect=40, ssl=20)),
            entry("https://www.example.com/poll?t=1", mime="application/json", text="{}", at=0.2,
                  timings=timed(LONG_THINK_MS + 500))]
    site = imported(*page)
    assert any(w.startswith("1 response(s) thought 10 s or more at the server (long polls?), the longest "
                            "https://www.example.com/poll?t=1 10,480 ms") for w in site.warnings)
    quiet = import_har(parse_har(har(*page), "x.har"), "mine", "x.har", server_time=False)
    assert not any("thought" in w for w in quiet.warnings)


def test_every_think_time_of_a_public_har_is_within_its_wait():
    data = gzip.decompress((FIXTURES / "hars" / "chrome-har-www.zdnet.com.har.gz").read_bytes())
    parsed = parse_har(data, "zdnet.har")
    think = think_times(parsed.entries)
    waits = {e.index: e.wait_ms for e in parsed.entries if e.wait_ms is not None}
    assert think.keys() == waits.keys() and len(think) > 50
    assert all(0 <= think[i] <= waits[i] for i in think)
    assert sum(1 for i in think if think[i] < waits[i]) > len(think) / 2  # a round trip found for most
