"""nginx without nginx running: what it is refused before it starts. It serves every
mode and TLS version in `test_nginx_e2e.py` (the access-log parser is
`tests/core/servers/test_accesslog.py`'s)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pagebench.core.modes import H2
from pagebench.core.sites import generate as sitegen
from pagebench.core.certs import Leaf
from pagebench.core.servers.plan import plan
from pagebench.lab.servers import nginx
from pagebench.lab import sites as sitefiles
from pagebench.lab.servers.nginx import ServerError


def test_unreadable_site_directories_are_named(tmp_path: Path):
    generated = sitegen.generate(sitegen.GenParams(images=1))
    site = sitefiles.write_site(generated, tmp_path / "data")
    leaf = Leaf(tmp_path / "c.pem", tmp_path / "k.pem", tmp_path / "ch.pem", "x")
    server_plan = plan([site], [H2], ["1.3"], leaf)
    os.chmod(tmp_path / "data" / "sites", 0o700)
    with pytest.raises(ServerError, match=r"sites is not searchable by nginx's workers .*chmod o\+x"):
        nginx.check_readable(server_plan)


RLIMIT_SCRIPT = """
import resource, sys
from pagebench.lab.servers.nginx import ServerError, ensure_open_files
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 4000))  # a low soft limit, a hard one above it
ensure_open_files(3000, 1500)
print(resource.getrlimit(resource.RLIMIT_NOFILE))
ensure_open_files(1000, 500)  # already enough: unchanged
print(resource.getrlimit(resource.RLIMIT_NOFILE))
ensure_open_files(9000, 3500)  # as many as the hard limit allows
print(resource.getrlimit(resource.RLIMIT_NOFILE))
try:
    ensure_open_files(9000, 5000)
except ServerError as error:
    print(error)
"""


def test_the_soft_open_files_limit_is_raised_for_nginxs_listening_sockets():
    """nginx's processes open every listening socket under the limit they inherit: a soft
    limit below the plan's want is raised within the hard one; a hard one below what the
    sockets need is one line."""
    result = subprocess.run([sys.executable, "-c", RLIMIT_SCRIPT], capture_output=True, text=True,
                            cwd=Path(__file__).parents[3])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "(3000, 4000)", "(3000, 4000)", "(4000, 4000)",
        "nginx needs at least 5000 open files for this plan's listening sockets, and the hard limit is 4000: "
        "raise it (ulimit -Hn 9000, or LimitNOFILE= of the service)"]
