"""How a value is written into nginx.conf without changing its meaning: a path nginx
reads as one token, a literal in double quotes, a literal where nginx would expand
`$variables`, and `add_header` lines. Refuses (PlanError) what it cannot write safely."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pagebench.core.servers.binding import PlanError


def safe_path(path: Path | str) -> str:
    """A path as one unquoted token: no quotes, backslashes, `$`, `;`, braces or spaces."""
    text = str(path)
    if any(ch in text for ch in '"\\$;{} \t\n'):
        raise PlanError(f"path {text!r}: must not contain quotes, backslashes, $, ;, braces or spaces")
    return text


def quoted(text: str) -> str:
    """A literal in double quotes (map keys, default_type: no variables there)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def literal(text: str) -> str:
    """A literal where nginx expands variables (add_header, return, map values): `$` is
    written `${pb_dollar}`, a `geo` whose value is `$`."""
    return quoted(text).replace("$", "${pb_dollar}")


def add_headers(headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    """`add_header` lines of headers whose values may name nginx variables on purpose."""
    return [f'{indent}add_header {name} "{value}" always;' for name, value in headers]
