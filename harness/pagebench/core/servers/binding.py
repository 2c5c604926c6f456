"""One server block of the plan: a site's origin under one mode, TLS version, content
version and encoding, on its own server address, and the error every refusal of the
server configuration raises.

Each binding has its own server IP on port 443 (cleartext, `tls: none`: port 80; QUIC:
UDP 443): index i is `layout.origin_address(i)` (and `origin_address6(i)`), i.e.
`Layout.server_addresses[i]`, the same whatever the run's prefix.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.encodings import IDENTITY, Encoding
from pagebench.core.errors import PagebenchError
from pagebench.core.layout import origin_address, origin_address6
from pagebench.core.modes import CLEARTEXT, Mode

QUIC_PORT = 443
TLS_PORT = 443
CLEARTEXT_PORT = 80



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
        return origin_address(self.index)

    @property
    def ip6(self) -> str:
        return origin_address6(self.index)
