"""The one root of pagebench's own errors, so the command line catches one class, and the
exit codes the commands share.

Every error pagebench raises on purpose derives from `PagebenchError`: its message is
one line the user can act on, and an optional `hint` is added to the line. Any such error
ends a command with `ERROR` (2), whether the input was wrong or the work failed: 1
(`CHECK_FAILED`) is kept for a command that did its work and whose answer is no (a budget
breached, a regression), so a CI step tells "slower" from "broken". A stop asked for by a
signal is not one of these: `system.signals.Interrupted` is a BaseException, so that it
unwinds every `with` block and no `except Exception` swallows it (exit 130).
"""

from __future__ import annotations

#: The command worked and its check says no: a budget breached, a regression (`run`,
#: `compare`), a link not valid (`link check`), a required tool missing (`doctor`).
CHECK_FAILED = 1
#: Any error: a spec, an option or a run id that is wrong, or the work that failed (the
#: lab, a server, the store...).
ERROR = 2


class PagebenchError(Exception):
    """An expected failure, told as one line: the message, and `hint` when there is one."""

    #: Advice added after the message (`error: MESSAGE; HINT`), if this kind has one.
    hint: str | None = None
