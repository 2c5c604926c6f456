"""pagebench: how protocol choices change what a person waits for."""

from pathlib import Path

#: The checkout this source file sits in. Its last user is `results.store` (the default
#: SQLite file and the migrations), which moves to `system.places` in its own change;
#: delete this then. Everything else finds its files through `system.places`.
REPO_ROOT = Path(__file__).resolve().parents[2]
