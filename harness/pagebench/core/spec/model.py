"""Experiment specs: parse and validate the YAML (the matrix, its order and the rest of a
run's plan are `plan.py`'s). Pure: the caller reads the file.

    name: demo
    sites: [seed000-small-n20, {generate: {images: 10, origins: 2}}]
    modes: [http1.0, keepalive, h2]
    topology: direct            # or proxy, or [direct, proxy]
    proxy: {connections: 6, depth: 4}   # the edge proxy's upstream pool (proxy topology)
                                # pool: cold (default: each load opens its upstream connections)
                                # or warm (kept open across a condition's loads; warm-ups open them)
    clients: 1                  # browsers loading the page at the same moment (aggregation)
    profiles: [cable, {name: slow, rtt_ms: [50, 100], down_mbit: 5, up_mbit: 1}]
    cache: [cold, warm]
    tls: ["1.3"]                # "1.2", "1.3", or "none" (cleartext: http1.0/keepalive direct,
                                # every mode across the link from the edge proxy)
    encoding: [identity]        # identity, gzip, br, zstd, dcz (delta by dictionary, warm loads
                                # of a site's later version; see core/encodings.py)
    version: [1]                # the site version loads see (warm loads prime with 1 first)
    devices: [desktop]          # what the browser is: viewport, scale, mobile, touch, user agent,
                                # CPU slowdown (link/devices.yaml, e.g. moto-g-power; core/devices.py)
    replay_query: exact         # recorded sites: exact, or loose (an unrecorded query gets the
                                # first response recorded for its path; core/recording.py)
    interaction: {click: "#buy"}  # after each measured load (its frames captured), click this and
                                # measure INP (inp_ms: the interaction's latency to the next paint)
    deterministic: false        # true: every page sees Date start at 2026-01-01T00:00:00Z and a
                                # Math.random seeded by `seed` (lab/pagescripts.py; as WebPageReplay does)
    repetitions: 10             # or auto: rounds of one load per condition until the verdicts are
                                # decisive, up to a cap (core/spec/sequential.py); or auto with its
                                # settings: {cap: 30, looks: [5, 10, 20], tolerance: 0.05, alpha: 0.05}
    warmup: 1
    seed: 1
    timeouts: {load_s: 60}
    budgets:                    # limits on a condition's median (core/measure/budgets.py): the
      - {metric: load_ms, max: 1500}          # run exits 1 when one is breached
      - {metric: lcp_ms, max: 1200, mode: h2}   # unset fields (site, mode, profile, ...) match all
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, StrictBool,
                      ValidationError, field_validator, model_validator)

from pagebench.core import encodings, modes
from pagebench.core.devices import DEFAULT_DEVICE, Device, DeviceError, DeviceTable
from pagebench.core.encodings import Encoding
from pagebench.core.errors import PagebenchError
from pagebench.core.measure.budgets import Budget
from pagebench.core.messages import shown
from pagebench.core.modes import Mode
from pagebench.core.profiles import Profile, ProfileError, expand, yaml_document
from pagebench.core.sites.recording import QUERY_MATCHING, check_query_matching
from pagebench.core.spec.sequential import Sequential, parse_repetitions


class SpecError(PagebenchError, ValueError):
    """One line: the file, the field, what is allowed."""


def _names_of(parse: Callable[[str], object]) -> AfterValidator:
    """A list of a table's names: each one its `parse` knows (whose error names the first
    that is not). The spec keeps the names; `Experiment.resolved_*` are the rows."""

    def known(names: list[str]) -> list[str]:
        for name in names:
            parse(name)
        return names

    return AfterValidator(known)


ModeNames = Annotated[list[str], _names_of(modes.parse)]
EncodingNames = Annotated[list[str], _names_of(encodings.parse)]


class Timeouts(BaseModel):
    """`timeouts:` of a spec: a load's limit and whether the link is checked first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    load_s: float = Field(60.0, gt=0, le=3600)
    link_check: bool = True


