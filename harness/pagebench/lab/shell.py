"""`pagebench shell`: bring the lab up (sites served, link applied), run a command in the
client namespace, tear everything down when it exits. Mahimahi's shells, for any tool:
curl, h2load, another browser, another harness."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from pagebench.core.modes import Mode
from pagebench.core.servers import plan as serverplan
from pagebench.core.layout import Layout
from pagebench.core.profiles import Profile
from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.lab import sites as sitefiles, tls
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.origins import OriginServers
from pagebench.link.emulator import Link
from pagebench.system.places import run_prefix


def lab_environment(server_plan: serverplan.ServerPlan, site_list: list[Site], mode: Mode, tls_version: str,
                    profile: Profile, backend: str) -> dict[str, str]:
    """What a tool in the client namespace needs to reach the sites as the browser would."""
    rules = server_plan.host_resolver_rules(mode, tls_version, block_others=True)  # no real DNS, ever
    resolve = " ".join(f"{b.origin}:{b.port}:{b.ip}" for b in server_plan.select(mode, tls_version))
    quic = (f" --origin-to-force-quic-on={server_plan.force_quic_on(mode, tls_version)}"
            if mode.quic else "")
    return {
        "PAGEBENCH_URL": serverplan.browser_url(site_list[0].entry, tls_version, "direct"),
        "PAGEBENCH_URLS": " ".join(serverplan.browser_url(site.entry, tls_version, "direct") for site in site_list),
        "PAGEBENCH_HOST_RESOLVER_RULES": rules,
        "PAGEBENCH_SPKI_LIST": tls.spki_list(),
        "PAGEBENCH_CHROMIUM_FLAGS": f"--host-resolver-rules={rules} --ignore-certificate-errors-spki-list="
                                    f"{tls.spki_list()}{quic}",
        "PAGEBENCH_CA": str(tls.ca_path()),
        "PAGEBENCH_CURL_RESOLVE": resolve,  # for curl: --resolve each entry
        "PAGEBENCH_MODE": mode.name,
        "PAGEBENCH_TLS": tls_version,
        "PAGEBENCH_PROFILE": profile.name,
        "PAGEBENCH_BACKEND": backend,
    }


def run_shell(command: Sequence[str], site_list: list[GeneratedSite | Site], mode: Mode, tls_version: str,
              profile: Profile, backend: str | None = None) -> int:
    """Run `command` in the lab; returns its exit status. The lab is gone afterwards."""
    materialized = [sitefiles.materialize(site) for site in site_list]
    server_plan = serverplan.plan(materialized, [mode], [tls_version])
    with NamespaceBed(Layout(run_prefix(), server_ips=server_plan.ip_count)) as bed:
        link = Link(bed, backend)
        link.apply(profile)
        with OriginServers(bed, server_plan, bed.state_dir):
            env = os.environ | lab_environment(server_plan, materialized, mode, tls_version, profile, link.backend)
            proc = subprocess.Popen(bed.exec_argv(bed.layout.client, list(command)), env=env)
            try:
                return proc.wait()
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    proc.wait()
