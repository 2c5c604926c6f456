"""The lab's layout: namespace names, interfaces, addresses and the exact commands that
build it. Pure: nothing here runs a command; `lab.netns.NamespaceBed` does.

    client ns  [pb0] ---- [rc]  router ns  [rs] ---- [pb0]  server ns
    198.18.0.2        198.18.0.1       198.18.1.1        198.18.1.2
                                                         + origins 198.19.0.1 .. (one IP per binding)

Addresses come from the benchmarking ranges (198.18.0.0/15, RFC 2544; 2001:2::/48,
RFC 5180) and exist only inside the run's own namespaces. The origins' addresses are not
on the link's subnet: the router reaches the whole origin range through the server's
one link address, so its neighbour table does not grow with the origins (the kernel's is
shared by every namespace, 1024 entries by default), and the split lab's Docker networks
keep their /24s. They are added in one `ip -batch` (one
`ip` per address took 3 ms each). docs/architecture.md: "Addresses".
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

Command = tuple[str, ...]
#: A command and its standard input (None: none), e.g. `ip -batch -` and its lines.
Step = tuple[Command, str | None]

#: Every pagebench namespace is `<prefix>-{client,router,server}`, prefix `pb<hex>`.
PREFIX_PATTERN = re.compile(r"^pb[a-z0-9]{2,12}$")
NAMESPACE_PATTERN = re.compile(r"^(pb[a-z0-9]{2,12})-(client|router|server)$")
#: Origin addresses a run may have: a page of 100 origins in every mode and TLS version
#: (10 x 100) in two encodings. nginx binds two sockets per address (IPv4 and IPv6) and
#: starts in about 3 ms per address (docs/architecture.md: "Addresses").
MAX_SERVER_IPS = 2000
#: The origins' ranges, routed by the router to the server's link address.
ORIGIN_NETWORK = "198.19.0.0/16"
ORIGIN_NETWORK6 = "2001:2:0:100::/64"
#: Addresses per /24 of the origin range: x.y.z.1 to x.y.z.250, never .0 or .255.
_PER_BLOCK = 250


def origin_address(index: int) -> str:
    """Origin address `index` (from 0): 198.19.0.1 .. 198.19.0.250, 198.19.1.1, ..."""
    block, host = divmod(index, _PER_BLOCK)
    return f"198.19.{block}.{host + 1}"


def origin_address6(index: int) -> str:
    """The IPv6 twin of `origin_address`: 198.19.B.H is 2001:2:0:100::B:H (canonical form)."""
    block, host = divmod(index, _PER_BLOCK)
    return f"2001:2:0:100::{block}:{host + 1}" if block else f"2001:2:0:100::{host + 1}"


def unsegmented(dev: str) -> Command:
    """Segmentation offloads off on `dev`: one skb must be one wire packet, or rate and
    delay act on 64 KB super-packets (every end of the link, native or split)."""
    return ("ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off")


#: A tag marks a group of runs (a test session's are `pbt<id>...`): what fits a prefix.
TAG_PATTERN = re.compile(r"[a-z0-9]{0,6}")


def new_prefix(tag: str = "") -> str:
    """A fresh run prefix such as `pb3fa9c1`, or `pb<tag>3fa9c1`: the tag (the caller's;
    `system.places.run_prefix` passes the lab's `PAGEBENCH_TAG`) marks a group of runs."""
    if not TAG_PATTERN.fullmatch(tag):
        raise ValueError(f"tag {tag!r}: at most 6 lower-case letters or digits")
    return f"pb{tag}{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Layout:
    """The names and addresses of one run's lab (prefix `pb<hex>`), with `server_ips`
    origin addresses."""

    prefix: str
    server_ips: int = 1

    def __post_init__(self) -> None:
        if not PREFIX_PATTERN.match(self.prefix):
            raise ValueError(f"prefix {self.prefix!r}: must match {PREFIX_PATTERN.pattern}")
        if not 1 <= self.server_ips <= MAX_SERVER_IPS:
            raise ValueError(f"server_ips: must be 1..{MAX_SERVER_IPS}, got {self.server_ips}")

    # Names -------------------------------------------------------------------

    @property
    def client(self) -> str:
        return f"{self.prefix}-client"

    @property
    def router(self) -> str:
        return f"{self.prefix}-router"

    @property
    def server(self) -> str:
        return f"{self.prefix}-server"

    @property
    def namespaces(self) -> tuple[str, str, str]:
        return (self.client, self.router, self.server)

    endpoint_if = "pb0"  # the single veth end in the client and in the server
    router_client_if = "rc"  # router side facing the client: egress = downlink
    router_server_if = "rs"  # router side facing the server: egress = uplink

    # Addresses ---------------------------------------------------------------

    client_ip = "198.18.0.2"
    router_client_ip = "198.18.0.1"
    router_server_ip = "198.18.1.1"
    server_ip = "198.18.1.2"  # the server's end of the link: the router's next hop to the origins
    client_ip6 = "2001:2::2"
    router_client_ip6 = "2001:2::1"
    router_server_ip6 = "2001:2:0:1::1"
    server_ip6 = "2001:2:0:1::2"

    @property
    def server_addresses(self) -> tuple[str, ...]:
        """One IPv4 address per binding, from 198.19.0.1 (`origin_address`)."""
        return tuple(origin_address(i) for i in range(self.server_ips))

    @property
    def server_addresses6(self) -> tuple[str, ...]:
        return tuple(origin_address6(i) for i in range(self.server_ips))

    def address_batch(self, verb: str = "add") -> str:
        """`ip -batch` input adding (or deleting) every origin address on the server's
        endpoint, each a host address (/32, /128) of the routed range."""
        pairs = zip(self.server_addresses, self.server_addresses6)
        return address_batch((address for pair in pairs for address in pair), self.endpoint_if, verb)

    # Commands ----------------------------------------------------------------

    def build_commands(self) -> list[Step]:
        """Create the namespaces and wire them up, in order: (command, its standard input)."""
        c, r, s = self.namespaces
        ep, rc, rs = self.endpoint_if, self.router_client_if, self.router_server_if
        cmds: list[Command] = [("ip", "netns", "add", ns) for ns in self.namespaces]
        # No duplicate address detection, for link-local addresses too: an address that turns
        # from tentative to valid a second after start-up is a network change to Chromium,
        # which then aborts the navigation in flight (ERR_NETWORK_CHANGED).
        cmds += [("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0",
                  "net.ipv6.conf.default.accept_dad=0") for ns in self.namespaces]
        cmds += [
            ("ip", "-n", c, "link", "add", ep, "type", "veth", "peer", "name", rc, "netns", r),
            ("ip", "-n", s, "link", "add", ep, "type", "veth", "peer", "name", rs, "netns", r),
        ]
        cmds += [("ip", "netns", "exec", ns, *unsegmented(dev)) for ns, dev in ((c, ep), (r, rc), (r, rs), (s, ep))]
        cmds += [
            ("ip", "-n", c, "addr", "add", f"{self.client_ip}/24", "dev", ep),
            ("ip", "-n", c, "addr", "add", f"{self.client_ip6}/64", "dev", ep, "nodad"),
            ("ip", "-n", r, "addr", "add", f"{self.router_client_ip}/24", "dev", rc),
            ("ip", "-n", r, "addr", "add", f"{self.router_client_ip6}/64", "dev", rc, "nodad"),
            ("ip", "-n", r, "addr", "add", f"{self.router_server_ip}/24", "dev", rs),
            ("ip", "-n", r, "addr", "add", f"{self.router_server_ip6}/64", "dev", rs, "nodad"),
            ("ip", "-n", s, "addr", "add", f"{self.server_ip}/24", "dev", ep),
            ("ip", "-n", s, "addr", "add", f"{self.server_ip6}/64", "dev", ep, "nodad"),
        ]
        for ns, dev in ((c, ep), (r, rc), (r, rs), (s, ep)):
            cmds.append(("ip", "-n", ns, "link", "set", dev, "up"))
        cmds += [("ip", "-n", ns, "link", "set", "lo", "up") for ns in self.namespaces]
        cmds += [
            ("ip", "-n", c, "route", "add", "default", "via", self.router_client_ip, "dev", ep),
            ("ip", "-n", c, "-6", "route", "add", "default", "via", self.router_client_ip6, "dev", ep),
            ("ip", "-n", s, "route", "add", "default", "via", self.router_server_ip, "dev", ep),
            ("ip", "-n", s, "-6", "route", "add", "default", "via", self.router_server_ip6, "dev", ep),
            ("ip", "-n", r, "route", "add", ORIGIN_NETWORK, "via", self.server_ip, "dev", rs),
            ("ip", "-n", r, "-6", "route", "add", ORIGIN_NETWORK6, "via", self.server_ip6, "dev", rs),
            ("ip", "netns", "exec", r, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"),
        ]
        return [(cmd, None) for cmd in cmds] + [(("ip", "-n", s, "-batch", "-"), self.address_batch())]


def address_batch(addresses: Iterable[str], dev: str, verb: str = "add") -> str:
    """`ip -batch` lines adding or deleting (`verb`) each origin address on `dev` as a
    host address (/32, /128); no duplicate address detection on an added IPv6 one."""
    if verb not in ("add", "del"):
        raise ValueError(f"verb {verb!r}: add or del")
    lines = []
    for address in addresses:
        six = ":" in address
        lines.append(f"address {verb} {address}/{128 if six else 32} dev {dev}"
                     + (" nodad" if six and verb == "add" else "") + "\n")
    return "".join(lines)