class Interaction(BaseModel):
    """`interaction:` of a spec: what a person does once the page has loaded, scripted, so
    each load measures its responsiveness (INP). After the frames: it does not move them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    click: str = Field(min_length=1)  # a CSS selector


class ProxySettings(BaseModel):
    """The edge proxy's upstream pool: at most `connections` open at once per origin (every
    strategy), up to `depth` requests in flight on each (pipelining). `pool: cold` starts
    every load with no upstream connection; `warm` keeps each condition's connections open
    across its loads, as seed 004's inter-proxy connections persist (edge/pool.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    connections: int = Field(6, ge=1, le=64)
    depth: int = Field(4, ge=1, le=256)
    pool: Literal["cold", "warm"] = "cold"


class Experiment(BaseModel):
    """An experiment spec (the YAML above), validated: every field and their coherence."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field("experiment", min_length=1)
    sites: list[str | dict[str, Any]] = Field(min_length=1)
    modes: ModeNames = Field(min_length=1)
    topology: Literal["direct", "proxy"] | list[Literal["direct", "proxy"]] = "direct"
    proxy: ProxySettings | None = None
    clients: int = Field(1, ge=1, le=32)
    profiles: list[str | dict[str, Any]] = Field(default_factory=lambda: ["none"], min_length=1)
    cache: list[Literal["cold", "warm"]] = Field(default_factory=lambda: ["cold"], min_length=1)
    tls: list[Literal["none", "1.2", "1.3"]] = Field(default_factory=lambda: ["1.3"], min_length=1)
    encoding: EncodingNames = Field(default_factory=lambda: [encodings.IDENTITY.name], min_length=1)
    version: list[int] = Field(default_factory=lambda: [1], min_length=1)
    #: Device names of the table (`core.devices`); `resolve_devices` turns them into rows.
    devices: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=lambda: [DEFAULT_DEVICE],
                                                               min_length=1)
    #: Loads per condition, or `auto` (`Sequential`): up to its cap, stopped when decisive.
    repetitions: Annotated[int | Sequential, PlainValidator(parse_repetitions),
                           PlainSerializer(lambda value: value if isinstance(value, int) else value.model_dump())] = 10
    warmup: int = Field(1, ge=0, le=1000)
    seed: int = 1
    timeouts: Timeouts = Timeouts()
    backend: Literal["netem", "userspace"] | None = None
    #: How a recorded site's servers match a request's query (`Recording.lookup`).
    replay_query: Annotated[str, AfterValidator(check_query_matching)] = QUERY_MATCHING[0]
    #: Every page gets a fixed Date start and a seeded Math.random (`pagescripts.deterministic_script`).
    deterministic: StrictBool = False
    #: Clicked after each measured load, for its INP (`browser.interact`).
    interaction: Interaction | None = None
    #: Limits on medians the run is checked against when it completes (`analysis/budgets.py`).
    budgets: list[Budget] = Field(default_factory=list)

    @field_validator("version", mode="before")
    @classmethod
    def _versions(cls, value: Any) -> Any:
        value = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        if isinstance(value, list) and any(isinstance(v, int) and not isinstance(v, bool) and v < 1 for v in value):
            raise ValueError("a site's versions are numbered from 1")
        return value

    @model_validator(mode="after")
    def _coherent(self) -> Experiment:
        topologies = self.topologies
        if self.sequential is not None and self.by_page:
            raise ValueError("repetitions: auto loads in rounds across the whole matrix, and a corpus runs page "
                             "by page: give a number of repetitions")
        for mode in self.resolved_modes:
            if not any(mode.runs_in(topology) for topology in topologies):
                raise ValueError(modes.NOT_IN[mode, topologies[0]])
            where = [t for t in topologies if mode.runs_in(t)]
            if not any(set(mode.tls_in(topology)) & set(self.tls) for topology in where):
                raise ValueError(mode.tls_refusal(where[0], self.tls[0]))
        if self.proxy is not None and "proxy" not in topologies:
            raise ValueError("proxy: settings for the edge proxy, but topology is direct; use topology: proxy")
        if self.clients > 1 and "warm" in self.cache:
            raise ValueError("clients: several clients load cold only (a warm load relaunches one persistent "
                             "profile); use cache: [cold]")
        delta = next((e for e in self.resolved_encodings if e.dictionary), None)
        if delta is not None and self.tls == [modes.CLEARTEXT]:
            raise ValueError(f"encoding: {delta} needs https (browsers keep compression dictionaries for secure "
                             "origins only); add tls 1.3")
        for field in ("sites", "modes", "cache", "tls", "encoding", "version", "devices"):
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
    def sequential(self) -> Sequential | None:
        """The stopping rule's settings when `repetitions: auto`, else None."""
        return self.repetitions if isinstance(self.repetitions, Sequential) else None

    @property
    def cap(self) -> int:
        """Repetitions planned per condition: the number given, or auto's cap."""
        return self.repetitions.cap if isinstance(self.repetitions, Sequential) else self.repetitions

    @property
    def proxy_settings(self) -> ProxySettings:
        return self.proxy or ProxySettings()

    @property
    def resolved_modes(self) -> tuple[Mode, ...]:
        """The modes, aliases resolved, each once, in spec order: where names become rows."""
        return tuple(dict.fromkeys(map(modes.parse, self.modes)))

    @property
    def alias_notes(self) -> tuple[str, ...]:
        """What each alias the spec names runs as (`spdy`: h2), said before the run."""
        return tuple(modes.ALIAS_NOTES[name] for name in self.modes if name in modes.ALIAS_NOTES)

    @property
    def by_page(self) -> bool:
        """Whether the run goes page by page (a spec naming a corpus, `core.sites.corpus`):
        each site's loads in a lab of its own, interleaved within the site."""
        return any(isinstance(entry, dict) and "corpus" in entry for entry in self.sites)

    @property
    def resolved_encodings(self) -> tuple[Encoding, ...]:
        """The encodings' rows, in spec order."""
        return tuple(map(encodings.parse, self.encoding))


