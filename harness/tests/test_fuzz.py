"""Fuzzed inputs: whatever a user writes in a spec, a profile, a site manifest or a budget
file, and whatever arrives on the control channel, the answer is a valid object or one
line saying what is wrong, never a traceback."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
from collections.abc import Iterator

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pagebench.core.measure.budgets import Budget, BudgetError, parse_budgets
from pagebench.core.spec import model as spec_mod
from pagebench.core.spec import plan as planner
from pagebench.core.profiles import Profile, ProfileError, parse_profiles, yaml_document
from pagebench.core.sites.model import SiteError, SiteManifest, parse_manifest
from pagebench.lab.split.control import MAX_BODY, server
from pagebench.yamlfiles import builtin_profiles

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=20))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                      max_leaves=12)


def fields_of(names: list[str], known: dict[str, st.SearchStrategy]) -> st.SearchStrategy:
    """Mappings whose keys are mostly real field names, with plausible or arbitrary values."""
    key = st.one_of(st.sampled_from(names), st.text(max_size=12))
    value = st.one_of(values, *known.values())
    return st.dictionaries(key, value, max_size=len(names) + 2)


def one_line(error: Exception, origin: str) -> None:
    text = str(error)
    assert "\n" not in text and text.startswith(origin), text


SPEC_VALUES = {
    "modes": st.lists(st.sampled_from(["http1.0", "keepalive", "pipelining", "h2", "h3", "spdy", "h4"]), max_size=4),
    "topology": st.one_of(st.sampled_from(["direct", "proxy", "both"]), st.lists(st.sampled_from(["direct", "proxy"]))),
    "cache": st.lists(st.sampled_from(["cold", "warm", "hot"]), max_size=3),
    "tls": st.lists(st.sampled_from(["1.2", "1.3", "1.1", 1.3]), max_size=3),
    "sites": st.lists(st.one_of(st.sampled_from(["modern", "seed000-small-n2"]), values), max_size=3),
    "profiles": st.lists(st.one_of(st.sampled_from(["cable", "lte", "nope"]),
                                   st.dictionaries(st.sampled_from(["name", "rtt_ms", "base", "loss_pct", "x"]),
                                                   values, max_size=4)), max_size=3),
    "repetitions": st.one_of(st.integers(-3, 10**6), st.sampled_from(["auto", "many"]),
                             st.dictionaries(st.sampled_from(["cap", "looks", "tolerance", "alpha", "x"]), values,
                                             max_size=3)),
    "warmup": st.integers(-3, 2000), "clients": st.integers(-1, 40),
    "proxy": st.dictionaries(st.sampled_from(["connections", "depth", "x"]), values, max_size=3),
    "timeouts": st.dictionaries(st.sampled_from(["load_s", "link_check", "x"]), values, max_size=3),
}


@SETTINGS
@given(fields_of(list(spec_mod.Experiment.model_fields), SPEC_VALUES))
def test_any_spec_document_is_an_experiment_or_one_line(document):
    try:
        experiment = spec_mod.parse(document, "spec.yaml")
        profiles = spec_mod.resolve_profiles(experiment, builtin_profiles(), "spec.yaml")
        planner.conditions(experiment, ["a-site"], profiles)
    except spec_mod.SpecError as error:
        one_line(error, "spec.yaml")
    else:
        assert isinstance(experiment, spec_mod.Experiment)


@SETTINGS
@given(st.text(max_size=300))
def test_any_spec_text_is_an_experiment_or_one_line(text):
    try:
        spec_mod.parse_text(text, "spec.yaml")
    except spec_mod.SpecError as error:
        one_line(error, "spec.yaml")


PROFILE_VALUES = {
    "rtt_ms": st.one_of(st.floats(-5, 20000), st.lists(st.floats(0, 300), max_size=3)),
    "loss_pct": st.floats(-1, 120), "jitter_ms": st.floats(-1, 6000), "down_mbit": st.floats(-1, 2e5),
    "queue_bytes": st.integers(0, 2**31), "mss": st.integers(0, 10000), "congctl": st.sampled_from(["cubic", "vegas"]),
    "tcp_rmem": st.lists(st.integers(0, 2**24), max_size=4), "base": st.sampled_from(["cable", "nope"]),
    "name": st.text(max_size=8),
}


@SETTINGS
@given(st.one_of(fields_of(list(Profile.model_fields) + ["base"], PROFILE_VALUES),
                 st.lists(fields_of(list(Profile.model_fields) + ["base"], PROFILE_VALUES), max_size=3),
                 st.dictionaries(st.sampled_from(["profiles", "x"]), values, max_size=2), values))
def test_any_profiles_document_is_profiles_or_one_line(document):
    try:
        found = parse_profiles(document, "links.yaml", builtin_profiles())
    except ProfileError as error:
        one_line(error, "links.yaml")
    else:
        assert all(isinstance(p, Profile) for p in found)


MANIFEST_VALUES = {
    "name": st.text(max_size=12), "entry": st.sampled_from(["https://www.a.test/", "http://x/", "https://b.test/i"]),
    "origins": st.lists(st.sampled_from(["www.a.test", "b.test", "evil.com", "A.TEST", ""]), max_size=3),
    "headers": st.dictionaries(st.sampled_from(["/*.css", "/a b", "**"]),
                               st.dictionaries(st.sampled_from(["Cache-Control", "Bad Name"]), st.text(max_size=8)),
                               max_size=2),
}


@SETTINGS
@given(st.one_of(fields_of(list(SiteManifest.model_fields), MANIFEST_VALUES), values))
def test_any_site_manifest_is_a_manifest_or_one_line(document):
    try:
        manifest = parse_manifest(yaml.safe_dump(document), "site.yaml")
    except SiteError as error:
        one_line(error, "site.yaml")
    else:
        assert isinstance(manifest, SiteManifest)


@SETTINGS
@given(st.one_of(st.dictionaries(st.sampled_from(["budgets", "x"]),
                                 st.lists(fields_of(list(Budget.model_fields), {}), max_size=3), max_size=2),
                 values))
def test_any_budget_document_is_budgets_or_one_line(document):
    try:
        budgets = parse_budgets(document, "budget.yaml")
    except BudgetError as error:
        one_line(error, "budget.yaml")
    else:
        assert all(isinstance(b, Budget) for b in budgets)


@SETTINGS
@given(st.text(max_size=200))
def test_yaml_text_parses_or_is_one_line(text):
    try:
        yaml_document(text, "x.yaml", ProfileError)
    except ProfileError as error:
        one_line(error, "x.yaml")


# The control channel --------------------------------------------------------------------


@pytest.fixture(scope="module")
def channel() -> Iterator[tuple[int, list[tuple[str, object]]]]:
    """A control server on loopback whose two handlers only record what they were called with."""
    calls: list[tuple[str, object]] = []
    routes = {"GET /health": lambda args: calls.append(("health", args)) or {"role": "test"},
              "POST /link/apply": lambda args: calls.append(("apply", args)) or {"applied": sorted(args)}}
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    httpd = server(f"127.0.0.1:{port}", routes)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield port, calls
    httpd.shutdown()
    httpd.server_close()


def request(port: int, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["GET", "POST"]),
       st.one_of(st.sampled_from(["/health", "/link/apply", "/link/reset", "/../etc", "/health?x=1"]),
                 st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7e), max_size=20).map(
                     lambda s: "/" + s)),
       st.one_of(st.binary(max_size=200), values.map(lambda v: json.dumps(v).encode())))
def test_the_control_channel_answers_json_and_runs_only_its_routes(channel, method, path, body):
    port, calls = channel
    before = len(calls)
    status, answer = request(port, method, path, body if method == "POST" else b"")
    assert isinstance(answer, dict)
    # http.server folds a leading "//" into "/" (a path, never a host), as the test must.
    route = f"{method} {urllib.parse.urlsplit('/' + path.lstrip('/')).path}"
    if route not in ("GET /health", "POST /link/apply"):
        assert status == 404 and "no endpoint" in answer["error"] and len(calls) == before
    elif status == 200:
        assert len(calls) == before + 1 and isinstance(calls[-1][1], dict)
    else:
        assert status == 400 and "\n" not in answer["error"] and len(calls) == before


def test_the_control_channel_refuses_an_oversized_body_unread(channel):
    port, calls = channel
    before = len(calls)
    status, answer = request(port, "POST", "/link/apply", b"{}",
                             headers={"Content-Length": str(MAX_BODY + 1)})
    assert status == 413 and str(MAX_BODY) in answer["error"] and len(calls) == before
    status, answer = request(port, "POST", "/link/apply", b"{}", headers={"Content-Length": "-1"})
    assert status == 400 and len(calls) == before


def test_a_path_that_looks_like_a_host_is_a_path(channel):
    """Found by the property above (`//[`: the test's own URL parsing took it for a host):
    the role answers it as the path it is, with JSON, and runs nothing."""
    port, calls = channel
    before = len(calls)
    status, answer = request(port, "GET", "//[")
    assert status == 404 and "no endpoint GET /[" in answer["error"] and len(calls) == before
    status, _ = request(port, "GET", "//health")
    assert status == 200 and len(calls) == before + 1
