"""The one place an error ends a command (`reported`, inside every `command`): the line,
the exit code the error's kind gives or the command's stage says, the hint, a stop."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from pagebench.cli.common import command, reported
from pagebench.core.errors import BAD_INPUT, PagebenchError
from pagebench.system.signals import Interrupted


class Broken(PagebenchError):
    """A failure of the work: the default kind."""


class Wrong(PagebenchError):
    exit_code = BAD_INPUT


class Advised(PagebenchError):
    hint = "try again later"


def ended(raise_, **stage) -> tuple[int, str]:
    """The exit code and stderr of a one-command app that raises `raise_` inside `reported(**stage)`."""
    app = typer.Typer()

    @command(app)
    def go() -> None:
        with reported(**stage):
            raise raise_

    @command(app)
    def other() -> None:  # two commands, so `go` is a subcommand as in pagebench
        raise AssertionError

    result = CliRunner().invoke(app, ["go"])
    return result.exit_code, result.stderr


@pytest.mark.parametrize(("error", "code", "line"), [
    (Broken("the lab broke"), 1, "error: the lab broke"),
    (Wrong("--x: bad"), 2, "error: --x: bad"),
    (Advised("busy"), 1, "error: busy; try again later"),
])
def test_an_error_is_one_line_and_its_kind_s_exit_code(error, code, line):
    assert ended(error) == (code, line + "\n")


def test_the_stage_decides_the_code_the_hint_and_what_the_line_is_about():
    kept = {"hint": lambda error: None if isinstance(error, Wrong) else "kept: resume it"}
    assert ended(Wrong("bad spec"), exit_code=1, **kept) == (1, "error: bad spec\n")
    assert ended(Broken("lost"), exit_code=1, **kept) == (1, "error: lost; kept: resume it\n")
    assert ended(Broken("cannot open"), exit_code=BAD_INPUT, about="--db") == (2, "error: --db: cannot open\n")


def test_a_stop_is_a_line_and_130_where_the_command_handles_it():
    assert ended(Interrupted("SIGTERM"), interrupted="interrupted; torn down") == (
        130, "error: interrupted; torn down\n")
    assert ended(KeyboardInterrupt(), interrupted="interrupted", hint=lambda _: "kept") == (
        130, "error: interrupted; kept\n")
    with pytest.raises(Interrupted):  # not handled there: it goes on unwinding
        ended(Interrupted("SIGTERM"))


def test_a_command_s_own_code_for_every_error():
    app = typer.Typer()

    @command(app, exit_code=BAD_INPUT)
    def gate() -> None:
        raise Broken("store gone")

    @command(app)
    def other() -> None:
        raise AssertionError

    result = CliRunner().invoke(app, ["gate"])
    assert (result.exit_code, result.stderr) == (2, "error: store gone\n")


def test_other_exceptions_are_not_caught():
    code, _ = ended(ValueError("a bug"))
    assert code == 1
