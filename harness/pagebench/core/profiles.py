"""Network profiles: what the emulated link and the endpoints' TCP look like.

Pure: parsing, validation and sweep expansion work on values only. The built-in
catalogue (`pagebench/link/profiles.yaml`) and users' files are read by `yamlfiles`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from pagebench.core.errors import PagebenchError
from pagebench.core.messages import shown

CONGESTION_CONTROLS = ("cubic", "reno", "bbr")
MODEM_COMPRESSIONS = ("v42bis",)
#: Full-size Ethernet frame on the wire as htb counts it (MTU 1500 + 14 byte header).
FRAME_BYTES = 1514
#: Default queue when a profile names none: one bandwidth-delay product (what one
#: TCP flow needs to keep the link busy), never fewer than this many full frames
#: (8 frames = 250 ms at 384 kbit/s: deeper would be bufferbloat on slow links).
MIN_QUEUE_FRAMES = 8
#: The MSS on Ethernet when a profile sets none (what TCP announces for MTU 1500).
DEFAULT_MSS = 1460
#: The largest window a 16-bit field holds: a clamp is exact only without window scaling.
MAX_RWND = 65535


class ProfileError(PagebenchError, ValueError):
    """A one-line, user-facing description of a bad profile (file, field, what is allowed)."""


def knob(unit: str, short: str | None = None) -> dict[str, str]:
    """A knob's unit, and the short name the command line gives it (`--rtt` for rtt_ms), as
    field metadata: what `--help` says of a knob comes from the model, not from the CLI."""
    return {"unit": unit, **({"short": short} if short else {})}


class Profile(BaseModel):
    """One link + endpoint configuration. Delay, jitter and loss apply per direction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    source: str | None = None
    # Each knob's description and unit (`knob(...)`) are what `--help` shows of it, with the
    # range its bounds allow; a knob the command line calls by a short name says it (`short`).
    rtt_ms: float = Field(0.0, ge=0, le=10_000, description="Round-trip time", json_schema_extra=knob("ms", "rtt"))
    jitter_ms: float = Field(0.0, ge=0, le=5_000, description="Jitter per direction, ± (at most half the RTT)",
                             json_schema_extra=knob("ms", "jitter"))
    loss_pct: float = Field(0.0, ge=0, le=100, description="Random loss per direction",
                            json_schema_extra=knob("%", "loss"))
    down_mbit: float | None = Field(None, gt=0, le=100_000, description="Downlink rate (default: unlimited)",
                                    json_schema_extra=knob("Mbit/s", "down"))
    up_mbit: float | None = Field(None, gt=0, le=100_000, description="Uplink rate (default: unlimited)",
                                  json_schema_extra=knob("Mbit/s", "up"))
    queue_bytes: int | None = Field(None, ge=FRAME_BYTES, le=1 << 30, description=(
        "Bottleneck queue (default: one bandwidth-delay product, at least 8 frames)"), json_schema_extra=knob("bytes"))
    queue_ms: float | None = Field(None, gt=0, le=60_000, description="Bottleneck queue, as time at the rate",
                                   json_schema_extra=knob("ms"))
    mss: int | None = Field(None, ge=88, le=9000, description="Clamp of the TCP MSS", json_schema_extra=knob("bytes"))
    initcwnd: int | None = Field(None, ge=1, le=1000, description="Initial congestion window",
                                 json_schema_extra=knob("segments"))
    congctl: str = Field("cubic", description=f"Congestion control: {', '.join(CONGESTION_CONTROLS)}")
    tcp_rmem: tuple[int, int, int] | None = Field(None, description=(
        "The endpoints' TCP receive buffers: min, default, max (4096 <= min <= default <= max)"),
        json_schema_extra=knob("bytes"))
    tcp_wmem: tuple[int, int, int] | None = Field(None, description=(
        "The endpoints' TCP send buffers: min, default, max (4096 <= min <= default <= max)"),
        json_schema_extra=knob("bytes"))
    # The endpoints' TCP options (RFC 7323 window scaling and timestamps, RFC 2018 SACK):
    # on in every TCP today, off for TCP as it was before them (the seeds' 1994).
    window_scaling: bool = Field(True, description="TCP window scaling at the endpoints (RFC 7323)")
    sack: bool = Field(True, description="TCP selective acknowledgements at the endpoints (RFC 2018)")
    timestamps: bool = Field(True, description="TCP timestamps at the endpoints (RFC 7323)")
    # The client's advertised receive window, clamped exactly at the router (window
    # scaling stripped): one connection's rate is then at most rwnd_bytes / RTT.
    rwnd_bytes: int | None = Field(None, description=(
        f"The client's receive window, clamped at the router, window scaling stripped (one MSS to {MAX_RWND})"),
        json_schema_extra=knob("bytes"))

    # A compressing modem's line (seed 001's V.42bis modems): the delay program serializes
    # each packet at the rate by its payload's V.42bis output; userspace backend only.
    modem_compression: str | None = Field(None, description=(
        "The line compresses as a modem does: v42bis (ITU-T V.42bis; userspace backend, needs both rates)"))
    v42bis_codewords: int = Field(2048, ge=512, le=65535, description=(
        "V.42bis dictionary size N2 (2048: what modems negotiated by default, AT+DS=3,0,2048,32)"),
        json_schema_extra=knob("codewords"))
    v42bis_max_string: int = Field(32, ge=6, le=250, description="V.42bis longest string N7",
                                   json_schema_extra=knob("bytes"))

    @field_validator("congctl")
    @classmethod
    def _known_congctl(cls, value: str) -> str:
        if value not in CONGESTION_CONTROLS:
            raise ValueError(f"must be one of {', '.join(CONGESTION_CONTROLS)}")
        return value

    @field_validator("modem_compression")
    @classmethod
    def _known_compression(cls, value: str | None) -> str | None:
        if value is not None and value not in MODEM_COMPRESSIONS:
            raise ValueError(f"must be one of {', '.join(MODEM_COMPRESSIONS)} (or left out: no compression)")
        return value

    @field_validator("tcp_rmem", "tcp_wmem")
    @classmethod
    def _ordered_mem(cls, value: tuple[int, int, int] | None) -> tuple[int, int, int] | None:
        if value is not None and not (4096 <= value[0] <= value[1] <= value[2]):
            raise ValueError("must be [min, default, max] bytes with 4096 <= min <= default <= max")
        return value

    @field_validator("rwnd_bytes")
    @classmethod
    def _window_fits(cls, value: int | None, info: ValidationInfo) -> int | None:
        """At least one segment (or no data could flow), at most what 16 bits hold."""
        mss = info.data.get("mss")
        low = mss or DEFAULT_MSS
        if value is not None and not (low <= value <= MAX_RWND):
            which = "the profile's mss" if mss else "the default MSS"
            raise ValueError(f"must be at least one MSS ({low}, {which}) and at most {MAX_RWND} "
                             "(16 bits: no window scaling)")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.queue_bytes is not None and self.queue_ms is not None:
            raise ValueError("queue_bytes and queue_ms are exclusive: give one")
        if self.jitter_ms > self.rtt_ms / 2:
            raise ValueError("jitter_ms must be <= rtt_ms / 2 (jitter applies per direction)")
        if self.modem_compression is not None and (self.down_mbit is None or self.up_mbit is None):
            raise ValueError("modem_compression needs down_mbit and up_mbit (the modem's line rate)")
        return self

    # Derived values the link backends use. Kept here so both backends agree.

    @property
    def one_way_delay_us(self) -> int:
        """Half the RTT in each direction, in whole microseconds."""
        return round(self.rtt_ms * 500)

    @property
    def jitter_us(self) -> int:
        return round(self.jitter_ms * 1000)

    def queue_limit_bytes(self, mbit: float) -> int:
        """Byte limit of the bottleneck queue for a direction of `mbit` Mbit/s."""
        if self.queue_bytes is not None:
            return self.queue_bytes
        if self.queue_ms is not None:
            return max(FRAME_BYTES, math.ceil(mbit * 1e6 / 8 * self.queue_ms / 1000))
        bdp = math.ceil(mbit * 1e6 / 8 * self.rtt_ms / 1000)
        return max(bdp, MIN_QUEUE_FRAMES * FRAME_BYTES)

    def describe(self) -> str:
        """Short human summary, e.g. '50 ms, 10/10 Mbit/s, 1 % loss'."""
        rate = "unlimited"
        if self.down_mbit or self.up_mbit:
            rate = f"{_num(self.down_mbit)}/{_num(self.up_mbit)} Mbit/s"
        parts = [f"{_num(self.rtt_ms)} ms", rate]
        if self.jitter_ms:
            parts.append(f"±{_num(self.jitter_ms)} ms jitter")
        if self.loss_pct:
            parts.append(f"{_num(self.loss_pct)} % loss")
        if self.mss:
            parts.append(f"MSS {self.mss}")
        if self.initcwnd:
            parts.append(f"initcwnd {self.initcwnd}")
        if self.congctl != "cubic":
            parts.append(self.congctl)
        parts += [f"no {name}" for name, on in (("window scaling", self.window_scaling), ("SACK", self.sack),
                                                ("timestamps", self.timestamps)) if not on]
        if self.rwnd_bytes is not None:
            parts.append(f"rwnd {self.rwnd_bytes} B")
        if self.modem_compression is not None:
            parts.append(f"V.42bis {self.v42bis_codewords}/{self.v42bis_max_string}")
        return ", ".join(parts)

    def fields(self) -> dict[str, Any]:
        """The configuration as plain JSON-able values (what `link check` reports)."""
        return self.model_dump(mode="json")


