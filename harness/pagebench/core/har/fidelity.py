"""How close a synthesized stand-in page (`synth.py`) is to the original its HAR recorded:
requests, origins, bytes per kind (decoded, and as sent under the recorded encoding),
dependency depth and critical path, side by side; and what was inferred or guessed rather
than read. Kept in the site directory (`FIDELITY_FILE`), shown by `pagebench site show`.

The critical path is the longest chain of requests each named by the one before, timed
by the HAR: the sum of the recorded `time` of its requests. The original's chains are
those the HAR tells (initiators, Referers; the rest hang off the document); the
stand-in's are the parents it names, inferred ones included.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict

from pagebench.core.har.parse import HarEntry
from pagebench.core.har.synth import TIMER_MIN_MS, Node, Synthesis

#: The file in a synthesized site's directory.
FIDELITY_FILE = "fidelity.json"


class Side(BaseModel):
    """One page's numbers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests: int
    origins: int
    bytes: dict[str, int]  # kind -> decoded body bytes
    sent: dict[str, int]  # kind -> bytes as sent, of the bodies the HAR says were encoded
    depth: int
    critical_path_ms: float


class Fidelity(BaseModel):
    """`fidelity.json`: original and stand-in, and how the stand-in was made."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    original: Side
    stand_in: Side
    made: int  # bodies made
    kept: int  # bodies kept as saved in the HAR
    inferred: tuple[str, ...] = ()  # "<url>: named by <url> (inferred from timing)"
    guessed: tuple[str, ...] = ()  # "<url>: <n> B guessed" (size not in the HAR)
    fallbacks: tuple[str, ...] = ()  # "<url>: made as png bytes"
    timers: int = 0  # requests a script makes after a timer (the HAR shows it waited)
    notes: tuple[str, ...] = ()  # said under the report

    def lines(self) -> list[str]:
        """The report as text, for `site show` and the import."""
        a, b = self.original, self.stand_in
        kinds = sorted(set(a.bytes) | set(b.bytes), key=lambda k: -a.bytes.get(k, 0))
        out = [f"fidelity: original (the HAR) vs stand-in; {self.made} body(ies) made, {self.kept} kept as saved",
               f"  {'':<22}{'original':>12}{'stand-in':>12}",
               f"  {'requests':<22}{a.requests:>12}{b.requests:>12}",
               f"  {'origins':<22}{a.origins:>12}{b.origins:>12}",
               f"  {'dependency depth':<22}{a.depth:>12}{b.depth:>12}",
               f"  {'critical path (ms)':<22}{a.critical_path_ms:>12.1f}{b.critical_path_ms:>12.1f}"]
        out += [f"  {'bytes ' + kind:<22}{a.bytes.get(kind, 0):>12,}{b.bytes.get(kind, 0):>12,}" for kind in kinds]
        out += [f"  {'sent ' + kind:<22}{a.sent.get(kind, 0):>12,}{b.sent.get(kind, 0):>12,}"
                for kind in sorted(set(a.sent) | set(b.sent))]
        for title, items in (("parents inferred from timing", self.inferred), ("sizes guessed", self.guessed),
                             ("made as another format", self.fallbacks)):
            if items:
                out.append(f"  {title}: {len(items)}")
                out += [f"    {item}" for item in items[:5]] + ([f"    and {len(items) - 5} more (in "
                                                                  f"{FIDELITY_FILE})"] if len(items) > 5 else [])
        if self.timers:
            out.append(f"  {self.timers} request(s) made by a script after a timer (they started "
                       f"{TIMER_MIN_MS} ms or more after their script ended)")
        out += [f"  note: {note}" for note in self.notes]
        return out


def _host(url: str) -> str:
    return (urlsplit(url).netloc or "").lower()


def _critical_path(nodes: Sequence[Node], parents: Mapping[int, int | None]) -> float:
    """The longest chain of requests by recorded time (a redirect hop counts in its chain)."""
    total: dict[int, float] = {}
    for n in nodes:  # parents start before their children
        parent = parents.get(n.entry.index)
        total[n.entry.index] = max(n.entry.time_ms, 0.0) + (total.get(parent, 0.0) if parent is not None else 0.0)
    return round(max(total.values(), default=0.0), 1)


def fidelity(source: str, page: Sequence[HarEntry], synthesis: Synthesis, kept: Mapping[int, bytes]) -> Fidelity:
    """The report of a stand-in: `page` every request of the original page (replayed or
    not), `kept` the saved bodies the stand-in keeps (entry index -> body)."""
    nodes = synthesis.nodes
    document = next(n.entry.index for n in reversed(nodes) if n.way == "entry")
    read = {n.entry.index: (n.parent if n.read != "timing" else document) if n.way != "entry" else None
            for n in nodes}
    stand = {n.entry.index: n.parent for n in nodes}
    orig_bytes: dict[str, int] = {}
    orig_sent: dict[str, int] = {}
    new_bytes: dict[str, int] = {}
    new_sent: dict[str, int] = {}
    for n in nodes:
        if n.decoded is not None and n.decoded_from != "guessed":
            orig_bytes[n.kind] = orig_bytes.get(n.kind, 0) + n.decoded
        body = synthesis.bodies.get(n.entry.index, kept.get(n.entry.index))
        if body is not None:
            new_bytes[n.kind] = new_bytes.get(n.kind, 0) + len(body)
        if n.transfer is not None and n.entry.index in synthesis.sent:
            orig_sent[n.kind] = orig_sent.get(n.kind, 0) + n.transfer
            new_sent[n.kind] = new_sent.get(n.kind, 0) + synthesis.sent[n.entry.index]
    by_index = {n.entry.index: n for n in nodes}
    original = Side(requests=len(page), origins=len({_host(e.url) for e in page}), bytes=orig_bytes, sent=orig_sent,
                    depth=max((synthesis.original_levels.get(i, 0) for i in by_index), default=0),
                    critical_path_ms=_critical_path(nodes, read))
    stand_in = Side(requests=len(nodes), origins=len({_host(n.entry.url) for n in nodes}), bytes=new_bytes,
                    sent=new_sent, depth=max(synthesis.levels.values(), default=0),
                    critical_path_ms=_critical_path(nodes, stand))
    inferred = tuple(f"{n.entry.url}: named by {by_index[n.parent].entry.url if n.parent is not None else '-'} "
                     "(inferred from timing)" for n in synthesis.inferred)
    guessed = tuple(f"{n.entry.url}: {n.decoded:,} B guessed" for n in nodes
                    if n.decoded_from == "guessed" and n.entry.index in synthesis.bodies)
    return Fidelity(source=source, original=original, stand_in=stand_in, made=len(synthesis.bodies),
                    kept=len([i for i in kept if i not in synthesis.bodies and i in by_index]), inferred=inferred,
                    guessed=guessed, fallbacks=synthesis.fallbacks, timers=synthesis.timers)
