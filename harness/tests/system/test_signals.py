"""Termination signals as exceptions, with real signals sent to this process: raised in
the code that entered `signals_raise` even when they land in an asyncio loop running in
another greenlet (as Playwright's sync API runs its loop), that loop left intact; held
through a teardown and delivered after it; an ignored SIGINT kept ignored."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Iterator

import greenlet
import pytest

from pagebench.system.signals import Interrupted, signals_held, signals_raise

STOPS = [(signal.SIGTERM, Interrupted), (signal.SIGHUP, Interrupted), (signal.SIGINT, KeyboardInterrupt)]


@pytest.fixture(autouse=True)
def _sigint_is_pythons() -> Iterator[None]:
    """Python's own SIGINT handler, as in a command started from a terminal (a suite run in
    the background inherits SIGINT ignored)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _dispatcher(loop: asyncio.AbstractEventLoop, sig: int, steps: list[str]) -> greenlet.greenlet:
    """A greenlet running `loop` until a callback is done, as Playwright's dispatcher runs
    its loop while a sync call waits; the callback gets `sig` half-way through."""
    done = loop.create_future()

    def callback() -> None:
        steps.append("before")
        signal.raise_signal(sig)  # the handler runs here, inside the loop's callback
        steps.append("after")
        done.set_result(42)

    loop.call_soon(callback)
    loop.call_later(1.0, loop.stop)  # a callback that never ends (the stop lost): the loop gives up
    return greenlet.greenlet(lambda: loop.run_until_complete(done))


@pytest.mark.parametrize(("sig", "stop"), STOPS)
def test_a_signal_in_another_greenlets_asyncio_loop_stops_the_code_that_entered_the_block(sig, stop):
    """asyncio keeps what its callbacks raise (SIGTERM's Interrupted was logged and lost), or
    lets KeyboardInterrupt tear through the loop; now the block's own code gets it, and the
    loop, suspended where the signal found it, goes on when switched to again."""
    loop = asyncio.new_event_loop()
    steps: list[str] = []
    try:
        dispatcher = _dispatcher(loop, sig, steps)
        with signals_raise():
            with pytest.raises(stop):
                dispatcher.switch()
            assert steps == ["before"] and not dispatcher.dead
            assert dispatcher.switch() == 42  # the callback went on from where it was
        assert steps == ["before", "after"] and dispatcher.dead
    finally:
        loop.close()


@pytest.mark.parametrize(("sig", "stop"), STOPS)
def test_a_signal_in_the_blocks_own_code_is_raised_there(sig, stop):
    after = []
    with signals_raise():
        with pytest.raises(stop):
            signal.raise_signal(sig)
            after.append(sig)
    assert after == []


def test_outside_the_block_the_handlers_are_as_they_were():
    before = {sig: signal.getsignal(sig) for sig, _ in STOPS}
    with signals_raise():
        assert all(signal.getsignal(sig) is not before[sig] for sig, _ in STOPS)
    assert {sig: signal.getsignal(sig) for sig, _ in STOPS} == before


def test_a_sigint_ignored_before_the_block_stays_ignored():
    """A command started in the background inherits SIGINT ignored: Ctrl-C in its terminal
    is not for it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with signals_raise():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)  # nothing happens


@pytest.mark.parametrize(("sig", "stop"), STOPS)
def test_a_signal_during_a_held_teardown_is_delivered_when_it_is_done(sig, stop):
    steps = []
    with signals_raise():
        with pytest.raises(stop):
            with signals_held():
                signal.raise_signal(sig)
                steps.append("teardown went on")
                signal.raise_signal(signal.SIGTERM)  # a second one: the first is what stops
            steps.append("not reached")
    assert steps == ["teardown went on"]


def test_a_held_signal_that_was_ignored_stays_ignored():
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals_held():
            signal.raise_signal(signal.SIGHUP)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, old)
