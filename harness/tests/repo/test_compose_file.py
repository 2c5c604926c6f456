"""docker-compose.yml and the images, read: the services and networks as the lab's
topology has them, the commands it runs exist, the images install with the very script
the test command runs. Compose itself validates the file in `test_compose_file_e2e.py`;
the lab runs in `tests/lab/split/test_compose_e2e.py`."""

from __future__ import annotations

import ipaddress
import re
import shlex
import subprocess
import sys

import yaml

from tests.helpers import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
DOCKERFILE = REPO / "harness" / "docker" / "Dockerfile"


def test_services_and_what_is_published():
    services = COMPOSE["services"]
    assert set(services) == {"db", "router", "sites", "harness", "grafana", "shop"}
    # only the lab's own start with a plain `docker compose up`: the example app is opt-in
    assert [name for name, service in services.items() if "profiles" in service] == ["shop"]
    assert [name for name, service in services.items() if "ports" in service] == ["grafana"]  # db not published
    assert services["grafana"]["ports"] == ["127.0.0.1:3000:3000"]
    env = services["grafana"]["environment"]
    assert env["GF_AUTH_ANONYMOUS_ENABLED"] == "true" and env["GF_AUTH_ANONYMOUS_ORG_ROLE"] == "Viewer"
    # No default password, and none needed to run `down`, `ps` or `logs`: Grafana alone refuses to start.
    assert env["GF_SECURITY_ADMIN_PASSWORD"] == "${GRAFANA_ADMIN_PASSWORD:-}"
    assert "GF_SECURITY_ADMIN_PASSWORD" in services["grafana"]["entrypoint"][-1]
    assert services["grafana"]["entrypoint"][-1].endswith("exec /run.sh")
    assert not any("GRAFANA" in str(service) for name, service in services.items() if name != "grafana")


def _networks(service: str) -> dict:
    networks = COMPOSE["services"][service]["networks"]
    return {name: {} for name in networks} if isinstance(networks, list) else networks


def test_the_router_sits_between_the_two_sides_as_in_the_native_topology():
    from pagebench.core.layout import MAX_SERVER_IPS, ORIGIN_NETWORK, ORIGIN_NETWORK6, Layout

    assert {"client_side", "server_side"} <= set(_networks("router"))
    assert "client_side" in _networks("harness") and "server_side" not in _networks("harness")
    assert "server_side" in _networks("sites") and "client_side" not in _networks("sites")
    topo = Layout("pbcompose", server_ips=MAX_SERVER_IPS)
    router, harness, sites = _networks("router"), _networks("harness"), _networks("sites")
    assert router["client_side"]["ipv4_address"] == topo.router_client_ip
    assert router["server_side"]["ipv4_address"] == topo.router_server_ip
    assert router["client_side"]["ipv6_address"] == topo.router_client_ip6
    assert router["server_side"]["ipv6_address"] == topo.router_server_ip6
    assert harness["client_side"]["ipv4_address"] == topo.client_ip
    # The origins' routed ranges are in no Docker network (Docker never allocates from them);
    # Docker's bridge addresses stay clear of the roles' own.
    origins = [ipaddress.ip_network(ORIGIN_NETWORK), ipaddress.ip_network(ORIGIN_NETWORK6)]
    taken = {topo.router_client_ip, topo.client_ip, topo.router_server_ip}
    for network in COMPOSE["networks"]:
        for config in COMPOSE["networks"][network].get("ipam", {}).get("config", []):
            subnet = ipaddress.ip_network(config["subnet"])
            assert ipaddress.ip_address(config["gateway"]) in subnet
            assert config["gateway"] not in taken | {sites["server_side"]["ipv4_address"]}, (network, config)
            assert not any(subnet.version == net.version and subnet.overlaps(net) for net in origins), network
    assert all(address in origins[0] for address in map(ipaddress.ip_address, topo.server_addresses))
    assert all(address in origins[1] for address in map(ipaddress.ip_address, topo.server_addresses6))
    # Control traffic has its own network: never across the measured link.
    assert {"control"} <= set(router) & set(harness) & set(sites) and COMPOSE["networks"]["control"]["internal"]
    assert "control" not in _networks("db") and "store" not in _networks("router")


