"""The link as command-line options, made from the profile model: one option per field of
`core.profiles.Profile`, named, typed, and explained (unit and range) by the field's own
metadata. A knob added to the model is an option of every command that takes a link,
with no edit here; `profile_from_options` turns the options into the one Profile."""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional, TypeVar, Union, get_args, get_origin

import annotated_types
import typer
from pydantic.fields import FieldInfo

from pagebench import yamlfiles
from pagebench.core import profiles
from pagebench.core.profiles import Profile, make_profile, resolve

Command = TypeVar("Command", bound=Callable[..., Any])
#: Where `--help` lists the link's options, apart from the command's own.
PANEL = "The link (default: the profile's values)"

ProfileOpt = Annotated[Optional[str], typer.Option(
    help="Named profile (see `pagebench link profiles`).", rich_help_panel=PANEL)]
ProfilesFileOpt = Annotated[Optional[Path], typer.Option(
    "--profiles", help="YAML file of extra profiles.", rich_help_panel=PANEL)]
BackendOpt = Annotated[Optional[str], typer.Option(
    help="netem or userspace (default: netem if the kernel has it).", rich_help_panel=PANEL)]


def _extra(info: FieldInfo) -> dict[str, Any]:
    """The field's own metadata (`core.profiles.knob`): its unit and short name."""
    return info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}


def option_name(field: str, info: FieldInfo) -> str:
    """`--rtt` for a field whose metadata gives a short name, else `--queue-bytes`."""
    return "--" + str(_extra(info).get("short") or field).replace("_", "-")


#: A bound of a field's range: the annotated_types rule pydantic keeps, its attribute, its words.
BOUNDS = {annotated_types.Ge: ("ge", "at least"), annotated_types.Gt: ("gt", "above"),
          annotated_types.Le: ("le", "at most"), annotated_types.Lt: ("lt", "below")}


def bounds(info: FieldInfo) -> str:
    """The range the field's constraints allow: '0 to 10000', or 'above 0, at most 100000'."""
    shown = {}
    for rule in info.metadata:
        if type(rule) in BOUNDS:
            value = getattr(rule, BOUNDS[type(rule)][0])
            shown[type(rule)] = f"{value:g}" if isinstance(value, float) else str(value)
    if set(shown) == {annotated_types.Ge, annotated_types.Le}:
        return f"{shown[annotated_types.Ge]} to {shown[annotated_types.Le]}"
    return ", ".join(f"{BOUNDS[kind][1]} {value}" for kind, value in shown.items())


def describe(info: FieldInfo) -> str:
    """The option's help: the field's description, its unit and its range, e.g. 'Round-trip
    time, ms; 0 to 10000.'"""
    unit, limits = _extra(info).get("unit"), bounds(info)
    return (info.description or "") + (f", {unit}" if unit else "") + (f"; {limits}" if limits else "") + "."


def _value_type(annotation: Any) -> Any:
    """The type an option parses: the field's annotation without its `None`."""
    if get_origin(annotation) in (Union, types.UnionType):
        (annotation,) = [arg for arg in get_args(annotation) if arg is not type(None)]
    return annotation


def knob_parameters() -> list[inspect.Parameter]:
    """One keyword parameter per knob of the profile model as it is now, as Typer reads a
    command's signature: optional (None: the profile's value), a flag pair for a boolean,
    three numbers for a tuple."""
    parameters = []
    for field in profiles.PROFILE_FIELDS:
        info = profiles.Profile.model_fields[field]
        kind = _value_type(info.annotation)
        name = option_name(field, info)
        declared = f"{name}/--no-{name.removeprefix('--')}" if kind is bool else name
        option = typer.Option(declared, help=describe(info), rich_help_panel=PANEL)
        parameters.append(inspect.Parameter(field, inspect.Parameter.KEYWORD_ONLY, default=None,
                                            annotation=Annotated[Optional[kind], option]))
    return parameters


def link_options(command: Command) -> Command:
    """Give `command` one option per profile knob in place of its `knobs` parameter, which
    then receives them as {field: value or None}."""
    signature = inspect.signature(command, eval_str=True)  # Typer reads the objects, not strings
    knobs = knob_parameters()
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.name == "knobs":
            parameters += knobs
        else:
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))

    @functools.wraps(command)
    def with_knobs(**values: Any) -> Any:
        given = {parameter.name: values.pop(parameter.name) for parameter in knobs}
        return command(knobs=given, **values)

    with_knobs.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    with_knobs.__annotations__ = {**{k: v for k, v in command.__annotations__.items() if k != "knobs"},
                                  **{parameter.name: parameter.annotation for parameter in knobs}}
    return with_knobs  # type: ignore[return-value]


def profile_from_options(profile: str | None, profiles_file: Path | None, knobs: dict[str, Any]) -> Profile:
    """The profile the options name: `--profile` (built-in, or from `--profiles`), with the
    knobs given overriding its fields; knobs alone make a custom profile; nothing, `none`."""
    catalogue = yamlfiles.builtin_profiles()
    if profiles_file is not None:
        for loaded in yamlfiles.load_profile_file(profiles_file, catalogue):
            catalogue[loaded.name] = loaded
    given = {key: value for key, value in knobs.items() if value is not None}
    if profile is None and not given:
        profile = "none"
    if profile is not None:
        base = resolve(profile, catalogue)
        if not given:
            return base
        fields = {**base.model_dump(exclude_none=True), **given, "source": f"{base.name} with overrides"}
        return make_profile(fields, "options")
    return make_profile({"name": "custom", "source": "command line", **given}, "options")
