"""Layout: names, addresses and the exact commands that build the testbed."""

import pytest

from pagebench.core.layout import NAMESPACE_PATTERN, Layout, new_prefix


def test_names_and_addresses():
    topo = Layout("pbabc123", server_ips=3)
    assert topo.namespaces == ("pbabc123-client", "pbabc123-router", "pbabc123-server")
    assert all(NAMESPACE_PATTERN.match(ns) for ns in topo.namespaces)
    assert topo.server_addresses == ("198.18.1.2", "198.18.1.3", "198.18.1.4")
    assert topo.server_addresses6 == ("2001:2:0:1::2", "2001:2:0:1::3", "2001:2:0:1::4")


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
    cmds = Layout("pbx1", server_ips=2).build_commands()
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
    assert ("ip", "-n", "pbx1-server", "addr", "add", "198.18.1.3/24", "dev", "pb0") in cmds
    assert ("ip", "-n", "pbx1-server", "addr", "add", "2001:2:0:1::3/64", "dev", "pb0", "nodad") in cmds
    assert ("ip", "-n", "pbx1-server", "-6", "route", "add", "default", "via", "2001:2:0:1::1", "dev", "pb0") in cmds
    assert cmds[-1] == ("ip", "netns", "exec", "pbx1-router", "sysctl", "-qw", "net.ipv4.ip_forward=1",
                        "net.ipv6.conf.all.forwarding=1")