def test_capabilities_are_only_what_each_role_needs():
    services = COMPOSE["services"]
    assert services["router"]["cap_add"] == ["NET_ADMIN", "SYS_NICE", "IPC_LOCK"]
    assert services["sites"]["cap_add"] == ["NET_ADMIN"]
    assert services["harness"]["cap_add"] == ["NET_ADMIN", "SYS_ADMIN", "SYS_NICE"]
    assert not any(service.get("privileged") or service.get("security_opt") for service in services.values())
    assert services["router"]["sysctls"]["net.ipv4.ip_forward"] == 1
    # Real time by capabilities, not rlimits: an engine that cannot raise a container's
    # rlimits refuses to start it at all ("error setting rlimit type 8").
    assert not any("ulimits" in service for service in services.values())
    # the endpoints' defaults, which a read-only /proc/sys cannot change later (link.endpoint)
    from pagebench.link.plan import sysctl_values
    from pagebench.core.profiles import make_profile

    wanted = sysctl_values(make_profile({"name": "defaults"}))
    for role in ("harness", "sites"):
        assert {k: str(v) for k, v in services[role]["sysctls"].items()} == wanted


def test_the_roles_add_their_routes_via_the_router():
    from pagebench.lab.split.endpoint import CLIENT_SIDE, SERVER_SIDE

    from pagebench.core.layout import ORIGIN_NETWORK, ORIGIN_NETWORK6

    for role, far in (("harness", SERVER_SIDE), ("sites", CLIENT_SIDE)):
        script = COMPOSE["services"][role]["command"][-1]
        for side in far:
            assert f"route replace {side.network} via {side.router}" in script, (role, side.network)
    # the router reaches the origins' range through the sites' address (`router.check_origin_routes`)
    sites = _networks("sites")["server_side"]
    script = COMPOSE["services"]["router"]["command"][-1]
    assert f"ip route replace {ORIGIN_NETWORK} via {sites['ipv4_address']} && " in script
    assert f"ip -6 route replace {ORIGIN_NETWORK6} via {sites['ipv6_address']} && " in script
    assert script.endswith("exec pagebench serve router --listen 198.18.2.1:8700")


def test_grafana_gets_what_the_provisioning_expects():
    grafana = COMPOSE["services"]["grafana"]
    mounts = {m.split(":")[1]: m.split(":")[0] for m in grafana["volumes"]}
    assert mounts["/etc/grafana/provisioning"] == "./dashboards/provisioning"
    provider = yaml.safe_load((REPO / "dashboards/provisioning/dashboards/pagebench.yaml").read_text())
    folder = provider["providers"][0]["options"]["path"]
    assert (REPO / mounts[folder].removeprefix("./")).is_dir()
    datasource = (REPO / "dashboards/provisioning/datasources/pagebench.yaml").read_text()
    for variable in set(re.findall(r"\$\{?(PAGEBENCH_[A-Z_]+)", datasource)):
        assert variable in grafana["environment"], variable


def _pagebench_invocations() -> list[tuple[str, list[str]]]:
    """(service, argv after `pagebench`) of every pagebench command a service runs."""
    found = []
    for name, service in COMPOSE["services"].items():
        command = service.get("command")
        if not command:
            continue
        scripts = [command[-1]] if command[0] == "bash" else [shlex.join(command)]
        for script in scripts:
            for part in re.split(r"&&|;|\|\|", script.replace("$$", "$")):
                words = shlex.split(part.strip())
                if words and words[0] == "exec":
                    words = words[1:]
                if words and words[0] == "pagebench":
                    found.append((name, words[1:]))
    return found