PROFILE_FIELDS = tuple(name for name in Profile.model_fields if name not in ("name", "source"))


def _num(value: float | None) -> str:
    if value is None:
        return "∞"
    return f"{value:g}"


def _format_error(origin: str, prefix: str, error: ValidationError) -> ProfileError:
    """Turn pydantic's multi-line report into one line naming the field and the rule."""
    first = error.errors()[0]
    loc = ".".join(shown(part) for part in first["loc"])
    where = ".".join(part for part in (prefix, loc) if part)
    if first["type"] == "extra_forbidden":
        message = f"unknown field; allowed: {', '.join(('base',) + tuple(Profile.model_fields))}"
    else:
        message = first["msg"].removeprefix("Value error, ")
        if "input" in first and not isinstance(first["input"], dict):
            message += f" (got {first['input']!r})"
    return ProfileError(f"{origin}: {where}: {message}" if where else f"{origin}: {message}")


def make_profile(fields: dict[str, Any], origin: str = "profile", where: str = "") -> Profile:
    """Validate one concrete (non-sweep) profile."""
    try:
        return Profile.model_validate(fields)
    except ValidationError as error:
        raise _format_error(origin, where, error) from None


def expand(
    entry: dict[str, Any],
    known: dict[str, Profile],
    origin: str = "profile",
    where: str = "",
) -> list[Profile]:
    """Expand one YAML entry into profiles.

    Any field given as a list is a sweep axis; axes combine as a Cartesian product
    and each expanded profile is named `name[field=value,...]`. `base: NAME` starts
    from a known profile and overrides its fields.
    """
    if not isinstance(entry, dict):
        raise ProfileError(f"{origin}: {where or 'profile'}: must be a mapping of field: value")
    fields = dict(entry)
    base_name = fields.pop("base", None)
    if base_name is not None:
        if not isinstance(base_name, str) or base_name not in known:
            raise ProfileError(
                f"{origin}: {_join(where, 'base')}: unknown profile {base_name!r}; "
                f"known: {', '.join(sorted(known))}"
            )
        base = known[base_name].model_dump(exclude={"name", "source"}, exclude_none=True)
        fields = {**base, "source": f"{base_name} with overrides", **fields}
    if "name" not in fields:
        raise ProfileError(f"{origin}: {_join(where, 'name')}: required (a short identifier)")
    for key in fields:
        if key not in Profile.model_fields:
            allowed = ", ".join(("base",) + tuple(Profile.model_fields))
            raise ProfileError(f"{origin}: {_join(where, key)}: unknown field; allowed: {allowed}")
    axes = {
        key: value
        for key, value in fields.items()
        if isinstance(value, list) and key not in ("tcp_rmem", "tcp_wmem")
    }
    for key in ("tcp_rmem", "tcp_wmem"):
        value = fields.get(key)
        if isinstance(value, list) and value and isinstance(value[0], list):
            axes[key] = value
    for key, values in axes.items():
        if not values:
            raise ProfileError(f"{origin}: {_join(where, key)}: a sweep needs at least one value")
    if not axes:
        return [make_profile(fields, origin, where)]
    profiles = []
    for combo in itertools.product(*axes.values()):
        chosen = dict(zip(axes, combo))
        label = ",".join(f"{key}={_label(value)}" for key, value in chosen.items())
        concrete = {**fields, **chosen, "name": f"{fields['name']}[{label}]"}
        profiles.append(make_profile(concrete, origin, where))
    return profiles


