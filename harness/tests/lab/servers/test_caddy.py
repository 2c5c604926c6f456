"""Caddy without Caddy running: its start-up output read, and what Chromium is told to
speak QUIC to. Real loads of real Chromium over HTTP/3 are `test_caddy_e2e.py`'s."""

from __future__ import annotations

from pagebench.lab.servers import caddy
from pagebench.lab.browser import Setup
from pagebench.lab.servers.caddy import startup_error


def test_startup_errors_and_readiness_are_read_from_caddy_s_output():
    out = ('{"level":"info","ts":1.0,"msg":"using provided configuration","config_file":"/r/caddy.json"}\n'
           "Error: loading initial config: loading new config: http app module: start: listening on "
           "198.19.0.8:443: listen tcp 198.19.0.8:443: bind: cannot assign requested address\n")
    assert startup_error(out).startswith("loading initial config: ") and startup_error(out).endswith("address")
    assert startup_error('{"level":"error","msg":"tls","error":"bad key"}\n') == "tls: bad key"
    assert startup_error('{"level":"info","msg":"fine"}\n') is None
    assert caddy.ready('{"level":"info","ts":1.0,"msg":"serving initial configuration"}\n')
    assert not caddy.ready(out)


def test_chromium_is_told_to_speak_quic_to_exactly_these_origins():
    setup = Setup("MAP www.a.test 198.19.0.4, MAP * ~NOTFOUND", "SPKI=", force_quic_on="www.a.test:443,img.a.test:443")
    args = setup.args()
    assert "--enable-quic" in args and "--disable-quic" not in args
    assert "--origin-to-force-quic-on=www.a.test:443,img.a.test:443" in args
    assert "--ignore-certificate-errors-spki-list=SPKI=" in args and "--ignore-certificate-errors" not in args
    assert "--disable-quic" in Setup("MAP * ~NOTFOUND", "SPKI=").args()
    assert len({setup, Setup("MAP www.a.test 198.19.0.4, MAP * ~NOTFOUND", "SPKI=",
                             force_quic_on="www.a.test:443,img.a.test:443")}) == 1  # hashable: one browser per Setup
