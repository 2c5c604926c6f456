"""Recorded sites replayed by nginx and Caddy, pure: the plan's refusals and the rendering
of awkward targets. Real servers answering every case are `test_replay_e2e.py`'s."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pagebench.core.encodings import BR, DCZ, IDENTITY
from pagebench.core.modes import H2, H3
from pagebench.core.servers import nginxconf, nginxreplay, plan as serverplan, replay
from pagebench.core.certs import Leaf
from pagebench.core.servers.binding import Binding, PlanError
from tests.lab.servers.recorded import WWW

LEAF = Leaf(Path("/data/tls/leaf.pem"), Path("/data/tls/leaf.key"), Path("/data/tls/chain.pem"), "SPKI=")
RUN = Path("/run/pagebench/pbx")


def test_plan_refuses_dcz_versions_and_unknown_query_matching(site):
    with pytest.raises(PlanError, match=r"^site rec: a recorded site is replayed in one version .*not dcz"):
        serverplan.plan([site], [H2], ["1.3"], LEAF, encodings=[IDENTITY, DCZ])
    versioned = replace(site, manifest=site.manifest.model_copy(update={"versions": 2}))
    with pytest.raises(PlanError, match=r"^site rec: a recorded site is replayed in one version"):
        serverplan.plan([versioned], [H2], ["1.3"], LEAF)
    with pytest.raises(PlanError, match=r"^query 'fuzzy': must be one of exact, loose$"):
        serverplan.plan([site], [H2], ["1.3"], LEAF, query="fuzzy")
    assert serverplan.plan([site], [H2], ["1.3"], LEAF).query == "exact"
    assert serverplan.plan([site], [H2], ["1.3"], LEAF, query="loose").query == "loose"


def test_plan_refuses_headers_no_configuration_can_carry(site):
    bad = site.recording.exchanges[0].model_copy(update={"headers": {"X-Split": "a\r\nSet-Cookie: x"}})
    recording = site.recording.model_copy(update={"exchanges": (bad, *site.recording.exchanges[1:])})
    with pytest.raises(PlanError, match=rf"^site rec: https://{WWW}/: header X-Split .* printable ASCII$"):
        serverplan.plan([replace(site, recording=recording)], [H2], ["1.3"], LEAF)


def test_replayed_headers_drop_what_the_server_makes_and_add_timing_and_cors(site):
    identity = Binding("1.3", H2, "rec", WWW, 0)
    style = site.recording.exchanges[1]
    assert dict(replay.replay_headers(identity, style)) == {
        "Cache-Control": "max-age=3600", "X-Recorded": 'a "$b" {c} \\d;',
        "Timing-Allow-Origin": "*", "Access-Control-Allow-Origin": "*"}  # no Alt-Svc: QUIC is the mode's
    br = Binding("1.3", H2, "rec", WWW, 0, encoding=BR)
    assert dict(replay.replay_headers(br, style))["Vary"] == "Accept-Encoding"
    font = site.recording.exchanges[-1]
    assert dict(replay.replay_headers(br, font)) == {
        "Access-Control-Allow-Origin": f"https://{WWW}", "Vary": "Origin", "Timing-Allow-Origin": "*"}


def test_nginx_keys_every_target_it_can_and_long_ones_by_prefix_and_length(site):
    conf = nginxconf.render(serverplan.plan([site], [H2], ["1.3"], LEAF), RUN)
    assert all(len(line) < 4000 for line in conf.splitlines())
    assert '"rec www.example.com.test/odd%20dir/a+b.js?q=a%20b+c&x=1;y=$z&w={v}|\\"\'\\\\" ' in conf
    assert "${pb_dollar}z" in conf  # the recorded target compared with $request_uri: $ is not a variable
    assert '"~^rec\\\\ www\\\\.example\\\\.com\\\\.test\\\\/Case\\\\.txt$" $request_uri;' in conf
    long_key = next(line for line in conf.splitlines() if "pixel" in line and "$request_uri" in line)
    assert long_key.strip().startswith('"~^rec\\\\ ') and "}$\" $request_uri;" in long_key
    assert "map_hash_bucket_size 128;" in conf


def test_nginx_delays_a_response_by_its_think_time_and_answers_it_as_any_other(site):
    conf = nginxconf.render(serverplan.plan([site], [H2], ["1.3"], LEAF), RUN)
    assert conf.splitlines()[2] == f"load_module {nginxreplay.ECHO_MODULE};  # echo_sleep: server think time"
    case = next(i for i, e in enumerate(site.recording.exchanges) if e.target == "/Case.txt")
    gone = next(i for i, e in enumerate(site.recording.exchanges) if e.target == "/gone.png")
    waiting = (f"        location = //pb-replay/{case} {{\n            internal;\n            echo_sleep 0.150;\n"
               f"            echo_exec //pb-replay/{case}.answer;\n        }}\n"
               f"        location = //pb-replay/{case}.answer {{\n")
    assert waiting in conf
    assert f"error_page 405 =200 //pb-replay/{case}.answer;" in conf  # a POST: answered, not slept twice
    assert f"echo_sleep 0.050;\n            echo_exec //pb-replay/{gone}.answer;" in conf
    assert f"error_page 418 =404 //pb-replay/{gone}.answer.body;" in conf
    assert conf.count("echo_sleep 0.") == 2  # the rest answer at once
    off = replace(site, recording=site.recording.model_copy(update={"server_time": False}))
    conf = nginxconf.render(serverplan.plan([off], [H2], ["1.3"], LEAF), RUN)
    assert "echo" not in conf and "load_module" not in conf


def test_a_run_says_how_much_think_time_and_that_caddy_s_h3_answers_at_once(site):
    said = replay.think_note(site, [H2, H3])
    assert said == ("site rec: server think time (HAR wait less one RTT) of 2 response(s): total 200 ms, median "
                    "100.0 ms, max 150 ms; on: each response is delayed by it; except in h3: " + replay.CADDY_NO_THINK)
    assert replay.think_note(site, [H2]).endswith("on: each response is delayed by it")
    off = replace(site, recording=site.recording.model_copy(update={"server_time": False}))
    assert replay.think_note(off, [H2, H3]).endswith("off (--no-server-time): kept, not applied")
    none = site.recording.model_copy(update={"exchanges": tuple(e.model_copy(update={"think_ms": None})
                                                                for e in site.recording.exchanges)})
    assert replay.think_note(replace(site, recording=none), [H2, H3]) is None
