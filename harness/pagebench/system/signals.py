"""Termination signals as an exception, so `with` blocks unwind and tear the lab down.

Where the exception is raised matters. Python runs a signal handler in the main thread, in
whatever code is running there when the signal arrives. During a `run` that is often
Playwright's, not ours: while a sync browser call waits, Playwright's asyncio loop runs in
a greenlet of its own (the dispatcher) in the main thread, with event listeners in further
greenlets. asyncio keeps what is raised in its callbacks, tasks and transports (SystemExit
and KeyboardInterrupt pass, and a KeyboardInterrupt passing through a write may leave the
driver half a message, which crashes it): the exception raised in a write to the driver's
pipe was taken for a broken pipe, which closed the connection; the exception raised in a
listener ended the task that reads the driver. Either way the run got a lost browser (a
load's error) instead of the stop, and went on (to fail later on the dead connection, with
a traceback). So the exception is raised in the greenlet that entered `signals_raise` (the
command's own code, waiting in that browser call), and the greenlet the signal found is
left suspended where it was, intact: it goes on when the unwinding code next calls the
browser (to close it).

A teardown that must finish holds the signals instead (`signals_held`) and delivers the
first one when it is done: ignoring them lost them, and the command went on as if none
had come.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

#: The signals that end a command: SIGTERM and SIGHUP as `Interrupted`, SIGINT as Python's
#: KeyboardInterrupt.
STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """SIGTERM/SIGHUP turned into an exception, so `with` blocks unwind and tear down."""


def _stop(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else Interrupted(signal.Signals(signum).name)


def _current_greenlet() -> Any | None:
    """The greenlet running now, where greenlets are in use (Playwright's sync API imports
    them); None where they are not, and all code runs as the thread itself."""
    module = sys.modules.get("greenlet")
    return module.getcurrent() if module is not None else None


def _root(greenlet: Any) -> Any:
    while greenlet.parent is not None:
        greenlet = greenlet.parent
    return greenlet


def _taken_over(sig: int) -> bool:
    """SIGTERM and SIGHUP always; SIGINT only where Python's own handler has it: a command
    started in the background inherits SIGINT ignored (a shell's convention), and keeps it so."""
    return sig != signal.SIGINT or signal.getsignal(sig) is signal.default_int_handler


@contextmanager
def signals_raise() -> Iterator[None]:
    """Inside this block SIGTERM and SIGHUP raise `Interrupted`, SIGINT KeyboardInterrupt
    (unless ignored), in the code that entered the block, wherever the signal finds the
    main thread (the module docstring says why)."""
    owner = _current_greenlet()  # None: no greenlet exists yet, so the block runs in the thread's own

    def handler(signum: int, _frame: FrameType | None) -> None:
        stop = _stop(signum)
        here = _current_greenlet()
        if here is None:
            raise stop
        target = owner if owner is not None else _root(here)
        if here is target or target.dead:
            raise stop
        # Returns only if `target` switches back here (a browser call of the unwinding
        # code): then this greenlet goes on as if no signal had come.
        target.throw(stop)

    previous = {sig: signal.signal(sig, handler) for sig in STOPPING if _taken_over(sig)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def signals_held() -> Iterator[None]:
    """Inside this block (a teardown that must run to its end) SIGINT, SIGTERM and SIGHUP
    wait; on the way out the first that came is sent again, to whatever has it then (the
    `Interrupted` of `signals_raise`, KeyboardInterrupt, the default: exit). An ignored
    signal stays ignored."""
    came: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        came.append(signum)

    previous: dict[signal.Signals, Any] = {}
    for sig in STOPPING:
        old = signal.getsignal(sig)
        if old is not None and old is not signal.SIG_IGN:  # None: a handler not set from Python, kept
            previous[sig] = signal.signal(sig, hold)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        if came:
            signal.raise_signal(came[0])
