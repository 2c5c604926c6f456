"""Loads of a replayed site: a request the recording lacks (the replay's marked 404) is
counted and flags the load without failing it; a recorded error status is the page as it
was. The spec's `replay_query` and `deterministic`, and the script that makes a page
deterministic. In real Chromium (deterministic pages, the marked 404 seen by a load):
`test_browser_replay_e2e.py`."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pagebench.core.encodings import BR, Encoding, IDENTITY
from pagebench.core.measure.metrics import UNRECORDED_SHOWN, LinkView, ServerView, evaluate
from pagebench.core.modes import H2
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE
from pagebench.core.records import Condition, RawLoad
from pagebench.core.spec.model import SpecError, parse
from pagebench.lab.pagescripts import DETERMINISTIC_START, DETERMINISTIC_START_MS, deterministic_script
from tests.lab.replayed import SITE, recording_of

MARK = {UNRECORDED_HEADER: UNRECORDED_VALUE}


def replayed_load(*files: tuple[str, int, dict[str, str], str], document_headers: dict[str, str] | None = None,
                  document_encoding: str = "") -> RawLoad:
    """A load of SITE/ (text/html) then `files`: (path, status, response headers, content
    encoding); statuses >= 400 have no Resource Timing body."""
    requests, timing = {}, []
    status = 200 if document_headers is None else 404
    document = ("/", status, {"Content-Type": "text/html", **(document_headers or {})}, document_encoding)
    for i, (path, status, headers, encoding) in enumerate((document, *files)):
        url = SITE + path
        requests[f"r{i}"] = {"url": url, "type": "Document" if i == 0 else "Other", "sent": 10.0 + i / 100,
                             "status": status, "protocol": "h2", "connection_id": 1, "encoded_bytes": 400,
                             "content_encoding": encoding, "response_headers": headers}
        if i:
            timing.append({"name": url, "startTime": 100.0 + i, "nextHopProtocol": "h2",
                           "encodedBodySize": 300, "decodedBodySize": 1000})
    page = {"nav": {"responseStart": 151.0, "loadEventStart": 320.0, "nextHopProtocol": "h2"}, "resources": timing}
    return RawLoad(url=SITE + "/", started_at=0.0, error=None, page=page, requests=requests)


def judge(raw: RawLoad, replayed: bool = True, encoding: Encoding = IDENTITY, **statuses: int):
    condition = Condition("rec", H2, "direct", "cable", "cold", encoding=encoding)
    return evaluate(condition, raw, LinkView(1, 0, {}), ServerView(1, len(raw.requests), (200,)),
                    recording=recording_of(raw, **statuses) if replayed else None)


# -- metrics --------------------------------------------------------------------------------

def test_an_unrecorded_404_is_counted_and_flagged_and_a_recorded_404_is_the_page_as_it_was():
    raw = replayed_load(("/app.js", 200, {"content-type": "text/javascript"}, ""),
                        ("/missing.png", 404, MARK, ""),
                        ("/gone.css", 404, {"content-type": "text/html"}, ""),  # 404 when recorded
                        ("/api?x=1", 503, {}, ""))
    result = judge(raw)
    assert result.ok and result.errors == ()
    assert result.unrecorded == (f"{SITE}/missing.png",)
    assert result.flagged and result.flags == (f"1 request(s) not in the recording: {SITE}/missing.png",)
    plain = judge(raw, replayed=False)  # a site served by path: every 4xx/5xx is an error
    assert not plain.ok and plain.unrecorded is None
    assert plain.errors == (f"{SITE}/missing.png: HTTP 404", f"{SITE}/gone.css: HTTP 404", f"{SITE}/api?x=1: HTTP 503")


def test_an_error_status_the_recording_does_not_have_is_an_error():
    """The edge proxy's 502 for a file recorded as a 200 is the lab failing, not the page."""
    raw = replayed_load(("/app.js", 502, {}, ""), ("/gone.css", 404, {}, ""))
    result = judge(raw, **{"app.js": 200})
    assert not result.ok and result.errors == (f"{SITE}/app.js: HTTP 502",)


def test_a_replayed_load_with_everything_recorded_is_clean():
    result = judge(replayed_load(("/app.js", 200, {"content-type": "text/javascript"}, "")))
    assert result.ok and not result.flagged and result.unrecorded == ()


