"""An interleaved baseline's twins (pure): the baseline spec's folder and app sites paired
with the spec's by name, renamed `<name>.baseline`, keeping their own hosts and directories
(anchored at the baseline spec's directory); other sites not paired, said; one-line
errors for what cannot be compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.spec.baseline import twinned
from pagebench.core.spec.model import SpecError

APP = {"name": "shop", "app": {"command": "gunicorn app:app -b 127.0.0.1:{port}", "ready": "/health"}}
FOLDER = {"name": "docs", "path": "/change/site", "origins": {"cdn.example.com": "/change/cdn"}}
BASE = Path("/main/examples/shop")


def test_each_own_site_gets_the_baselines_twin_after_the_specs_sites():
    base_app = {**APP, "app": {**APP["app"], "command": "gunicorn old:app -b 127.0.0.1:{port}"}}
    twins = twinned([APP, "modern", FOLDER], [{"name": "docs", "path": "./site",
                                                 "origins": {"cdn.example.com": "./cdn"}}, base_app],
                    BASE, "main.yaml")
    assert twins.sites[:3] == [APP, "modern", FOLDER]
    assert twins.sites[3:] == [
        {**base_app, "name": "shop.baseline", "origins": ["shop.test"], "dir": str(BASE)},
        {"name": "docs.baseline", "path": f"{BASE}/site", "origins": {"cdn.example.com": f"{BASE}/cdn"},
         "host": "docs.test"}]
    assert twins.pairs == {"shop.baseline": "shop", "docs.baseline": "docs"}
    assert twins.notes == ["baseline: sites[1] (modern) is not a folder or an app: the same on both sides, "
                           "measured once and not compared"]


def test_a_twin_keeps_the_hosts_and_directory_its_entry_names():
    entry = {**APP, "origins": ["www.shop.test"], "dir": "server"}
    twin = twinned([APP], [entry], BASE, "main.yaml").sites[1]
    assert (twin["origins"], twin["dir"]) == (["www.shop.test"], f"{BASE}/server")
    folder = twinned([FOLDER], [{**FOLDER, "host": "www.docs.test"}], BASE, "main.yaml").sites[1]
    assert folder["host"] == "www.docs.test"


def test_a_site_new_in_the_change_or_of_another_kind_is_measured_without_a_baseline():
    twins = twinned([APP, FOLDER], [APP, {"name": "docs", "app": {"command": "x {port}"}}], BASE, "main.yaml")
    assert twins.pairs == {"shop.baseline": "shop"}
    assert twins.notes == ["baseline: site docs: site docs is an app site there in main.yaml: measured without a "
                           "baseline (not compared)"]
    assert twinned([APP, FOLDER], [APP], BASE, "main.yaml").notes == [
        "baseline: site docs: no site of that name in main.yaml: measured without a baseline (not compared)"]


@pytest.mark.parametrize(("sites", "base", "message"), [
    ([APP], {"x": 1}, "main.yaml: sites: must be a list (the baseline spec's sites, paired by name)"),
    ([APP], [FOLDER], "main.yaml: no site pairs with the spec's (a folder or app site of the same name in both): "
                      "nothing to compare"),
    ([APP, {**FOLDER, "name": "shop.baseline"}], [APP], "main.yaml: site shop: its baseline twin would be named "
                                                        "shop.baseline, which the spec already names: rename that site"),
    ([{"name": "shop", "app": {"url": "http://shop:8000"}}], [{"name": "shop", "app": {"url": "http://shop:8000"}}],
     "main.yaml: site shop: app.url http://shop:8000 is the spec's own: both sides would load one service (run the "
     "baseline's app as a service of its own and name it there)"),
])
def test_what_cannot_be_compared_is_one_line(sites, base, message):
    with pytest.raises(SpecError) as raised:
        twinned(sites, base, BASE, "main.yaml")
    assert str(raised.value) == message
