"""Integration: a V.42bis modem's line (`modem_compression`) in real namespaces. The bytes
arrive intact; a compressible body crosses in clearly less than its serialization time
at the line rate, an incompressible one (random, or the same text as TLS would make it)
in no less."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pagebench.core.layout import Layout, new_prefix
from pagebench.core.profiles import FRAME_BYTES, make_profile
from pagebench.core.sites.seeds import seed001
from pagebench.lab.netns import NamespaceBed
from pagebench.link.emulator import Link
from tests.helpers import needs_root

pytestmark = needs_root
PORT = 7101
BODY = 65536
MBIT = 1.0
#: The line time of BODY bytes uncompressed: full frames at the rate.
SERIALIZED_S = BODY / 1448 * FRAME_BYTES * 8 / (MBIT * 1e6)

SERVE = """
import socket, sys
body = open(sys.argv[1], "rb").read()
with socket.create_server(("0.0.0.0", int(sys.argv[2]))) as server:
    print("ready", flush=True)
    while True:
        conn, _ = server.accept()
        conn.sendall(body)
        conn.close()
"""
FETCH = """
import socket, sys, time
sock = socket.create_connection((sys.argv[1], int(sys.argv[2])))
start, data = time.monotonic(), b""
while chunk := sock.recv(65536):
    data += chunk
sys.stdout.buffer.write(b"%.6f\\n" % (time.monotonic() - start) + data)
"""


@pytest.fixture(scope="module")
def modem(session_tag: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[NamespaceBed, Link]]:
    with NamespaceBed(Layout(new_prefix(session_tag))) as bed:
        link = Link(bed, "userspace")
        link.apply(make_profile({"name": "modem", "rtt_ms": 20, "down_mbit": MBIT, "up_mbit": MBIT,
                                 "modem_compression": "v42bis"}))
        yield bed, link


def fetch(bed: NamespaceBed, body: bytes, path: os.PathLike[str], port: int) -> tuple[float, bytes]:
    """Serve `body` from the server namespace; the client's time from connect to the last byte."""
    with open(path, "wb") as handle:
        handle.write(body)
    server = subprocess.Popen(["ip", "netns", "exec", bed.layout.server, sys.executable, "-c", SERVE, str(path),
                               str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        out = subprocess.run(["ip", "netns", "exec", bed.layout.client, sys.executable, "-c", FETCH,
                              bed.layout.server_addresses[0], str(port)], capture_output=True, check=True,
                             timeout=30).stdout
    finally:
        server.kill()
        server.wait()
    seconds, data = out.split(b"\n", 1)
    return float(seconds), data


def test_compressible_bytes_cross_faster_and_intact_incompressible_do_not(modem, tmp_path):
    bed, link = modem
    text = seed001("c").files["www.seed001.test/index.html"][:BODY]
    noise = os.urandom(BODY)
    before = link.counters()
    text_s, text_back = fetch(bed, text, tmp_path / "text", PORT)
    middle = link.counters()
    noise_s, noise_back = fetch(bed, noise, tmp_path / "noise", PORT + 1)
    after = link.counters()
    assert text_back == text and noise_back == noise  # transparent: the bytes arrive as sent
    assert text_s < 0.5 * SERIALIZED_S, (text_s, SERIALIZED_S)
    assert noise_s >= 0.97 * SERIALIZED_S, (noise_s, SERIALIZED_S)
    sent = middle - before
    assert sent.v42_in_down >= BODY and sent.v42_out_bits_down < sent.v42_in_down * 8 / 2  # over 2x
    random = after - middle
    assert random.v42_out_bits_down >= random.v42_in_down * 8  # noise: no gain (transparent mode)

