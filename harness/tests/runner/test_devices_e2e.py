"""Integration, through the CLI in real namespaces: a run of `devices: [desktop,
moto-g-power]` calibrates the phone's CPU first (the factor achieved printed and kept in
the run's meta), loads every condition as both devices, stores both, and its reports show
each. The page (a folder site) reports what it saw in the URL of an image it asks for:
its viewport, touch points, user agent and how long a fixed loop of its script took.

Timing only in the direction physics allows, with room for a vCPU that stalls: a 4x
slowdown achieves at least 2x against the reference, and slows the page's own script at
least 2x against desktop's."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from pagebench.results.store import Store
from pagebench.yamlfiles import builtin_devices
from tests.helpers import good_loads, needs_root, nothing_left, pagebench, run_id_of, write_spec
from tests.lab.test_emulation_e2e import GIF, PROBE

pytestmark = needs_root

PHONE = builtin_devices().devices["moto-g-power"]


@pytest.fixture(scope="module")
def devices_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("devices")
    (tmp / "probe").mkdir()
    (tmp / "probe" / "index.html").write_bytes(PROBE)
    (tmp / "probe" / "seen.gif").write_bytes(GIF)
    spec = write_spec(tmp, name="devices", sites=[{"name": "probe", "path": "probe"}], modes=["h2"],
                      profiles=[{"name": "t10", "rtt_ms": 10}], devices=["desktop", "moto-g-power"],
                      repetitions=3, warmup=0, timeouts={"link_check": False})
    db = f"sqlite:///{tmp}/runs.sqlite"
    result = pagebench("run", str(spec), "--db", db)
    run = run_id_of(result)
    return {"store": Store(db), "run": run, "db": db, "stderr": result.stderr, "tmp": tmp}


def _seen(store: Store, run: str, device: str) -> list[dict[str, str]]:
    """What the page reported in each of a device's loads (all of them usable)."""
    reports = []
    for load in good_loads(store, run, device=device):
        [url] = [r.resource.url for r in store.resources(load.id) if urlsplit(r.resource.url).path == "/seen.gif"]
        reports.append({key: values[0] for key, values in parse_qs(urlsplit(url).query).items()})
    return reports


def test_both_devices_conditions_are_stored_and_each_load_is_its_device(devices_run):
    store, run = devices_run["store"], devices_run["run"]
    assert sorted(c.condition.key for c in store.conditions(run)) == [
        "probe|h2|direct|t10|cold|tls1.3", "probe|h2|direct|t10|cold|tls1.3|moto-g-power"]
    phone, desktop = _seen(store, run, "moto-g-power"), _seen(store, run, "desktop")
    assert len(phone) == len(desktop) == 3
    assert {(p["w"], p["dpr"], p["touch"], p["ua"]) for p in phone} == {("412", "1.75", "1", PHONE.user_agent)}
    assert {(p["w"], p["dpr"], p["touch"]) for p in desktop} == {("1280", "1", "0")}
    assert all("HeadlessChrome/" in p["ua"] and "Mobile" not in p["ua"] for p in desktop)
    # the phone's loads ran throttled: the page's own script at least twice as slow
    slowed, unslowed = (statistics.median(float(p["cpu"]) for p in side) for side in (phone, desktop))
    assert slowed >= 2 * unslowed, (slowed, unslowed)
    assert nothing_left()


def test_the_calibration_is_printed_and_kept_and_achieves_the_slowdown_s_direction(devices_run):
    store, run = devices_run["store"], devices_run["run"]
    devices = store.experiment(run).meta["devices"]
    assert set(devices) == {"desktop", "moto-g-power"} and "calibration" not in devices["desktop"]
    calibration = devices["moto-g-power"]["calibration"]
    assert calibration["slowdown"] == 4 and calibration["rate"] >= 1
    assert len(calibration["host_ms"]) == 5 and len(calibration["throttled_ms"]) == 3
    assert calibration["achieved"] >= 2, calibration  # 4x asked: never faster than half of it
    line = next(line for line in devices_run["stderr"].splitlines() if line.startswith("moto-g-power: CPU "))
    assert f"CPU {calibration['achieved']:.1f}x slower than the reference (DevTools rate {calibration['rate']:.1f}" \
        in line


def test_the_reports_show_each_device_and_what_it_achieved(devices_run):
    db, run, tmp = devices_run["db"], devices_run["run"], devices_run["tmp"]
    achieved = devices_run["store"].experiment(run).meta["devices"]["moto-g-power"]["calibration"]["achieved"]
    text = pagebench("report", run, "--db", db)
    assert text.returncode == 0, text.stderr
    assert "┃ device " in text.stdout and "│ moto-g-power │" in text.stdout and "│ desktop " in text.stdout
    assert f"CPU {achieved:.1f}x slower than the reference" in text.stdout
    as_json = pagebench("report", run, "--db", db, "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert sorted(c["device"] for c in report["conditions"]) == ["desktop", "moto-g-power"]
    assert report["devices"]["moto-g-power"]["calibration"]["achieved"] == achieved
    html = Path(tmp / "report.html")
    page = pagebench("report", run, "--db", db, "--html", str(html))
    assert page.returncode == 0, page.stderr
    assert "<dt>device</dt><dd>moto-g-power: 412x823" in html.read_text()
