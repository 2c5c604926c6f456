"""Experiment specs: parse and validate the YAML, expand the matrix into conditions and
the loads into a seeded, interleaved order. Pure: the caller reads the file.

    name: demo
    sites: [seed000-small-n20, {generate: {images: 10, origins: 2}}]
    modes: [http1.0, keepalive, h2]
    topology: direct            # or proxy, or [direct, proxy]
    proxy: {connections: 6, depth: 4}   # the edge proxy's upstream pool (proxy topology)
    clients: 1                  # browsers loading the page at the same moment (aggregation)
    profiles: [cable, {name: slow, rtt_ms: [50, 100], down_mbit: 5, up_mbit: 1}]
    cache: [cold, warm]
    tls: ["1.3"]
    repetitions: 10
    warmup: 1
    seed: 1
    timeouts: {load_s: 60}
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .profiles import Profile, ProfileError, expand, read_yaml_file, yaml_document
from .records import CACHE_STATES, MODES, TLS_VERSIONS, Condition, PlannedLoad

#: Which modes each topology can run: no shipping browser pipelines, and the edge proxy
#: speaks HTTP/1.x and HTTP/2 upstream, not QUIC.
TOPOLOGY_MODES = {"direct": ("http1.0", "keepalive", "h2", "h3"), "proxy": ("http1.0", "keepalive", "pipelining", "h2")}
QUIC_TLS = "1.3"
MODE_ALIASES = {"spdy": "h2"}
SPDY_NOTE = ("spdy: SPDY is gone from browsers and servers (Chromium dropped it in 2016); "
             "HTTP/2 is its standardised successor, so `spdy` runs as h2")


#: The origin servers' mode behind each mode: the edge proxy pipelines to nginx's
#: persistent HTTP/1.1 bindings (nginx answers pipelined requests in order).
ORIGIN_MODE = {"pipelining": "keepalive"}


def origin_mode(mode: str) -> str:
    return ORIGIN_MODE.get(mode, mode)


def origin_modes(spec: Experiment) -> list[str]:
    """The modes the origin servers must serve for this spec."""
    return list(dict.fromkeys(origin_mode(mode) for mode in spec.resolved_modes))


class SpecError(ValueError):
    """One line: the file, the field, what is allowed."""


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    load_s: float = Field(60.0, gt=0, le=3600)
    link_check: bool = True


class ProxySettings(BaseModel):
    """The edge proxy's upstream pool: at most `connections` open at once per origin (every
    strategy), up to `depth` requests in flight on each (pipelining)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    connections: int = Field(6, ge=1, le=64)
    depth: int = Field(4, ge=1, le=256)


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("experiment", min_length=1)
    sites: list[str | dict[str, Any]] = Field(min_length=1)
    modes: list[str] = Field(min_length=1)
    topology: Literal["direct", "proxy"] | list[Literal["direct", "proxy"]] = "direct"
    proxy: ProxySettings | None = None
    clients: int = Field(1, ge=1, le=32)
    profiles: list[str | dict[str, Any]] = Field(default_factory=lambda: ["none"], min_length=1)
    cache: list[Literal["cold", "warm"]] = Field(default_factory=lambda: ["cold"], min_length=1)
    tls: list[Literal["1.2", "1.3"]] = Field(default_factory=lambda: ["1.3"], min_length=1)
    repetitions: int = Field(10, ge=1, le=100_000)
    warmup: int = Field(1, ge=0, le=1000)
    seed: int = 1
    timeouts: Timeouts = Timeouts()
    backend: Literal["netem", "userspace"] | None = None

    @field_validator("modes")
    @classmethod
    def _known_modes(cls, modes: list[str]) -> list[str]:
        known = MODES + tuple(MODE_ALIASES)
        for mode in modes:
            if mode not in known:
                raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(known)}")
        return modes

    @model_validator(mode="after")
    def _coherent(self) -> Experiment:
        topologies = self.topologies
        if "pipelining" in self.modes and "proxy" not in topologies:
            raise ValueError("pipelining needs the edge-proxy topology (no shipping browser pipelines); "
                             "use topology: proxy")
        if "h3" in self.modes and "direct" not in topologies:
            raise ValueError("h3 through the proxy: the edge proxy speaks HTTP/1.x and HTTP/2 across the link, "
                             "not QUIC; h3 runs in topology: direct")
        if "h3" in self.modes and QUIC_TLS not in self.tls:
            raise ValueError(f"h3: QUIC always uses TLS {QUIC_TLS}; add \"{QUIC_TLS}\" to tls")
        if self.proxy is not None and "proxy" not in topologies:
            raise ValueError("proxy: settings for the edge proxy, but topology is direct; use topology: proxy")
        if self.clients > 1 and "warm" in self.cache:
            raise ValueError("clients: several clients load cold only (a warm load relaunches one persistent "
                             "profile); use cache: [cold]")
        for field in ("sites", "modes", "cache", "tls"):
            values = [repr(v) for v in getattr(self, field)]
            if len(set(values)) != len(values):
                raise ValueError(f"{field} lists a value twice")
        if isinstance(self.topology, list) and (not self.topology or len(set(self.topology)) != len(self.topology)):
            raise ValueError("topology: list direct and/or proxy, each once")
        return self

    @property
    def topologies(self) -> list[str]:
        return [self.topology] if isinstance(self.topology, str) else list(self.topology)

    @property
    def proxy_settings(self) -> ProxySettings:
        return self.proxy or ProxySettings()

    @property
    def resolved_modes(self) -> list[str]:
        modes: list[str] = []
        for mode in self.modes:
            mode = MODE_ALIASES.get(mode, mode)
            if mode not in modes:
                modes.append(mode)
        return modes

    @property
    def notes(self) -> list[str]:
        return [SPDY_NOTE] if "spdy" in self.modes else []


