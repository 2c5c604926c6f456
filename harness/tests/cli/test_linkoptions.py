"""The link's options are made from the profile model: every knob is an option of every
command that takes a link, with its unit and range in `--help`; a knob added to the model
is an option with no CLI edit; the options given become the profile."""

from __future__ import annotations

from typing import Any

import pytest
import typer
import typer.main
from pydantic import Field
from typer.testing import CliRunner

from pagebench.cli.common import command, out
from pagebench.cli.linkoptions import bounds, link_options, option_name, profile_from_options
from pagebench.cli.main import app
from pagebench.core import profiles
from pagebench.core.profiles import PROFILE_FIELDS, Profile, knob

#: The names the command line gave the first knobs; scripts use them.
SHORT = {"rtt_ms": "--rtt", "jitter_ms": "--jitter", "loss_pct": "--loss", "down_mbit": "--down", "up_mbit": "--up",
         "queue_bytes": "--queue-bytes", "queue_ms": "--queue-ms", "mss": "--mss", "initcwnd": "--initcwnd",
         "congctl": "--congctl"}


def options_of(*path: str) -> dict[str, Any]:
    """A command's options by their names (`--no-sack` and `--sack` are one option)."""
    found = typer.main.get_command(app)
    for name in path:
        found = found.commands[name]
    return {opt: param for param in found.params for opt in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize("path", [("link", "check"), ("shell",)])
def test_every_profile_knob_is_an_option_with_its_unit_and_range(path):
    options = options_of(*path)
    for field in PROFILE_FIELDS:
        info = Profile.model_fields[field]
        name = option_name(field, info)
        assert name in options, (path, field)
        help_ = options[name].help
        assert info.description and help_.startswith(info.description), (field, help_)
        unit = (info.json_schema_extra or {}).get("unit")
        assert unit is None or f", {unit}" in help_, (field, help_)
        assert bounds(info) in help_, (field, help_)
    assert "--tcp-rmem" in options and "--no-window-scaling" in options and "--rwnd-bytes" in options


def test_ranges_read_from_the_model():
    assert options_of("link", "check")["--rtt"].help == "Round-trip time, ms; 0 to 10000."
    assert bounds(Profile.model_fields["down_mbit"]) == "above 0, at most 100000"
    assert bounds(Profile.model_fields["congctl"]) == ""


def test_the_names_scripts_use_are_kept():
    options = options_of("link", "check")
    assert {field: option_name(field, Profile.model_fields[field]) for field in SHORT} == SHORT
    assert set(SHORT.values()) <= set(options)


def link_app() -> typer.Typer:
    """A command taking a link, decorated now (with the model as it is now), printing the
    profile its options make."""
    app = typer.Typer()

    @command(app)
    @link_options
    def show(*, knobs: dict[str, Any]) -> None:
        out.print_json(profile_from_options(None, None, knobs).model_dump_json())

    @command(app)
    def other() -> None:
        raise AssertionError

    return app


def test_the_options_given_make_the_profile():
    result = CliRunner().invoke(link_app(), ["show", "--rtt", "40", "--no-sack", "--tcp-rmem", "4096", "87380",
                                             "6291456", "--rwnd-bytes", "32768", "--congctl", "bbr"])
    assert result.exit_code == 0, result.output
    made = Profile.model_validate_json(result.stdout)
    assert (made.name, made.rtt_ms, made.sack, made.timestamps, made.tcp_rmem, made.rwnd_bytes, made.congctl) == (
        "custom", 40, False, True, (4096, 87380, 6291456), 32768, "bbr")


def test_a_bad_knob_is_one_line_naming_the_field():
    result = CliRunner().invoke(link_app(), ["show", "--tcp-wmem", "4096", "1", "2"])
    assert result.exit_code == 2
    assert result.stderr == ("error: options: tcp_wmem: must be [min, default, max] bytes with "
                             "4096 <= min <= default <= max (got (4096, 1, 2))\n")


def test_a_knob_added_to_the_model_is_an_option_with_no_cli_edit(monkeypatch: pytest.MonkeyPatch):
    class Wider(Profile):
        throwaway_ms: float = Field(0.0, ge=0, le=7, description="A throwaway knob", json_schema_extra=knob("ms"))

    monkeypatch.setattr(profiles, "Profile", Wider)
    monkeypatch.setattr(profiles, "PROFILE_FIELDS", (*PROFILE_FIELDS, "throwaway_ms"))
    app = link_app()
    (option,) = [param for param in typer.main.get_command(app).commands["show"].params
                 if param.opts == ["--throwaway-ms"]]
    assert option.help == "A throwaway knob, ms; 0 to 7."
    result = CliRunner().invoke(app, ["show", "--throwaway-ms", "3"])
    assert result.exit_code == 0, result.output
    assert Wider.model_validate_json(result.stdout).throwaway_ms == 3
