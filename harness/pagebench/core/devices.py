"""Devices: what the browser is (viewport, device scale factor, mobile, touch, user agent,
CPU), beside what the link is (`core.profiles`). A spec's `devices:` names them; each is a
condition field like the profile, crossed with the other factors.

Pure: parsing, validation, and the arithmetic of CPU calibration work on values only. The
built-in table (`pagebench/link/devices.yaml`, beside the link profiles) is read by
`yamlfiles`; the browser applies a device (`lab.emulation`), the runner calibrates it.

A stated CPU slowdown means the same on every host: it is relative to the table's
`reference`, the time a fixed benchmark page's script takes on the reference desktop,
not to whatever host runs it. At the start of a run the runner measures that page on
this host (T_host) and asks DevTools for the rate that makes it take slowdown x T_ref
(`cpu_rate`); then measures again, throttled, and states what it achieved (`Calibration`).
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pagebench.core.errors import PagebenchError
from pagebench.core.messages import shown

#: The device of every run stored before devices, and of every spec that names none:
#: the browser as pagebench always ran it (Playwright's default context, no throttling).
DEFAULT_DEVICE = "desktop"
#: A name becomes part of condition keys (`site|...|v2|<device>`) and file names: plain
#: words, and nothing that would read as another optional part of a key (a version `v2`).
_NAME = re.compile(r"[a-z][a-z0-9-]*")
_VERSION_LIKE = re.compile(r"v[0-9]+")


class DeviceError(PagebenchError, ValueError):
    """A one-line, user-facing description of a bad device table or device name."""


class Device(BaseModel):
    """One device preset. Its defaults are the default device: Playwright's default
    context (1280x720, scale 1, the browser's own desktop user agent, no touch), no CPU
    throttling."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=40)
    source: str | None = None
    width: int = Field(1280, ge=100, le=10_000, description="Viewport width (CSS pixels)")
    height: int = Field(720, ge=100, le=10_000, description="Viewport height (CSS pixels)")
    device_scale_factor: float = Field(1.0, gt=0, le=10, description="Device pixels per CSS pixel")
    mobile: bool = Field(False, description="A mobile browser: meta viewport honoured, 980 px layout without one")
    touch: bool = Field(False, description="Touch events and navigator.maxTouchPoints")
    user_agent: str | None = Field(None, min_length=1, description="User-Agent (default: the browser's own)")
    cpu_slowdown: float = Field(1.0, ge=1, le=50, description=(
        "Script runs this many times slower than on the reference desktop (1: no throttling)"))

    @field_validator("name")
    @classmethod
    def _plain_name(cls, value: str) -> str:
        if not _NAME.fullmatch(value) or _VERSION_LIKE.fullmatch(value):
            raise ValueError("must be lowercase letters, digits and '-', starting with a letter, and not "
                             "v<number> (it reads as a site version in condition keys)")
        return value

    @property
    def throttled(self) -> bool:
        """Whether its CPU is slowed (and so calibrated at the start of each run)."""
        return self.cpu_slowdown > 1

    @property
    def emulates(self) -> bool:
        """Whether a browser context needs any option for it (the default device needs none)."""
        return any(getattr(self, f) != Device.model_fields[f].default for f in EMULATION_FIELDS)

    def describe(self) -> str:
        """Short human summary, e.g. '412x823 @1.75x, mobile, touch, custom UA, CPU 4x'."""
        parts = [f"{self.width}x{self.height}" + (f" @{self.device_scale_factor:g}x"
                                                  if self.device_scale_factor != 1 else "")]
        parts += [word for word, on in (("mobile", self.mobile), ("touch", self.touch),
                                        ("own user agent", self.user_agent is not None)) if on]
        parts.append(f"CPU {self.cpu_slowdown:g}x" if self.throttled else "no CPU throttling")
        return ", ".join(parts)

    def fields(self) -> dict[str, Any]:
        """The preset as plain JSON-able values (what a run's meta keeps of it)."""
        return self.model_dump(mode="json", exclude={"name"})


#: What a browser context is given for a device (`lab.emulation`), CPU aside.
EMULATION_FIELDS = ("width", "height", "device_scale_factor", "mobile", "touch", "user_agent")
#: The default device, as a value (the table's `desktop` must be exactly this).
DESKTOP = Device(name=DEFAULT_DEVICE)


class Reference(BaseModel):
    """What a stated slowdown is relative to: the benchmark page's unthrottled script time
    on the reference desktop, and which machine that is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    script_ms: float = Field(gt=0, le=60_000)
    machine: str = Field(min_length=1)


@dataclass(frozen=True)
class DeviceTable:
    """The devices by name, in table order, and the reference their slowdowns are stated against."""

    devices: Mapping[str, Device]
    reference: Reference

    def resolve(self, names: Sequence[str], where: str) -> list[Device]:
        """The named devices, in order; an unknown name is one line naming `where` (the
        spec's field) and the names allowed."""
        found = []
        for index, name in enumerate(names):
            if name not in self.devices:
                raise DeviceError(f"{where}[{index}]: unknown device {name!r}; allowed: {', '.join(self.devices)}")
            found.append(self.devices[name])
        return found


def _format_error(origin: str, where: str, error: ValidationError) -> DeviceError:
    first = error.errors()[0]
    loc = ".".join([where] + [shown(part) for part in first["loc"]])
    if first["type"] == "extra_forbidden":
        message = f"unknown field; allowed: {', '.join(Device.model_fields)}"
    else:
        message = first["msg"].removeprefix("Value error, ")
        if "input" in first and not isinstance(first["input"], dict):
            message += f" (got {first['input']!r})"
    return DeviceError(f"{origin}: {loc}: {message}")


def parse_devices(document: Any, origin: str) -> DeviceTable:
    """A device table: `{reference: {script_ms, machine}, devices: [entry, ...]}`. Its
    `desktop` must be the default device (old runs read as desktop: it is how they ran)."""
    if not isinstance(document, dict) or set(document) != {"reference", "devices"}:
        raise DeviceError(f"{origin}: expected a mapping with `reference:` and `devices: [...]`")
    try:
        reference = Reference.model_validate(document["reference"])
    except ValidationError as error:
        raise _format_error(origin, "reference", error) from None
    entries = document["devices"]
    if not isinstance(entries, list):
        raise DeviceError(f"{origin}: devices: must be a list of devices")
    devices: dict[str, Device] = {}
    for index, entry in enumerate(entries):
        where = f"devices[{index}]"
        if not isinstance(entry, dict):
            raise DeviceError(f"{origin}: {where}: must be a mapping of field: value")
        try:
            device = Device.model_validate(entry)
        except ValidationError as error:
            raise _format_error(origin, where, error) from None
        if device.name in devices:
            raise DeviceError(f"{origin}: {where}.name: duplicate device name {device.name!r}")
        devices[device.name] = device
    desktop = devices.get(DEFAULT_DEVICE)
    if desktop is None or desktop.emulates or desktop.throttled:
        raise DeviceError(f"{origin}: devices: needs {DEFAULT_DEVICE!r} with the defaults (1280x720, scale 1, "
                          "not mobile, no touch, the browser's user agent, no CPU slowdown): runs stored before "
                          "devices read as it")
    return DeviceTable(devices, reference)


# CPU calibration: the arithmetic (the runner sequences it, `lab.emulation` measures) ---


def cpu_rate(slowdown: float, reference_ms: float, host_ms: float) -> float:
    """The DevTools CPU throttling rate that makes the benchmark take `slowdown` x the
    reference's time on a host where it takes `host_ms` unthrottled. Never below 1: a
    host slower than the device cannot be sped up (the achieved factor then says so)."""
    if reference_ms <= 0 or host_ms <= 0:
        raise ValueError("benchmark times must be positive")
    return max(1.0, slowdown * reference_ms / host_ms)


@dataclass(frozen=True)
class Calibration:
    """One run's calibration of a throttled device: the benchmark's script times on this
    host unthrottled (ms) and at the chosen DevTools `rate`, against the reference's."""

    device: str
    slowdown: float
    reference_ms: float
    host_ms: tuple[float, ...]
    rate: float
    throttled_ms: tuple[float, ...]

    @property
    def host_median(self) -> float:
        return statistics.median(self.host_ms)

    @property
    def throttled_median(self) -> float:
        return statistics.median(self.throttled_ms)

    @property
    def achieved(self) -> float:
        """How many times slower than the reference desktop script ran: the factor loads got."""
        return self.throttled_median / self.reference_ms

    def line(self) -> str:
        """What a run prints and its reports state, e.g. 'moto-g-power: CPU 4.1x slower
        than the reference (DevTools rate 4.3)', with advice when far from what was asked."""
        said = (f"{self.device}: CPU {self.achieved:.1f}x slower than the reference (DevTools rate {self.rate:.1f}; "
                f"asked {self.slowdown:g}x)")
        if self.rate == 1.0 and self.achieved > self.slowdown:
            said += ": this host is slower than the device itself, unthrottled (no rate can speed it up)"
        elif not 0.8 <= self.achieved / self.slowdown <= 1.25:
            said += ": far from what was asked (a busy host?); compare runs only of like factors"
        return said

    def as_meta(self) -> dict[str, Any]:
        """As a run's meta keeps it (`from_meta` reads it back)."""
        return {"slowdown": self.slowdown, "reference_ms": self.reference_ms,
                "host_ms": [round(t, 2) for t in self.host_ms], "rate": round(self.rate, 3),
                "throttled_ms": [round(t, 2) for t in self.throttled_ms], "achieved": round(self.achieved, 3)}

    @classmethod
    def from_meta(cls, device: str, values: Mapping[str, Any]) -> Calibration:
        return cls(device, float(values["slowdown"]), float(values["reference_ms"]),
                   tuple(map(float, values["host_ms"])), float(values["rate"]),
                   tuple(map(float, values["throttled_ms"])))


def calibration(device: Device, reference: Reference, host_ms: Sequence[float], rate: float,
                throttled_ms: Sequence[float]) -> Calibration:
    """A device's calibration from the samples measured (at least one each)."""
    if not host_ms or not throttled_ms:
        raise ValueError("a calibration needs at least one benchmark time unthrottled and one throttled")
    return Calibration(device.name, device.cpu_slowdown, reference.script_ms, tuple(host_ms), rate,
                       tuple(throttled_ms))


def device_lines(meta_devices: Mapping[str, Any]) -> list[str]:
    """A run's devices as its reports state them (meta `devices`: name -> the preset's
    fields and, when it was calibrated, its `calibration`): none for a desktop-only run."""
    if set(meta_devices) <= {DEFAULT_DEVICE}:
        return []
    lines = []
    for name, values in meta_devices.items():
        try:
            device = Device.model_validate({"name": name, **{k: v for k, v in values.items() if k != "calibration"}})
        except ValidationError:  # a table a newer pagebench wrote: say what is known
            lines.append(f"device {name}")
            continue
        calibrated = values.get("calibration")
        line = f"device {name}: {device.describe()}"
        if calibrated:
            line += "; " + Calibration.from_meta(name, calibrated).line().removeprefix(f"{name}: ")
        elif device.throttled:
            line += "; not calibrated (the run loaded none of its pages)"
        lines.append(line)
    return lines
