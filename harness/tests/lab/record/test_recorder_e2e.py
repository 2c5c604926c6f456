"""`pagebench site record` against a stand-in internet (`standin.py`): the page written
as a site, a URL that does not answer, a certificate that is not trusted, and Ctrl-C
while the page hangs; nothing of the recorder (mitmdump, Chromium, its directory) left."""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.lab.netns import namespace_pids
from tests.helpers import HARNESS, needs_root, sigint_default, tagged
from tests.lab.record.standin import DOMAIN, URL, StandIn, record_argv, record_stand_in, stand_in_internet

pytestmark = needs_root


@pytest.fixture(scope="module")
def stand_in(session_tag: str) -> Iterator[StandIn]:
    with stand_in_internet(session_tag) as running:
        yield running


def _running_in_client(stand_in: StandIn) -> list[str]:
    """The command lines of the processes in the client namespace (mitmdump, Chromium,
    Playwright's driver while a recording runs; none after)."""
    found = []
    for pid in namespace_pids(stand_in.client):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:160])
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended between the listing and the read: not running, as wanted
    return found


def test_record_writes_the_page_as_a_site(stand_in: StandIn, tmp_path: Path) -> None:
    from pagebench.lab.sites import load_site

    into = tmp_path / "modern-shop"
    result = record_stand_in(stand_in, into)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not _running_in_client(stand_in)
    site = load_site(into)
    recording = site.recording
    assert recording is not None
    hosts = sorted({host_path.split("/", 1)[0] for host_path in stand_in.files})
    assert recording.hosts == {host: f"{host}.test" for host in hosts}
    assert site.origins[0] == f"www.{DOMAIN}.test" and sorted(site.origins) == sorted(f"{h}.test" for h in hosts)
    assert site.manifest.entry == f"https://www.{DOMAIN}.test/"
    assert len(recording.exchanges) == len(stand_in.files) == 69, recording.missing
    assert not recording.missing
    assert all(e.status == 200 for e in recording.exchanges)
    entry = recording.exchanges[0]
    assert (entry.host, entry.target, entry.level) == (f"www.{DOMAIN}.test", "/", 0)
    for exchange in recording.exchanges:
        host = exchange.host.removesuffix(".test")
        original = stand_in.files[f"{host}{exchange.path if exchange.path != '/' else '/index.html'}"]
        body = (into / exchange.host / exchange.file).read_bytes()
        if encodings.is_text(exchange.path) or exchange.path == "/":
            assert body == original.replace(f".{DOMAIN}".encode(), f".{DOMAIN}.test".encode()), exchange.url
        else:
            assert body == original, exchange.url  # images and fonts: byte for byte


def test_a_url_that_does_not_answer_is_one_line_and_leaves_nothing(stand_in: StandIn) -> None:
    """Run as nobody: recording needs no root (Chromium is then started as it is)."""
    home = Path(tempfile.mkdtemp(prefix="pagebench-record-test-"))
    home.chmod(0o777)
    try:
        into = home / "silent"
        result = record_stand_in(stand_in, into, "silent", resolve={f"www.{DOMAIN}": stand_in.silent}, home=home,
                                 timeout=120)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {URL} did not answer: connection refused ("), lines
        assert f"{stand_in.silent}', 443" in lines[0], lines  # mitmproxy's own words, with the address it tried
        assert not list(home.iterdir())  # no site, and the recording's directory is gone
        assert not _running_in_client(stand_in)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_the_sites_certificate_is_checked(stand_in: StandIn, tmp_path: Path) -> None:
    """Without --upstream-ca the stand-in's CA is not trusted (the system's CAs only): no page."""
    into = tmp_path / "untrusted"
    result = record_stand_in(stand_in, into, "untrusted", trust=False, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {URL} did not answer: Certificate verify failed"), lines
    assert not into.exists()
    assert not _running_in_client(stand_in)


def test_ctrl_c_stops_mitmdump_and_chromium_and_writes_nothing(stand_in: StandIn, tmp_path: Path) -> None:
    """Interrupted while the page hangs (a server that accepts and never answers)."""
    into = tmp_path / "hung"
    scratch = Path(tempfile.mkdtemp(prefix="pagebench-record-test-"))
    scratch.chmod(0o755)  # TMPDIR of the command: Chromium (as nobody) reaches its profile below it
    url = f"https://www.{DOMAIN}:{stand_in.tarpit}/"
    try:
        proc = subprocess.Popen(record_argv(stand_in, into, "hung", "--timeout", "60", url=url,
                                            resolve={f"www.{DOMAIN}": stand_in.silent}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HARNESS,
                                env=tagged({"TMPDIR": str(scratch), "COLUMNS": "200"}),
                                preexec_fn=sigint_default)  # Ctrl-C reaches it however the suite was started
        try:
            deadline = time.monotonic() + 60
            while not any("chromium" in line for line in _running_in_client(stand_in)):
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.1)
            time.sleep(1.0)  # the navigation is under way, hanging
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, stderr
        assert stderr.strip().splitlines() == [
            "error: interrupted; nothing was written, mitmproxy and Chromium are stopped"], stderr
        assert not into.exists()
        assert not _running_in_client(stand_in)
        assert not list(scratch.iterdir())  # the recording's directory (the CA's key in it) is gone
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
