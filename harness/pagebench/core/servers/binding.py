"""One server block of the plan: a site's origin under one mode, TLS version, content
version and encoding, on its own server address, and the error every refusal of the
server configuration raises.

Each binding has its own server IP on port 443 (cleartext, `tls: none`: port 80; QUIC:
UDP 443): index i is `Layout.server_addresses[i]` (and `server_addresses6[i]`), the same
whatever the run's prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.encodings import IDENTITY, Encoding
from pagebench.core.errors import PagebenchError
from pagebench.core.layout import MAX_SERVER_IPS, Layout
from pagebench.core.modes import CLEARTEXT, Mode

QUIC_PORT = 443
TLS_PORT = 443
CLEARTEXT_PORT = 80


# Addresses depend only on the index, not on the run's prefix.
_ADDRESSES = Layout("pbplan", server_ips=MAX_SERVER_IPS)
SERVER_ADDRESSES = _ADDRESSES.server_addresses
SERVER_ADDRESSES6 = _ADDRESSES.server_addresses6


class PlanError(PagebenchError, ValueError):
    """One line: which mode, TLS version, site or host is at fault, and why."""


@dataclass(frozen=True)
class Binding:
    """One nginx server block: a site's origin under one mode and TLS version, one version
    of its content and one content encoding."""

    tls: str
    mode: Mode
    site: str
    origin: str
    index: int  # into Layout.server_addresses / server_addresses6
    encoding: Encoding = IDENTITY
    version: int = 1  # of the site's content (`Site.origin_root(origin, version)`)

    @property
    def server(self) -> str:
        """Which server program serves it: "nginx" or "caddy"."""
        return self.mode.server

    @property
    def port(self) -> int:
        return CLEARTEXT_PORT if self.tls == CLEARTEXT else TLS_PORT

    @property
    def ip(self) -> str:
        return SERVER_ADDRESSES[self.index]

    @property
    def ip6(self) -> str:
        return SERVER_ADDRESSES6[self.index]
