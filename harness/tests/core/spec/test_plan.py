"""A run's plan, without a lab: the matrix and its seeded order (the one stored runs resume
against), what a spec skips and says, and the RunPlan the runner performs: link checks,
the edge-proxy overhead's loads, priming, and each load's browser inputs."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import pytest

from pagebench.core import modes
from pagebench.core.measure.bound import Link as BoundLink
from pagebench.core.encodings import GZIP
from pagebench.core.modes import H2, H3, HTTP10
from pagebench.core.profiles import Profile
from pagebench.core.records import Condition
from pagebench.core.sites.app import App
from pagebench.core.sites.model import GeneratedSite, Site, SiteManifest
from pagebench.core.sites.recording import Exchange, Recording
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import SpecError, parse, resolve_devices, resolve_profiles
from pagebench.yamlfiles import builtin_devices, builtin_profiles

SPDY_NOTE = modes.ALIAS_NOTES["spdy"]

BASE = {"sites": ["seed000-small-n2"], "modes": ["h2"]}
NONE = Profile(name="none")
SLOW = Profile(name="slow", rtt_ms=80, down_mbit=5, up_mbit=1)


def site(name: str = "a", origins: tuple[str, ...] = ("www.a.test", "cdn.a.test"), versions: int = 1,
         recording: Recording | None = None, changes: bool = True) -> Site:
    """A site as a value, at a path nothing reads: version k > 1 changes one stylesheet
    (unless not `changes`)."""
    style = f"{origins[0]}/style.css"
    manifest = SiteManifest(name=name, entry=f"https://{origins[0]}/", origins=origins, versions=versions,
                            dictionaries={style: ":AAAA:"} if versions > 1 else {},
                            changed={v: [style] for v in range(2, versions + 1)} if changes else {},
                            recording="recording.json" if recording else None)
    return Site(manifest, Path("/nonexistent/sites") / name, recording)


def run_plan(document: dict, sites: list[Site], profiles: list[Profile] = (NONE,), done=frozenset()):
    spec = parse({"sites": [s.name for s in sites], "modes": ["h2"], **document}, "spec.yaml")
    devices = resolve_devices(spec, builtin_devices(), "spec.yaml")
    return planner.run_plan(spec, {s.name: s for s in sites}, sites, list(profiles), NONE, frozenset(done), devices)


# The matrix and its seeded order --------------------------------------------------------------

#: (spec, site names): the order of their loads as runs were stored before the planner
#: (sha256 of "seq key repetition warmup" lines). A change here breaks every stored run's resume.
STORED_ORDERS = {
    "small": ({"modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "repetitions": 2, "warmup": 1, "seed": 7},
              ["a", "b"], 24, "1cfdd5f339effe1aaf65ece7273ec237ea0a3f8b64f682be1b9dba6082ac51d5"),
    "ci": ({"name": "ci", "modes": ["http1.0", "h2"], "profiles": ["cable"], "repetitions": 30, "warmup": 1,
            "seed": 1}, ["seed000-small-n20"], 62, "a40e32ba458cdae3c7dff8cd781c091efc66b996ac3e722c344fd5e45a6cfcb7"),
    "wide": ({"modes": ["http1.0", "keepalive", "pipelining", "h2", "h3"], "topology": ["direct", "proxy"],
              "tls": ["none", "1.3"], "encoding": ["identity", "dcz"], "version": [1, 2], "cache": ["cold", "warm"],
              "profiles": ["cable", {"name": "s", "rtt_ms": [20, 40]}], "repetitions": 3, "warmup": 1, "seed": 1997},
             ["x", "y"], 2112, "ccba1f86e905abdda6d6cf06cd7f4a1706923b39a8584867c718991b5135a1d4"),
}


@pytest.mark.parametrize("name", STORED_ORDERS)
def test_the_seeded_order_is_the_one_runs_were_stored_with(name):
    document, names, count, digest = STORED_ORDERS[name]
    spec = parse({"sites": names, **document}, name)
    loads = planner.loads(spec, planner.conditions(spec, names, resolve_profiles(spec, builtin_profiles(), name)))
    assert len(loads) == count
    text = "\n".join(f"{p.seq} {p.condition.key} {p.repetition} {p.warmup}" for p in loads)
    assert hashlib.sha256(text.encode()).hexdigest() == digest


def test_naming_desktop_keeps_the_stored_order_and_another_device_is_crossed_with_the_rest():
    document, names, count, digest = STORED_ORDERS["small"]
    said = parse({"sites": names, **document, "devices": ["desktop"]}, "small")
    loads = planner.loads(said, planner.conditions(said, names, [NONE]))
    text = "\n".join(f"{p.seq} {p.condition.key} {p.repetition} {p.warmup}" for p in loads)
    assert hashlib.sha256(text.encode()).hexdigest() == digest  # `devices: [desktop]` is a spec before devices
    both = parse({"sites": names, **document, "devices": ["desktop", "moto-g-power"]}, "small")
    matrix = planner.conditions(both, names, [NONE])
    assert len(matrix) == 2 * len(planner.conditions(said, names, [NONE])) == 16
    assert [c.device for c in matrix[:4]] == ["desktop", "moto-g-power"] * 2  # it varies fastest
    assert {replace(c, device="desktop") for c in matrix} == set(planner.conditions(said, names, [NONE]))
    assert len({c.key for c in matrix}) == 16
    assert len(planner.loads(both, matrix)) == 2 * count


def test_the_small_order_in_full():
    document, names, _, _ = STORED_ORDERS["small"]
    spec = parse({"sites": names, **document}, "s")
    matrix = planner.conditions(spec, names, [NONE])
    order = [matrix.index(p.condition) for p in planner.loads(spec, matrix)]
    assert order == [1, 6, 7, 5, 2, 4, 7, 7, 2, 6, 4, 5, 2, 0, 3, 3, 1, 5, 0, 0, 6, 4, 1, 3]


def test_matrix_and_seeded_interleaved_plan():
    spec = parse({**BASE, "modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "repetitions": 3,
                  "warmup": 2, "seed": 7}, "s")
    profiles = resolve_profiles(spec, builtin_profiles(), "s")
    matrix = planner.conditions(spec, ["a", "b"], profiles)
    assert len(matrix) == 2 * 2 * 1 * 2
    loads = planner.loads(spec, matrix)
    assert len(loads) == len(matrix) * (3 + 2)
    assert [load.seq for load in loads] == list(range(len(loads)))
    assert planner.loads(spec, matrix) == loads  # same seed, same order
    assert planner.loads(parse({**BASE, "modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "repetitions": 3,
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
    keys = {(c.mode.name, c.topology, c.tls) for c in planner.conditions(spec, ["x"], [profile])}
    assert keys == {("http1.0", "direct", "1.2"), ("http1.0", "direct", "1.3"), ("http1.0", "proxy", "1.2"),
                    ("http1.0", "proxy", "1.3"), ("pipelining", "proxy", "1.2"), ("pipelining", "proxy", "1.3"),
                    ("h2", "direct", "1.2"), ("h2", "direct", "1.3"), ("h2", "proxy", "1.2"), ("h2", "proxy", "1.3"),
                    ("h3", "direct", "1.3")}


def test_cleartext_runs_where_a_browser_can_and_says_what_it_skipped():
    spec = parse({**BASE, "modes": ["http1.0", "keepalive", "pipelining", "h2", "h3"], "topology": ["direct", "proxy"],
                  "tls": ["none", "1.3"]}, "s")
    profile = builtin_profiles()["none"]
    cleartext = {(c.mode.name, c.topology) for c in planner.conditions(spec, ["x"], [profile]) if c.tls == "none"}
    assert cleartext == {("http1.0", "direct"), ("keepalive", "direct"), ("http1.0", "proxy"),
                         ("keepalive", "proxy"), ("pipelining", "proxy"), ("h2", "proxy")}
    assert "tls none: skipped for h2 direct (Chromium speaks HTTP/2 only over TLS (no h2c))" in planner.notes(spec)
    assert "tls none: skipped for h3 direct (QUIC always uses TLS 1.3)" in planner.notes(spec)
    assert planner.notes(parse({**BASE, "modes": ["h2"], "tls": ["1.3"]}, "s")) == []
    both = parse({**BASE, "modes": ["h2"], "topology": ["direct", "proxy"], "tls": ["none"]}, "s")
    assert {(c.topology, c.tls) for c in planner.conditions(both, ["x"], [profile])} == {("proxy", "none")}


def test_dcz_is_skipped_in_cleartext_and_said_with_what_cold_loads_get():
    spec = parse({**BASE, "modes": ["keepalive"], "tls": ["none", "1.3"], "encoding": ["identity", "dcz"],
                  "cache": ["cold", "warm"]}, "s")
    cells = {(c.tls, c.encoding.name) for c in planner.conditions(spec, ["x"], [NONE])}
    assert cells == {("none", "identity"), ("1.3", "identity"), ("1.3", "dcz")}
    said = planner.notes(spec)
    assert any(note.startswith("encoding dcz: skipped for tls none") for note in said)
    assert any(note.startswith("encoding dcz with cache cold: a cold browser holds no dictionary") for note in said)
    warm_only = parse({**BASE, "modes": ["keepalive"], "encoding": ["dcz"], "cache": ["warm"]}, "s")
    assert planner.notes(warm_only) == []


def test_spdy_is_h2_with_a_note():
    spec = parse({**BASE, "modes": ["spdy", "h2", "keepalive"]}, "s")
    assert [m.name for m in spec.resolved_modes] == ["h2", "keepalive"]
    assert planner.notes(spec) == [SPDY_NOTE] and "HTTP/2 is its standardised successor" in SPDY_NOTE


def test_proxy_defaults_and_origin_modes():
    spec = parse({**BASE, "modes": ["pipelining", "keepalive", "h2"], "topology": "proxy"}, "s")
    assert (spec.proxy_settings.connections, spec.proxy_settings.depth, spec.clients) == (6, 4, 1)
    assert [m.name for m in planner.origin_modes(spec)] == ["keepalive", "h2"]  # nginx answers pipelined requests on keep-alive


def test_the_proxy_pool_is_cold_unless_asked_warm_and_says_what_warm_cannot_keep():
    proxied = {**BASE, "modes": ["http1.0", "keepalive", "h2"], "topology": ["direct", "proxy"]}
    assert parse(proxied, "s").proxy_settings.pool == "cold" and planner.notes(parse(proxied, "s")) == []
    warm = parse({**proxied, "proxy": {"pool": "warm"}}, "s")
    assert warm.proxy_settings.pool == "warm"
    [general, http10] = planner.notes(warm)
    assert general.startswith("proxy.pool warm: the edge proxy's upstream connections stay open across a "
                              "condition's loads") and "saves the handshakes, not the congestion window" in general
    assert http10.startswith("proxy.pool warm: http1.0 opens a connection per request") and "keeps nothing" in http10
    assert len(planner.notes(parse({**proxied, "modes": ["h2"], "proxy": {"pool": "warm"}}, "s"))) == 1
    with pytest.raises(SpecError) as caught:
        parse({**proxied, "proxy": {"pool": "hot"}}, "spec.yaml")
    assert str(caught.value) == "spec.yaml: proxy.pool: Input should be 'cold' or 'warm'"


def test_an_app_site_is_refused_an_encoding_or_a_version_of_the_labs():
    """The app compresses as it does itself and has one version, its own."""
    app = Site(site("shop").manifest, Path("/srv/shop"), app=App(command="serve {port}"))
    planner.check_site(parse({**BASE, "encoding": ["identity"]}, "s"), app, "spec.yaml", 0)
    with pytest.raises(SpecError) as caught:
        planner.check_site(parse({**BASE, "encoding": ["identity", "br"]}, "s"), app, "spec.yaml", 1)
    assert str(caught.value) == ("spec.yaml: encoding: br: site shop (sites[1]) is an app, which compresses as it "
                                 "does itself (the browser's Accept-Encoding reaches it unchanged): leave encoding "
                                 "out, or identity")
    with pytest.raises(SpecError, match=r"^spec.yaml: version: site shop \(sites\[0\]\) is an app: it serves one"):
        planner.check_site(parse({**BASE, "version": [1, 2]}, "s"), app, "spec.yaml", 0)


def test_an_app_sites_visits_say_so():
    app = Site(site("shop").manifest, Path("/srv/shop"), app=App(command="serve {port}"))
    spec = parse({**BASE, "sites": ["x"]}, "s")
    servers = planner.serverplan.plan([app], [H2], ["1.3"])
    c = planner.conditions(spec, ["shop"], [NONE])[0]
    assert planner._visit(spec, app, servers, c).app is True
    assert planner._visit(spec, site("shop"), servers, c).app is False


def test_a_site_must_have_the_versions_and_dictionaries_a_spec_asks_for():
    one, three = site("one"), site("three", versions=3)
    spec = parse({**BASE, "version": [1, 4]}, "s")
    planner.check_site(parse(BASE, "s"), one, "spec.yaml", 0)
    with pytest.raises(SpecError, match=r"^spec.yaml: version: 4: site one \(sites\[0\]\) has one version \(1\)$"):
        planner.check_site(spec, one, "spec.yaml", 0)
    with pytest.raises(SpecError, match=r"^spec.yaml: version: 4: site three \(sites\[2\]\) has versions 1-3$"):
        planner.check_site(spec, three, "spec.yaml", 2)
    dcz = parse({**BASE, "encoding": ["dcz"]}, "s")
    with pytest.raises(SpecError, match=r"encoding: dcz needs a site with versions .* site one \(sites\[1\]\) has one"):
        planner.check_site(dcz, one, "spec.yaml", 1)
    planner.check_site(dcz, three, "spec.yaml", 0)


def test_the_meta_of_a_run_keeps_the_order_runs_were_stored_in():
    spec = parse({**BASE, "modes": ["spdy"], "topology": "proxy", "seed": 3}, "s")
    meta = planner.run_meta(spec, {"backend": "netem", "delay_spin_us": None}, {"reproduce": {"scenario": "x"}})
    assert list(meta) == ["seed", "notes", "backend", "delay_spin_us", "reproduce", "proxy", "replay_query",
                          "deterministic"]
    assert meta["seed"] == 3 and meta["notes"] == [SPDY_NOTE]
    assert meta["proxy"] == {"connections": 6, "depth": 4, "pool": "cold"}
    assert (meta["replay_query"], meta["deterministic"]) == ("exact", False)
    assert "proxy" not in planner.run_meta(parse(BASE, "s"), {}, {})


# The RunPlan ----------------------------------------------------------------------------------


def test_the_run_plan_holds_every_load_in_order_and_the_servers_of_the_sites_on_disk():
    a = site("a")
    plan = run_plan({"modes": ["http1.0", "h2"], "repetitions": 2, "warmup": 1}, [a], [NONE, SLOW])
    spec = plan.spec
    assert list(plan.loads) == planner.loads(spec, planner.conditions(spec, ["a"], [NONE, SLOW]))
    assert [step.planned for step in plan.steps] == list(plan.loads)
    assert plan.parts[0].servers.sites == (a,) and plan.parts[0].servers.modes == (HTTP10, H2)
    assert [step.profile for step in plan.steps] == [(NONE if p.condition.profile == "none" else SLOW)
                                                     for p in plan.loads]
    assert not plan.proxied and plan.overhead is None and not plan.note_encoding_cost
    assert plan.sites == {"a": a}


def test_link_checks_are_the_profiles_in_spec_order_unless_turned_off():
    assert run_plan({}, [site()], [SLOW, NONE]).link_checks == (SLOW, NONE)
    assert run_plan({"timeouts": {"link_check": False}}, [site()], [SLOW, NONE]).link_checks == ()


def test_what_compressing_cost_is_noted_when_the_spec_asks_for_an_encoding():
    assert run_plan({"encoding": ["gzip"]}, [site()]).note_encoding_cost
    assert run_plan({"encoding": ["identity", "br"]}, [site()]).note_encoding_cost
    assert not run_plan({"encoding": ["identity"]}, [site()]).note_encoding_cost


def test_a_warm_condition_is_primed_once_and_a_later_version_before_every_load():
    plan = run_plan({"modes": ["h2"], "cache": ["cold", "warm"], "version": [1, 2], "encoding": ["identity", "dcz"],
                     "repetitions": 3, "warmup": 1, "seed": 5}, [site(versions=2)])
    by_condition: dict = {}
    for step in plan.steps:
        by_condition.setdefault(step.planned.condition, []).append(step)
    assert len(by_condition) == 8
    for c, steps in by_condition.items():
        primes = [step.prime for step in steps]
        if c.cache == "cold":
            assert primes == [None] * 4
        elif c.version == 1:
            assert primes[0] is not None and primes[1:] == [None] * 3
        else:
            assert None not in primes
        for prime in filter(None, primes):
            assert prime.visit.condition == replace(c, version=1)
            assert prime.dictionaries == (c.encoding.name == "dcz")
            assert prime.visit.url == "https://www.a.test/"
        # one persistent profile per condition, named by its key
        assert {step.warm_profile for step in steps} == {hashlib.sha1(c.key.encode()).hexdigest()[:12]}


def test_each_load_is_its_device_and_a_warm_profile_is_never_shared_across_devices():
    plan = run_plan({"modes": ["h2"], "cache": ["cold", "warm"], "devices": ["desktop", "moto-g-power"],
                     "repetitions": 2, "warmup": 1, "seed": 4}, [site()])
    devices = builtin_devices().devices
    assert {step.planned.condition.device for step in plan.steps} == {"desktop", "moto-g-power"}
    for step in plan.steps:
        c = step.planned.condition
        assert step.device == devices[c.device]
        if step.prime is not None:  # primed as the device its warm loads are
            assert step.prime.visit.condition.device == c.device
    warm = {(step.planned.condition.device, step.warm_profile) for step in plan.steps
            if step.planned.condition.cache == "warm"}
    assert len(warm) == 2 and len({profile for _, profile in warm}) == 2
    assert plan.throttled == (devices["moto-g-power"],)  # calibrated before the loads
    assert run_plan({"modes": ["h2"]}, [site()]).throttled == ()
    assert run_plan({"modes": ["h2"], "devices": ["moto-g-power"]}, [site()],
                    done=range(11)).throttled == ()  # nothing left to load as it


def test_a_resume_primes_the_first_remaining_load_of_each_warm_condition():
    document = {"modes": ["h2", "keepalive"], "cache": ["warm"], "repetitions": 4, "warmup": 1, "seed": 2}
    whole = run_plan(document, [site()])
    done = {p.seq for p in whole.loads[:4]}
    resumed = run_plan(document, [site()], done=done)
    assert resumed.loads == whole.loads
    assert [step.planned for step in resumed.steps] == list(whole.loads[4:])
    seen = set()
    for step in resumed.steps:
        c = step.planned.condition
        assert (step.prime is not None) == (c not in seen)
        seen.add(c)


def test_direct_visits_resolve_only_the_conditions_origins_and_h3_is_forced_onto_quic():
    plan = run_plan({"modes": ["http1.0", "h2", "h3"], "tls": ["none", "1.3"], "repetitions": 1, "warmup": 0},
                    [site()], [SLOW])
    visits = {(s.visit.condition.mode, s.visit.condition.tls): s for s in plan.steps}
    assert set(visits) == {(HTTP10, "none"), (HTTP10, "1.3"), (H2, "1.3"), (H3, "1.3")}
    for (mode, tls), step in visits.items():
        visit = step.visit
        expected = plan.parts[0].servers.host_resolver_rules(mode, tls, "a", block_others=True)
        assert visit.resolver_rules == expected and expected.endswith(", MAP * ~NOTFOUND")
        assert not visit.proxied and visit.upstream is None and visit.document_path == "/"
        assert visit.url == ("http://www.a.test/" if tls == "none" else "https://www.a.test/")
        assert visit.force_quic_on == ("www.a.test:443,cdn.a.test:443" if mode is H3 else "")
        assert step.bound == BoundLink(80, 5, SLOW.mss, SLOW.initcwnd, SLOW.timestamps, tls=tls != "none")


def test_proxied_visits_resolve_nothing_but_the_proxy_and_configure_its_upstream():
    plan = run_plan({"modes": ["pipelining", "h2"], "topology": "proxy", "tls": ["none", "1.3"],
                     "proxy": {"connections": 3, "depth": 2, "pool": "warm"}, "repetitions": 1, "warmup": 0},
                    [site()])
    assert plan.proxied
    for step in plan.steps:
        c, visit = step.planned.condition, step.visit
        assert visit.proxied and visit.resolver_rules == planner.PROXIED_RULES and visit.force_quic_on == ""
        assert visit.url == "https://www.a.test/"  # the browser's hop to the proxy stays TLS
        served = plan.parts[0].servers.addresses(c.mode.origin, c.tls, "a")
        assert visit.upstream == planner.Upstream(c.mode, 3, 2, c.tls == "none", tuple(served.items()), "warm", c.key)
        assert step.bound is None  # the bound models the browser's own connections


def test_a_warm_load_of_a_later_version_expects_its_changed_files_anew():
    plan = run_plan({"modes": ["h2"], "cache": ["cold", "warm"], "version": [1, 2], "repetitions": 1, "warmup": 0},
                    [site(versions=2), site("b", origins=("www.b.test",), versions=2, changes=False)])
    for step in plan.steps:
        c, visit = step.planned.condition, step.visit
        changed = {"www.a.test/style.css"} if (c.site, c.cache, c.version) == ("a", "warm", 2) else set()
        assert visit.expect_delta == changed
        assert visit.versioned and visit.recording is None


def test_a_replayed_site_is_judged_against_its_recording_and_a_generated_one_by_its_levels():
    recording = Recording(source="page.har", hosts={"example.com": "www.r.test"},
                          exchanges=(Exchange(host="www.r.test", target="/", status=200, file="_replay/0000.html",
                                             original="https://example.com/"),))
    replayed = site("r", origins=("www.r.test",), recording=recording)
    generated = GeneratedSite(site("g", origins=("www.g.test",)).manifest, {}, levels={"www.g.test/font.woff2": 2})
    spec = parse({"sites": ["r", "g"], "modes": ["h2"], "repetitions": 1, "warmup": 0}, "s")
    on_disk = [replayed, site("g", origins=("www.g.test",))]
    plan = planner.run_plan(spec, {"r": replayed, "g": generated}, on_disk, [NONE], NONE)
    recordings = {step.planned.condition.site: step.visit.recording for step in plan.steps}
    assert recordings == {"r": recording, "g": None}
    assert plan.sites["g"].level("www.g.test/font.woff2") == 2  # what the runner bounds a load with
    assert plan.parts[0].servers.sites == tuple(on_disk)


# The edge proxy's overhead ----------------------------------------------------------------------


def test_the_overhead_prefers_h2_and_loads_the_first_site_cold_both_ways_after_a_warm_up_pair():
    plan = run_plan({"modes": ["http1.0", "keepalive", "h2"], "topology": ["direct", "proxy"],
                     "tls": ["1.2", "1.3"], "encoding": ["gzip", "identity"], "proxy": {"pool": "warm"}},
                    [site("first"), site("second", origins=("www.b.test",))], [SLOW])
    overhead = plan.overhead
    assert (overhead.site, overhead.mode.name, overhead.tls, overhead.profile) == ("first", "h2", "1.2", NONE)
    assert [measured for measured, _ in overhead.visits] == [False, False] + [True] * 2 * planner.OVERHEAD_LOADS
    topologies = [visit.condition.topology for _, visit in overhead.visits]
    assert topologies == ["direct", "proxy"] * (planner.OVERHEAD_LOADS + 1)
    direct, proxied = overhead.visits[0][1], overhead.visits[1][1]
    assert direct.condition == Condition("first", H2, "direct", "none", "cold", "1.2", GZIP)
    assert proxied.condition == Condition("first", H2, "proxy", "none", "cold", "1.2", GZIP)
    assert direct.upstream is None and not direct.proxied
    assert proxied.upstream.pool == "cold"  # even with a warm pool: the cost per request, handshakes included
    assert proxied.upstream.key == proxied.condition.key


@pytest.mark.parametrize(("modes_", "tls", "expected"), [
    (["http1.0", "keepalive"], ["1.3"], ("keepalive", "keepalive", "1.3")),
    (["pipelining", "http1.0"], ["1.3"], ("http1.0", "http1.0", "1.3")),
    (["pipelining"], ["1.3"], ("pipelining", "keepalive", "1.3")),
    # the browser cannot speak h2 in cleartext: h2 is taken with the TLS its origin serves directly
    (["h2"], ["none", "1.3"], ("h2", "h2", "1.3")),
    # ... or passed over for a mode whose origin serves cleartext directly
    (["pipelining", "h2"], ["none"], ("pipelining", "keepalive", "none")),
    # nothing servable both ways: the first proxied mode and TLS version, as before
    (["h2"], ["none"], ("h2", "h2", "none")),
])
def test_the_overhead_uses_the_same_origin_mode_and_tls_both_ways(modes_, tls, expected):
    overhead = run_plan({"modes": modes_, "topology": "proxy", "tls": tls}, [site()]).overhead
    direct, proxied = overhead.visits[0][1].condition, overhead.visits[1][1].condition
    assert (proxied.mode.name, direct.mode.name, overhead.tls) == expected
    assert direct.tls == proxied.tls == overhead.tls


def test_no_overhead_without_the_proxy_topology():
    assert run_plan({"modes": ["h2", "h3"]}, [site()]).overhead is None


# Page by page (a corpus) ----------------------------------------------------------------------


def corpus_plan(document: dict, sites: list[Site], done=frozenset()):
    spec = parse({"sites": [{"corpus": "/hars"}], "modes": ["http1.0", "h2"], "repetitions": 2, "warmup": 1,
                  **document}, "spec.yaml")
    return planner.run_plan(spec, {s.name: s for s in sites}, sites, [NONE, SLOW], NONE, frozenset(done))


def test_a_corpus_goes_page_by_page_each_pages_loads_interleaved_among_themselves():
    pages = [site("p1", ("www.p1.test",)), site("p2", ("www.p2.test", "cdn.p2.test")), site("p3", ("www.p3.test",))]
    plan = corpus_plan({}, pages)
    assert plan.spec.by_page
    order = [load.condition.site for load in plan.loads]
    per_page = len(order) // 3
    assert order == ["p1"] * per_page + ["p2"] * per_page + ["p3"] * per_page
    # within a page, the conditions are shuffled, warm-ups first within each condition
    first = [(load.condition.mode.name, load.condition.profile) for load in plan.loads[:per_page]]
    assert first != sorted(first)
    assert [load.seq for load in plan.loads] == list(range(len(plan.loads)))
    # a lab per page, serving that page alone
    assert [part.sites for part in plan.parts] == [("p1",), ("p2",), ("p3",)]
    assert [part.servers.sites for part in plan.parts] == [(p,) for p in pages]
    assert [s.planned for s in plan.steps] == list(plan.loads)
    assert {s.planned.condition.site for s in plan.parts[1].steps} == {"p2"}
    # the same spec plans the same order (a stored run resumes against it)
    assert corpus_plan({}, pages).loads == plan.loads


def test_a_resumed_corpus_builds_labs_only_for_pages_with_loads_left():
    pages = [site("p1", ("www.p1.test",)), site("p2", ("www.p2.test",))]
    whole = corpus_plan({}, pages)
    done = {load.seq for load in whole.loads if load.condition.site == "p1"}
    done.add(next(load.seq for load in whole.loads if load.condition.site == "p2"))
    plan = corpus_plan({}, pages, done)
    assert [part.sites for part in plan.parts] == [("p2",)]
    assert len(plan.steps) == len(whole.loads) - len(done)


def test_a_spec_without_a_corpus_keeps_one_lab_for_every_site():
    plan = run_plan({"modes": ["http1.0", "h2"]}, [site("a"), site("b", ("www.b.test",))])
    assert not plan.spec.by_page and [part.sites for part in plan.parts] == [("a", "b")]