def test_every_pagebench_command_and_option_it_runs_exists():
    import typer.main

    from pagebench.cli.main import app

    root = typer.main.get_command(app)
    invocations = _pagebench_invocations()
    assert {(service, " ".join(w for w in argv[:2] if not w.startswith(("-", "$"))))
            for service, argv in invocations} >= {("router", "serve router"), ("sites", "serve sites")}
    assert [argv[0] for service, argv in invocations if service == "harness"] == ["run", "report"]
    for service, argv in invocations:
        command, rest = root, list(argv)
        while rest and hasattr(command, "commands") and rest[0] in command.commands:
            command = command.commands[rest.pop(0)]
        assert not hasattr(command, "commands"), (service, argv)  # a command, not a group
        options = {opt for param in command.params for opt in param.opts}
        for word in rest:
            if word.startswith("--"):
                assert word.split("=")[0] in options, (service, word)
        help_ = subprocess.run([sys.executable, "-m", "pagebench", *argv[:len(argv) - len(rest)], "--help"],
                               capture_output=True, text=True)
        assert help_.returncode == 0, (argv, help_.stderr)
    (run,) = [argv for service, argv in invocations if argv[0] == "run"]
    router = run[run.index("--router") + 1]
    sites = run[run.index("--sites") + 1]
    listen = {service: argv[argv.index("--listen") + 1] for service, argv in invocations if argv[0] == "serve"}
    assert router == f"http://{listen['router']}" and sites == f"http://{listen['sites']}"
    assert listen["router"].split(":")[0] == _networks("router")["control"]["ipv4_address"]
    assert listen["sites"].split(":")[0] == _networks("sites")["control"]["ipv4_address"]
    assert "--db" in run and "--db" in [argv for s, argv in invocations if argv[0] == "report"][0]


def test_the_image_installs_with_the_test_commands_own_script():
    lines = DOCKERFILE.read_text().splitlines()
    assert [line for line in lines if line.startswith("FROM ")] == ["FROM debian:bookworm-slim"]
    database = (REPO / COMPOSE["services"]["db"]["build"]["dockerfile"]).read_text().splitlines()
    assert [line for line in database if line.startswith("FROM ")] == ["FROM debian:bookworm-slim"]
    # every image but Grafana's is built here, with the host's network (no bridge or NAT needed)
    built = [name for name, service in COMPOSE["services"].items() if "build" in service]
    assert sorted(built) == ["db", "harness", "router", "shop", "sites"]
    assert all(COMPOSE["services"][name]["build"]["network"] == "host" for name in built)
    assert any(line.startswith("RUN ") and "harness/bootstrap install" in line for line in lines)
    bootstrap = (REPO / "harness" / "bootstrap").read_text()
    test_branch = bootstrap.split("  test)", 1)[1].split(";;", 1)[0]
    install_branch = bootstrap.split("  install)", 1)[1].split(";;", 1)[0]
    assert "install_all" in test_branch and "install_all" in install_branch  # one install, both paths
    # The code is copied last, so a change of it rebuilds the install alone: the layers
    # before it copy only the install script, its package lists and pyproject.toml.
    copies = [line for line in lines if line.startswith("COPY ")]
    assert copies[-1] == "COPY . /pagebench" and all(
        line.split()[1] in ("harness/bootstrap", "harness/install", "harness/pyproject.toml") for line in copies[:-1])
    runs = [line for line in lines if line.startswith("RUN ")]
    assert runs[-1].startswith("RUN bash harness/bootstrap install ") and lines.index(runs[-1]) > lines.index(copies[-1])
    assert [run.split()[3] for run in runs[:-1]] == ["system", "dependencies"]
    for role in ("router", "sites", "harness"):  # one image, the same code in every role
        assert COMPOSE["services"][role]["build"]["dockerfile"] == str(DOCKERFILE.relative_to(REPO))
        assert COMPOSE["services"][role]["image"] == "pagebench:local"


