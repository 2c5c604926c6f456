"""What a replay of a load came from: the recording, made from the load itself (the tests
of replayed loads, pure in `test_browser_replay.py` and in real Chromium in
`test_browser_replay_e2e.py`)."""

from __future__ import annotations

from urllib.parse import urlsplit

from pagebench.core.records import RawLoad
from pagebench.core.sites.recording import UNRECORDED_VALUE, Exchange, Recording

SITE = "https://www.r.test"


def recording_of(raw: RawLoad, **statuses: int) -> Recording:
    """The recording a replay of `raw` came from: every request but the unrecorded ones,
    each with the status it got, unless `statuses` (by path) says what it had instead."""
    exchanges = [Exchange(host="www.r.test", target="/never-requested", status=204, original=SITE)]
    for entry in raw.requests.values():
        parts = urlsplit(entry["url"])
        if any(str(v).lower() == UNRECORDED_VALUE for v in entry["response_headers"].values()):
            continue
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        status = statuses.get(parts.path.strip("/"), entry["status"])
        exchanges.append(Exchange(host=parts.hostname, target=target, status=status, original=entry["url"],
                                  file="_replay/0001" if status in (200, 203) else None))
    return Recording(source="test", hosts={}, exchanges=tuple(exchanges))
