"""Pure: the userspace link's hold time calibrated against its own fixed path overhead.

A packet held by `pagebench-delay` for the profile's one-way delay arrives later than
that by what the path adds around the hold: the veths and the router's forwarding, the
hand-over to the program and its verdict's way back into the kernel (docs/benchmarks.md,
"Link RTT bias": about 0.15 ms a round trip on the development VMs, of which 0.05 ms is the
veths alone). A link check measures it: the TCP handshake RTT as the client's kernel
timed it (TCP_INFO, from the SYN's send to the SYN-ACK's arrival; connect() in Python
adds this host's process wake-up, which is not the link), once with the link idle and
once busy (paced datagrams crossing it). A busy path is the faster: a verdict right after
another is warm, one after an idle moment is not. The fastest busy handshake's excess
over the profile is what every packet pays: the holds are shortened by it, less a
margin. What the fastest idle handshake pays beyond it is the cold verdicts' cost: the
program issues a release after an idle moment that much early (half per release, a
handshake has two). The check's own handshakes then measure the calibrated link; if
their median came under the profile (the path was faster that minute than the fastest the
calibration saw), what puts their fastest the margin over it is given back (`give_back`)
and the check measures again. The next link check measures the calibrated link again.

The rule is one-sided, as physics is: a link must never be faster than its profile, so
both come from the fastest handshakes (the floors, not the medians) and keep a margin,
and a hold is never negative.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from pagebench.core.profiles import Profile

#: What the calibrated floor keeps above the profile's RTT (µs): room for the floor to be
#: lower in another minute than in the one measured.
MARGIN_US = 20
#: Handshakes the calibration measures with the link idle, and again busy (the check then
#: measures its own).
SAMPLES = 30
#: The busy pass: paced datagrams across the link meanwhile, at most this many a second and
#: a tenth of the uplink's rate (so they never queue at the bottleneck, which would add delay).
BUSY_PPS = 2000
BUSY_SHARE = 0.1
#: `pagebench-delay --cold-early-us` at most.
MAX_COLD_US = 10_000
#: A probe datagram on the wire: 64 B payload + UDP/IP 28 B + Ethernet 14 B.
PROBE_WIRE_BITS = (64 + 28 + 14) * 8


@dataclass(frozen=True)
class Hold:
    """What a calibration takes off a profile's holds: `offset_us` from every round trip
    (half each way), and `cold_us` more from each release after an idle moment
    (`pagebench-delay --cold-early-us`: its verdict is the slower then)."""

    offset_us: int = 0
    cold_us: int = 0

    @classmethod
    def of(cls, stored: dict) -> Hold:
        """From a stored check's `calibration` (one from before cold releases has no `cold_us`)."""
        return cls(int(stored["offset_us"]), int(stored.get("cold_us", 0)))


@dataclass(frozen=True)
class Calibration:
    """A profile's calibrated hold, from handshakes measured with `before` already taken off."""

    hold: Hold
    before: Hold
    idle_floor_us: float  # the fastest idle handshake's excess over the profile, at `before`
    busy_floor_us: float  # the fastest busy one's
    idle_median_us: float
    n: int
    #: µs a round trip given back after the check's own handshakes came under the profile (`give_back`)
    given_back_us: int = 0

    def as_dict(self) -> dict[str, object]:
        return {"offset_us": self.hold.offset_us, "cold_us": self.hold.cold_us,
                "before_offset_us": self.before.offset_us, "before_cold_us": self.before.cold_us,
                "idle_floor_us": round(self.idle_floor_us, 1), "busy_floor_us": round(self.busy_floor_us, 1),
                "idle_median_us": round(self.idle_median_us, 1), "n": self.n, "margin_us": MARGIN_US,
                "given_back_us": self.given_back_us}


#: connect() this much longer than the kernel's RTT: the SYN or SYN-ACK was lost and sent
#: again (the first retransmission waits 1 s), and the kernel's figure is not one RTT.
RETRANSMITTED_MS = 100.0


def first_try(pairs: list[tuple[float, float]]) -> list[float]:
    """The kernel RTTs of (connect(), kernel RTT) pairs whose handshake needed no
    retransmission (a lossy profile loses some)."""
    return [tcp for took, tcp in pairs if tcp > 0 and took - tcp < RETRANSMITTED_MS]


def busy_pps(profile: Profile) -> float:
    """The busy pass's datagram rate for the profile's uplink."""
    if profile.up_mbit is None:
        return BUSY_PPS
    return min(BUSY_PPS, BUSY_SHARE * profile.up_mbit * 1e6 / PROBE_WIRE_BITS)


def _excess_us(profile: Profile, samples_ms: list[float]) -> list[float]:
    if not samples_ms:
        raise ValueError("calibrate: no handshakes measured")
    return sorted((sample - profile.rtt_ms) * 1000 for sample in samples_ms)


def calibrate(profile: Profile, idle_ms: list[float], busy_ms: list[float], before: Hold = Hold()) -> Calibration:
    """The hold that puts the fastest busy handshake MARGIN_US above the profile's RTT
    (every packet pays the warm path: `offset_us`), and the fastest idle one as near (an
    idle handshake's two releases are both cold: half the rest each, `cold_us`), from
    handshakes measured with `before` already taken off. Neither is negative, and together
    they never take more than the holds."""
    idle, busy = _excess_us(profile, idle_ms), _excess_us(profile, busy_ms)
    # what each path costs with nothing taken off
    cold_path = idle[0] + before.offset_us + 2 * before.cold_us
    warm_path = min(busy[0] + before.offset_us, cold_path)
    room = 2 * profile.one_way_delay_us
    offset = max(0, min(round(warm_path - MARGIN_US), room))
    cold = max(0, min(round((cold_path - warm_path) / 2), (room - offset) // 2, MAX_COLD_US))
    return Calibration(Hold(offset, cold), before, idle[0], busy[0], statistics.median(idle), len(idle) + len(busy))


def give_back(profile: Profile, calibrated: Calibration, tcp_ms: list[float]) -> Calibration | None:
    """The calibration less what it overdrew, if the link's handshakes measured with it
    (`tcp_ms`, the client kernel's RTTs, idle) have a median under the profile. As the
    calibration itself, it goes by the fastest: what puts that handshake MARGIN_US over
    the profile comes back, from the cold releases first (an idle handshake has two, and
    the idle floor is the less certain of the two the calibration read), the rest from the
    offset. None if nothing is to give back (or nothing is left to)."""
    if not tcp_ms or statistics.median(tcp_ms) >= profile.rtt_ms:
        return None
    hold = calibrated.hold
    if hold == Hold():
        return None
    need = math.ceil(round((profile.rtt_ms - min(tcp_ms)) * 1000, 3)) + MARGIN_US  # µs: no float dust
    cold = min(hold.cold_us, math.ceil(need / 2))
    offset = min(hold.offset_us, max(0, need - 2 * cold))
    return replace(calibrated, hold=Hold(hold.offset_us - offset, hold.cold_us - cold),
                   given_back_us=calibrated.given_back_us + offset + 2 * cold)


def holds_us(profile: Profile, hold: Hold) -> tuple[int, int]:
    """(up, down) hold in µs for the profile less the offset, split between the directions
    (the odd µs off the uplink) and never below zero."""
    offset = max(0, hold.offset_us)
    up = max(0, profile.one_way_delay_us - (offset + 1) // 2)
    down = max(0, profile.one_way_delay_us - offset // 2)
    return up, down
