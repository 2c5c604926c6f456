"""pagebench: how protocol choices change what a person waits for."""

from pathlib import Path

#: The checkout pagebench runs from (installed editable): netem/, results/, experiments/.
REPO_ROOT = Path(__file__).resolve().parents[2]
