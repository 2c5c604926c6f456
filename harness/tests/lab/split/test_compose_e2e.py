"""The Docker lab, run for real: the images build from `debian:bookworm-slim` (made by
`harness/docker/base-image` where no registry serves it), `docker compose up` runs a
small spec into the lab's PostgreSQL, an app of one's own given by URL (a service
beside `sites`) is loaded through the sites role, and `docker compose down -v` leaves
nothing of the project. `harness/bootstrap test` provides the engine and Compose (a dockerd it
starts where none answers; Compose v2 built where `docker compose` is missing)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.helpers import REPO, compose_command, needs_root
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.runner.environment import environment

pytestmark = needs_root

PROJECT_PREFIX = "pbcompose"
COMPOSE_FILE = REPO / "docker-compose.yml"
COMPOSE = yaml.safe_load(COMPOSE_FILE.read_text())
LAB = ["db", "router", "sites"]
SPEC = {"name": "compose-test", "seed": 7, "sites": ["seed000-small-n2"], "modes": [KEEPALIVE.name, H2.name],
        "cache": ["cold", "warm"], "profiles": [{"name": "r20", "rtt_ms": 20, "down_mbit": 50, "up_mbit": 50}],
        "repetitions": 2, "warmup": 0}
#: An app of one's own: a compose service (`testapp`, the harness's image serving a page
#: with Python's http.server) that the sites role reaches by its name.
APP_SPEC = {"name": "compose-app", "seed": 7, "modes": [H2.name], "cache": ["cold"], "repetitions": 2, "warmup": 0,
            "profiles": [{"name": "r20", "rtt_ms": 20}], "timeouts": {"link_check": False},
            "sites": [{"name": "shop", "app": {"url": "http://testapp:8000", "ready": "/", "ready_timeout_s": 60}}]}
APP_PAGE = "<!doctype html><html><head><link rel=\"icon\" href=\"data:,\"></head><body><h1>shop</h1></body></html>"

#: Printed by a harness container: the latest run as the store holds it.
READ_STORE = """
import json, os
from dataclasses import asdict
from pagebench.results.store import Store
store = Store(os.environ["PAGEBENCH_DB"])
run = store.runs()[0].run_id
loads = [asdict(load) | {"origins": sorted({r.resource.origin for r in store.resources(load.id)})}
         for load in store.loads(run)]
print(json.dumps({"run": run, "experiment": asdict(store.experiment(run)), "loads": loads,
                  "link_checks": [asdict(check) for check in store.link_checks(run)]}, default=str))
"""


def compose(project: str, *args: str, files: tuple[Path, ...] = (COMPOSE_FILE,), timeout: float = 1800,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A compose command for `project`, with no Grafana password in the environment."""
    environ = {k: v for k, v in os.environ.items() if k not in ("GRAFANA_ADMIN_PASSWORD", "PAGEBENCH_SPEC")}
    command = compose_command() + ["-p", project] + [a for f in files for a in ("-f", str(f))] + list(args)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environ | (env or {}),
                          cwd=REPO)


def docker(*args: str) -> str:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=True).stdout


def project_objects(project: str) -> dict[str, list[str]]:
    """Every container, network and volume Compose labelled with the project."""
    label = f"label=com.docker.compose.project={project}"
    return {"containers": docker("ps", "-a", "-q", "--filter", label).split(),
            "networks": docker("network", "ls", "-q", "--filter", label).split(),
            "volumes": docker("volume", "ls", "-q", "--filter", label).split()}


def stale_projects() -> set[str]:
    """Projects of this test left by a killed session (any object still labelled with one)."""
    found = set()
    for kind in (["ps", "-a"], ["network", "ls"], ["volume", "ls"]):
        out = docker(*kind, "--filter", "label=com.docker.compose.project",
                     "--format", '{{.Label "com.docker.compose.project"}}')
        found |= {name for name in out.split() if name.startswith(PROJECT_PREFIX)}
    return found


def remove_project(project: str) -> None:
    """`down -v`, then whatever still carries the project's label (a run killed halfway
    can leave objects Compose's model no longer names)."""
    compose(project, "down", "-v", "--remove-orphans", "--timeout", "5")
    left = project_objects(project)
    for kind, remove in (("containers", ["rm", "-f"]), ("networks", ["network", "rm"]), ("volumes", ["volume", "rm"])):
        if left[kind]:
            subprocess.run(["docker", *remove, *left[kind]], capture_output=True)


@pytest.fixture(scope="module")
def engine() -> None:
    """A Docker engine that answers (and Compose v2): the test command provides both."""
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        pytest.fail("no Docker engine answers: run `sudo harness/bootstrap test`, which starts one")
    compose_command()