def _one_line(origin: str, error: ValidationError) -> SpecError:
    first = error.errors()[0]
    # Union members (`literal[...]`, `list[...]`) and validator names are not fields.
    loc = ".".join(shown(part) for part in first["loc"]
                   if not str(part).startswith("function-after") and "[" not in str(part))
    if first["type"] == "extra_forbidden":
        nested = {"timeouts": Timeouts, "proxy": ProxySettings, "budgets": Budget, "interaction": Interaction}
        model = nested.get(str(first["loc"][0]), Experiment) if len(first["loc"]) > 1 else Experiment
        allowed = ", ".join(model.model_fields)
        return SpecError(f"{origin}: {loc}: unknown field; allowed: {allowed}")
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "missing":
        message = "required"
    return SpecError(f"{origin}: {loc}: {message}" if loc else f"{origin}: {message}")


def parse(document: Any, origin: str) -> Experiment:
    """A spec from its YAML document; any problem is one SpecError naming `origin` and the field."""
    if not isinstance(document, dict):
        raise SpecError(f"{origin}: expected a mapping of spec fields (sites, modes, profiles, ...)")
    try:
        spec = Experiment.model_validate(document)
    except ValidationError as error:
        raise _one_line(origin, error) from None
    for index, budget in enumerate(spec.budgets):
        budget.written_at(f"{origin}: budgets.{index}")
    return spec


def parse_text(text: str, origin: str) -> Experiment:
    """A spec from YAML text."""
    return parse(yaml_document(text, origin, SpecError), origin)


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


def resolve_devices(spec: Experiment, table: DeviceTable, origin: str) -> list[Device]:
    """The spec's devices as the table's rows, in spec order; an unknown name is one line
    naming the spec, the field and the names allowed."""
    try:
        return table.resolve(spec.devices, "devices")
    except DeviceError as error:
        raise SpecError(f"{origin}: {error}") from None
