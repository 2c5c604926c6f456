"""Layout: names, addresses and the exact commands that build the testbed."""

import ipaddress

import pytest

from pagebench.core.layout import MAX_SERVER_IPS, NAMESPACE_PATTERN, ORIGIN_NETWORK, ORIGIN_NETWORK6, Layout
from pagebench.core.layout import address_batch, new_prefix


def test_names_and_addresses():
    topo = Layout("pbabc123", server_ips=3)
    assert topo.namespaces == ("pbabc123-client", "pbabc123-router", "pbabc123-server")
    assert all(NAMESPACE_PATTERN.match(ns) for ns in topo.namespaces)
    assert topo.server_addresses == ("198.19.0.1", "198.19.0.2", "198.19.0.3")
    assert topo.server_addresses6 == ("2001:2:0:100::1", "2001:2:0:100::2", "2001:2:0:100::3")


def test_the_origin_range_holds_the_cap_in_routed_host_addresses():
    """Every address distinct, canonical (as nginx logs it), inside the routed ranges and off
    every link subnet; x.y.z.0 and .255 never used; B.H of IPv4 is ::B:H of IPv6."""
    topo = Layout("pbabc", server_ips=MAX_SERVER_IPS)
    v4, v6 = topo.server_addresses, topo.server_addresses6
    assert len(set(v4)) == len(set(v6)) == MAX_SERVER_IPS >= 1000
    links = [ipaddress.ip_network(n) for n in ("198.18.0.0/24", "198.18.1.0/24", "198.18.2.0/24",
                                                "2001:2::/64", "2001:2:0:1::/64")]
    for a4, a6 in zip(v4, v6):
        assert ipaddress.ip_address(a4) in ipaddress.ip_network(ORIGIN_NETWORK)
        assert str(ipaddress.ip_address(a6)) == a6 and ipaddress.ip_address(a6) in ipaddress.ip_network(ORIGIN_NETWORK6)
        assert not any(ipaddress.ip_address(a) in net for net in links for a in (a4, a6) if net.version == (
            6 if ":" in a else 4))
        assert a4.rsplit(".", 1)[1] not in ("0", "255")
        assert a6.endswith(":" + a4.rsplit(".", 1)[1]) and (a4.split(".")[2] == "0" or f"::{a4.split('.')[2]}:" in a6)
    assert ipaddress.ip_network(ORIGIN_NETWORK).subnet_of(ipaddress.ip_network("198.18.0.0/15"))  # RFC 2544
    assert ipaddress.ip_network(ORIGIN_NETWORK6).subnet_of(ipaddress.ip_network("2001:2::/48"))  # RFC 5180
    assert (v4[249], v4[250], v4[-1]) == ("198.19.0.250", "198.19.1.1", "198.19.7.250")
    with pytest.raises(ValueError, match=rf"server_ips: must be 1..{MAX_SERVER_IPS}, got {MAX_SERVER_IPS + 1}"):
        Layout("pbabc", server_ips=MAX_SERVER_IPS + 1)


def test_prefixes_are_unique_and_valid():
    prefixes = {new_prefix("t") for _ in range(50)}
    assert len(prefixes) == 50
    assert all(p.startswith("pbt") for p in prefixes)
    with pytest.raises(ValueError, match="prefix"):
        Layout("not-ours")
    with pytest.raises(ValueError, match="server_ips"):
        Layout("pbabc", server_ips=0)


@pytest.mark.parametrize("tag", ["T", "a-b", "abcdefg", "t\n"])
def test_a_tag_is_what_fits_a_prefix(tag: str):
    """Up to six lower-case letters or digits: the prefix must still name namespaces."""
    with pytest.raises(ValueError, match=r"at most 6 lower-case letters or digits"):
        new_prefix(tag)
    assert NAMESPACE_PATTERN.match(f"{new_prefix('abc123')}-client")
    assert NAMESPACE_PATTERN.match(f"{new_prefix()}-server") and len(new_prefix()) == len("pb") + 6


def test_build_commands_are_exact():
    steps = Layout("pbx1", server_ips=2).build_commands()
    cmds = [cmd for cmd, _ in steps]
    assert [cmd for cmd, stdin in steps if stdin is not None] == [("ip", "-n", "pbx1-server", "-batch", "-")]
    assert steps[-1][1] == ("address add 198.19.0.1/32 dev pb0\naddress add 2001:2:0:100::1/128 dev pb0 nodad\n"
                            "address add 198.19.0.2/32 dev pb0\naddress add 2001:2:0:100::2/128 dev pb0 nodad\n")
    assert cmds[:3] == [("ip", "netns", "add", f"pbx1-{role}") for role in ("client", "router", "server")]
    assert ("ip", "-n", "pbx1-client", "link", "add", "pb0", "type", "veth", "peer", "name", "rc",
            "netns", "pbx1-router") in cmds
    assert ("ip", "-n", "pbx1-server", "link", "add", "pb0", "type", "veth", "peer", "name", "rs",
            "netns", "pbx1-router") in cmds
    no_dad = [cmds.index(("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0",
                          "net.ipv6.conf.default.accept_dad=0")) for ns in ("pbx1-client", "pbx1-router", "pbx1-server")]
    assert max(no_dad) < min(i for i, c in enumerate(cmds) if "link" in c and "add" in c)
    offloads = [c for c in cmds if "ethtool" in c]
    assert len(offloads) == 4 and all(c[-6:] == ("tso", "off", "gso", "off", "gro", "off") for c in offloads)
    # the server's one link address; the router reaches the origins' range through it
    assert ("ip", "-n", "pbx1-server", "addr", "add", "198.18.1.2/24", "dev", "pb0") in cmds
    assert ("ip", "-n", "pbx1-server", "addr", "add", "2001:2:0:1::2/64", "dev", "pb0", "nodad") in cmds
    assert ("ip", "-n", "pbx1-server", "-6", "route", "add", "default", "via", "2001:2:0:1::1", "dev", "pb0") in cmds
    up = cmds.index(("ip", "-n", "pbx1-router", "link", "set", "rs", "up"))
    assert cmds.index(("ip", "-n", "pbx1-router", "route", "add", "198.19.0.0/16", "via", "198.18.1.2",
                       "dev", "rs")) > up
    assert ("ip", "-n", "pbx1-router", "-6", "route", "add", "2001:2:0:100::/64", "via", "2001:2:0:1::2",
            "dev", "rs") in cmds
    assert cmds[-2] == ("ip", "netns", "exec", "pbx1-router", "sysctl", "-qw", "net.ipv4.ip_forward=1",
                        "net.ipv6.conf.all.forwarding=1")


def test_address_batch_deletes_what_it_adds():
    assert address_batch(["198.19.0.1", "2001:2:0:100::1"], "eth0", "del") == (
        "address del 198.19.0.1/32 dev eth0\naddress del 2001:2:0:100::1/128 dev eth0\n")
    with pytest.raises(ValueError, match="verb 'replace': add or del"):
        address_batch([], "eth0", "replace")
