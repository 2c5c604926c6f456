"""Which lab a run gets: an app site given by `command` runs only in the native lab and
one given by `url` only in a split lab (the compose lab), each refused by the other
before anything is built or any role is asked, in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.modes import H2
from pagebench.core.servers.plan import plan
from pagebench.core.sites.app import App
from pagebench.core.sites.model import Site, SiteManifest
from pagebench.lab import build
from pagebench.system.commands import LabError

MANIFEST = SiteManifest(name="shop", entry="https://shop.test/", origins=("shop.test",))


def test_a_split_lab_refuses_an_app_it_would_have_to_start_before_calling_its_roles():
    shop = Site(MANIFEST, Path("/srv/shop"), app=App(command="serve {port}"))
    roles = build.Roles("http://192.0.2.1:1/", "http://192.0.2.1:2/")  # never reached
    with pytest.raises(LabError, match=r"^site shop: app command: the compose lab does not start programs in "
                                       r"its sites container: run the app as a compose service and give app: "
                                       r"url: http://SERVICE:PORT \(docs/apps.md\)$"):
        with build.split(roles, [], plan([shop], [H2], ["1.3"]), None, 1, Path("/srv/shop")):
            pass


def test_the_native_lab_refuses_an_app_given_by_url_before_building_anything():
    shop = Site(MANIFEST, Path("/srv/shop"), app=App(url="http://shop:8000"))
    with pytest.raises(LabError, match=r"^site shop: app url: the native lab starts the app itself and reaches "
                                       r"no other host: give app: command: "):
        with build.native(plan([shop], [H2], ["1.3"]), None, 1):
            pass
