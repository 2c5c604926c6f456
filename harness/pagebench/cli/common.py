"""What the commands share: the two consoles, the one place pagebench's errors end a
command (`reported`, which every `command` runs inside), the results store as a command
opens it, and the machine lock of a measuring command."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from pagebench.core.errors import ERROR, PagebenchError
from pagebench.system.signals import Interrupted, signals_raise

if TYPE_CHECKING:
    from pagebench.lab.machine import MachineLock
    from pagebench.results.store import Store

#: Piped output (CI logs, files) gets room for the report's columns instead of 80.
out = Console(width=None if Console().is_terminal else 160)
err = Console(stderr=True)
#: How a command stopped by SIGINT or SIGTERM exits (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130

Command = TypeVar("Command", bound=Callable[..., Any])
#: What to add to an error's line where the command stands (what was kept, what to run next).
Hint = Callable[[BaseException], "str | None"]


def fail(message: str, code: int = ERROR) -> typer.Exit:
    """Print a one-line error and return the Exit to raise. The message is text, not markup:
    '[min, default, max]' in it is printed as written."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@contextmanager
def reported(hint: Hint | None = None, interrupted: str | None = None, about: str | None = None) -> Iterator[None]:
    """The one place a pagebench error ends a command: `error: [ABOUT: ]MESSAGE[; HINT]`,
    exit 2 (`ERROR`: 1 is a check's no, never an error). A command says where it matters
    what an error means at that point (`about`: the option it came from; `hint`: what a
    failed run kept) and, where it handles a stop, the line a SIGINT or SIGTERM ends with
    (exit 130); elsewhere a stop is not caught here."""
    try:
        yield
    except PagebenchError as error:
        extra = hint(error) if hint is not None else error.hint
        line = f"{about}: {error}" if about else str(error)
        raise fail(line + (f"; {extra}" if extra else "")) from None
    except (Interrupted, KeyboardInterrupt) as stop:
        if interrupted is None:
            raise
        extra = hint(stop) if hint is not None else None
        raise fail(interrupted + (f"; {extra}" if extra else ""), INTERRUPTED) from None


def command(group: typer.Typer, name: str | None = None, interrupted: str | None = None,
            **settings: Any) -> Callable[[Command], Command]:
    """Register a function as a command of `group`, run inside `reported`, so no command
    lists the errors it may meet: each one is a `PagebenchError`, and ends it with exit 2.
    `interrupted`: the line a SIGINT, SIGTERM or SIGHUP ends the whole command with (exit
    130), for a command whose other statuses a CI job reads (`compare`)."""

    def register(function: Command) -> Command:
        @functools.wraps(function)
        def reporting(*args: Any, **kwargs: Any) -> Any:
            with reported(interrupted=interrupted), signals_raise() if interrupted else nullcontext():
                return function(*args, **kwargs)

        group.command(name, **settings)(reporting)
        return reporting  # type: ignore[return-value]

    return register


WaitOpt = Annotated[bool, typer.Option("--wait", help=(
    "If another measuring command holds this machine, wait for it instead of refusing."))]


@contextmanager
def machine(command: str, wait: bool) -> Iterator[MachineLock]:
    """The machine-wide lock of a measuring command (lab.machine), with a status line while
    it waits; a busy machine without --wait is a one-line error (before any hint the
    command adds to its own errors)."""
    from pagebench.lab.machine import MachineLock

    status = err.status("")
    shown: list[bool] = []

    def waiting(holder) -> None:
        if not shown:
            shown.append(True)
            status.start()
        who = holder.describe() if holder else "another pagebench command"
        status.update(f"waiting for this machine: {who} is measuring")

    try:
        with reported():
            lock = MachineLock(command, wait, waiting).__enter__()
    finally:
        if shown:
            status.stop()
            err.print(f"{command}: the machine is free, starting", highlight=False)
    try:
        yield lock
    finally:
        lock.__exit__(None, None, None)


def open_store(db: str | None, must_exist: bool = False, option: str = "--db") -> Store:
    """The results store; readers (`must_exist`) refuse a SQLite path with nothing there
    instead of creating an empty database. Any store error is one line naming the option."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from pagebench.results.store import Store

    url = db or Store.default_url()
    try:
        parsed = make_url(url)
    except ArgumentError:
        parsed = None  # Store(url) says why
    sqlite_file = parsed.database if parsed is not None and parsed.get_backend_name() == "sqlite" else None
    if must_exist and sqlite_file and not Path(sqlite_file).exists():
        raise fail(f"{url}: no results store there")
    with reported(about=option):
        return Store(url)
