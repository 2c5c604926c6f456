"""Termination signals as an exception, so `with` blocks unwind and tear the lab down."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupted(BaseException):
    """SIGTERM/SIGHUP turned into an exception, so `with` blocks unwind and tear down."""


@contextmanager
def signals_raise() -> Iterator[None]:
    """Inside this block SIGTERM and SIGHUP raise `Interrupted` (SIGINT already raises)."""

    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
