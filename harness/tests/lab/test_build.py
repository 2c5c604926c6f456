"""Which lab a run gets: an app site is refused by a split lab (the compose lab) before
any role is asked, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.modes import H2
from pagebench.core.servers.plan import plan
from pagebench.core.sites.app import App
from pagebench.core.sites.model import Site, SiteManifest
from pagebench.lab import build
from pagebench.system.commands import LabError


def test_a_split_lab_refuses_an_app_site_before_calling_its_roles():
    manifest = SiteManifest(name="shop", entry="https://shop.test/", origins=("shop.test",))
    shop = Site(manifest, Path("/srv/shop"), app=App(command="serve {port}"))
    roles = build.Roles("http://192.0.2.1:1/", "http://192.0.2.1:2/")  # never reached
    with pytest.raises(LabError, match=r"^site shop is an app: app sites run in the native lab only"):
        with build.split(roles, [], plan([shop], [H2], ["1.3"]), None, 1):
            pass
