"""The server plan (pure): one address per binding in the nesting order, what the
browser is told to reach a condition with, and every refusal a one-line error."""

from __future__ import annotations

import pytest

from pagebench.core.encodings import BR, DCZ, GZIP, IDENTITY
from pagebench.core.layout import MAX_SERVER_IPS
from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE, MODES, PIPELINING, TLS_CHOICES
from pagebench.core.servers.binding import PlanError
from pagebench.core.servers.plan import binding_rows, browser_url, plan
from tests.core.servers.samples import ALL_MODES, LEAF, A, B, V, site

#: The modes a plan serves: each mode's origin mode once (pipelining is keep-alive's).
MODES_SERVED = list(dict.fromkeys(mode.origin for mode in MODES))


def test_one_ip_per_tls_mode_site_origin_in_nesting_order():
    p = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert p.ip_count == 2 * 3 * 3 == len(p.bindings)
    cells = [(b.tls, b.mode.name, b.site, b.origin) for b in p.bindings]
    assert cells[:4] == [("1.3", "http1.0", "a", "www.a.test"), ("1.3", "http1.0", "a", "img.a.test"),
                         ("1.3", "http1.0", "b", "www.b.test"), ("1.3", "keepalive", "a", "www.a.test")]
    assert cells[9] == ("1.2", "http1.0", "a", "www.a.test")
    assert [b.index for b in p.bindings] == list(range(18))
    assert p.bindings[0].ip == "198.19.0.1" and p.bindings[17].ip == "198.19.0.18"
    assert p.bindings[0].ip6 == "2001:2:0:100::1" and p.bindings[17].ip6 == "2001:2:0:100::18"
    assert len({b.ip for b in p.bindings}) == 18


def test_addresses_match_the_topology():
    from pagebench.core.layout import Layout
    topology = Layout("pbabc", server_ips=6)
    p = plan([A], ALL_MODES, ["1.3"], LEAF)
    assert [b.ip for b in p.bindings] == list(topology.server_addresses)
    assert [b.ip6 for b in p.bindings] == list(topology.server_addresses6)


def test_duplicates_in_modes_and_versions_are_ignored():
    assert plan([A], [H2, H2], ["1.3", "1.3"], LEAF).ip_count == 2


def test_resolver_rules_map_each_origin_to_its_ip():
    p = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert p.host_resolver_rules(H2, "1.3") == \
        "MAP www.a.test 198.19.0.7, MAP img.a.test 198.19.0.8, MAP www.b.test 198.19.0.9"
    assert p.host_resolver_rules(HTTP10, "1.2", site="b") == "MAP www.b.test 198.19.0.12"
    assert p.host_resolver_rules(KEEPALIVE, "1.3", site="b", block_others=True) == \
        "MAP www.b.test 198.19.0.6, MAP * ~NOTFOUND"
    assert p.address(H2, "1.2", "img.a.test").ip == "198.19.0.17"
    assert p.addresses(H2, "1.3") == {"www.a.test": "198.19.0.7", "img.a.test": "198.19.0.8",
                                        "www.b.test": "198.19.0.9"}
    assert p.hostnames == ("img.a.test", "www.a.test", "www.b.test")


def test_sites_sharing_a_hostname_need_the_site_named():
    small, large = site("seed000-small-n1", ["www.seed000.test"]), site("seed000-large-n1", ["www.seed000.test"])
    p = plan([small, large], [H2], ["1.3"], LEAF)
    with pytest.raises(PlanError, match=r"host www.seed000.test is served for several sites .*: name the site"):
        p.host_resolver_rules(H2, "1.3")
    assert p.host_resolver_rules(H2, "1.3", site="seed000-large-n1") == "MAP www.seed000.test 198.19.0.2"


@pytest.mark.parametrize("modes,tls,fragment", [
    ([PIPELINING], ["1.3"], "mode pipelining: not served in the direct topology: pipelining needs the edge-proxy"),
    ([H3], ["1.2"], "mode h3: QUIC always uses TLS 1.3, and the plan has tls 1.2 only"),
    ([H2], ["1.1"], "tls '1.1': must be one of none, 1.2, 1.3"),
    ([], ["1.3"], "at least one"),
])
def test_unservable_requests_are_one_line_errors(modes, tls, fragment):
    with pytest.raises(PlanError) as error:
        plan([A], modes, tls, LEAF)
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_h3_bindings_exist_for_tls13_only_in_the_same_nesting_order():
    p = plan([A, B], [H2, H3], ["1.3", "1.2"], LEAF)
    cells = [(b.tls, b.mode.name, b.site, b.origin, b.index) for b in p.bindings]
    assert cells == [
        ("1.3", "h2", "a", "www.a.test", 0), ("1.3", "h2", "a", "img.a.test", 1), ("1.3", "h2", "b", "www.b.test", 2),
        ("1.3", "h3", "a", "www.a.test", 3), ("1.3", "h3", "a", "img.a.test", 4), ("1.3", "h3", "b", "www.b.test", 5),
        ("1.2", "h2", "a", "www.a.test", 6), ("1.2", "h2", "a", "img.a.test", 7), ("1.2", "h2", "b", "www.b.test", 8),
    ]
    assert p.ip_count == 9 and [b.server for b in p.bindings].count("caddy") == 3
    assert [b.index for b in p.served_by("caddy")] == [3, 4, 5]
    assert [b.index for b in p.served_by("nginx")] == [0, 1, 2, 6, 7, 8]
    # without h3 the allocation is what it always was
    assert [(b.tls, b.mode, b.origin) for b in plan([A, B], [H2], ["1.3", "1.2"], LEAF).bindings] == \
        [(b.tls, b.mode, b.origin) for b in p.bindings if b.mode.name == "h2"]
    with pytest.raises(PlanError, match=r"^mode h3 with tls 1.2: QUIC always uses TLS 1.3$"):
        p.host_resolver_rules(H3, "1.2")


