"""Pure: the userspace link's hold time calibrated against its own fixed path overhead.

A packet held by `pagebench-delay` for the profile's one-way delay arrives later than
that by what the path adds around the hold: the veths and the router's forwarding, the
hand-over to the program and its verdict's way back into the kernel (docs/benchmarks.md,
"Link RTT bias": about 0.15 ms a round trip on the development VMs, of which 0.05 ms is the
veths alone). A link check measures it: the TCP handshake RTT as the client's kernel
timed it (TCP_INFO, from the SYN's send to the SYN-ACK's arrival; connect() in Python
adds this host's process wake-up, which is not the link). The floor of those samples
over the profile's RTT is the overhead every packet pays; the hold is shortened by it,
less a margin, and the next link check measures the calibrated link again.

The rule is one-sided, as physics is: a link must never be faster than its profile, so
the offset comes from the fastest handshake (the floor, not the median) and keeps a
margin, and a hold is never negative.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.profiles import Profile

#: What the calibrated floor keeps above the profile's RTT (µs): room for the floor to be
#: lower in another minute than in the one measured.
MARGIN_US = 10
#: Handshakes the calibration measures with the link idle, and again busy (the check then
#: measures its own).
SAMPLES = 30
#: The busy pass: paced datagrams across the link meanwhile, at most this many a second and
#: a tenth of the uplink's rate (so they never queue at the bottleneck, which would add delay).
BUSY_PPS = 2000
BUSY_SHARE = 0.1
DATAGRAM_WIRE_BITS = (64 + 28 + 14) * 8


@dataclass(frozen=True)
class Calibration:
    """A profile's hold offset: `offset_us` less hold per round trip (half each way),
    from handshakes measured with `before_us` already taken off."""

    offset_us: int
    before_us: int
    floor_us: float  # the fastest handshake's excess over the profile at `before_us`
    median_us: float  # the median handshake's excess at `before_us`
    n: int

    def as_dict(self) -> dict[str, object]:
        return {"offset_us": self.offset_us, "before_us": self.before_us, "floor_us": round(self.floor_us, 1),
                "median_us": round(self.median_us, 1), "n": self.n, "margin_us": MARGIN_US}


def busy_pps(profile: Profile) -> float:
    """The busy pass's datagram rate for the profile's uplink."""
    if profile.up_mbit is None:
        return BUSY_PPS
    return min(BUSY_PPS, BUSY_SHARE * profile.up_mbit * 1e6 / DATAGRAM_WIRE_BITS)


def calibrate(profile: Profile, tcp_rtt_ms: list[float], before_us: int = 0) -> Calibration:
    """The offset that puts the fastest handshake MARGIN_US above the profile's RTT, from
    handshakes measured with `before_us` already taken off the holds. Give it the idle
    and the busy passes together: a busy path is the faster (the hand-over to the program
    and its verdict's way into the kernel are warm: docs/benchmarks.md, "Link RTT bias"),
    and the link must not be faster than its profile then either."""
    if not tcp_rtt_ms:
        raise ValueError("calibrate: no handshakes measured")
    excess = sorted((sample - profile.rtt_ms) * 1000 for sample in tcp_rtt_ms)
    floor, median = excess[0], excess[len(excess) // 2] if len(excess) % 2 else (
        excess[len(excess) // 2 - 1] + excess[len(excess) // 2]) / 2
    wanted = before_us + floor - MARGIN_US
    offset = max(0, min(round(wanted), 2 * profile.one_way_delay_us))
    return Calibration(offset, before_us, floor, median, len(excess))


def holds_us(profile: Profile, offset_us: int) -> tuple[int, int]:
    """(up, down) hold in µs for the profile less the offset, split between the directions
    (the odd µs off the uplink) and never below zero."""
    offset = max(0, offset_us)
    up = max(0, profile.one_way_delay_us - (offset + 1) // 2)
    down = max(0, profile.one_way_delay_us - offset // 2)
    return up, down
