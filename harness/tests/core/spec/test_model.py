"""Experiment specs: validation with one-line errors, profile resolution, the matrix and
its seeded, interleaved order."""

import pytest

from pagebench.core import modes
from pagebench.core.spec.model import SpecError, conditions, parse, parse_text, plan, resolve_profiles
from pagebench.yamlfiles import builtin_profiles

SPDY_NOTE = modes.ALIAS_NOTES["spdy"]

BASE = {"sites": ["seed000-small-n2"], "modes": ["h2"]}


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"modes": ["quic"]},
         "spec.yaml: modes: unknown mode 'quic'; allowed: http1.0, keepalive, pipelining, h2, h3, spdy"),
        ({"modes": ["pipelining"]}, "pipelining needs the edge-proxy topology"),
        ({"repetitions": 0}, "spec.yaml: repetitions: Input should be greater than or equal to 1"),
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


def test_spdy_is_h2_with_a_note():
    spec = parse({**BASE, "modes": ["spdy", "h2", "keepalive"]}, "s")
    assert spec.resolved_modes == ["h2", "keepalive"]
    assert spec.notes == [SPDY_NOTE] and "HTTP/2 is its standardised successor" in SPDY_NOTE


def test_profiles_by_name_inline_and_sweep():
    spec = parse({**BASE, "profiles": ["cable", {"name": "s", "rtt_ms": [20, 40]}]}, "s")
    names = [p.name for p in resolve_profiles(spec, builtin_profiles(), "s")]
    assert names == ["cable", "s[rtt_ms=20]", "s[rtt_ms=40]"]
    with pytest.raises(SpecError, match=r"s: profiles\[0\]: unknown profile 'cabel'"):
        resolve_profiles(parse({**BASE, "profiles": ["cabel"]}, "s"), builtin_profiles(), "s")
    with pytest.raises(SpecError, match=r"profiles\[0\].rtt_ms"):
        resolve_profiles(parse({**BASE, "profiles": [{"name": "x", "rtt_ms": -1}]}, "s"), builtin_profiles(), "s")


def test_matrix_and_seeded_interleaved_plan():
    spec = parse({**BASE, "modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "repetitions": 3,
                  "warmup": 2, "seed": 7}, "s")
    profiles = resolve_profiles(spec, builtin_profiles(), "s")
    matrix = conditions(spec, ["a", "b"], profiles)
    assert len(matrix) == 2 * 2 * 1 * 2
    loads = plan(spec, matrix)
    assert len(loads) == len(matrix) * (3 + 2)
    assert [load.seq for load in loads] == list(range(len(loads)))
    assert plan(spec, matrix) == loads  # same seed, same order
    assert plan(parse({**BASE, "modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "repetitions": 3,
                       "warmup": 2, "seed": 8}, "s"), matrix) != loads
    # interleaved: the first few loads are not all the same condition
    assert len({load.condition for load in loads[:8]}) > 2
    for condition in matrix:
        mine = [load for load in loads if load.condition == condition]
        assert [load.repetition for load in mine] == [-2, -1, 0, 1, 2]  # warm-ups come first
        assert [load.warmup for load in mine] == [True, True, False, False, False]


def test_each_topology_gets_the_modes_it_can_run():
    spec = parse({**BASE, "modes": ["http1.0", "pipelining", "h2", "h3"], "topology": ["direct", "proxy"],
                  "tls": ["1.2", "1.3"]}, "s")
    profile = builtin_profiles()["none"]
    keys = {(c.mode, c.topology, c.tls) for c in conditions(spec, ["x"], [profile])}
    assert keys == {("http1.0", "direct", "1.2"), ("http1.0", "direct", "1.3"), ("http1.0", "proxy", "1.2"),
                    ("http1.0", "proxy", "1.3"), ("pipelining", "proxy", "1.2"), ("pipelining", "proxy", "1.3"),
                    ("h2", "direct", "1.2"), ("h2", "direct", "1.3"), ("h2", "proxy", "1.2"), ("h2", "proxy", "1.3"),
                    ("h3", "direct", "1.3")}


def test_cleartext_runs_where_a_browser_can_and_says_what_it_skipped():
    spec = parse({**BASE, "modes": ["http1.0", "keepalive", "pipelining", "h2", "h3"], "topology": ["direct", "proxy"],
                  "tls": ["none", "1.3"]}, "s")
    profile = builtin_profiles()["none"]
    cleartext = {(c.mode, c.topology) for c in conditions(spec, ["x"], [profile]) if c.tls == "none"}
    assert cleartext == {("http1.0", "direct"), ("keepalive", "direct"), ("http1.0", "proxy"),
                         ("keepalive", "proxy"), ("pipelining", "proxy"), ("h2", "proxy")}
    assert "tls none: skipped for h2 direct (Chromium speaks HTTP/2 only over TLS (no h2c))" in spec.notes
    assert "tls none: skipped for h3 direct (QUIC always uses TLS 1.3)" in spec.notes
    assert parse({**BASE, "modes": ["h2"], "tls": ["1.3"]}, "s").notes == []
    both = parse({**BASE, "modes": ["h2"], "topology": ["direct", "proxy"], "tls": ["none"]}, "s")
    assert {(c.topology, c.tls) for c in conditions(both, ["x"], [profile])} == {("proxy", "none")}


def test_proxy_defaults_and_origin_modes():
    from pagebench.core.spec.model import origin_modes

    spec = parse({**BASE, "modes": ["pipelining", "keepalive", "h2"], "topology": "proxy"}, "s")
    assert (spec.proxy_settings.connections, spec.proxy_settings.depth, spec.clients) == (6, 4, 1)
    assert origin_modes(spec) == ["keepalive", "h2"]  # nginx answers pipelined requests on keep-alive


def test_the_proxy_pool_is_cold_unless_asked_warm_and_says_what_warm_cannot_keep():
    proxied = {**BASE, "modes": ["http1.0", "keepalive", "h2"], "topology": ["direct", "proxy"]}
    assert parse(proxied, "s").proxy_settings.pool == "cold" and parse(proxied, "s").notes == []
    warm = parse({**proxied, "proxy": {"pool": "warm"}}, "s")
    assert warm.proxy_settings.pool == "warm"
    [general, http10] = warm.notes
    assert general.startswith("proxy.pool warm: the edge proxy's upstream connections stay open across a "
                              "condition's loads") and "saves the handshakes, not the congestion window" in general
    assert http10.startswith("proxy.pool warm: http1.0 opens a connection per request") and "keeps nothing" in http10
    assert len(parse({**proxied, "modes": ["h2"], "proxy": {"pool": "warm"}}, "s").notes) == 1
    with pytest.raises(SpecError) as caught:
        parse({**proxied, "proxy": {"pool": "hot"}}, "spec.yaml")
    assert str(caught.value) == "spec.yaml: proxy.pool: Input should be 'cold' or 'warm'"