def test_h3_resolver_rules_and_force_quic_value():
    p = plan([A, B], [H2, H3], ["1.3"], LEAF)
    assert p.host_resolver_rules(H3, "1.3", site="a", block_others=True) == \
        "MAP www.a.test 198.19.0.4, MAP img.a.test 198.19.0.5, MAP * ~NOTFOUND"
    assert p.force_quic_on(H3, "1.3", site="a") == "www.a.test:443,img.a.test:443"
    assert p.force_quic_on(H3, "1.3", site="b") == "www.b.test:443"
    assert p.force_quic_on(H3, "1.3") == "www.a.test:443,img.a.test:443,www.b.test:443"
    assert p.address(H3, "1.3", "www.b.test").ip == "198.19.0.6"
    with pytest.raises(PlanError, match="mode 'h3': not in this plan"):
        plan([A], [H2], ["1.3"], LEAF).force_quic_on(H3, "1.3")
    small, large = site("seed000-small-n1", ["www.seed000.test"]), site("seed000-large-n1", ["www.seed000.test"])
    shared = plan([small, large], [H3], ["1.3"], LEAF)
    assert shared.force_quic_on(H3, "1.3", site="seed000-large-n1") == "www.seed000.test:443"
    with pytest.raises(PlanError, match="name the site"):
        shared.force_quic_on(H3, "1.3")


def test_a_page_of_100_origins_runs_in_every_mode_and_tls_version():
    """Every origin mode (pipelining rides keep-alive's bindings) under every TLS version
    (QUIC under 1.3 only), in two encodings: each (mode, TLS, encoding, origin) its own
    address, and each condition's resolver rules map all 100 origins to their own."""
    page = site("news", [f"o{i}.news.test" for i in range(100)])
    tls = list(TLS_CHOICES)
    p = plan([page], MODES_SERVED, tls, LEAF, encodings=[IDENTITY, GZIP])
    pairs = [(t, m) for t in tls for m in MODES_SERVED if t in m.tls_versions]
    assert len(pairs) == 10 and p.ip_count == 10 * 2 * 100 <= MAX_SERVER_IPS
    assert len({b.ip for b in p.bindings}) == len({b.ip6 for b in p.bindings}) == p.ip_count
    assert p.bindings[-1].ip == "198.19.7.250"
    for t, mode in pairs:
        for encoding in (IDENTITY, GZIP):
            chosen = p.addresses(mode, t, encoding=encoding)
            assert len(chosen) == 100 and len(set(chosen.values())) == 100
            rules = p.host_resolver_rules(mode, t, encoding=encoding, block_others=True)
            assert rules.count("MAP ") == 101 and rules.endswith(", MAP * ~NOTFOUND")
            assert len(rules) < 4000  # one argv entry: far below the kernel's 128 KiB per argument
    quic = p.force_quic_on(H3, "1.3")
    assert quic.count(":443") == 100
    # one TLS version and identity: the four origin modes of the issue, 400 addresses
    assert plan([page], MODES_SERVED, ["1.3"], LEAF).ip_count == 400


def test_too_many_addresses_say_what_to_cut():
    page = site("news", [f"o{i}.news.test" for i in range(100)])
    small = site("b", ["www.b.test"])
    with pytest.raises(PlanError) as refused:
        plan([page, small], MODES_SERVED, list(TLS_CHOICES), LEAF, encodings=[IDENTITY, GZIP, BR])
    assert str(refused.value) == (
        "plan: needs 3030 server addresses, at most 2000: 10 (TLS version, mode) pairs x 3 encoding(s) x 101 "
        "origin(s) over the site versions (the largest site, news, has 100): split the spec into several runs "
        "with fewer modes, TLS versions, encodings or sites each (with these modes, TLS versions and encodings: "
        "at most 66 origins in all)")
    assert plan([page, small], MODES_SERVED, list(TLS_CHOICES)[1:], LEAF, encodings=[IDENTITY, GZIP]).ip_count == 1414


