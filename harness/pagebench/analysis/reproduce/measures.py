"""What the claims measure, the parts every seed shares: the loads of a scenario's runs
(`Data`) and small functions of them, each giving an interval (a median's, or a ratio's,
with its 95 % bootstrap interval), or None when there is nothing to measure. Each seed's
own measures and figures are in `seed000` .. `seed004`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core.modes import HTTP10
from pagebench.core.records import Resource
from pagebench.results.rows import LoadRow, ResourceRow


@dataclass
class Data:
    """The measured loads of one scenario's runs: (variant, run label) -> loads (ok and
    unflagged, warm-ups excluded, in load order); their resources by load id when the
    claims need them; and every profile's fields by name."""

    loads: dict[tuple[str, str], list[LoadRow]]
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[int, list[ResourceRow]] = field(default_factory=dict)

    def select(self, variant: str, label: str = "", **where: Any) -> list[LoadRow]:
        """The loads of a run whose condition has every field `where` names (site, mode, ...)."""
        return [load for load in self.loads.get((variant, label), [])
                if all(getattr(load.condition, key) == value for key, value in where.items())]

    def labels(self, variant: str) -> list[str]:
        return [label for v, label in self.loads if v == variant]

    def resources_of(self, load: LoadRow) -> list[ResourceRow]:
        return self.resources.get(load.id, [])


def values(loads: list[LoadRow], metric: str = "load_ms") -> list[float]:
    return [float(value) for load in loads if (value := load.metric(metric)) is not None]


def cut(data: Data, variant: str, base: dict[str, Any], new: dict[str, Any], label: str = "") -> Interval | None:
    """1 - median(new) / median(base) of the load time: how much `new` cuts."""
    low, high = values(data.select(variant, label, **base)), values(data.select(variant, label, **new))
    if not low or not high:
        return None
    return bootstrap_ci(lambda b, n: 1 - n / b, [low, high])


def rtt_ms(data: Data, profile: str) -> float:
    return float(data.profiles[profile]["rtt_ms"])


def object_of(data: Data, load: LoadRow, nbytes: int) -> Resource | None:
    """The page's object of `nbytes` (not the HTML: position 0)."""
    return next((r.resource for r in data.resources_of(load) if r.resource.body_bytes == nbytes and r.position > 0),
                None)


def rate_mbit(resource: Resource) -> float | None:
    """A resource's goodput over its whole fetch (connection set-up included, as the seeds'
    client measured it): body bits over the time from its start to its end."""
    if resource.end_ms is None or resource.end_ms <= resource.start_ms:
        return None
    return resource.body_bytes * 8 / (resource.end_ms - resource.start_ms) / 1000


def rates_of(data: Data, variant: str, profile: str, nbytes: int, label: str = "") -> list[float]:
    rates = []
    for load in data.select(variant, label, mode=HTTP10, profile=profile, site=transfer_name(nbytes)):
        resource = object_of(data, load, nbytes)
        rate = rate_mbit(resource) if resource else None
        if rate is not None:
            rates.append(rate)
    return rates


def throughput(data: Data, variant: str, profile: str, nbytes: int, *, of_capacity: bool,
               label: str = "") -> Interval | None:
    """One new connection's goodput for an `nbytes` object (HTTP/1.0, the page's image),
    in Mbit/s, or as a fraction of the link's rate."""
    rates = rates_of(data, variant, profile, nbytes, label)
    capacity = float(data.profiles.get(profile, {}).get("down_mbit") or 0) if of_capacity else 1.0
    if not rates or not capacity:
        return None
    return bootstrap_ci(lambda r: r / capacity, [rates])


def transfer_name(nbytes: int) -> str:
    return f"gen-i1-b{nbytes}-o1"


def transfer_bytes(site: str) -> int:
    """The object size of a transfer scenario's site (`gen-i1-b2048-o1`), else 0."""
    return int(site.split("-b", 1)[1].split("-", 1)[0]) if site.startswith("gen-i1-b") else 0
