"""Devices: the built-in table, its validation, a condition's device in its key, and the
arithmetic of the CPU calibration."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pagebench.core.devices import (DEFAULT_DEVICE, DESKTOP, Calibration, Device, DeviceError, Reference,
                                    calibration, cpu_rate, device_lines, parse_devices)
from pagebench.core.modes import H2
from pagebench.core.records import CONDITION_FIELDS, Condition
from pagebench.yamlfiles import builtin_devices

LIGHTHOUSE_UA = ("Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) "
                 "Chrome/119.0.0.0 Mobile Safari/537.36")
REFERENCE = {"script_ms": 150, "machine": "the reference desktop"}


def table(*devices: dict, reference: dict = REFERENCE) -> dict:
    return {"reference": reference, "devices": [{"name": "desktop"}, *devices]}


def test_the_builtin_table_has_desktop_as_ever_and_lighthouse_s_phone():
    found = builtin_devices()
    assert list(found.devices)[:2] == ["desktop", "moto-g-power"]
    desktop = found.devices["desktop"]
    assert (desktop.width, desktop.height, desktop.device_scale_factor, desktop.mobile, desktop.touch,
            desktop.user_agent, desktop.cpu_slowdown) == (1280, 720, 1.0, False, False, None, 1.0)
    assert not desktop.emulates and not desktop.throttled
    phone = found.devices["moto-g-power"]
    assert (phone.width, phone.height, phone.device_scale_factor, phone.mobile, phone.touch, phone.user_agent,
            phone.cpu_slowdown) == (412, 823, 1.75, True, True, LIGHTHOUSE_UA, 4.0)
    assert phone.emulates and phone.throttled
    assert all(device.source for device in found.devices.values()), "every device states its source"
    assert 50 <= found.reference.script_ms <= 500 and "2-core Debian 12" in found.reference.machine


def test_describe_says_what_the_browser_is():
    devices = builtin_devices().devices
    assert devices["desktop"].describe() == "1280x720, no CPU throttling"
    assert devices["moto-g-power"].describe() == "412x823 @1.75x, mobile, touch, own user agent, CPU 4x"


@pytest.mark.parametrize(("document", "message"), [
    (table({"name": "phone", "widht": 400}),
     "devices.yaml: devices[1].widht: unknown field; allowed: name, source, width, height, device_scale_factor, "),
    (table({"name": "phone", "width": 10}), "devices.yaml: devices[1].width: Input should be greater than or equal "
                                            "to 100 (got 10)"),
    (table({"name": "Phone"}), "devices.yaml: devices[1].name: must be lowercase letters, digits and '-'"),
    (table({"name": "v2"}), "it reads as a site version in condition keys"),
    (table({"name": "slow", "cpu_slowdown": 0.5}), "devices.yaml: devices[1].cpu_slowdown: Input should be greater "
                                                   "than or equal to 1"),
    (table({"name": "desktop"}), "devices.yaml: devices[1].name: duplicate device name 'desktop'"),
    ({"reference": REFERENCE, "devices": [{"name": "phone"}]}, "devices.yaml: devices: needs 'desktop' with the "
                                                               "defaults"),
    ({"reference": REFERENCE, "devices": [{"name": "desktop", "cpu_slowdown": 2}]}, "needs 'desktop' with the"),
    ({"reference": REFERENCE, "devices": [{"name": "desktop", "touch": True}]}, "needs 'desktop' with the"),
    (table(reference={"script_ms": 0, "machine": "m"}), "devices.yaml: reference.script_ms: Input should be greater "
                                                        "than 0"),
    ({"devices": []}, "devices.yaml: expected a mapping with `reference:` and `devices: [...]`"),
    (table("phone"), "devices.yaml: devices[1]: must be a mapping of field: value"),
])
def test_a_bad_table_is_one_line_naming_the_file_and_field(document, message):
    with pytest.raises(DeviceError) as caught:
        parse_devices(document, "devices.yaml")
    assert "\n" not in str(caught.value) and message in str(caught.value), caught.value


def test_an_unknown_name_names_the_field_and_the_names_allowed():
    with pytest.raises(DeviceError, match=r"^devices\[1\]: unknown device 'moto-g'; allowed: desktop, moto-g-power$"):
        builtin_devices().resolve(["desktop", "moto-g"], "devices")


def test_a_condition_names_its_device_in_its_key_only_when_not_desktop():
    """Keys of runs stored before devices stay what they were: desktop is left out."""
    before = Condition("demo", H2, "direct", "3g", "cold")
    assert before.device == DEFAULT_DEVICE == "desktop"
    assert before.key == "demo|h2|direct|3g|cold|tls1.3"
    assert before.label == "demo h2 3g cold"
    phone = replace(before, device="moto-g-power")
    assert phone.key == "demo|h2|direct|3g|cold|tls1.3|moto-g-power" != before.key
    assert replace(phone, version=2).key == "demo|h2|direct|3g|cold|tls1.3|v2|moto-g-power"
    assert phone.label == "demo h2 3g cold moto-g-power"
    assert phone.as_names()["device"] == "moto-g-power" and before.as_names()["device"] == "desktop"
    assert CONDITION_FIELDS[-1] == "device" and set(phone.as_names()) == set(CONDITION_FIELDS)


def test_the_rate_makes_the_reference_slowdown_on_any_host():
    assert cpu_rate(4, 150, 150) == 4.0  # the reference desktop itself
    assert cpu_rate(4, 150, 75) == 8.0  # twice as fast a host: twice the rate
    assert cpu_rate(4, 150, 300) == 2.0  # half as fast: half
    assert cpu_rate(4, 150, 900) == 1.0  # slower than the device itself: no throttling (never below 1)
    with pytest.raises(ValueError):
        cpu_rate(4, 150, 0)


def test_a_calibration_states_the_factor_achieved_against_the_reference():
    phone = builtin_devices().devices["moto-g-power"]
    reference = Reference(script_ms=150, machine="m")
    made = calibration(phone, reference, [120.0, 100.0, 110.0], cpu_rate(4, 150, 110.0), [620.0, 615.0, 700.0])
    assert made.host_median == 110.0 and made.rate == pytest.approx(600 / 110)
    assert made.achieved == pytest.approx(620 / 150)
    assert made.line() == "moto-g-power: CPU 4.1x slower than the reference (DevTools rate 5.5; asked 4x)"
    assert Calibration.from_meta("moto-g-power", made.as_meta()).line() == made.line()
    slow_host = calibration(phone, reference, [900.0], 1.0, [910.0])
    assert slow_host.line() == ("moto-g-power: CPU 6.1x slower than the reference (DevTools rate 1.0; asked 4x): "
                                "this host is slower than the device itself, unthrottled (no rate can speed it up)")
    busy = calibration(phone, reference, [150.0], 4.0, [1200.0])
    assert "far from what was asked" in busy.line()
    with pytest.raises(ValueError):
        calibration(phone, reference, [], 4.0, [600.0])


def test_reports_state_devices_only_when_a_run_has_more_than_desktop():
    desktop = DESKTOP.fields()
    assert device_lines({}) == [] and device_lines({"desktop": desktop}) == []
    phone = builtin_devices().devices["moto-g-power"]
    made = calibration(phone, Reference(script_ms=150, machine="m"), [150.0], 4.0, [615.0])
    lines = device_lines({"desktop": desktop, "moto-g-power": {**phone.fields(), "calibration": made.as_meta()}})
    assert lines == ["device desktop: 1280x720, no CPU throttling",
                     "device moto-g-power: 412x823 @1.75x, mobile, touch, own user agent, CPU 4x; CPU 4.1x slower "
                     "than the reference (DevTools rate 4.0; asked 4x)"]
    assert device_lines({"moto-g-power": phone.fields()}) == [
        "device moto-g-power: 412x823 @1.75x, mobile, touch, own user agent, CPU 4x; not calibrated (the run "
        "loaded none of its pages)"]


def test_the_default_device_is_the_defaults():
    assert DESKTOP == Device(name="desktop") and not DESKTOP.emulates and not DESKTOP.throttled
