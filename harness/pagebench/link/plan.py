"""What applying a profile means, as exact commands and rule sets, for both backends.

Pure. Both backends share the bottleneck (htb + bfifo on the router's egress veths),
the firewall counters, the MSS clamp and the endpoints' TCP knobs; they differ only in
where delay, jitter and loss happen:

* `netem`: a netem qdisc at the root of each router egress veth, with the htb
  bottleneck as its child, so a packet is delayed first and then queued at the rate;
* `userspace`: `pagebench-delay` holds packets from NFQUEUE in the router's raw
  PREROUTING path (fail closed: no `--queue-bypass`), then the same htb bottleneck.

A profile's `modem_compression` (a V.42bis modem's line) is the userspace backend's
alone: there `pagebench-delay` is the line itself, serializing each packet at the rate by
what V.42bis makes of its payload (its headers and framing as they are), in place of htb;
netem refuses it (`check_backend_profile`).

A profile's `rwnd_bytes` is the same in both: the client's TCP packets go to a third
NFQUEUE at the end of mangle FORWARD, where `pagebench-delay` lowers their window field
to the clamp and strips window scaling from SYNs (the kernel's own clamps do not hold:
docs/benchmarks.md). With netem the program runs for that alone (`--no-delay-queues`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from pagebench.core.profiles import FRAME_BYTES, Profile, ProfileError
from pagebench.core.layout import ORIGIN_NETWORK, ORIGIN_NETWORK6, Command, Layout
from pagebench.link.calibration import Hold, holds_us

BACKENDS = ("netem", "userspace")
UP_QUEUE, DOWN_QUEUE, RWND_QUEUE = 0, 1, 2
#: Linux defaults, set explicitly so a host's own tuning never leaks into a run.
DEFAULT_RMEM = (4096, 131072, 6291456)
DEFAULT_WMEM = (4096, 16384, 4194304)
#: netem's queue holds every packet in flight on the delay line: never the bottleneck.
NETEM_LIMIT_PACKETS = 1_000_000
#: The delay program busy-waits this long before a release (timer wake-ups here are
#: 30-100 µs late). 50 µs left more CPU to the browser but raised the RTT bias to
#: +0.3-0.4 ms and lateness p99 to 0.6 ms at times; 150 µs keeps them at +0.2 ms and
#: under 0.1 ms (docs/benchmarks.md).
SPIN_US = 150
#: Comment tags of the counting rules, read back by `counters.parse_iptables_save`.
COUNTER_TAGS = ("up", "down", "tcp_conns", "udp_flows")


def check_backend(requested: str | None) -> None:
    """A backend's name refused as bad input before anything is locked, probed or built."""
    if requested is not None and requested not in BACKENDS:
        raise ProfileError(f"--backend: unknown backend {requested!r}; allowed: {', '.join(BACKENDS)}")


def check_backend_profile(backend: str, profile: Profile) -> None:
    """A profile the backend cannot emulate, refused in one line before anything runs."""
    if backend == "netem" and profile.modem_compression is not None:
        raise ProfileError(f"profile {profile.name}: modem_compression: {profile.modem_compression} needs the "
                           "userspace backend (--backend userspace, or `backend: userspace` in the spec); "
                           "netem's line does not compress")


@dataclass(frozen=True)
class LinkPlan:
    backend: str
    endpoint: list[Command]
    router_tc: list[Command]
    rules_v4: str
    rules_v6: str
    delay_argv: tuple[str, ...] | None = None
    notes: list[str] = field(default_factory=list)


def rate_bits(mbit: float) -> int:
    return round(mbit * 1_000_000)


def htb_commands(ns: str, dev: str, parent: str, handle: int, mbit: float, limit: int) -> list[Command]:
    """An htb class at `mbit` with a byte-limited tail-drop fifo under it.

    Burst is one millisecond at the rate plus a frame: enough for timer granularity at
    100 Mbit/s, and >= 1600 bytes so a full frame never exceeds it.
    """
    bits = rate_bits(mbit)
    burst = max(1600, math.ceil(bits / 8 / 1000) + FRAME_BYTES)
    h = f"{handle:x}"
    where = ("root",) if parent == "root" else ("parent", parent)
    return [
        ("tc", "-n", ns, "qdisc", "replace", "dev", dev) + where + ("handle", f"{h}:", "htb", "default", "1"),
        ("tc", "-n", ns, "class", "replace", "dev", dev, "parent", f"{h}:", "classid", f"{h}:1", "htb",
         "rate", f"{bits}bit", "ceil", f"{bits}bit", "burst", str(burst), "cburst", str(burst),
         "quantum", str(FRAME_BYTES)),
        ("tc", "-n", ns, "qdisc", "replace", "dev", dev, "parent", f"{h}:1", "handle", f"{handle + 0x10:x}:",
         "bfifo", "limit", str(limit)),
    ]


def directions(topo: Layout, profile: Profile) -> list[tuple[str, str, float | None]]:
    """(name, router egress device, rate) for each direction."""
    return [
        ("up", topo.router_server_if, profile.up_mbit),
        ("down", topo.router_client_if, profile.down_mbit),
    ]


