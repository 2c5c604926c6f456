"""pagebench's Grafana dashboards as typed code (grafana-foundation-sdk): a module per
dashboard, built from the shared look (`panels`), SQL (`sql`) and condition fields
(`conditions`). `generate.py` beside this package writes them to `json/`, the files
Grafana provisions; nothing else writes those files."""

from __future__ import annotations

import json
from collections.abc import Callable

from grafana_foundation_sdk.builders.dashboard import Dashboard
from grafana_foundation_sdk.cog.encoder import JSONEncoder

from boards import connections, links, overview, protocols, trend, visual, waterfall

#: The JSON schema the panels' options are written for (the SDK's models default to 36).
SCHEMA_VERSION = 39

#: File name (without .json) -> the function that builds the dashboard.
BOARDS: dict[str, Callable[[], Dashboard]] = {
    "overview": overview.board,
    "protocols": protocols.board,
    "connections": connections.board,
    "waterfall": waterfall.board,
    "links": links.board,
    "trend": trend.board,
    "visual": visual.board,
}


def render(board: Dashboard) -> str:
    """The dashboard's JSON as provisioned: keys in the SDK's order, UTF-8 text as is."""
    built = board.build()
    built.schema_version = SCHEMA_VERSION
    return json.dumps(built, cls=JSONEncoder, indent=2, ensure_ascii=False) + "\n"
