"""The protocol modes, in one table that everything else reads: what each mode is on the
wire, where it can run, what its connections must look like, and how it is shown.

Code elsewhere asks a mode for its properties (`multiplexed`, `quic`, ...) rather than
comparing names, so adding a mode is a row here plus whatever is truly new about it. A
name becomes its row once, where it arrives (the spec loader, the store's rows, a
command's option: `parse`); past that, a mode travels as its row.
The order of `MODES` is the display order (reports, charts, the first mode is the
baseline of the HTML report's ratios).
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.vocabulary import Row

TOPOLOGIES = ("direct", "proxy")
TLS_VERSIONS = ("1.2", "1.3")
#: Cleartext HTTP, no TLS at all: the seeds' era (1994's connections paid no handshake).
CLEARTEXT = "none"
#: What a spec's `tls:` may list.
TLS_CHOICES = (CLEARTEXT, *TLS_VERSIONS)
#: QUIC always runs TLS 1.3 (RFC 9001).
QUIC_TLS = "1.3"


@dataclass(frozen=True, repr=False)
class Mode(Row):
    """One protocol mode (a row of the table below)."""

    kind = "mode"
    #: One line for help texts and reports.
    summary: str
    #: Where it can run: "direct" (Chromium talks to the origin) and/or "proxy" (through the edge proxy).
    topologies: tuple[str, ...]
    #: The origin server program: "nginx" or "caddy".
    server: str
    #: ALPN protocols the origin offers.
    alpn: tuple[str, ...]
    #: What Chromium reports per resource (nextHopProtocol) in the direct topology.
    browser_protocol: str | None
    #: What the edge proxy speaks across the link (proxy topology).
    upstream_protocol: str | None
    #: One connection per origin carries every request.
    multiplexed: bool = False
    #: A new connection for every request (nothing is reused).
    connection_per_request: bool = False
    #: Requests queue several deep on one connection, answered in order.
    pipelined: bool = False
    #: QUIC over UDP: its connections are counted as UDP flows at the router.
    quic: bool = False
    #: Okabe-Ito colours: told apart with the common colour-vision deficiencies.
    colour: str = "#555555"
    #: Whose origin bindings serve it (None: its own): pipelining is served by keep-alive's
    #: (nginx answers pipelined requests on persistent HTTP/1.1 connections).
    served_by: Mode | None = None

    @property
    def origin(self) -> Mode:
        """The mode whose origin bindings serve this one."""
        return self.served_by or self

    @property
    def tls_versions(self) -> tuple[str, ...]:
        """What its origins can serve: cleartext too, except QUIC (the edge proxy speaks h2
        in cleartext across the link, with prior knowledge)."""
        return (QUIC_TLS,) if self.quic else TLS_CHOICES

    def tls_in(self, topology: str) -> tuple[str, ...]:
        """What a load of this mode can use in `topology`: the browser speaks HTTP/2 only
        over TLS (Chromium has no h2c), so h2 direct is never cleartext."""
        if topology == "direct" and self.multiplexed:
            return tuple(tls for tls in self.tls_versions if tls != CLEARTEXT)
        return self.tls_versions

    def tls_reason(self) -> str:
        """Why some `tls` values cannot carry this mode (see `tls_in`)."""
        return f"QUIC always uses TLS {QUIC_TLS}" if self.quic else "Chromium speaks HTTP/2 only over TLS (no h2c)"

    def tls_refusal(self, topology: str, tls: str) -> str:
        """The one-line error for a spec or command that asks this mode for `tls` in `topology`."""
        if self.quic:
            return f"{self.name}: {self.tls_reason()}; add \"{QUIC_TLS}\" to tls"
        return (f"{self.name} with tls {tls} in topology {topology}: {self.tls_reason()}; "
                f"use topology: proxy (cleartext across the link) or tls 1.2/1.3")

    def runs_in(self, topology: str) -> bool:
        """Can this mode run in `topology` (direct or proxy)?"""
        return topology in self.topologies


HTTP10 = Mode("http1.0", "a new TCP+TLS connection per request (HTTP/1.0 without keep-alive)",
              topologies=("direct", "proxy"), server="nginx", alpn=("http/1.1",),
              browser_protocol="http/1.1", upstream_protocol="http/1.0", connection_per_request=True,
              colour="#D55E00")
KEEPALIVE = Mode("keepalive", "persistent HTTP/1.1 connections, one request in flight on each",
                 topologies=("direct", "proxy"), server="nginx", alpn=("http/1.1",),
                 browser_protocol="http/1.1", upstream_protocol="http/1.1", colour="#009E73")
PIPELINING = Mode("pipelining", "persistent HTTP/1.1 connections with requests pipelined (edge proxy only)",
                  topologies=("proxy",), server="nginx", alpn=("http/1.1",),
                  browser_protocol=None, upstream_protocol="http/1.1", pipelined=True, colour="#CC79A7",
                  served_by=KEEPALIVE)
H2 = Mode("h2", "HTTP/2: one multiplexed connection per origin (SPDY's standardised successor)",
          topologies=("direct", "proxy"), server="nginx", alpn=("h2", "http/1.1"),
          browser_protocol="h2", upstream_protocol="h2", multiplexed=True, colour="#0072B2")
H3 = Mode("h3", "HTTP/3 over QUIC (Caddy), forced in Chromium from the first request",
          topologies=("direct",), server="caddy", alpn=("h3",),
          browser_protocol="h3", upstream_protocol=None, multiplexed=True, quic=True, colour="#E69F00")

MODES = (HTTP10, KEEPALIVE, PIPELINING, H2, H3)
NAMES = tuple(mode.name for mode in MODES)
#: Names a spec may use for a mode, with the note a run prints when one is used.
ALIASES = {"spdy": H2}
ALIAS_NOTES = {"spdy": "spdy: SPDY is gone from browsers and servers (Chromium dropped it in 2016); "
                       "HTTP/2 is its standardised successor, so `spdy` runs as h2"}
#: Why a mode cannot run in a topology (the spec's and the CLI's one-line errors).
NOT_IN = {
    (PIPELINING, "direct"): "pipelining needs the edge-proxy topology (no shipping browser pipelines); "
                            "use topology: proxy",
    (H3, "proxy"): "h3 through the proxy: the edge proxy speaks HTTP/1.x and HTTP/2 across the link, "
                   "not QUIC; h3 runs in topology: direct",
}
#: The proxied mode whose cost the edge proxy's overhead measurement uses, in order of preference.
OVERHEAD_PREFERENCE = (H2, KEEPALIVE, HTTP10)
#: The mode `pagebench shell` serves unless told.
DEFAULT_SHELL_MODE = H2


def tls_label(tls: str) -> str:
    """How a condition's TLS is shown: `tls1.3`, or `cleartext`."""
    return "cleartext" if tls == CLEARTEXT else f"tls{tls}"


def parse(name: str) -> Mode:
    """The mode named `name` (an alias resolves), or a ValueError listing the known ones."""
    found = next((mode for mode in MODES if mode.name == name), None) or ALIASES.get(name)
    if found is None:
        raise ValueError(f"unknown mode {name!r}; allowed: {', '.join(NAMES + tuple(ALIASES))}")
    return found


def in_topology(topology: str) -> tuple[Mode, ...]:
    """The modes that can run in `topology`, in display order."""
    return tuple(mode for mode in MODES if mode.runs_in(topology))


def rank(mode: Mode) -> int:
    """Display order of a mode."""
    return MODES.index(mode)
