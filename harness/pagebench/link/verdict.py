"""Pure half of `link check`: how long and how hard to probe a profile, and what the
samples say (the JSON contract scripts rely on)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from pagebench.core.profiles import Profile
from pagebench.core.quantiles import percentile
from pagebench.link.calibration import PROBE_WIRE_BITS, Calibration, first_try
from pagebench.link.counters import LinkCounters

#: A link is trusted only if packets were released on time and none were lost in
#: the hand-over to the delay program.
MAX_LATENESS_P99_US = 1000
RTT_SAMPLES = 50
MAX_PPS = 5000


@dataclass(frozen=True)
class ProbePlan:
    rtt_samples: int
    warm_s: float  # slow start and queue fill: excluded from goodput
    bulk_s: float
    udp_up: tuple[int, float]  # (datagrams, per second)
    udp_down: tuple[int, float]
    grace_s: float


def probe_plan(profile: Profile) -> ProbePlan:
    rtt_s = profile.rtt_ms / 1000
    # Slow start ends within ~10 round trips, counting the time a full queue adds.
    queue_s = max((profile.queue_limit_bytes(m) * 8 / (m * 1e6) for m in (profile.up_mbit, profile.down_mbit)
                   if m is not None), default=0.0)
    warm = max(2.0, 10 * (rtt_s + queue_s))

    def udp(mbit: float | None) -> tuple[int, float]:
        # Pace at half the rate so the queue never drops: what is lost is emulated loss.
        pps = MAX_PPS if mbit is None else min(MAX_PPS, 0.5 * mbit * 1e6 / PROBE_WIRE_BITS)
        seconds = 4.0 if profile.loss_pct else 1.0
        want = 20_000 if profile.loss_pct else 2_000
        return max(100, min(want, round(pps * seconds))), pps

    return ProbePlan(
        rtt_samples=RTT_SAMPLES,
        warm_s=warm,
        bulk_s=warm + 4.0,
        udp_up=udp(profile.up_mbit),
        udp_down=udp(profile.down_mbit),
        grace_s=rtt_s + 0.5 + profile.jitter_ms / 1000,
    )


def steady_goodput_mbit(samples: list[tuple[float, ...]], warm_s: float) -> float:
    """Payload Mbit/s after the warm-up, from (seconds, app bytes, payload bytes arrived)
    samples: the difference of the smooth arrival series between the first sample past
    the warm-up and the last. Two-column (seconds, bytes) samples are used as given."""
    start = next((s for s in samples if s[0] >= warm_s), None)
    if start is None:
        return 0.0  # the transfer never got past slow start: no steady state to report
    end = samples[-1]
    if end[0] <= start[0]:
        return 0.0
    return (end[-1] - start[-1]) * 8 / (end[0] - start[0]) / 1e6


def _spread(samples: list[float]) -> dict[str, float | int]:
    return {"median": round(statistics.median(samples), 3), "p95": round(percentile(samples, 95), 3),
            "min": round(min(samples), 3), "n": len(samples)}


def summarize(
    backend: str,
    profile: Profile,
    rtt_ms: list[tuple[float, float]] | list[float],
    down_mbit: float,
    up_mbit: float,
    udp: dict[str, dict[str, int]],
    delta: LinkCounters,
    calibration: Calibration | None = None,
) -> dict[str, object]:
    """`rtt_ms`: per handshake, connect()'s time and the client kernel's own RTT of it
    (plain numbers: connect() alone, from a probe that did not read the kernel's)."""
    connect = [s[0] if isinstance(s, tuple) else s for s in rtt_ms]
    tcp = first_try([s for s in rtt_ms if isinstance(s, tuple)])
    sent = udp["up"]["sent"] + udp["down"]["sent"]
    lost = sent - udp["up"]["received"] - udp["down"]["received"]
    lateness = delta.lateness_us()
    problems = []
    # A link is never faster than its profile: a calibration that overshot says so.
    if tcp and statistics.median(tcp) < profile.rtt_ms:
        problems.append(f"TCP RTT median {statistics.median(tcp):.3f} ms < the profile's {profile.rtt_ms:g} ms")
    if lateness["p99"] is not None and lateness["p99"] > MAX_LATENESS_P99_US:
        problems.append(f"release lateness p99 {lateness['p99']:.0f} µs > {MAX_LATENESS_P99_US} µs")
    if delta.drops_nfqueue:
        problems.append(f"{delta.drops_nfqueue} packets dropped at the NFQUEUE hand-over")
    # Every new connection's SYN must lose its window scaling, or its window is scaled past the clamp.
    if profile.rwnd_bytes is not None and profile.window_scaling and delta.rwnd_wscale_stripped < delta.tcp_conns:
        problems.append(f"window clamp: window scaling stripped from {delta.rwnd_wscale_stripped} SYNs "
                        f"of {delta.tcp_conns} new TCP connections")
    return {
        "backend": backend,
        "configured": profile.fields(),
        "measured": {
            # connect() as a process on this host sees it (its wake-up included)
            "rtt_ms": _spread(connect),
            # the same handshakes as the client's TCP timed them: the link's own RTT
            "tcp_rtt_ms": _spread(tcp) if tcp else None,
            "down_mbit": round(down_mbit, 3),
            "up_mbit": round(up_mbit, 3),
            "loss_pct": round(100 * lost / sent, 3) if sent else None,
            "loss": {
                direction: {**counts, "loss_pct": round(100 * (1 - counts["received"] / counts["sent"]), 3)
                            if counts["sent"] else None}
                for direction, counts in udp.items()
            },
        },
        "lateness_us": {key: lateness[key] for key in ("p50", "p99", "max")},
        # the hold offset this check measured and applied (`link.calibration`), None if none
        "calibration": calibration.as_dict() if calibration is not None else None,
        "drops": delta.drops,
        "counters": {key: value for key, value in delta.as_dict().items() if key != "lateness_us"},
        "valid": not problems,
        "problems": problems,
    }
