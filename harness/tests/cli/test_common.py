"""The one place an error ends a command (`reported`, inside every `command`): the line,
exit 2 for every error (1 is a check's no), the hint, a stop (130)."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from pagebench.cli.common import command, reported
from pagebench.core.errors import ERROR, PagebenchError
from pagebench.system.signals import Interrupted


class Broken(PagebenchError):
    """A failure of the work: the default kind."""


class Wrong(PagebenchError, ValueError):
    """Bad input."""


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


@pytest.mark.parametrize(("error", "line"), [
    (Broken("the lab broke"), "error: the lab broke"),
    (Wrong("--x: bad"), "error: --x: bad"),
    (Advised("busy"), "error: busy; try again later"),
])
def test_an_error_is_one_line_and_exit_2_whatever_its_kind(error, line):
    assert ended(error) == (ERROR, line + "\n") == (2, line + "\n")


def test_the_stage_decides_the_hint_and_what_the_line_is_about():
    kept = {"hint": lambda error: None if isinstance(error, Wrong) else "kept: resume it"}
    assert ended(Wrong("bad spec"), **kept) == (2, "error: bad spec\n")
    assert ended(Broken("lost"), **kept) == (2, "error: lost; kept: resume it\n")
    assert ended(Broken("cannot open"), about="--db") == (2, "error: --db: cannot open\n")


def test_a_stop_is_a_line_and_130_where_the_command_handles_it():
    assert ended(Interrupted("SIGTERM"), interrupted="interrupted; torn down") == (
        130, "error: interrupted; torn down\n")
    assert ended(KeyboardInterrupt(), interrupted="interrupted", hint=lambda _: "kept") == (
        130, "error: interrupted; kept\n")
    with pytest.raises(Interrupted):  # not handled there: it goes on unwinding
        ended(Interrupted("SIGTERM"))


def test_a_command_that_handles_a_stop_ends_with_130_and_its_line():
    """`compare`: a SIGTERM (a CI job cancelled) is a line and 130, as Ctrl-C is (which
    Typer makes 130 for every command, without a line)."""
    app = typer.Typer()

    @command(app, interrupted="interrupted")
    def gate() -> None:
        raise Interrupted("SIGTERM")

    @command(app)
    def other() -> None:
        raise Interrupted("SIGTERM")

    result = CliRunner().invoke(app, ["gate"])
    assert (result.exit_code, result.stderr) == (130, "error: interrupted\n")
    with pytest.raises(Interrupted):  # not handled there: it goes on unwinding
        CliRunner().invoke(app, ["other"])


def test_other_exceptions_are_not_caught():
    code, _ = ended(ValueError("a bug"))
    assert code == 1
