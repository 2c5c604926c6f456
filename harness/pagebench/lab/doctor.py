"""`pagebench doctor`: what this machine has, what is missing, and the command that fixes it."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pagebench.core.servers.nginxreplay import ECHO_MODULE
from pagebench.lab.servers.caddy import CADDY, caddy_version
from pagebench.lab.servers.nginx import ServerError
from pagebench.link.emulator import DELAY_PROGRAM, netem_available
from pagebench.system.commands import LabError, probe_in_throwaway_namespace

INSTALL = "sudo harness/bootstrap install"


@dataclass(frozen=True)
class Finding:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True


def _tool(name: str, package: str, why: str, required: bool = True) -> Finding:
    path = shutil.which(name)
    if path:
        return Finding(name, True, path, required=required)
    return Finding(name, False, f"missing ({why})", f"sudo apt-get install {package}", required)


def _echo_module() -> Finding:
    """nginx's echo module: an imported site's server think time (`echo_sleep`)."""
    if Path(ECHO_MODULE).is_file():
        return Finding("nginx echo module", True, ECHO_MODULE, required=False)
    return Finding("nginx echo module", False, "missing (server think time of imported sites)",
                   "sudo apt-get install libnginx-mod-http-echo", required=False)


def _caddy() -> Finding:
    """The HTTP/3 server: the release `harness/bootstrap install` builds (or PAGEBENCH_CADDY).
    Before 2.7 (Debian 12 has 2.6.2) its quic-go drops the second Initial packet of
    Chromium's ClientHello, so most cold h3 handshakes would take 3 RTT instead of 1."""
    why = "HTTP/3, mode h3"
    if not os.access(CADDY, os.X_OK):
        return Finding("caddy", False, f"{CADDY}: not built ({why})", INSTALL, required=False)
    try:
        version = caddy_version(CADDY)
    except (ServerError, LabError) as error:
        return Finding("caddy", False, f"{error} ({why})", INSTALL, required=False)
    major, minor = (int(part) for part in version.split(".")[:2])
    if (major, minor) < (2, 7):
        return Finding("caddy", False, f"{CADDY} is {version}: its quic-go (< 0.35) loses half of Chromium's "
                       "ClientHello", INSTALL, required=False)
    return Finding("caddy", True, f"{CADDY} ({version})", required=False)


def diagnose() -> list[Finding]:
    root = os.geteuid() == 0
    findings = [
        Finding("root / CAP_NET_ADMIN", root, "yes" if root else "not root: namespaces cannot be created",
                "run pagebench with sudo"),
        _tool("ip", "iproute2", "namespaces, veths, routes"),
        _tool("tc", "iproute2", "rate and queue"),
        _tool("iptables", "iptables", "NFQUEUE, counters, MSS clamp"),
        _tool("ip6tables", "iptables", "IPv6 rules"),
        _tool("ethtool", "ethtool", "turning off TSO/GSO/GRO on veths"),
        _tool("chromium-headless-shell", "chromium-headless-shell", "the browser under test", required=False),
        _tool("nginx", "nginx-light", "the test sites", required=False),
        _echo_module(),
        _caddy(),
    ]
    if root and shutil.which("tc"):
        netem = netem_available()
        findings.append(Finding(
            "sch_netem", netem,
            "available: backend netem" if netem else "not in this kernel: backend userspace will be used",
            "" if netem else "(optional) sudo modprobe sch_netem", required=False,
        ))
        htb = probe_in_throwaway_namespace(["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb"])
        findings.append(Finding("sch_htb", htb, "available" if htb else "missing: no rate limiting",
                                "sudo modprobe sch_htb"))
    if root and shutil.which("iptables"):
        nfq = probe_in_throwaway_namespace(["iptables", "-A", "FORWARD", "-j", "NFQUEUE", "--queue-num", "0"])
        findings.append(Finding("NFQUEUE", nfq, "available" if nfq else "iptables cannot load the NFQUEUE target",
                                "sudo modprobe nfnetlink_queue xt_NFQUEUE"))
    built = Path(DELAY_PROGRAM).exists()
    findings.append(Finding("pagebench-delay", built, str(DELAY_PROGRAM) if built else "not built",
                            "make -C netem"))
    return findings