@pytest.fixture(scope="module")
def project(session_tag: str) -> str:
    """This session's Compose project; others' are left alone unless stale."""
    return f"{PROJECT_PREFIX}{session_tag}"


@pytest.fixture(scope="module")
def lab(engine: None, project: str, tmp_path_factory) -> Iterator[dict]:
    for stale in stale_projects():  # a killed earlier run is cleaned up by the next one
        remove_project(stale)
    base = subprocess.run([str(REPO / "harness" / "docker" / "base-image")], capture_output=True, text=True)
    assert base.returncode == 0, base.stderr[-3000:]
    tmp = tmp_path_factory.mktemp("compose")
    (tmp / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    (tmp / "invalid.yaml").write_text(yaml.safe_dump(SPEC | {"modes": ["spdy/2"]}))
    (tmp / "app.yaml").write_text(yaml.safe_dump(APP_SPEC))
    (tmp / "app").mkdir()
    (tmp / "app" / "index.html").write_text(APP_PAGE)
    mount = f"{tmp}:/pagebench/test-spec:ro"  # the spec's directory at the same path in harness and sites
    testapp = {"image": "pagebench:local", "volumes": [mount],
               "command": ["python", "-m", "http.server", "8000", "--bind", "0.0.0.0", "--directory",
                           "/pagebench/test-spec/app"],
               # both addresses fixed: one Docker picked would be the first free, the router's
               "networks": {"server_side": {"ipv4_address": "198.18.1.252", "ipv6_address": "2001:2:0:1::fc"}}}
    override = tmp / "override.yaml"
    override.write_text(yaml.safe_dump({"services": {"harness": {"volumes": [mount]}, "sites": {"volumes": [mount]},
                                                     "testapp": testapp}}))
    files = (COMPOSE_FILE, override)
    result: dict = {"files": files}
    try:
        built = compose(project, "build", "db", "harness", files=files, timeout=2400)  # router, sites: harness's image
        assert built.returncode == 0, built.stderr[-3000:]
        # No Grafana password set: everything but Grafana's start must work without one.
        result["ps_before"] = compose(project, "ps", files=files)
        up = compose(project, "up", "--detach", "--wait", *LAB, "testapp", files=files, timeout=300)
        assert up.returncode == 0, up.stderr[-3000:]
        # Attached to the harness alone: returns when it exits, the lab staying up.
        result["harness"] = compose(project, "up", "--no-deps", "harness", files=files,
                                    env={"PAGEBENCH_SPEC": "test-spec/spec.yaml"}, timeout=900)
        exited = compose(project, "ps", "--all", "--format", "json", "harness", files=files)
        result["harness_exit"] = json.loads(exited.stdout.strip().splitlines()[-1])["ExitCode"]
        read = compose(project, "run", "--rm", "--no-deps", "--entrypoint", "python", "harness", "-c", READ_STORE,
                       files=files, timeout=300)
        assert read.returncode == 0, read.stderr[-3000:]
        result["store"] = json.loads(read.stdout.strip().splitlines()[-1])
        result["app_run"] = compose(project, "up", "--no-deps", "harness", files=files,
                                    env={"PAGEBENCH_SPEC": "test-spec/app.yaml"}, timeout=900)
        read = compose(project, "run", "--rm", "--no-deps", "--entrypoint", "python", "harness", "-c", READ_STORE,
                       files=files, timeout=300)
        assert read.returncode == 0, read.stderr[-3000:]
        result["app_store"] = json.loads(read.stdout.strip().splitlines()[-1])
        result["app_log"] = compose(project, "logs", "--no-color", "testapp", files=files).stdout
        result["bad_specs"] = {name: compose(project, "run", "--rm", "--no-deps", "harness", files=files,
                                             env={"PAGEBENCH_SPEC": f"test-spec/{name}"}, timeout=300)
                               for name in ("missing.yaml", "invalid.yaml")}
        result["ps_after_bad_spec"] = compose(project, "ps", "--format", "json", *LAB, files=files)
        result["logs"] = compose(project, "logs", "--no-color", "router", files=files)
        result["image"] = compose(project, "run", "--rm", "--no-deps", "--entrypoint", "python", "harness", "-c",
                                  "import json; from pagebench.runner.environment import environment; "
                                  "print(json.dumps(environment()))", files=files, timeout=300)
    finally:
        result["down"] = compose(project, "down", "-v", "--remove-orphans", "--timeout", "10", files=files)
        result["left"] = project_objects(project)
        subprocess.run(["sync"])  # the images' gigabytes written back now, not during the next tests' timings
    yield result


def test_the_harness_runs_the_spec_into_the_labs_postgresql(lab):
    harness = lab["harness"]
    assert harness.returncode == 0 and lab["harness_exit"] == 0, (harness.stdout[-3000:], harness.stderr[-3000:])
    store = lab["store"]
    assert store["experiment"]["status"] == "complete", store["experiment"]
    loads = store["loads"]
    assert len(loads) == 2 * 2 * 2  # modes x cache x repetitions
    for load in loads:
        assert load["ok"] and not load["flagged"], (load["condition"], load["flags"])
    (check,) = store["link_checks"]
    assert check["profile"] == "r20" and check["rtt_median_ms"] >= 20.0
    assert check["backend"] == store["experiment"]["backend"]


def test_an_app_given_by_url_is_loaded_through_the_sites_role(lab):
    """The sites container resolves the service's name, proxies to it and asks its health
    between loads; the harness never reaches it (it is on the other side of the router)."""
    run = lab["app_run"]
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    store = lab["app_store"]
    assert store["experiment"]["spec"]["name"] == "compose-app" and store["experiment"]["status"] == "complete"
    loads = store["loads"]
    assert len(loads) == 2 and all(load["ok"] and load["origins"] == ["https://shop.test"] for load in loads), loads
    sites = COMPOSE["services"]["sites"]["networks"]["server_side"]["ipv4_address"]
    log = lab["app_log"]
    assert log.count(f"{sites} - - ") >= 1 + 2, log[-3000:]  # ready, then after each load: from the sites role
    assert log.count('"GET / HTTP/1.1" 200') >= 1 + 2 + 2, log[-3000:]  # and the pages themselves, via nginx


def test_connections_agree_three_ways_and_warm_loads_hit_the_cache(lab):
    for load in lab["store"]["loads"]:
        browser, link, server = load["connections_browser"], load["connections_link"], load["connections_server"]
        assert browser == server >= len(load["origins"]), load["condition"]
        assert link >= browser
        if load["condition"]["cache"] == "warm":
            assert load["cache_hits"] > 0, load["condition"]["mode"]
        else:
            assert load["cache_hits"] == 0, load["condition"]["mode"]


def test_the_run_records_how_the_delay_program_was_scheduled(lab):
    """This engine cannot raise a container's rlimits; the router starts anyway (real time
    by capabilities) and the run says how the delay program actually ran."""
    scheduling = lab["store"]["experiment"]["meta"]["delay_scheduling"]
    assert scheduling.startswith(("SCHED_FIFO 50", "normal (SCHED_FIFO 50 refused")), scheduling
    assert "memory locked" in scheduling or "memory not locked (mlockall" in scheduling


def test_the_image_has_the_native_paths_chromium_and_nginx(lab):
    assert lab["image"].returncode == 0, lab["image"].stderr[-3000:]
    image, native = json.loads(lab["image"].stdout.strip().splitlines()[-1]), environment()
    for key in ("chromium_version", "nginx_version", "caddy_version", "python_version", "playwright_version"):
        assert image[key] == native[key], key


def test_a_bad_spec_is_one_line_and_leaves_the_lab_healthy(lab):
    for name, bad in lab["bad_specs"].items():
        assert bad.returncode != 0, name
        errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"test-spec/{name}" in errors[0], bad.stderr[-2000:]
        assert "Traceback" not in bad.stderr + bad.stdout
    services = [json.loads(line) for line in lab["ps_after_bad_spec"].stdout.splitlines() if line.strip()]
    assert {s["Service"]: (s["State"], s["Health"]) for s in services} == {
        name: ("running", "healthy") for name in LAB}


def test_compose_commands_need_no_grafana_password(lab):
    for name in ("ps_before", "logs", "down"):
        assert lab[name].returncode == 0, (name, lab[name].stderr[-2000:])
    assert "GRAFANA_ADMIN_PASSWORD" not in lab["down"].stderr


def test_down_leaves_nothing_of_the_project(lab):
    assert lab["left"] == {"containers": [], "networks": [], "volumes": []}


def test_a_killed_runs_leftovers_are_removed_by_the_next(engine: None, session_tag: str):
    """What a test killed halfway leaves (a container, a network, a volume of its project)
    is found by its label and removed."""
    stale = f"{PROJECT_PREFIX}killed{session_tag}"
    label = f"com.docker.compose.project={stale}"
    docker("network", "create", "--label", label, f"{stale}_control")
    docker("volume", "create", "--label", label, f"{stale}_pgdata")
    docker("create", "--label", label, "--name", f"{stale}-db-1", "debian:bookworm-slim", "true")
    assert stale in stale_projects()
    remove_project(stale)
    assert project_objects(stale) == {"containers": [], "networks": [], "volumes": []}
    assert stale not in stale_projects()
