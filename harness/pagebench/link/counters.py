"""Link counters: a frozen snapshot you can subtract (`after - before`) for any interval.

Pure: the parsers take the text of `iptables-save -c`, `tc -s -j qdisc show` and
`/proc/net/netfilter/nfnetlink_queue`; `emulator.Link.counters()` gathers that text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields

from pagebench.link.delaystats import HIST_BUCKETS, percentile_us

_COUNTED = re.compile(r"^\[(\d+):(\d+)\] .*--comment \"?pb:(\w+)\"?")


@dataclass(frozen=True)
class LinkCounters:
    """Cumulative link counters. Packets/bytes are those offered to the link in each
    direction (before emulated loss and the queue); drops say where the rest went."""

    tcp_conns: int = 0  # new TCP connections client -> server (first SYN forwarded)
    udp_flows: int = 0  # new UDP flows client -> server (QUIC connections, probes)
    packets_up: int = 0
    bytes_up: int = 0
    packets_down: int = 0
    bytes_down: int = 0
    drops_queue_up: int = 0  # tail drops of the bottleneck queue
    drops_queue_down: int = 0
    drops_loss_up: int = 0  # emulated random loss
    drops_loss_down: int = 0
    drops_nfqueue: int = 0  # packets the kernel could not hand to the delay program
    rwnd_clamped: int = 0  # client packets whose window field the clamp lowered (rwnd_bytes)
    rwnd_wscale_stripped: int = 0  # client SYNs whose window scaling the clamp removed
    # a V.42bis modem's line (modem_compression): payload bytes its compressor took in and
    # the bits it sent for them, server -> client (the ratio the load's bytes got)
    v42_in_down: int = 0
    v42_out_bits_down: int = 0
    lateness_hist: tuple[int, ...] = ()  # release-lateness histogram, both directions

    def __sub__(self, other: LinkCounters) -> LinkCounters:
        values = {}
        for f in fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name == "lateness_hist":
                values[f.name] = tuple(x - y for x, y in zip(a, b)) if a and b else a
            else:
                values[f.name] = a - b
        return LinkCounters(**values)

    @property
    def drops(self) -> dict[str, int]:
        return {
            "queue_up": self.drops_queue_up,
            "queue_down": self.drops_queue_down,
            "loss_up": self.drops_loss_up,
            "loss_down": self.drops_loss_down,
            "nfqueue": self.drops_nfqueue,
        }

    def lateness_us(self) -> dict[str, float | int | None]:
        """p50/p99/max release lateness in µs (None without the userspace backend)."""
        hist = self.lateness_hist
        if not hist or sum(hist) == 0:
            return {"p50": None, "p99": None, "max": None, "n": sum(hist) if hist else 0}
        return {
            "p50": percentile_us(hist, 50),
            "p99": percentile_us(hist, 99),
            "max": percentile_us(hist, 100),
            "n": sum(hist),
        }

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "lateness_hist"}
        data["lateness_us"] = self.lateness_us()
        return data


def parse_iptables_save(text: str) -> dict[str, tuple[int, int]]:
    """`pb:<tag>` rule counters -> {tag: (packets, bytes)} from `iptables-save -c`."""
    counted: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        match = _COUNTED.match(line)
        if match:
            packets, nbytes, tag = int(match.group(1)), int(match.group(2)), match.group(3)
            old = counted.get(tag, (0, 0))
            counted[tag] = (old[0] + packets, old[1] + nbytes)
    return counted


def parse_qdisc_drops(text: str, device: str) -> dict[str, int]:
    """Drops per qdisc kind on one device from `tc -s -j qdisc show`."""
    drops: dict[str, int] = {}
    for qdisc in json.loads(text or "[]"):
        if qdisc.get("dev") == device:
            kind = qdisc.get("kind", "")
            drops[kind] = drops.get(kind, 0) + int(qdisc.get("drops", 0))
    return drops


def parse_nfqueue(text: str) -> int:
    """Packets dropped by nfnetlink_queue (queue full + failed hand-over to userspace)."""
    dropped = 0
    for line in text.splitlines():
        cols = line.split()
        if len(cols) >= 7:
            dropped += int(cols[5]) + int(cols[6])
    return dropped


def queue_and_loss_drops(qdisc_drops: dict[str, int]) -> tuple[int, int]:
    """(queue drops, netem loss drops) of one device. A parent qdisc also counts its
    children's drops, so netem's own losses are its drops minus htb's."""
    queue = qdisc_drops.get("bfifo", 0)
    loss = qdisc_drops.get("netem", 0) - qdisc_drops.get("htb", 0) if "netem" in qdisc_drops else 0
    return queue, max(loss, 0)


EMPTY_HIST = (0,) * HIST_BUCKETS
