"""A strategy and its pool's decisions (pure): which connection takes the next request,
how many one may carry, and which port the origins listen on."""

from __future__ import annotations

import pytest

from pagebench.core.modes import H2, H3, KEEPALIVE, PIPELINING
from pagebench.edge.strategy import OPEN, Strategy, choose, h1_capacity, may_join, origin_port


@pytest.mark.parametrize("fields", [{"mode": H3}, {"mode": H2, "connections": 0}, {"mode": H2, "depth": 0}],
                         ids=["h3: not across the link", "no connections", "no depth"])
def test_strategy_is_checked(fields):
    with pytest.raises(ValueError):
        Strategy(**fields)


def test_an_idle_connection_first_then_a_new_one_then_the_least_loaded():
    keepalive = Strategy(KEEPALIVE, 2)
    assert choose(keepalive, []) == OPEN
    assert choose(keepalive, [1, 0]) == 1
    assert choose(keepalive, [None]) == OPEN
    assert choose(keepalive, [None, None]) is None  # both busy, no third: it waits
    pipelining = Strategy(PIPELINING, 2, 4)
    assert choose(pipelining, [2]) == OPEN  # HTTP/1.1 opens another before it deepens a pipeline
    assert choose(pipelining, [3, 1]) == 1 and choose(pipelining, [2, 2]) == 0  # the least loaded, the first if equal
    assert choose(pipelining, [None, 3]) == 1


def test_a_multiplexed_connection_takes_every_request_it_can():
    h2 = Strategy(H2, 2)
    assert choose(h2, [7]) == 0  # no second connection while the first has streams to spare
    assert choose(h2, [None]) == OPEN
    assert choose(h2, [None, None]) is None


def test_only_gets_are_pipelined_and_nothing_joins_behind_another_method():
    assert may_join("GET", []) and may_join("POST", []) and may_join("GET", ["GET", "GET"])
    assert not may_join("POST", ["GET"]) and not may_join("GET", ["POST"])
    assert h1_capacity(Strategy(PIPELINING, depth=4), "GET") == 4
    assert h1_capacity(Strategy(PIPELINING, depth=4), "POST") == 1
    assert h1_capacity(Strategy(KEEPALIVE, depth=4), "GET") == 1


def test_a_cleartext_strategy_goes_to_port_80_unless_told():
    assert origin_port(Strategy(KEEPALIVE, cleartext=True)) == 80
    assert origin_port(Strategy(H2)) == 443
    assert origin_port(Strategy(KEEPALIVE, cleartext=True), 8080) == 8080
