"""Experiment specs: validation with one-line errors, profile resolution (the matrix and
its seeded order are test_plan's)."""

import pytest

from pagebench.core.spec.model import SpecError, parse, parse_text, resolve_devices, resolve_profiles
from pagebench.yamlfiles import builtin_devices, builtin_profiles

BASE = {"sites": ["seed000-small-n2"], "modes": ["h2"]}


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"modes": ["quic"]},
         "spec.yaml: modes: unknown mode 'quic'; allowed: http1.0, keepalive, pipelining, h2, h3, spdy"),
        ({"modes": ["pipelining"]}, "pipelining needs the edge-proxy topology"),
        ({"repetitions": 0}, "spec.yaml: repetitions: 0: loads per condition run from 1 to 100000"),
        ({"cache": ["hot"]}, "spec.yaml: cache.0: Input should be 'cold' or 'warm'"),
        ({"colour": "red"}, "spec.yaml: colour: unknown field; allowed: name, sites, modes"),
        ({"timeouts": {"load": 3}}, "spec.yaml: timeouts.load: unknown field; allowed: load_s, link_check"),
        ({"topology": "hub"}, "spec.yaml: topology: Input should be 'direct' or 'proxy'"),
        ({"topology": ["direct", "direct"]}, "topology: list direct and/or proxy, each once"),
        ({"topology": "proxy", "proxy": {"depth": 0}}, "spec.yaml: proxy.depth: Input should be greater than or equal to 1"),
        ({"topology": "proxy", "proxy": {"deep": 2}}, "spec.yaml: proxy.deep: unknown field; allowed: connections, depth"),
        ({"proxy": {"connections": 2}}, "proxy: settings for the edge proxy, but topology is direct"),
        ({"topology": "proxy", "modes": ["h3"]}, "h3 through the proxy"),
        ({"modes": ["h3"], "tls": ["1.2"]}, 'h3: QUIC always uses TLS 1.3; add "1.3" to tls'),
        ({"clients": 2, "cache": ["cold", "warm"]}, "clients: several clients load cold only"),
        ({"clients": 0}, "spec.yaml: clients: Input should be greater than or equal to 1"),
        ({"tls": ["1.1"]}, "spec.yaml: tls.0: Input should be 'none', '1.2' or '1.3'"),
        ({"modes": ["h2"], "tls": ["none"]},
         "h2 with tls none in topology direct: Chromium speaks HTTP/2 only over TLS (no h2c)"),
        ({"modes": ["h3"], "tls": ["none"]}, 'h3: QUIC always uses TLS 1.3; add "1.3" to tls'),
        ({"modes": ["h2", "h2"]}, "modes lists a value twice"),
        ({"sites": []}, "spec.yaml: sites: List should have at least 1 item"),
        ({"devices": []}, "spec.yaml: devices: List should have at least 1 item"),
        ({"devices": ["desktop", "desktop"]}, "devices lists a value twice"),
        ({"devices": "desktop"}, "spec.yaml: devices: Input should be a valid list"),
        ({"devices": [""]}, "spec.yaml: devices.0: String should have at least 1 character"),
        ({"interaction": {"click": ""}}, "spec.yaml: interaction.click: String should have at least 1 character"),
        ({"interaction": {"click": "#buy", "tap": "#buy"}}, "spec.yaml: interaction.tap: unknown field; allowed: click"),
    ],
)
def test_bad_specs_give_one_line_errors(change, needle):
    with pytest.raises(SpecError) as caught:
        parse({**BASE, **change}, "spec.yaml")
    assert "\n" not in str(caught.value)
    assert needle in str(caught.value)


def test_missing_required_field_and_bad_yaml():
    with pytest.raises(SpecError, match="spec.yaml: modes: required"):
        parse({"sites": ["x"]}, "spec.yaml")
    with pytest.raises(SpecError, match=r"spec.yaml: line \d+: not valid YAML"):
        parse_text("sites: [", "spec.yaml")
    with pytest.raises(SpecError, match="expected a mapping"):
        parse_text("- a\n- b\n", "spec.yaml")


def test_profiles_by_name_inline_and_sweep():
    spec = parse({**BASE, "profiles": ["cable", {"name": "s", "rtt_ms": [20, 40]}]}, "s")
    names = [p.name for p in resolve_profiles(spec, builtin_profiles(), "s")]
    assert names == ["cable", "s[rtt_ms=20]", "s[rtt_ms=40]"]
    with pytest.raises(SpecError, match=r"s: profiles\[0\]: unknown profile 'cabel'"):
        resolve_profiles(parse({**BASE, "profiles": ["cabel"]}, "s"), builtin_profiles(), "s")
    with pytest.raises(SpecError, match=r"profiles\[0\].rtt_ms"):
        resolve_profiles(parse({**BASE, "profiles": [{"name": "x", "rtt_ms": -1}]}, "s"), builtin_profiles(), "s")


def test_devices_by_name_desktop_unless_named():
    assert parse(BASE, "s").devices == ["desktop"]
    spec = parse({**BASE, "devices": ["moto-g-power", "desktop"]}, "s")
    assert [d.name for d in resolve_devices(spec, builtin_devices(), "s")] == ["moto-g-power", "desktop"]
    with pytest.raises(SpecError) as caught:
        resolve_devices(parse({**BASE, "devices": ["desktop", "iphone"]}, "spec.yaml"), builtin_devices(), "spec.yaml")
    assert str(caught.value) == "spec.yaml: devices[1]: unknown device 'iphone'; allowed: desktop, moto-g-power"


def test_an_interaction_is_a_selector_to_click_after_each_load():
    assert parse(BASE, "spec.yaml").interaction is None
    assert parse(BASE | {"interaction": {"click": "#buy"}}, "spec.yaml").interaction.click == "#buy"