def reset_commands(topo: Layout) -> list[Command]:
    """Remove any previous root qdisc (a fresh veth has none, so failures are expected)."""
    return [("tc", "-n", topo.router, "qdisc", "del", "dev", dev, "root")
            for dev in (topo.router_server_if, topo.router_client_if)]


def sysctl_values(profile: Profile) -> dict[str, str]:
    """An endpoint's per-namespace TCP sysctls for a profile (both endpoints, both labs)."""
    return {
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_rmem": " ".join(map(str, profile.tcp_rmem or DEFAULT_RMEM)),
        "net.ipv4.tcp_wmem": " ".join(map(str, profile.tcp_wmem or DEFAULT_WMEM)),
        # the IPv4 names hold for IPv6 connections too
        "net.ipv4.tcp_window_scaling": str(int(profile.window_scaling)),
        "net.ipv4.tcp_sack": str(int(profile.sack)),
        "net.ipv4.tcp_timestamps": str(int(profile.timestamps)),
    }


def route_options(profile: Profile) -> tuple[str, ...]:
    """An endpoint's per-route TCP options: initial window, congestion control."""
    options: tuple[str, ...] = ()
    if profile.initcwnd is not None:
        options += ("initcwnd", str(profile.initcwnd))
    return options + ("congctl", profile.congctl)


def endpoint_commands(topo: Layout, profile: Profile) -> list[Command]:
    """Client and server TCP knobs: sysctls, and per-route congestion control / initcwnd."""
    route_opts = route_options(profile)
    sysctls = tuple(f"{name}={value}" for name, value in sysctl_values(profile).items())
    cmds: list[Command] = []
    for ns, gw4, gw6 in (
        (topo.client, topo.router_client_ip, topo.router_client_ip6),
        (topo.server, topo.router_server_ip, topo.router_server_ip6),
    ):
        cmds.append(("ip", "netns", "exec", ns, "sysctl", "-qw", *sysctls))
        cmds.append(("ip", "-n", ns, "route", "replace", "default", "via", gw4, "dev", topo.endpoint_if) + route_opts)
        cmds.append(("ip", "-n", ns, "-6", "route", "replace", "default", "via", gw6, "dev", topo.endpoint_if)
                    + route_opts)
    return cmds


def firewall_rules(topo: Layout, profile: Profile, queue: bool, ipv6: bool = False) -> str:
    """An iptables-restore document for one address family.

    The offered packets of each direction are counted (and, for the userspace backend,
    queued to the delay program) in `raw PREROUTING`, before conntrack: so conntrack sees
    packets after the delay, in release order, and the first packet of a flow is
    confirmed before the next one arrives. New TCP connections and UDP flows are then
    counted at POSTROUTING as the packets that are not yet confirmed: a retransmitted
    SYN is not counted twice. Forwarding anything else is dropped (fail closed).

    With `rwnd_bytes`, the client's TCP packets are queued to the window clamp as the
    last rule of mangle FORWARD: after the MSS clamp, and last because an accepted
    packet resumes at the next table, skipping any rule after it. No `--queue-bypass`:
    without the program they drop rather than pass unclamped.
    """
    rc, rs = topo.router_client_if, topo.router_server_if
    # the server's link subnet and the origins' range routed through it (core.layout)
    to_server = ("2001:2:0:1::/64", ORIGIN_NETWORK6) if ipv6 else ("198.18.1.0/24", ORIGIN_NETWORK)
    to_client = "2001:2::/64" if ipv6 else "198.18.0.0/24"
    up = f" -j NFQUEUE --queue-num {UP_QUEUE}" if queue else ""
    down = f" -j NFQUEUE --queue-num {DOWN_QUEUE}" if queue else ""
    raw = [
        "*raw",
        *(f"-A PREROUTING -i {rc} -d {network} -m comment --comment pb:up{up}" for network in to_server),
        f"-A PREROUTING -i {rs} -d {to_client} -m comment --comment pb:down{down}",
        "COMMIT",
    ]
    mangle = ["*mangle"]
    if profile.mss is not None:
        mangle.append(f"-A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss {profile.mss}")
    if profile.rwnd_bytes is not None:
        mangle.append(f"-A FORWARD -i {rc} -o {rs} -p tcp -j NFQUEUE --queue-num {RWND_QUEUE}")
    mangle += [
        f"-A POSTROUTING -o {rs} -p tcp --tcp-flags SYN,ACK,RST SYN -m conntrack ! --ctstatus CONFIRMED"
        " -m comment --comment pb:tcp_conns",
        f"-A POSTROUTING -o {rs} -p udp -m conntrack ! --ctstatus CONFIRMED -m comment --comment pb:udp_flows",
        "COMMIT",
    ]
    filt = [
        "*filter",
        ":FORWARD DROP [0:0]",
        f"-A FORWARD -i {rc} -o {rs} -j ACCEPT",
        f"-A FORWARD -i {rs} -o {rc} -j ACCEPT",
        "COMMIT",
    ]
    return "\n".join(raw + mangle + filt) + "\n"


