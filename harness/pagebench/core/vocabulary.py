"""What a row of every vocabulary table (the modes, the encodings; site kinds next) is: the
one object its name becomes, shown wherever it goes by that name. (Device presets are a
data table, as the link profiles are: `core.devices`.) Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


@dataclass(frozen=True, repr=False)
class Row:
    """A table's row: `str()` is its name (messages, file names and stored rows read it
    so), `repr()` says which table it is a row of."""

    name: str
    #: The table's word for a row ("mode", "encoding").
    kind: ClassVar[str]

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}>"
