"""The edge proxy's origin pools (`Upstream`): which origins and ports a load's pools
reach. Against real nginx (encoded bodies and the headers of revalidation and of
dictionaries cross every strategy untouched): `test_upstream_e2e.py`. The strategies'
own behaviour is `test_http1`'s and `test_strategy`'s."""

from __future__ import annotations

import asyncio

import pytest

from pagebench.core.modes import H2, KEEPALIVE
from pagebench.edge.messages import Request, UpstreamError
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream
from tests.edge.loopback import HOST


def test_a_cleartext_strategy_s_pools_go_to_port_80_unless_told():
    assert Upstream(Strategy(KEEPALIVE, cleartext=True), {HOST: "127.0.0.1"}).pool(HOST).port == 80
    assert Upstream(Strategy(KEEPALIVE), {HOST: "127.0.0.1"}).pool(HOST).port == 443
    assert Upstream(Strategy(H2, cleartext=True), {HOST: "127.0.0.1"}, port=8080).pool(HOST).port == 8080


def test_unknown_origin_is_refused():
    upstream = Upstream(Strategy(H2), {HOST: "127.0.0.1"})
    with pytest.raises(UpstreamError, match="not an origin of this load"):
        asyncio.run(upstream.fetch("other.test", Request("GET", "/", ())))
    assert upstream.pools == {}
