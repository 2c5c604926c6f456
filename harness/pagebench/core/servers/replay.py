"""What a recorded site's exchanges need from either server (`nginxreplay`,
`caddyreplay`): which exchanges an origin answers (exactly, or by path with loose query
matching), the headers a replayed response carries, whether its body comes from a
sidecar, and that every recorded header can be carried at all (`check_replayable`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from pagebench.core import encodings as encodings_table
from pagebench.core.modes import Mode
from pagebench.core.servers.binding import Binding, PlanError
from pagebench.core.servers.headers import COMMON_HEADERS
from pagebench.core.servers.negotiation import VARY, negotiated
from pagebench.core.sites.model import Site
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE, Exchange

#: A request the recording lacks: 404 with this header (and the common ones).
UNRECORDED_HEADERS = ((UNRECORDED_HEADER, UNRECORDED_VALUE), *COMMON_HEADERS)
#: Recorded headers a replay leaves out (lower case): the server makes them (length,
#: validators, date, connection, and the type and Location it sets from the exchange), or
#: they would change how the browser reaches the lab: Alt-Svc would send it to QUIC in a
#: TCP condition, Strict-Transport-Security to https in a cleartext one. Timing-Allow-Origin
#: is always `*` (else resource timing reads 0 for cross-origin sizes).
REPLAY_DROPPED = frozenset({
    "content-length", "content-encoding", "content-type", "etag", "last-modified", "date", "connection",
    "keep-alive", "transfer-encoding", "location", "server", "alt-svc", "strict-transport-security",
    "timing-allow-origin",
})


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")


def check_replayable(site: Site) -> None:
    """Every header name a token and every value (and type and Location) printable ASCII:
    what both servers' configurations can carry, and no response splitting."""
    for exchange in site.recording.exchanges if site.recording is not None else ():
        texts = [("content_type", exchange.content_type or ""), ("location", exchange.location or "")]
        for name, value in exchange.headers.items():
            if not _TOKEN.match(name):
                raise PlanError(f"site {site.name}: {exchange.url}: header name {name!r} is not a token")
            texts.append((f"header {name}", value))
        for what, text in texts:
            if not _PRINTABLE.match(text):
                raise PlanError(f"site {site.name}: {exchange.url}: {what} {text!r} must be printable ASCII")


def replayed(site: Site, origin: str) -> tuple[tuple[int, Exchange], ...]:
    """(index in the recording, exchange) of every exchange a recorded site's origin answers."""
    if site.recording is None:
        return ()
    return tuple((i, e) for i, e in enumerate(site.recording.exchanges) if e.host == origin)


def loosely_replayed(site: Site, origin: str) -> tuple[tuple[str, int], ...]:
    """(path, index) of the exchange loose matching answers a path with (`Recording.loose`),
    in recording order."""
    first: dict[str, int] = {}
    for i, exchange in replayed(site, origin):
        first.setdefault(exchange.path, i)
    return tuple(first.items())


def replay_headers(binding: Binding, exchange: Exchange) -> list[tuple[str, str]]:
    """The headers of a replayed response besides those the server makes: the recorded
    ones (less REPLAY_DROPPED), Vary (`replay_vary`), `Timing-Allow-Origin: *` and, unless
    the recording has its own, `Access-Control-Allow-Origin: *`."""
    recorded = [(name, value) for name, value in exchange.headers.items()
                if name.lower() not in REPLAY_DROPPED and name.lower() != "vary"]
    vary = replay_vary(exchange, replay_sidecar(binding, exchange))
    names = {name.lower() for name, _ in recorded}
    return (recorded + ([("Vary", vary)] if vary else [])
            + [(name, value) for name, value in COMMON_HEADERS if name.lower() not in names])


def replay_vary(exchange: Exchange, negotiates: bool) -> str | None:
    """A replayed response's Vary: the recorded one, with Accept-Encoding added when the
    server picks a sidecar by it (`negotiates`); None when there is neither."""
    recorded = next((value for name, value in exchange.headers.items() if name.lower() == "vary"), None)
    if not negotiates:
        return recorded
    if recorded is None or not recorded.strip():
        return VARY
    if recorded.strip() == "*" or VARY.lower() in [part.strip().lower() for part in recorded.split(",")]:
        return recorded
    return f"{recorded}, {VARY}"


def replay_sidecar(binding: Binding, exchange: Exchange) -> bool:
    """Whether a binding answers an exchange's body from a sidecar it picks by Accept-Encoding."""
    return negotiated(binding) and exchange.file is not None and encodings_table.is_text(exchange.file)


#: Why a mode Caddy serves (h3) answers a recorded site at once: Caddy has no handler
#: that waits, and pagebench builds a stock Caddy.
CADDY_NO_THINK = "Caddy has no handler that waits, so its responses go at once"


def think_note(site: Site, mode_list: Iterable[Mode]) -> str | None:
    """What a run (and `site show`) says of a recorded site's server think time: how
    much, whether it is applied, and the modes of `mode_list` that cannot apply it
    (Caddy's); None when the site records none."""
    recording = site.recording
    line = recording.think_line() if recording is not None else None
    if recording is None or line is None:
        return None
    caddy = [m.name for m in mode_list if m.server == "caddy"]
    applied = recording.server_time and any(recording.delay_ms(e) for e in recording.exchanges)
    return f"site {site.name}: {line}" + (f"; except in {', '.join(caddy)}: {CADDY_NO_THINK}" if caddy and applied
                                         else "")


def literal_regex(text: str) -> str:
    """`text` as a regex matching itself, for PCRE (nginx) and RE2 (Caddy) alike: every
    character but ASCII letters and digits escaped."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "\\" + ch for ch in text)