def _mounts(service: str) -> dict[str, str]:
    """Container path -> (host path, options) of a service's volumes."""
    found = {}
    for volume in COMPOSE["services"][service]["volumes"]:
        host, inside, *options = volume.split(":") if not volume.startswith("${") else _split_variable(volume)
        found[inside] = ":".join([host, *options])
    return found


def _split_variable(volume: str) -> list[str]:
    """`${VAR:-default}:/inside:ro` split at the colons outside the variable."""
    end = volume.index("}") + 1
    return [volume[:end], *volume[end + 1:].split(":")]


def test_the_specs_directory_is_at_the_same_path_in_harness_and_sites_and_reports_reach_the_host():
    """The sites role reads a spec's folder and directory sites at the path the harness
    sends (`RemoteSites`: the spec's directory); the harness writes reports to ./results."""
    harness, sites = _mounts("harness"), _mounts("sites")
    specs = "${PAGEBENCH_SPECS:-./experiments}"
    assert harness["/pagebench/experiments"] == sites["/pagebench/experiments"] == f"{specs}:ro"
    assert (REPO / "experiments" / "demo.yaml").is_file()  # the default spec is in it
    default = COMPOSE["services"]["harness"]["environment"]["PAGEBENCH_SPEC"]
    assert default == "${PAGEBENCH_SPEC:-experiments/demo.yaml}"
    assert harness["/pagebench/results"] == "./results" and (REPO / "results").is_dir()  # writable
    assert harness["/var/lib/pagebench/tls"] == sites["/var/lib/pagebench/tls"] == "pki"


def test_the_example_app_is_a_service_on_the_server_side_outside_the_origins_addresses():
    from pagebench.core.layout import MAX_SERVER_IPS, Layout
    from pagebench.lab.sites import resolve

    shop = COMPOSE["services"]["shop"]
    assert shop["profiles"] == ["app"] and set(_networks("shop")) == {"server_side"}
    topo = Layout("pbcompose", server_ips=MAX_SERVER_IPS)
    address, address6 = _networks("shop")["server_side"]["ipv4_address"], _networks("shop")["server_side"]["ipv6_address"]
    subnets = [ipaddress.ip_network(c["subnet"]) for c in COMPOSE["networks"]["server_side"]["ipam"]["config"]]
    assert any(ipaddress.ip_address(address) in net for net in subnets)
    assert any(ipaddress.ip_address(address6) in net for net in subnets)
    others = {_networks("sites")["server_side"]["ipv4_address"], _networks("router")["server_side"]["ipv4_address"],
              *(c["gateway"] for c in COMPOSE["networks"]["server_side"]["ipam"]["config"])}
    assert address not in set(topo.server_addresses) | others and address6 not in set(topo.server_addresses6)
    # An address Docker picks is the first free one: on an IPv6 network that was the router's
    # (it starts later, and fails "Address already in use"), so both are fixed.
    assert address6 not in {_networks(role)["server_side"]["ipv6_address"] for role in ("router", "sites")}
    assert "cap_add" not in shop and "volumes" not in shop  # nothing of the lab's: an app as a team runs it
    # The spec that gates it names it by its service name and the port its image serves.
    dockerfile = (REPO / shop["build"]["dockerfile"]).read_text()
    assert "-b\", \"0.0.0.0:8000\"" in dockerfile and "COPY examples/shop /shop" in dockerfile
    assert [line for line in dockerfile.splitlines() if line.startswith("FROM ")] == ["FROM debian:bookworm-slim"]
    assert "8000/health" in shop["healthcheck"]["test"][-1]
    spec = yaml.safe_load((REPO / "experiments" / "shop-compose.yaml").read_text())
    (entry,) = spec["sites"]
    site = resolve(entry, REPO / "experiments")
    assert site.app is not None and site.app.host_port == ("shop", 8000) and site.app.ready == "/health"