def _label(value: Any) -> str:
    if isinstance(value, list):
        return "/".join(str(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def _join(where: str, key: object) -> str:
    return ".".join(part for part in (where, shown(key)) if part)


def parse_profiles(
    document: Any, origin: str, known: dict[str, Profile] | None = None
) -> list[Profile]:
    """Parse a profiles document: `{profiles: [entry, ...]}`, a list of entries, or one entry."""
    known = dict(known or {})
    if isinstance(document, dict) and "profiles" in document:
        extra = set(document) - {"profiles"}
        if extra:
            raise ProfileError(f"{origin}: {sorted(extra)[0]}: unknown top-level key; allowed: profiles")
        entries, where = document["profiles"], "profiles"
    elif isinstance(document, list):
        entries, where = document, ""
    elif isinstance(document, dict):
        entries, where = [document], ""
    else:
        raise ProfileError(f"{origin}: expected a mapping with 'profiles: [...]'")
    if not isinstance(entries, list):
        raise ProfileError(f"{origin}: profiles: must be a list of profiles")
    result: list[Profile] = []
    for index, entry in enumerate(entries):
        label = f"{where}[{index}]" if where else f"[{index}]"
        for profile in expand(entry, known, origin, label):
            if profile.name in {p.name for p in result}:
                raise ProfileError(f"{origin}: {label}.name: duplicate profile name {profile.name!r}")
            known[profile.name] = profile
            result.append(profile)
    return result


def yaml_document(text: str, origin: str, error: type[ValueError] = ProfileError) -> Any:
    """Parse YAML; a syntax error becomes one line naming the origin and the line."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as problem:
        mark = getattr(problem, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark else ""
        raise error(f"{origin}:{line}: not valid YAML") from None


def resolve(name: str, catalogue: dict[str, Profile]) -> Profile:
    """A named profile, or a one-line error listing the known names."""
    if name not in catalogue:
        raise ProfileError(f"--profile: unknown profile {name!r}; known: {', '.join(sorted(catalogue))}")
    return catalogue[name]