def _one_line(origin: str, error: ValidationError) -> SpecError:
    first = error.errors()[0]
    # Union members (`literal[...]`, `list[...]`) and validator names are not fields.
    loc = ".".join(str(part) for part in first["loc"]
                   if not str(part).startswith("function-after") and "[" not in str(part))
    if first["type"] == "extra_forbidden":
        nested = {"timeouts": Timeouts, "proxy": ProxySettings}
        model = nested.get(str(first["loc"][0]), Experiment) if len(first["loc"]) > 1 else Experiment
        allowed = ", ".join(model.model_fields)
        return SpecError(f"{origin}: {loc}: unknown field; allowed: {allowed}")
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        message = "required"
    return SpecError(f"{origin}: {loc}: {message}" if loc else f"{origin}: {message}")


def parse(document: Any, origin: str) -> Experiment:
    if not isinstance(document, dict):
        raise SpecError(f"{origin}: expected a mapping of spec fields (sites, modes, profiles, ...)")
    try:
        return Experiment.model_validate(document)
    except ValidationError as error:
        raise _one_line(origin, error) from None


def parse_text(text: str, origin: str) -> Experiment:
    return parse(yaml_document(text, origin, SpecError), origin)


def read_document(path: Path) -> Any:
    """The YAML of a spec file, or a one-line SpecError naming the file."""
    return read_yaml_file(path, SpecError)


def resolve_profiles(spec: Experiment, catalogue: dict[str, Profile], origin: str) -> list[Profile]:
    """Named, inline and swept profiles, in spec order, names unique."""
    result: list[Profile] = []
    for index, entry in enumerate(spec.profiles):
        where = f"profiles[{index}]"
        if isinstance(entry, str):
            if entry not in catalogue:
                raise SpecError(f"{origin}: {where}: unknown profile {entry!r}; known: {', '.join(sorted(catalogue))}")
            found = [catalogue[entry]]
        else:
            try:
                found = expand(entry, catalogue, origin, where)
            except ProfileError as error:
                raise SpecError(str(error)) from None
        for profile in found:
            if profile.name in {p.name for p in result}:
                raise SpecError(f"{origin}: {where}: profile {profile.name!r} appears twice")
            result.append(profile)
    return result


def conditions(spec: Experiment, site_names: list[str], profiles: list[Profile]) -> list[Condition]:
    """The matrix, in a stable order (what the report lists)."""
    return [
        Condition(site, mode, topology, profile.name, cache, tls)
        for site in site_names
        for mode in spec.resolved_modes
        for topology in spec.topologies if mode in TOPOLOGY_MODES[topology]
        for profile in profiles
        for cache in spec.cache
        for tls in spec.tls if mode != "h3" or tls == QUIC_TLS
    ]


def plan(spec: Experiment, matrix: list[Condition]) -> list[PlannedLoad]:
    """Every load, warm-ups first within each condition, interleaved across conditions
    in a seeded random order so slow drifts (thermal, background) hit all alike."""
    slots: list[tuple[Condition, int]] = []
    for condition in matrix:
        slots += [(condition, rep) for rep in range(-spec.warmup, spec.repetitions)]
    random.Random(spec.seed).shuffle(slots)
    # Within a condition, keep warm-ups before measured loads: renumber in order of appearance.
    counters: dict[Condition, int] = {}
    loads = []
    for seq, (condition, _) in enumerate(slots):
        index = counters.get(condition, -spec.warmup)
        counters[condition] = index + 1
        loads.append(PlannedLoad(seq=seq, condition=condition, repetition=index, warmup=index < 0))
    return loads


assert set(CACHE_STATES) == {"cold", "warm"} and set(TLS_VERSIONS) == {"1.2", "1.3"}