def test_the_marker_is_read_whatever_its_case_and_from_the_wire_headers_too():
    raw = replayed_load(("/a.png", 404, {"x-pagebench-replay": "Unrecorded"}, ""), ("/b.png", 404, {}, ""),
                        ("/c.png", 404, {UNRECORDED_HEADER: "something else"}, ""))
    raw.requests["r2"]["wire_headers"] = {"X-PAGEBENCH-REPLAY": UNRECORDED_VALUE}  # only in the ExtraInfo event
    assert judge(raw).unrecorded == (f"{SITE}/a.png", f"{SITE}/b.png")


def test_the_flag_names_the_first_urls_and_counts_the_rest():
    n = UNRECORDED_SHOWN + 2
    result = judge(replayed_load(*((f"/i{i}.png", 404, MARK, "") for i in range(n))))
    assert len(result.unrecorded or ()) == n and result.ok
    shown = ", ".join(f"{SITE}/i{i}.png" for i in range(UNRECORDED_SHOWN))
    assert result.flags == (f"{n} request(s) not in the recording: {shown} (and 2 more)",)


def test_a_page_that_is_not_in_the_recording_fails_its_load():
    result = judge(replayed_load(document_headers=MARK))
    assert not result.ok and result.unrecorded == (f"{SITE}/",)
    assert result.errors == (f"{SITE}/: HTTP 404: the page itself is not in the recording",)


def test_a_replayed_resource_is_text_by_its_content_type_not_its_url():
    """Recorded URLs need no extension: the body's file took it from the Content-Type, and
    the servers encode by that."""
    files = (("/bundle?v=3", 200, {"Content-Type": "application/javascript; charset=utf-8"}, "br"),
             ("/logo", 200, {"Content-Type": "image/png"}, ""), ("/font", 200, {}, ""))
    assert judge(replayed_load(*files, document_encoding="br"), encoding=BR).flags == ()
    plain = (files[0][:3] + ("",), *files[1:])
    assert judge(replayed_load(*plain, document_encoding="br"), encoding=BR).flags == (
        f"1 text resource(s) arrived with Content-Encoding none instead of br (encoding br), e.g. {SITE}/bundle?v=3",)
    assert judge(replayed_load(*files, document_encoding="br"), replayed=False, encoding=BR).flags == (
        f"1 image/font resource(s) arrived with Content-Encoding br (they are sent as stored), e.g. {SITE}/bundle?v=3",)


# -- the spec -------------------------------------------------------------------------------

BASE = {"sites": ["seed000-small-n2"], "modes": ["h2"]}


def test_replay_query_and_deterministic_default_to_exact_and_off():
    spec = parse(BASE, "s.yaml")
    assert (spec.replay_query, spec.deterministic) == ("exact", False)
    spec = parse({**BASE, "replay_query": "loose", "deterministic": True}, "s.yaml")
    assert (spec.replay_query, spec.deterministic) == ("loose", True)


@pytest.mark.parametrize(("change", "message"), [
    ({"replay_query": "fuzzy"}, "s.yaml: replay_query: 'fuzzy': must be one of exact, loose"),
    ({"replay_query": ["loose"]}, "s.yaml: replay_query: Input should be a valid string"),
    ({"deterministic": "yes please"}, "s.yaml: deterministic: Input should be a valid boolean"),
    ({"deterministic": 1}, "s.yaml: deterministic: Input should be a valid boolean"),
])
def test_bad_replay_options_are_one_line_errors(change, message):
    with pytest.raises(SpecError) as caught:
        parse({**BASE, **change}, "s.yaml")
    assert str(caught.value) == message


def test_the_unknown_field_error_lists_the_new_fields():
    with pytest.raises(SpecError, match="allowed: .*replay_query, deterministic"):
        parse({**BASE, "replay": "loose"}, "s.yaml")


def test_the_deterministic_script_starts_the_clock_at_2026_and_takes_any_seed():
    assert datetime.fromtimestamp(DETERMINISTIC_START_MS / 1000, timezone.utc) == datetime.fromisoformat(
        DETERMINISTIC_START.replace("Z", "+00:00"))
    assert "const start = 1767225600000;" in deterministic_script(1)
    assert "let state = 4294967295;" in deterministic_script(-1)
    assert deterministic_script(5) == deterministic_script(5 + 2**32) != deterministic_script(6)
