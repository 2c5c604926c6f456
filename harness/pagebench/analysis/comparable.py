"""May two stored runs be compared? The guard `compare` runs before any statistics.

A regression gate says "the candidate is slower"; that means something only if both runs
were measured alike: the same browser build, kernel, link backend, and the same
conditions (modes, the profiles' link fields, cache, TLS, encodings, devices, topology...), on a
link that passed its check. What a team changes between runs is not compared: the spec's
name, its budgets, its sites' contents or an app's code, the host, the git commit.

`FACTS` is the one table of what is compared: each row says where the store keeps the
fact and how it is shown. Pure apart from `of_run`, which reads the three kinds of rows the
facts come from; `check` raises `NotComparable`, one line per difference, both values shown,
unless the difference's kind is allowed (`--allow-different`, vocabulary `KINDS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pagebench.analysis.compare import CompareError
from pagebench.core.devices import Device
from pagebench.core.profiles import PROFILE_FIELDS, Profile
from pagebench.core.spec.model import Experiment
from pagebench.results.rows import ConditionRow, LinkCheckRow, RunRow

if TYPE_CHECKING:
    from pagebench.results.store import Store

#: A device's fields compared: what it does to the browser (`core.devices`).
DEVICE_FIELDS = tuple(name for name in Device.model_fields if name not in ("name", "source"))
#: The kinds of fact, the words `--allow-different` takes.
KINDS = ("chromium", "kernel", "backend", "link-check", "conditions")
#: A fact the store does not hold (a run stored before it was recorded).
UNKNOWN = "unknown"
#: A link check's value when any of the run's checks failed: refused whatever the other run says.
FAILED = "failed"


class NotComparable(CompareError):
    """The runs differ in what makes a comparison mean something; one line per difference."""


@dataclass(frozen=True)
class Record:
    """What the store holds of one run that the facts are read from."""

    run: RunRow
    conditions: tuple[ConditionRow, ...]
    checks: tuple[LinkCheckRow, ...]


@dataclass(frozen=True)
class Fact:
    """A row of `FACTS`: a fact's name, its kind (the `--allow-different` word), where the
    store keeps it (the docs' table says the same), and how it is read and shown: one
    value, or several named ones (a profile's link fields, one per field)."""

    name: str
    kind: str
    source: str
    read: Callable[[Record], Mapping[str, str]]


@dataclass(frozen=True)
class Difference:
    """One fact that refuses the comparison: its name, kind and both runs' values."""

    name: str
    kind: str
    base: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.name}: base {self.base}, candidate {self.candidate}"


def _text(value: Any, none: str = UNKNOWN) -> str:
    """A value as shown; None as `none` (a column an older run lacks: unknown)."""
    if value is None:
        return none
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):  # 28 and 28.0 (JSON keeps either) are one value
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    return str(value)


def _column(name: str, column: str) -> Callable[[Record], Mapping[str, str]]:
    """A column of the run's `experiments` row."""
    return lambda record: {name: _text(getattr(record.run, column))}


def _meta(name: str, key: str) -> Callable[[Record], Mapping[str, str]]:
    """A key of the run's `meta` (the planner's record of how it ran)."""
    return lambda record: {name: _text(record.run.meta.get(key))}


def _distinct(name: str, field: str) -> Callable[[Record], Mapping[str, str]]:
    """The values of a condition field over every condition planned, sorted, space-separated."""
    return lambda record: {name: " ".join(sorted({str(c.condition.as_names()[field]) for c in record.conditions}))}


def _link_check(record: Record) -> Mapping[str, str]:
    """passed, not run (the spec's `timeouts: {link_check: false}`), or failed: which profile and why."""
    if not record.checks:
        return {"link check": "not run"}
    failed = [f"{c.profile} ({'; '.join(c.result.get('problems') or []) or 'invalid'})"
              for c in record.checks if not c.valid]
    return {"link check": f"{FAILED}: {', '.join(failed)}" if failed else "passed"}


def _profile_fields(record: Record) -> Mapping[str, str]:
    """Each profile's link and TCP fields as the run used them (not its name or source);
    unset (None: unlimited rate, the default queue, the kernel's MSS...) shown so; a field
    an older run did not store reads as the profile's default."""
    values = {}
    for row in record.conditions:
        for field in PROFILE_FIELDS:
            value = row.profile_fields.get(field, Profile.model_fields[field].default)
            values[f"profile {row.condition.profile} {field}"] = _text(value, none="unset")
    return values


