"""The one root of pagebench's own errors, so the command line catches one class.

Every error pagebench raises on purpose derives from `PagebenchError`: its message is
one line the user can act on, and its class says how the command ends: `exit_code`
(`FAILED`, or `BAD_INPUT` for a kind that means the input is wrong and nothing was
started) and an optional `hint` added to the line. A stop asked for by a signal is not
one of these: `system.signals.Interrupted` is a BaseException, so that it unwinds every
`with` block and no `except Exception` swallows it.
"""

from __future__ import annotations

from typing import ClassVar

#: The work failed (the lab, a server, the store...): what `PagebenchError`s say by default.
FAILED = 1
#: The input is wrong (a spec, a profile, an option, a run id): nothing was started.
BAD_INPUT = 2


class PagebenchError(Exception):
    """An expected failure, told as one line: the message, and `hint` when there is one."""

    #: How the command ends when an error of this kind stops it.
    exit_code: ClassVar[int] = FAILED
    #: Advice added after the message (`error: MESSAGE; HINT`), if this kind has one.
    hint: str | None = None
