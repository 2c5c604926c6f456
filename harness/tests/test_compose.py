"""docker-compose.yml and the image: valid Compose, the commands it runs exist, the image
installs with the very script the test command runs. No Docker engine runs here, so
this is what can be checked without one."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

from pagebench import REPO_ROOT

COMPOSE = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
SCHEMA = Path("/work/shared/schemas/compose-spec.json")
DOCKERFILE = REPO_ROOT / "harness" / "docker" / "Dockerfile"


def test_compose_file_is_valid_against_the_compose_specification():
    schema = json.loads(SCHEMA.read_text()) if SCHEMA.exists() else None
    if schema is None:  # outside these machines: the schema ships with the Compose spec
        import pytest
        pytest.skip(f"{SCHEMA} not here")
    jsonschema.Draft7Validator(schema).validate(COMPOSE)  # the schema declares draft-07


def test_services_and_what_is_published():
    services = COMPOSE["services"]
    assert set(services) >= {"db", "harness", "grafana"}
    assert "ports" not in services["db"] and "ports" not in services["harness"]
    assert services["grafana"]["ports"] == ["127.0.0.1:3000:3000"]
    env = services["grafana"]["environment"]
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "true" and env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"
    assert env["GF_SECURITY_ADMIN_PASSWORD"].startswith("${GRAFANA_ADMIN_PASSWORD:?")  # no default password


def test_grafana_gets_what_the_provisioning_expects():
    grafana = COMPOSE["services"]["grafana"]
    mounts = {m.split(":")[1]: m.split(":")[0] for m in grafana["volumes"]}
    assert mounts["/etc/grafana/provisioning"] == "./dashboards/provisioning"
    provider = yaml.safe_load((REPO_ROOT / "dashboards/provisioning/dashboards/pagebench.yaml").read_text())
    folder = provider["providers"][0]["options"]["path"]
    assert (REPO_ROOT / mounts[folder].removeprefix("./")).is_dir()
    datasource = (REPO_ROOT / "dashboards/provisioning/datasources/pagebench.yaml").read_text()
    for variable in set(re.findall(r"\$\{?(PAGEBENCH_[A-Z_]+)", datasource)):
        assert variable in grafana["environment"], variable


def test_every_pagebench_command_it_runs_exists():
    command = COMPOSE["services"]["harness"]["command"]
    script = command[-1].replace("$$", "$")
    used = {words[1] for part in re.split(r"&&|;|\|\|", script)
            if (words := shlex.split(part.strip())) and words[0] == "pagebench"}
    assert used == {"run", "report"}
    for sub in used:
        help_ = subprocess.run([sys.executable, "-m", "pagebench", sub, "--help"], capture_output=True, text=True)
        assert help_.returncode == 0, (sub, help_.stderr)
    assert "--db" in script


def test_the_image_installs_with_the_test_commands_own_script():
    lines = DOCKERFILE.read_text().splitlines()
    assert [line for line in lines if line.startswith("FROM ")] == ["FROM debian:bookworm-slim"]
    assert any(line.startswith("RUN ") and "harness/bootstrap install" in line for line in lines)
    bootstrap = (REPO_ROOT / "harness" / "bootstrap").read_text()
    test_branch = bootstrap.split("  test)", 1)[1].split(";;", 1)[0]
    install_branch = bootstrap.split("  install)", 1)[1].split(";;", 1)[0]
    assert "install_all" in test_branch and "install_all" in install_branch  # one install, both paths
    assert COMPOSE["services"]["harness"]["build"]["dockerfile"] == str(DOCKERFILE.relative_to(REPO_ROOT))
