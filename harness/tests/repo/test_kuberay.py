"""deploy/kuberay/: the RayCluster whose workers are labs, and its store, read.

The RayCluster is checked against KubeRay's own schema: the CRD of the ray-operator
release `harness/bootstrap test` fetches into the venv (KUBERAY_VERSION there; without it
these tests fail, naming that command, and never skip). Strictly, as kubectl's default
field validation applies a CRD: JSON Schema alone lets a misspelt key through. Planted
mistakes show the validator fails. What no schema says is checked apart, and fails on its
own planted mistakes: one lab per node, privileged labs, the custom resource as `ray
start` and KubeRay each read it, a head that runs no lab, probes the image can run, the
node's machine lock, and a database URL whose Service, user and database the store's
file defines. docs/scale.md's commands name the same resource, Secret and node label."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from sqlalchemy.engine import make_url

from tests.helpers import REPO

DEPLOY = REPO / "deploy" / "kuberay"
CLUSTER = DEPLOY / "raycluster.yaml"
STORE = DEPLOY / "postgres.yaml"
SCALE_DOC = REPO / "docs" / "scale.md"
RAY_DOCKERFILE = REPO / "harness" / "docker" / "ray" / "Dockerfile"
#: Beside the Python that runs the tests: where the test command installs the CRD.
VENV = Path(sys.prefix)
INSTALL_HINT = "run `sudo harness/bootstrap test` (it fetches KubeRay's CRD into .venv/share/kuberay)"
LAB = {"pagebench_lab": 1}
HOSTNAME = "kubernetes.io/hostname"

Document = dict[str, Any]


def pinned_kuberay_version() -> str:
    found = re.search(r'^KUBERAY_VERSION="([^"]+)"', (REPO / "harness" / "bootstrap").read_text(), re.M)
    assert found, "harness/bootstrap pins KUBERAY_VERSION"
    return found.group(1)


@functools.cache
def crd_schema() -> Document:
    """The v1 RayCluster schema of the pinned operator; fails (never skips) without it:
    a schema check that silently does not run proves nothing."""
    path = VENV / "share" / "kuberay" / pinned_kuberay_version() / "ray.io_rayclusters.yaml"
    if not path.is_file():
        pytest.fail(f"KubeRay's RayCluster CRD is not installed at {path}: {INSTALL_HINT}")
    crd = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)  # libyaml: its 900 KB in 0.3 s, not 5
    assert crd["kind"] == "CustomResourceDefinition" and crd["spec"]["group"] == "ray.io", path
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    assert version["served"] and version["storage"], "v1 is the version the API server keeps"
    return strict(version["schema"]["openAPIV3Schema"])


def strict(schema: Document) -> Document:
    """The schema as an API server applies it with strict field validation: an object
    that names its fields has no others (JSON Schema would allow any)."""
    out = dict(schema)
    if "properties" in schema:
        out["properties"] = {name: strict(sub) for name, sub in schema["properties"].items()}
        if "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    for key in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(key), dict):
            out[key] = strict(schema[key])
    for key in ("anyOf", "allOf", "oneOf"):
        if key in schema:
            out[key] = [strict(sub) for sub in schema[key]]
    return out


def schema_errors(document: Document, schema: Document | None = None) -> list[str]:
    validator = jsonschema.Draft4Validator(crd_schema() if schema is None else schema)
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(document)]


def cluster() -> Document:
    (document,) = yaml.safe_load_all(CLUSTER.read_text())
    return document


def store() -> list[Document]:
    return [document for document in yaml.safe_load_all(STORE.read_text()) if document]


def only(documents: list[Document], kind: str) -> Document:
    (found,) = [document for document in documents if document["kind"] == kind]
    return found


def ray_container(group: Document) -> Document:
    """KubeRay runs `ray start` in a group's first container."""
    return group["template"]["spec"]["containers"][0]


def env(container: Document) -> dict[str, Document]:
    return {variable["name"]: variable for variable in container.get("env", [])}


# What the schema cannot say ------------------------------------------------------------


def resources_offered(group: Document) -> dict[str, float]:
    """The custom resources a group's `ray start` offers. KubeRay pastes the value into a
    shell command (`--resources=VALUE`), and also reads it back itself: quote characters
    and spaces trimmed, then JSON (its accelerator detection, on every pod). Both readings
    must give the same JSON, or one of them fails."""
    value = group["rayStartParams"].get("resources")
    if value is None:
        return {}
    (word,) = shlex.split(f"--resources={value}")
    by_shell = json.loads(word.removeprefix("--resources="))
    by_kuberay = json.loads(value.strip("'\"` "))
    if by_shell != by_kuberay:
        raise ValueError(f"the shell reads {by_shell}, KubeRay {by_kuberay}")
    return by_shell


