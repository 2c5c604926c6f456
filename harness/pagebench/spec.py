"""Experiment specs: parse and validate the YAML, expand the matrix into conditions and
the loads into a seeded, interleaved order. Pure: the caller reads the file.

    name: demo
    sites: [seed000-small-n20, {generate: {images: 10, origins: 2}}]
    modes: [http1.0, keepalive, h2]
    topology: direct
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
from .records import CACHE_STATES, TLS_VERSIONS, Condition, PlannedLoad

DIRECT_MODES = ("http1.0", "keepalive", "h2")
MODE_ALIASES = {"spdy": "h2"}
SPDY_NOTE = ("spdy: SPDY is gone from browsers and servers (Chromium dropped it in 2016); "
             "HTTP/2 is its standardised successor, so `spdy` runs as h2")


class SpecError(ValueError):
    """One line: the file, the field, what is allowed."""


class Timeouts(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    load_s: float = Field(60.0, gt=0, le=3600)
    link_check: bool = True


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("experiment", min_length=1)
    sites: list[str | dict[str, Any]] = Field(min_length=1)
    modes: list[str] = Field(min_length=1)
    topology: Literal["direct"] = "direct"
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
        known = DIRECT_MODES + tuple(MODE_ALIASES) + ("pipelining", "h3")
        for mode in modes:
            if mode not in known:
                raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(DIRECT_MODES + ('spdy',))}")
        return modes

    @model_validator(mode="after")
    def _direct_topology(self) -> Experiment:
        if "pipelining" in self.modes:
            raise ValueError("pipelining needs the edge-proxy topology (no shipping browser pipelines); "
                             "use topology: proxy")
        if "h3" in self.modes:
            raise ValueError("h3 is served by Caddy, which is not in this version; allowed: "
                             + ", ".join(DIRECT_MODES))
        for field in ("sites", "modes", "cache", "tls"):
            values = [repr(v) for v in getattr(self, field)]
            if len(set(values)) != len(values):
                raise ValueError(f"{field} lists a value twice")
        return self

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
    loc = ".".join(str(part) for part in first["loc"] if not str(part).startswith("function-after"))
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(Experiment.model_fields) if len(first["loc"]) == 1 else ", ".join(Timeouts.model_fields)
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
        Condition(site, mode, spec.topology, profile.name, cache, tls)
        for site in site_names
        for mode in spec.resolved_modes
        for profile in profiles
        for cache in spec.cache
        for tls in spec.tls
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
