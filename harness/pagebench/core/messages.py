"""Field names as one-line errors show them: whatever a user's YAML key is (a newline in
it, a number), the message stays one line."""

from __future__ import annotations

import re

_PLAIN = re.compile(r"[A-Za-z0-9_.\[\]-]*")


def shown(part: object) -> str:
    """A location part as is when it is plain, else quoted (repr escapes what would break a line)."""
    text = str(part)
    return text if _PLAIN.fullmatch(text) else repr(part)