def lab_problems(group: Document, store_documents: list[Document]) -> list[str]:
    name, template = group["groupName"], group["template"]
    container = ray_container(group)
    found = []
    try:
        offered = resources_offered(group)
    except ValueError as error:
        found.append(f"{name}: rayStartParams.resources does not read as JSON both ways ({error})")
    else:
        if offered != LAB:
            found.append(f"{name}: offers {offered}, not one lab ({LAB})")
    if container.get("securityContext", {}).get("privileged") is not True:
        found.append(f"{name}: the lab's container is not privileged")
    terms = template["spec"].get("affinity", {}).get("podAntiAffinity", {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution", [])
    labels = template["metadata"]["labels"]
    if not any(term.get("topologyKey") == HOSTNAME and term.get("namespaceSelector") == {}
               and term["labelSelector"].get("matchLabels", {}).items() <= labels.items()
               and not term["labelSelector"].get("matchExpressions") for term in terms):
        found.append(f"{name}: no required anti-affinity keeps two labs (of any namespace) off one node")
    if "cpu" in container.get("resources", {}).get("limits", {}):
        found.append(f"{name}: a CPU limit throttles the lab in the middle of its loads")
    lock = env(container).get("PAGEBENCH_LOCK", {}).get("value")
    mounts = {mount["mountPath"]: mount["name"] for mount in container.get("volumeMounts", [])}
    volumes = {volume["name"]: volume for volume in template["spec"].get("volumes", [])}
    host = volumes.get(mounts.get(lock, ""), {}).get("hostPath", {})
    if lock is None or host.get("path") != lock or host.get("type") != "FileOrCreate":
        found.append(f"{name}: PAGEBENCH_LOCK is not the node's lock file (a hostPath at the same path)")
    return found + container_problems(name, container, store_documents)


def head_problems(head: Document, store_documents: list[Document]) -> list[str]:
    container = ray_container(head)
    found = []
    if resources_offered(head).get("pagebench_lab"):
        found.append("head: offers pagebench_lab, yet it runs the driver and Ray's control plane")
    if head["rayStartParams"].get("num-cpus") != "0":
        found.append("head: offers CPUs, so Ray may place tasks beside the driver")
    if container.get("securityContext", {}).get("privileged"):
        found.append("head: privileged, though it runs no lab")
    return found + container_problems("head", container, store_documents)


def container_problems(name: str, container: Document, store_documents: list[Document]) -> list[str]:
    """Probes the image can run, and a PAGEBENCH_DB that names the store's Service."""
    found = []
    for probe in ("readinessProbe", "livenessProbe"):
        command = " ".join(container.get(probe, {}).get("exec", {}).get("command", []))
        if not command:
            found.append(f"{name}: no {probe}: KubeRay adds one that runs wget, which the image lacks")
        elif "wget" in command or "curl" not in command:
            found.append(f"{name}: the {probe} needs a program the image lacks (it has curl)")
    variables = container.get("env", [])
    for index, variable in enumerate(variables):
        for reference in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", variable.get("value", "")):
            if reference not in {earlier["name"] for earlier in variables[:index]}:
                found.append(f"{name}: {variable['name']} uses $({reference}), not defined above it (left as text)")
    url = env(container).get("PAGEBENCH_DB", {}).get("value")
    if url is None:
        return found + [f"{name}: no PAGEBENCH_DB"]
    database = make_url(url.replace("$(PAGEBENCH_DB_PASSWORD)", "password"))
    service, statefulset = only(store_documents, "Service"), only(store_documents, "StatefulSet")
    postgres = env(statefulset["spec"]["template"]["spec"]["containers"][0])
    ports = {port["port"] for port in service["spec"]["ports"]}
    if database.drivername != "postgresql+psycopg":
        found.append(f"{name}: PAGEBENCH_DB's driver is {database.drivername}, not the compose lab's postgresql+psycopg")
    if database.host != service["metadata"]["name"] or (database.port or 5432) not in ports:
        found.append(f"{name}: PAGEBENCH_DB names {database.host}:{database.port}, not the store's Service")
    if (database.username, database.database) != (postgres["POSTGRES_USER"]["value"], postgres["POSTGRES_DB"]["value"]):
        found.append(f"{name}: PAGEBENCH_DB's user or database is not the store's")
    if env(container).get("PAGEBENCH_DB_PASSWORD", {}).get("valueFrom") != postgres["POSTGRES_PASSWORD"]["valueFrom"]:
        found.append(f"{name}: the password is not the store's Secret")
    return found


def problems(document: Document, store_documents: list[Document]) -> list[str]:
    spec = document["spec"]
    found = head_problems(spec["headGroupSpec"], store_documents)
    for group in spec["workerGroupSpecs"]:
        found += lab_problems(group, store_documents)
    return found


# The tests ------------------------------------------------------------------------------


def test_the_pinned_crd_is_installed():
    schema = crd_schema()
    assert set(schema["properties"]["spec"]["properties"]) >= {"headGroupSpec", "workerGroupSpecs", "rayVersion"}


def test_the_raycluster_is_valid_against_kuberays_schema():
    document = cluster()
    assert (document["apiVersion"], document["kind"]) == ("ray.io/v1", "RayCluster")
    assert schema_errors(document) == []
    # KubeRay's own rules for the name (a DNS-1035 label, at most 53 characters)
    assert re.fullmatch(r"[a-z]([-a-z0-9]*[a-z0-9])?", document["metadata"]["name"])
    assert len(document["metadata"]["name"]) <= 53


def _at(document: Document, path: str) -> tuple[Any, Any]:
    """The parent of a path like `spec/workerGroupSpecs/0/replicas`, and the last key."""
    *parents, last = [int(part) if part.isdigit() else part for part in path.split("/")]
    node: Any = document
    for part in parents:
        node = node[part]
    return node, last


def _set(path: str, value: Any) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        parent, key = _at(document, path)
        parent[key] = value
    return change


def _rename(path: str, new: str) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        parent, key = _at(document, path)
        parent[new] = parent.pop(key)
    return change


def _reverse(path: str) -> Callable[[Document], None]:
    def change(document: Document) -> None:
        parent, key = _at(document, path)
        parent[key].reverse()
    return change


WORKER = "spec/workerGroupSpecs/0"
LAB_CONTAINER = f"{WORKER}/template/spec/containers/0"


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (_set(f"{WORKER}/replicas", "two"), "'two' is not of type 'integer'"),
        (_rename(f"{WORKER}/rayStartParams", "rayStartParam"), "'rayStartParam' was unexpected"),
        (_set(f"{WORKER}/rayStartParams/resources", LAB), "is not of type 'string'"),
        (_set(f"{LAB_CONTAINER}/securityContext/privileged", "true"), "'true' is not of type 'boolean'"),
        (_rename(f"{WORKER}/groupName", "name"), "'groupName' is a required property"),
        (_rename(f"{WORKER}/template/spec/affinity/podAntiAffinity", "podAntiAfinity"), "'podAntiAfinity' was unexpected"),
    ],
)
def test_the_schema_catches_a_planted_mistake(change, needle):
    document = cluster()
    change(document)
    errors = schema_errors(document)
    assert any(needle in error for error in errors), errors