def test_unknown_selections_are_refused():
    with pytest.raises(PlanError, match="listed twice"):
        plan([A, A], [H2], ["1.3"], LEAF)
    p = plan([A], [H2], ["1.3"], LEAF)
    with pytest.raises(PlanError, match="mode 'keepalive': not in this plan"):
        p.host_resolver_rules(KEEPALIVE, "1.3")
    with pytest.raises(PlanError, match="tls '1.2': not in this plan"):
        p.host_resolver_rules(H2, "1.2")
    with pytest.raises(PlanError, match="site 'zzz': not in this plan"):
        p.host_resolver_rules(H2, "1.3", site="zzz")
    with pytest.raises(PlanError, match="host 'www.b.test': not served"):
        p.address(H2, "1.3", "www.b.test")


def test_the_browser_loads_cleartext_over_http_only_when_it_talks_to_the_origin():
    entry = "https://www.a.test/index.html"
    assert browser_url(entry, "none", "direct") == "http://www.a.test/index.html"
    assert browser_url(entry, "none", "proxy") == entry  # the browser's hop to the edge proxy stays TLS
    assert browser_url(entry, "1.3", "direct") == entry


def test_one_ip_per_version_and_encoding_nested_inside_the_site_origins_innermost():
    p = plan([A, V], [H2], ["1.3"], LEAF, encodings=[GZIP, DCZ])
    cells = [(b.site, b.version, b.encoding.name, b.origin, b.index) for b in p.bindings]
    assert cells == [
        ("a", 1, "gzip", "www.a.test", 0), ("a", 1, "gzip", "img.a.test", 1),
        ("a", 1, "dcz", "www.a.test", 2), ("a", 1, "dcz", "img.a.test", 3),
        ("v", 1, "gzip", "www.v.test", 4), ("v", 1, "gzip", "img.v.test", 5),
        ("v", 1, "dcz", "www.v.test", 6), ("v", 1, "dcz", "img.v.test", 7),
        ("v", 2, "gzip", "www.v.test", 8), ("v", 2, "gzip", "img.v.test", 9),
        ("v", 2, "dcz", "www.v.test", 10), ("v", 2, "dcz", "img.v.test", 11),
    ]
    assert p.encodings == (GZIP, DCZ)
    assert p.host_resolver_rules(H2, "1.3", site="v", encoding=DCZ, version=2, block_others=True) == \
        "MAP www.v.test 198.19.0.11, MAP img.v.test 198.19.0.12, MAP * ~NOTFOUND"
    assert p.addresses(H2, "1.3", "a", encoding=GZIP) == {"www.a.test": "198.19.0.1", "img.a.test": "198.19.0.2"}
    assert p.address(H2, "1.3", "img.v.test", encoding=GZIP, version=2).index == 9
    assert len(p.select(H2, "1.3", encoding=DCZ, version=2)) == 2  # only v has a version 2
    assert binding_rows(p)[10] == ["1.3", "h2", "v", "www.v.test", 10, "dcz", 2]
    h3 = plan([V], [H3], ["1.3"], LEAF, encodings=[BR])
    assert h3.force_quic_on(H3, "1.3", encoding=BR, version=2) == "www.v.test:443,img.v.test:443"


def test_one_encoding_and_one_version_allocate_as_before():
    before = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert [(b.tls, b.mode, b.site, b.origin, b.index) for b in before.bindings] == \
        [(b.tls, b.mode, b.site, b.origin, b.index) for b in plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF,
                                                                  encodings=[IDENTITY]).bindings]
    assert {(b.encoding, b.version) for b in before.bindings} == {(IDENTITY, 1)}
    assert binding_rows(before)[0] == ["1.3", "http1.0", "a", "www.a.test", 0, "identity", 1]


@pytest.mark.parametrize("call,fragment", [
    (lambda p: p.select(H2, "1.3", "v", encoding=BR), "encoding 'br': not in this plan (has identity, dcz)"),
    (lambda p: p.host_resolver_rules(H2, "1.3", site="v", version=3), "version 3: not in this plan (site v has "
                                                                         "versions 1..2)"),
    (lambda p: p.addresses(H2, "1.3", "a", version=2), "version 2: not in this plan (site a has versions 1..1)"),
    (lambda p: p.address(H2, "1.3", "www.a.test", version=0), "version 0: not in this plan"),
])
def test_unserved_encodings_and_versions_are_one_line_errors(call, fragment):
    p = plan([A, V], [H2], ["1.3"], LEAF, encodings=[IDENTITY, DCZ])
    with pytest.raises(PlanError) as error:
        call(p)
    assert fragment in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(PlanError, match="one encoding"):
        plan([A], [H2], ["1.3"], LEAF, encodings=[])
