"""The edge proxy's origin pools against real nginx in a lab: encoded bodies and the
headers of revalidation and of dictionaries cross every strategy untouched (which
origins and ports the pools reach: `test_upstream.py`)."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.core.encodings import DCZ
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, PIPELINING
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.nginx import NginxServer, prepare
from pagebench.lab.tls import Authority
from tests.helpers import needs_root, readable_dir
from tests.lab.servers.versioned import V1, V2, write_versioned_site

pytestmark = needs_root

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


MODES = (HTTP10, KEEPALIVE, PIPELINING, H2)


@dataclass(frozen=True)
class Served:
    bed: NamespaceBed
    plan: ServerPlan
    ca: Path


@pytest.fixture(scope="module")
def served(session_tag: str) -> Iterator[Served]:
    """One lab for every strategy: nginx serving the versioned site with dcz on the
    bindings of each mode's origin (pipelining is served by keep-alive's)."""
    with readable_dir() as data:  # not pytest's 0700 tmp: nginx's workers read it
        site = write_versioned_site(data / "site")
        authority = Authority(data / "tls")
        origins = list(dict.fromkeys(mode.origin for mode in MODES))
        server_plan = prepare([site], origins, ["1.3"], authority, encodings=[DCZ])
        with NamespaceBed(Layout(new_prefix(session_tag), server_ips=server_plan.ip_count)) as bed:
            with NginxServer(bed, server_plan, bed.state_dir / "nginx"):
                yield Served(bed, server_plan, authority.ca_path)


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_encoded_responses_and_dictionary_headers_cross_untouched(mode, served: Served):
    bed = served.bed
    v1, v2 = (served.plan.address(mode.origin, "1.3", "www.enc.test", encoding=DCZ, version=k) for k in (1, 2))
    dictionary = encodings.available_dictionary(V1["www.enc.test/css/a.css"])

    def through(binding, requests):
        args = {"mode": mode.name, "addresses": {"www.enc.test": binding.ip}, "ca": str(served.ca),
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