def test_what_the_schema_cannot_say_holds():
    assert problems(cluster(), store()) == []


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (_rename(f"{WORKER}/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution",
                 "preferredDuringSchedulingIgnoredDuringExecution"), "labs: no required anti-affinity"),
        (_set(f"{WORKER}/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/0/"
              "topologyKey", "topology.kubernetes.io/zone"), "labs: no required anti-affinity"),
        (_set(f"{LAB_CONTAINER}/securityContext/privileged", False), "labs: the lab's container is not privileged"),
        # unquoted, the shell splits the JSON at its space and eats its quotes
        (_set(f"{WORKER}/rayStartParams/resources", '{"pagebench_lab": 1}'), "does not read as JSON both ways"),
        # KubeRay's samples' form: right for the shell, but KubeRay's own reading keeps the backslashes
        (_set(f"{WORKER}/rayStartParams/resources", '"{\\"pagebench_lab\\": 1}"'), "does not read as JSON both ways"),
        (_set(f"{WORKER}/rayStartParams/resources", "'{\"pagebench_lab\": 2}'"), "not one lab"),
        (_set("spec/headGroupSpec/rayStartParams/resources", "'{\"pagebench_lab\": 1}'"), "head: offers pagebench_lab"),
        (_set(f"{LAB_CONTAINER}/resources/limits/cpu", "2"), "a CPU limit throttles"),
        (_rename(f"{LAB_CONTAINER}/livenessProbe", "startupProbe"), "labs: no livenessProbe"),
        (_set(f"{LAB_CONTAINER}/env/1/value", "postgresql+psycopg://pagebench:$(PAGEBENCH_DB_PASSWORD)@db/pagebench"),
         "not the store's Service"),
        (_reverse(f"{LAB_CONTAINER}/env"), "uses $(PAGEBENCH_DB_PASSWORD), not defined"),
        (_set(f"{WORKER}/template/spec/volumes", []), "PAGEBENCH_LOCK is not the node's lock file"),
        (_set(f"{WORKER}/template/spec/volumes/0/hostPath/path", "/run/pagebench"), "PAGEBENCH_LOCK is not the node's"),
    ],
)
def test_the_structural_checks_catch_a_planted_mistake(change, needle):
    document = cluster()
    change(document)
    found = problems(document, store())
    assert any(needle in problem for problem in found), found