def _device_fields(record: Record) -> Mapping[str, str]:
    """Each device's preset as the run used it (viewport, scale, mobile, touch, user agent,
    CPU slowdown; not its source, nor a calibration, which is the host's): none for a run
    stored before devices were kept (it ran as desktop)."""
    values = {}
    for name, preset in (record.run.meta.get("devices") or {}).items():
        for field in DEVICE_FIELDS:
            values[f"device {name} {field}"] = _text(preset.get(field, Device.model_fields[field].default),
                                                     none="the browser's")
    return values


def _clients(record: Record) -> Mapping[str, str]:
    return {"clients": _text(record.run.spec.get("clients", Experiment.model_fields["clients"].default))}


def _proxy(record: Record) -> Mapping[str, str]:
    """The edge proxy's pool settings; none where no condition goes through it."""
    settings = record.run.meta.get("proxy")
    return {"proxy": "none" if settings is None else " ".join(f"{k}={_text(v)}" for k, v in settings.items())}


FACTS: tuple[Fact, ...] = (
    Fact("chromium", "chromium", "experiments.chromium_version", _column("chromium", "chromium_version")),
    Fact("kernel", "kernel", "experiments.kernel", _column("kernel", "kernel")),
    Fact("backend", "backend", "experiments.backend", _column("backend", "backend")),
    Fact("link check", "link-check", "link_checks.valid and result.problems", _link_check),
    Fact("modes", "conditions", "conditions.mode", _distinct("modes", "mode")),
    Fact("topology", "conditions", "conditions.topology", _distinct("topology", "topology")),
    Fact("profiles", "conditions", "conditions.profile", _distinct("profiles", "profile")),
    Fact("profile NAME FIELD", "conditions", "conditions.profile_fields (all but name and source)", _profile_fields),
    Fact("cache", "conditions", "conditions.cache", _distinct("cache", "cache")),
    Fact("tls", "conditions", "conditions.tls", _distinct("tls", "tls")),
    Fact("encodings", "conditions", "conditions.encoding", _distinct("encodings", "encoding")),
    Fact("devices", "conditions", "conditions.device", _distinct("devices", "device")),
    Fact("device NAME FIELD", "conditions", "experiments.meta devices (all but source and calibration)",
         _device_fields),
    Fact("clients", "conditions", "experiments.spec clients", _clients),
    Fact("proxy", "conditions", "experiments.meta proxy", _proxy),
    Fact("deterministic", "conditions", "experiments.meta deterministic", _meta("deterministic", "deterministic")),
    Fact("replay_query", "conditions", "experiments.meta replay_query", _meta("replay_query", "replay_query")),
)


def facts(record: Record) -> dict[str, tuple[str, str]]:
    """Every fact of a run: its shown name -> (kind, value), in `FACTS` order."""
    return {name: (fact.kind, value) for fact in FACTS for name, value in fact.read(record).items()}


def differences(base: Record, candidate: Record) -> list[Difference]:
    """The facts that refuse comparing these runs: every one whose values differ (a fact
    only one run has, a profile only one uses, is left to the `profiles` line), and the
    link check wherever either run's failed."""
    ours, theirs = facts(base), facts(candidate)
    found = []
    for name, (kind, value) in ours.items():
        if name not in theirs:
            continue
        other = theirs[name][1]
        if value != other or (kind == "link-check" and (_failed(value) or _failed(other))):
            found.append(Difference(name, kind, value, other))
    return found


def _failed(value: str) -> bool:
    """Is this link check's value a failure?"""
    return value.startswith(f"{FAILED}: ")


def parse_allowed(text: str | None) -> frozenset[str]:
    """`--allow-different chromium,kernel`: the kinds of difference to compare across."""
    if not text:
        return frozenset()
    words = [word.strip() for word in text.split(",") if word.strip()]
    unknown = [word for word in words if word not in KINDS]
    if unknown:
        raise CompareError(f"--allow-different: unknown {unknown[0]!r}; allowed: {', '.join(KINDS)}")
    return frozenset(words)


def check(base: Record, candidate: Record, allowed: Iterable[str] = ()) -> list[Difference]:
    """Refuse (NotComparable: a line naming what to allow, then one line per difference)
    unless every difference is of an allowed kind; returns the allowed ones, to be said."""
    allowed = frozenset(allowed)
    found = differences(base, candidate)
    refused = [d for d in found if d.kind not in allowed]
    if refused:
        kinds = ",".join(kind for kind in KINDS if any(d.kind == kind for d in refused))
        raise NotComparable("\n".join([
            f"runs {base.run.run_id} (base) and {candidate.run.run_id} (candidate) were not measured alike; "
            f"re-measure the baseline, or compare anyway with --allow-different {kinds}",
            *map(str, refused)]))
    return found


def of_run(store: Store, run_id: str) -> Record:
    """The rows of a stored run the facts are read from."""
    return Record(store.experiment(run_id), tuple(store.conditions(run_id)), tuple(store.link_checks(run_id)))

