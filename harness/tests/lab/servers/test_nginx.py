"""nginx without nginx running: what it is refused before it starts. It serves every
mode and TLS version in `test_nginx_e2e.py` (the access-log parser is
`tests/core/servers/test_accesslog.py`'s)."""

from __future__ import annotations

import os
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