def test_the_lock_is_where_a_native_run_takes_it():
    """A native `pagebench run` on a lab node and the lab in its pod exclude each other."""
    clean = {key: value for key, value in os.environ.items() if key not in ("PAGEBENCH_LOCK", "PAGEBENCH_STATE_DIR")}
    native = subprocess.run([sys.executable, "-c", "from pagebench.lab.machine import LOCK_PATH; print(LOCK_PATH)"],
                            capture_output=True, text=True, timeout=60, env=clean, check=True).stdout.strip()
    (group,) = cluster()["spec"]["workerGroupSpecs"]
    assert env(ray_container(group))["PAGEBENCH_LOCK"]["value"] == native


def test_the_probes_use_what_the_image_has():
    packages = (REPO / "harness" / "install" / "apt-packages.txt").read_text().split()
    assert "curl" in packages and "wget" not in packages


def test_the_pods_run_the_ray_image_built_on_the_labs():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    lines = RAY_DOCKERFILE.read_text().splitlines()
    assert [line for line in lines if line.startswith("FROM ")] == [f"FROM {compose['services']['harness']['image']}"]
    # the extra is the one place the cluster's Ray version is pinned; pip only warns of a missing one
    run = " ".join(line for line in lines if not line.startswith("#")).split("RUN ", 1)[1]
    assert "-e 'harness[ray]'" in run and "ray --version" in run
    (tag,) = re.findall(r"docker build .*-t (\S+) harness/docker/ray$", RAY_DOCKERFILE.read_text(), re.M)
    spec = cluster()["spec"]
    images = {ray_container(group)["image"] for group in [spec["headGroupSpec"], *spec["workerGroupSpecs"]]}
    assert images == {tag}
    statefulset = only(store(), "StatefulSet")
    assert statefulset["spec"]["template"]["spec"]["containers"][0]["image"] == compose["services"]["db"]["image"]


def test_the_store_is_a_service_over_a_statefulset():
    documents = store()
    assert sorted(document["kind"] for document in documents) == ["Service", "StatefulSet"]
    service, statefulset = only(documents, "Service"), only(documents, "StatefulSet")
    template = statefulset["spec"]["template"]
    # the pod template is the type KubeRay embeds: its schema checks this one too
    pod_template = crd_schema()["properties"]["spec"]["properties"]["headGroupSpec"]["properties"]["template"]
    assert schema_errors(template, pod_template) == []
    labels = template["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert statefulset["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert statefulset["spec"]["serviceName"] == service["metadata"]["name"]
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP"  # not published, as compose's db
    (container,) = template["spec"]["containers"]
    (port,) = service["spec"]["ports"]
    assert port["targetPort"] in {p["name"] for p in container["ports"]}
    # the compose lab's database and user
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]["db"]["environment"]
    variables = env(container)
    assert {key: variables[key]["value"] for key in ("POSTGRES_DB", "POSTGRES_USER")} == {
        key: compose[key] for key in ("POSTGRES_DB", "POSTGRES_USER")}
    # the data one level below the volume's root (initdb refuses a lost+found beside it)
    (mount,) = container["volumeMounts"]
    assert Path(variables["PGDATA"]["value"]).parent == Path(mount["mountPath"])
    assert [claim["metadata"]["name"] for claim in statefulset["spec"]["volumeClaimTemplates"]] == [mount["name"]]


def test_the_docs_commands_name_what_the_manifests_use():
    text = SCALE_DOC.read_text()
    assert text.startswith("# Scaling out on Ray\n")
    for heading in ("## Bare machines (`ray start`)", "## Kubernetes (KubeRay)", "## Cost model"):
        assert f"\n{heading}\n" in text, heading
    starts = [shlex.split(line.strip()) for line in text.splitlines() if re.match(r"\s*(sudo )?(\S+/)?ray start ", line)]
    labs = [words for words in starts if "--head" not in words]
    assert labs and [words for words in starts if "--head" in words], starts
    for words in labs:
        assert json.loads(words[words.index("--resources") + 1]) == LAB, words
    for words in starts:
        if "--head" in words:
            assert "--resources" not in words, "the head runs no lab"
    postgres = only(store(), "StatefulSet")["spec"]["template"]["spec"]["containers"][0]
    name = env(postgres)["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert f"kubectl create secret generic {name['name']} --from-literal={name['key']}=" in text
    (group,) = cluster()["spec"]["workerGroupSpecs"]
    ((label, value),) = group["template"]["spec"]["nodeSelector"].items()
    assert f"kubectl label node NODE {label}={value}" in text
