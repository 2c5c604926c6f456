"""Unit: the analytic lower bound, against round trips counted by hand."""

from __future__ import annotations

import pytest

from pagebench.core.measure.bound import Fetch, Link, lower_bound_ms, rounds
from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE

WWW = "https://www.seed000.test"


def seed000(n: int, size: int) -> list[Fetch]:
    return [Fetch(WWW, 449, 0)] + [Fetch(WWW, size, 1) for _ in range(n)]


def test_slow_start_rounds():
    assert rounds(1, 10, 1448) == (1, 11)
    assert rounds(10 * 1448, 10, 1448) == (1, 20)
    assert rounds(10 * 1448 + 1, 10, 1448) == (2, 21)
    assert rounds(30 * 1448, 10, 1448) == (2, 40)  # 10 then 20 segments
    assert rounds(31 * 1448, 10, 1448) == (3, 41)


def test_h2_twenty_small_images_at_70ms():
    # TCP + TLS + HTML = 3 RTT; 20 x 2544 B = 36 segments from a window of 10 + 4 + 1: 2 rounds
    assert lower_bound_ms(seed000(20, 2544), Link(70), H2) == pytest.approx(5 * 70)


def test_keepalive_twenty_small_images_at_70ms():
    # the HTML's connection serves one image per RTT from 3 RTT on; five new ones join at
    # 5 RTT (TCP + TLS after discovery, then the request): 20 images are done at 8 RTT
    assert lower_bound_ms(seed000(20, 2544), Link(70), KEEPALIVE) == pytest.approx(8 * 70)


def test_http10_pays_three_round_trips_per_request_six_at_a_time():
    # HTML 3 RTT, then ceil(20 / 6) = 4 waves of (TCP + TLS + request)
    assert lower_bound_ms(seed000(20, 2544), Link(70), HTTP10) == pytest.approx((3 + 4 * 3) * 70)


def test_cleartext_saves_the_tls_round_trip_of_every_connection():
    # HTML 2 RTT, then 4 waves of (TCP + request): seed 000's 1994 accounting
    assert lower_bound_ms(seed000(20, 2544), Link(70, tls=False), HTTP10) == pytest.approx((2 + 4 * 2) * 70)
    # without timestamps a full segment carries 12 bytes more
    assert Link(70, timestamps=False).payload == 1460 and Link(70).payload == 1448


def test_warm_is_one_revalidation_on_a_new_connection():
    assert lower_bound_ms(seed000(20, 2544), Link(70), H2, cache="warm") == pytest.approx(3 * 70)


def test_bandwidth_bounds_big_pages():
    # 20 x 45566 B at 1.544 Mbit/s: ~4.9 s on the wire dominates the round trips
    fetches = seed000(20, 45566)
    link = Link(70, down_mbit=1.544)
    bound = lower_bound_ms(fetches, link, H2)
    total = sum(f.bytes for f in fetches)
    assert bound == pytest.approx(3 * 70 + (total - 1448) / link.bytes_per_ms())
    assert bound > lower_bound_ms(fetches, Link(70), H2)


def test_dependency_levels_add_round_trips_and_new_origins_add_handshakes():
    flat = [Fetch(WWW, 1000, 0), Fetch("https://static.test", 1000, 1)]
    deep = flat + [Fetch("https://static.test", 1000, 2), Fetch("https://fonts.test", 1000, 3)]
    # level 1 on a new origin: discovered at 3 RTT, + 2 RTT set-up + 1 RTT = 6 RTT
    assert lower_bound_ms(flat, Link(50), H2) == pytest.approx(6 * 50)
    # level 2 on that origin's open connection: + 1 RTT; level 3 on a third origin: + 3 RTT
    assert lower_bound_ms(deep, Link(50), H2) == pytest.approx(10 * 50)


def test_a_smaller_mss_or_window_never_lowers_the_bound():
    fetches = seed000(20, 45566)
    base = lower_bound_ms(fetches, Link(70), KEEPALIVE)
    assert lower_bound_ms(fetches, Link(70, mss=536), KEEPALIVE) >= base
    assert lower_bound_ms(fetches, Link(70, initcwnd=2), KEEPALIVE) >= base
    assert lower_bound_ms(fetches, Link(70, initcwnd=40), KEEPALIVE) <= base


def test_needs_the_html():
    with pytest.raises(ValueError):
        lower_bound_ms([Fetch(WWW, 10, 1)], Link(10), H2)


def test_h3_saves_the_tcp_round_trip_of_each_new_connection():
    link = Link(70)
    page = seed000(20, 2544)
    # 1 RTT handshake, 1 RTT to the HTML's first byte, the 20 images (36 segments) in
    # two rounds of quic-go's window (33 after the HTML), as under TCP: 1 RTT less in all
    assert lower_bound_ms(page, link, H2) == pytest.approx(5 * 70)
    assert lower_bound_ms(page, link, H3) == pytest.approx(4 * 70)
    assert lower_bound_ms(page, link, H3, "warm") == pytest.approx(2 * 70)
    # a second origin discovered in the HTML: its own handshake, 1 RTT under QUIC, 2 under TCP
    two_origins = [*page, Fetch("https://b.test", 2544, 1)]
    assert lower_bound_ms(two_origins, link, H2) == pytest.approx(6 * 70)
    assert lower_bound_ms(two_origins, link, H3) == pytest.approx(4 * 70)


def test_h3_starts_with_quic_go_s_larger_window():
    big = [Fetch("https://a.test", 1000, 0), Fetch("https://a.test", 30_000, 1)]
    link = Link(100, initcwnd=10)
    # 30 kB = 21 segments: two TCP rounds from 10 (+ 4 handshake + 1), one from 32 QUIC
    # packets; and 1 RTT less handshake
    assert lower_bound_ms(big, link, H2) - lower_bound_ms(big, link, H3) == pytest.approx(200)


def test_a_compressed_body_counts_as_sent_not_as_decoded():
    """A br-encoded 48 kB page crossed the link as 12 kB: the bound charges 12 kB (charging
    the decoded size made loads beat their own bound)."""
    from pagebench.core.measure.bound import fetches_of
    from pagebench.core.records import Resource

    def resource(path: str, body: int, encoded: int | None, cached: bool = False) -> Resource:
        return Resource(url=f"{WWW}{path}", origin=WWW, protocol="h2", connection_id=1, from_cache=cached,
                        status=200, resource_type="document", start_ms=0.0, response_start_ms=1.0, end_ms=2.0,
                        transfer_bytes=0 if cached else (encoded or body), body_bytes=body, encoded_bytes=encoded)

    fetches = fetches_of([resource("/", 48_000, 12_000), resource("/a.png", 9_000, None),
                          resource("/b.png", 9_000, None, cached=True)], lambda _path: 1)
    assert [(f.bytes, f.level) for f in fetches] == [(12_000, 0), (9_000, 1)]
