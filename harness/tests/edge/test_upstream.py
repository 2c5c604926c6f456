"""The edge proxy's origin pools (`Upstream`): which origins and ports a load's pools
reach, and, against real nginx, that encoded bodies and the headers of revalidation and
of dictionaries cross every strategy untouched. The strategies' own behaviour is
`test_http1`'s and `test_strategy`'s."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.core.encodings import DCZ
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, PIPELINING
from pagebench.edge.messages import Request, UpstreamError
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.nginx import NginxServer, prepare
from pagebench.lab.tls import Authority
from tests.edge.loopback import HOST
from tests.lab.servers.versioned import V1, V2, write_versioned_site


def test_a_cleartext_strategy_s_pools_go_to_port_80_unless_told():
    assert Upstream(Strategy(KEEPALIVE, cleartext=True), {HOST: "127.0.0.1"}).pool(HOST).port == 80
    assert Upstream(Strategy(KEEPALIVE), {HOST: "127.0.0.1"}).pool(HOST).port == 443
    assert Upstream(Strategy(H2, cleartext=True), {HOST: "127.0.0.1"}, port=8080).pool(HOST).port == 8080


def test_unknown_origin_is_refused():
    upstream = Upstream(Strategy(H2), {HOST: "127.0.0.1"})
    with pytest.raises(UpstreamError, match="not an origin of this load"):
        asyncio.run(upstream.fetch("other.test", Request("GET", "/", ())))
    assert upstream.pools == {}


# Through the proxy's strategies to real nginx: encodings and revalidation untouched ------------

#: Run in the client namespace (where the proxy runs): every request through one strategy.
FETCH_SCRIPT = """
import asyncio, base64, json, sys
from pagebench.edge.messages import Request
from pagebench.core import modes
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream
args = json.loads(sys.argv[1])
async def main():
    upstream = Upstream(Strategy(modes.parse(args["mode"])), args["addresses"], args["ca"])
    try:
        answers = await asyncio.gather(*(upstream.fetch(r["host"], Request("GET", r["path"], tuple(map(tuple,
            r["headers"])))) for r in args["requests"]))
    finally:
        await upstream.close()
    return [{"status": a.status, "headers": [[k.lower(), v] for k, v in a.headers],
             "body": base64.b64encode(a.body).decode()} for a, _ in answers]
print(json.dumps(asyncio.run(main())))
"""


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="builds network namespaces: run as root")
@pytest.mark.parametrize("mode", [HTTP10, KEEPALIVE, PIPELINING, H2], ids=str)
def test_encoded_responses_and_dictionary_headers_cross_untouched(mode, request):
    data = Path(tempfile.mkdtemp(prefix="pagebench-test-"))  # not pytest's 0700 tmp: nginx's workers read it
    os.chmod(data, 0o755)
    request.addfinalizer(lambda: shutil.rmtree(data, ignore_errors=True))
    site = write_versioned_site(data / "site")
    authority = Authority(data / "tls")
    origin = mode.origin
    server_plan = prepare([site], [origin], ["1.3"], authority, encodings=[DCZ])
    v1, v2 = (server_plan.address(origin, "1.3", "www.enc.test", encoding=DCZ, version=k) for k in (1, 2))
    dictionary = encodings.available_dictionary(V1["www.enc.test/css/a.css"])
    with NamespaceBed(Layout(new_prefix(), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx"):
            def through(binding, requests):
                args = {"mode": mode.name, "addresses": {"www.enc.test": binding.ip}, "ca": str(authority.ca_path),
                        "requests": [{"host": "www.enc.test", "path": p, "headers": h} for p, h in requests]}
                result = subprocess.run(bed.exec_argv(bed.layout.client, [sys.executable, "-c", FETCH_SCRIPT,
                                                                          json.dumps(args)]),
                                        capture_output=True, text=True, timeout=60)
                assert result.returncode == 0, result.stderr
                return [(a["status"], {k: v for k, v in a["headers"]}, base64.b64decode(a["body"]))
                        for a in json.loads(result.stdout)]

            ae = [["Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz"]]
            (_, first, _), (_, page, _) = through(v1, [("/js/b.js", ae), ("/", ae)])
            assert "rel=compression-dictionary" in page["link"]
            (s1, delta, body), (s2, _, unchanged) = through(v2, [
                ("/css/a.css", ae + [["Available-Dictionary", dictionary]]),
                ("/js/b.js", ae + [["If-None-Match", first["etag"]]])])
            assert (s1, delta["content-encoding"]) == (200, "dcz")
            assert delta["vary"] == "Accept-Encoding, Available-Dictionary"
            assert int(delta["content-length"]) == len(body)
            assert encodings.decode("dcz", body, V1["www.enc.test/css/a.css"]) == V2["www.enc.test/css/a.css"]
            assert (s2, unchanged) == (304, b"")