def rwnd_args(profile: Profile) -> tuple[str, ...]:
    """`pagebench-delay`'s options for the profile's window clamp (none without one)."""
    if profile.rwnd_bytes is None:
        return ()
    return ("--rwnd-queue", str(RWND_QUEUE), "--rwnd-bytes", str(profile.rwnd_bytes))


def modem_args(profile: Profile) -> tuple[str, ...]:
    """`pagebench-delay`'s options for a compressing modem's line (none without one): the
    rates and queues htb would have had, and V.42bis's N2 and N7."""
    if profile.modem_compression is None or profile.up_mbit is None or profile.down_mbit is None:
        return ()
    args: tuple[str, ...] = ()
    for name, mbit in (("up", profile.up_mbit), ("down", profile.down_mbit)):
        args += (f"--{name}-rate-bps", str(rate_bits(mbit)),
                 f"--{name}-queue-bytes", str(profile.queue_limit_bytes(mbit)))
    return args + ("--v42bis", str(profile.v42bis_codewords), "--v42bis-max-string", str(profile.v42bis_max_string))


def modem_notes(profile: Profile) -> list[str]:
    if profile.modem_compression is None:
        return []
    return [f"the line compresses by V.42bis (N2 {profile.v42bis_codewords} codewords, N7 "
            f"{profile.v42bis_max_string}): a packet holds it for its headers and its payload's compressed size"]


def rwnd_notes(profile: Profile) -> list[str]:
    """What the clamp means for a run's reader: the rate it allows one connection."""
    if profile.rwnd_bytes is None:
        return []
    note = f"client receive window clamped to {profile.rwnd_bytes} B at the router (window scaling off both ways)"
    if profile.rtt_ms:
        note += f": one TCP connection at most {profile.rwnd_bytes * 8 / profile.rtt_ms / 1000:.3g} Mbit/s"
    return [note]


def netem_plan(topo: Layout, profile: Profile, program: Path | None = None, stats: Path | None = None) -> LinkPlan:
    """`program` and `stats` run `pagebench-delay` for the window clamp alone (only with
    `rwnd_bytes`; netem does the rest)."""
    check_backend_profile("netem", profile)
    tc: list[Command] = []
    for _, dev, mbit in directions(topo, profile):
        netem: Command = ("tc", "-n", topo.router, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem",
                          "limit", str(NETEM_LIMIT_PACKETS), "delay", f"{profile.one_way_delay_us}us")
        if profile.jitter_us:
            netem += (f"{profile.jitter_us}us",)
        if profile.loss_pct:
            netem += ("loss", "random", f"{profile.loss_pct:g}%")
        tc.append(netem)
        if mbit is not None:
            tc += htb_commands(topo.router, dev, "1:1", 2, mbit, profile.queue_limit_bytes(mbit))
    notes = ["netem reorders packets when jitter exceeds the packet spacing"] if profile.jitter_us else []
    argv = None
    if profile.rwnd_bytes is not None:
        if program is None or stats is None:
            raise ValueError("netem_plan: rwnd_bytes needs the delay program and its stats file")
        argv = ("ip", "netns", "exec", topo.router, str(program), "--no-delay-queues", *rwnd_args(profile),
                "--stats", str(stats))
    return LinkPlan("netem", endpoint_commands(topo, profile), tc, firewall_rules(topo, profile, False),
                    firewall_rules(topo, profile, False, ipv6=True), argv, notes + rwnd_notes(profile))


def userspace_plan(topo: Layout, profile: Profile, program: Path, stats: Path, seed: int,
                   hold: Hold = Hold()) -> LinkPlan:
    """`hold`: the link check's calibration (`link.calibration`): its offset taken off the
    round trip's holds, half each way, and its cold releases issued early."""
    tc: list[Command] = []
    for _, dev, mbit in directions(topo, profile):
        if mbit is not None and profile.modem_compression is None:  # a modem's line is the program's
            tc += htb_commands(topo.router, dev, "root", 1, mbit, profile.queue_limit_bytes(mbit))
    up, down = holds_us(profile, hold)
    jitter = str(profile.jitter_us)
    loss = f"{profile.loss_pct / 100:.6g}"
    argv = (
        "ip", "netns", "exec", topo.router, str(program),
        "--up-queue", str(UP_QUEUE), "--down-queue", str(DOWN_QUEUE),
        "--up-delay-us", str(up), "--down-delay-us", str(down),
        "--up-jitter-us", jitter, "--down-jitter-us", jitter,
        "--up-loss", loss, "--down-loss", loss,
        "--seed", str(seed), "--stats", str(stats), "--spin-us", str(SPIN_US),
    ) + (("--cold-early-us", str(hold.cold_us)) if hold.cold_us else ()) + modem_args(profile) + rwnd_args(profile)
    return LinkPlan("userspace", endpoint_commands(topo, profile), tc, firewall_rules(topo, profile, True),
                    firewall_rules(topo, profile, True, ipv6=True), argv, modem_notes(profile) + rwnd_notes(profile))
