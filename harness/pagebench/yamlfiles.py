"""Reading the YAML files pagebench is given: experiment specs, network profiles (the
built-in catalogue, package data beside the link emulation, and users' own), the device
table beside them and budgets (`run --budget`, `compare --budget`). The one place that opens them; parsing and
validation are `core`'s, and every error is one line naming the file (and the field)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from pagebench.core.devices import DeviceError, DeviceTable, parse_devices
from pagebench.core.measure.budgets import Budget, BudgetError, parse_budgets, parse_expression
from pagebench.core.profiles import Profile, ProfileError, parse_profiles, yaml_document
from pagebench.core.spec.model import SpecError

#: The built-in profiles: package data kept with the link emulation, found wherever
#: pagebench is installed (a checkout or a wheel).
CATALOGUE = resources.files("pagebench.link") / "profiles.yaml"
#: The built-in devices (`core.devices`), one table beside the profiles.
DEVICES = resources.files("pagebench.link") / "devices.yaml"


def read_yaml_file(path: Path, error: type[ValueError]) -> Any:
    """The YAML document in `path`; unreadable or invalid YAML is `error`, naming the file."""
    try:
        text = path.read_text()
    except OSError as problem:
        raise error(f"{path}: cannot read: {problem.strerror}") from None
    return yaml_document(text, str(path), error)


def spec_document(path: Path) -> Any:
    """The YAML of an experiment spec, or a one-line SpecError naming the file."""
    return read_yaml_file(path, SpecError)


def load_profile_file(path: Path, known: dict[str, Profile] | None = None) -> list[Profile]:
    """A profiles file, sweeps expanded; `base:` may name `known` profiles."""
    return parse_profiles(read_yaml_file(path, ProfileError), str(path), known)


def builtin_profiles() -> dict[str, Profile]:
    """The built-in catalogue by name."""
    origin = "pagebench/link/profiles.yaml"
    document = yaml_document(CATALOGUE.read_text(), origin, ProfileError)
    return {profile.name: profile for profile in parse_profiles(document, origin)}


def builtin_devices() -> DeviceTable:
    """The device table: the devices by name and the reference their CPU slowdowns are stated against."""
    origin = "pagebench/link/devices.yaml"
    return parse_devices(yaml_document(DEVICES.read_text(), origin, DeviceError), origin)


def load_budgets(path: Path) -> list[Budget]:
    """A budget file: `budgets: [{metric, max, site, mode, ...}]`."""
    return parse_budgets(read_yaml_file(path, BudgetError), str(path))


def budget_options(values: list[str]) -> list[Budget]:
    """The `--budget` options of `run` and `compare`, in order: each an expression
    (`load_ms<=1500@mode=h2`: it has a `<`, `=` or `@` and is no file) or a budget file."""
    found: list[Budget] = []
    for value in values:
        expression = bool(set(value) & set("<=@")) and not Path(value).is_file()
        found += [parse_expression(value)] if expression else load_budgets(Path(value))
    return found
