"""Link plans: the exact tc, ip, sysctl and iptables-restore input of both backends.

The netem backend cannot run where sch_netem is missing, so these are its only guard.
"""

from pathlib import Path

import pytest

from pagebench.core.layout import Layout
from pagebench.core.profiles import ProfileError, make_profile
from pagebench.link.calibration import Hold
from pagebench.link.plan import (
    DEFAULT_RMEM,
    DEFAULT_WMEM,
    check_backend_profile,
    endpoint_commands,
    firewall_rules,
    htb_commands,
    netem_plan,
    rwnd_notes,
    userspace_plan,
)

TOPO = Layout("pbx1")
R, C, S = "pbx1-router", "pbx1-client", "pbx1-server"
PROGRAM = Path("/opt/pb/pagebench-delay")
STATS = Path("/run/pb/delay.stats")


def profile(**fields):
    return make_profile({"name": "t", **fields})


#: 50 ms, ±5 ms, 1.5 % loss, 10 Mbit/s down, 8 Mbit/s up. Default queues of one BDP each
#: (62500 B and 50000 B: both above the minimum of MIN_QUEUE_FRAMES frames).
SHAPED = profile(rtt_ms=50, jitter_ms=5, loss_pct=1.5, down_mbit=10, up_mbit=8)


# htb --------------------------------------------------------------------------


def test_htb_at_root_is_exact():
    """The userspace layout: htb 1: at the root, class 1:1, bfifo 11: under it."""
    assert htb_commands("ns", "rs", "root", 1, 10, 48448) == [
        ("tc", "-n", "ns", "qdisc", "replace", "dev", "rs", "root", "handle", "1:", "htb", "default", "1"),
        ("tc", "-n", "ns", "class", "replace", "dev", "rs", "parent", "1:", "classid", "1:1", "htb",
         "rate", "10000000bit", "ceil", "10000000bit", "burst", "2764", "cburst", "2764", "quantum", "1514"),
        ("tc", "-n", "ns", "qdisc", "replace", "dev", "rs", "parent", "1:1", "handle", "11:",
         "bfifo", "limit", "48448"),
    ]


def test_htb_under_a_parent_uses_the_parent_and_its_own_handles():
    """The netem layout: htb 2: is netem's child at 1:1, bfifo 12: sits under 2:1."""
    qdisc, cls, fifo = htb_commands("ns", "rc", "1:1", 2, 1, 3000)
    assert qdisc == ("tc", "-n", "ns", "qdisc", "replace", "dev", "rc", "parent", "1:1", "handle", "2:",
                     "htb", "default", "1")
    assert cls[:12] == ("tc", "-n", "ns", "class", "replace", "dev", "rc", "parent", "2:", "classid", "2:1", "htb")
    assert fifo == ("tc", "-n", "ns", "qdisc", "replace", "dev", "rc", "parent", "2:1", "handle", "12:",
                    "bfifo", "limit", "3000")


@pytest.mark.parametrize(
    ("mbit", "rate", "burst"),
    [
        (0.1, "100000bit", 1600),  # 13 + 1514 < 1600: the floor
        (0.384, "384000bit", 1600),
        (1, "1000000bit", 1639),  # 125 + 1514
        (1.544, "1544000bit", 1707),  # 193 + 1514
        (12.3456, "12345600bit", 3058),  # ceil(1543.2) + 1514
        (100, "100000000bit", 14014),  # 12500 + 1514
        (1000, "1000000000bit", 126514),
    ],
)
def test_htb_rate_in_bit_and_burst_is_one_ms_plus_a_frame(mbit, rate, burst):
    """Burst covers timer granularity at high rates and never drops below 1600 bytes."""
    cls = htb_commands("ns", "rs", "root", 1, mbit, 5000)[1]
    opts = dict(zip(cls[12::2], cls[13::2]))
    assert opts == {"rate": rate, "ceil": rate, "burst": str(burst), "cburst": str(burst), "quantum": "1514"}


# netem backend ----------------------------------------------------------------


def test_netem_plan_is_exact():
    """netem at the root delays and drops; the htb bottleneck is its child, per direction."""
    plan = netem_plan(TOPO, SHAPED)
    netem = ("netem", "limit", "1000000", "delay", "25000us", "5000us", "loss", "random", "1.5%")
    assert plan.backend == "netem"
    assert plan.router_tc == [
        # up: router -> server (rs), 8 Mbit/s, queue one BDP (50000 B)
        ("tc", "-n", R, "qdisc", "replace", "dev", "rs", "root", "handle", "1:") + netem,
        ("tc", "-n", R, "qdisc", "replace", "dev", "rs", "parent", "1:1", "handle", "2:", "htb", "default", "1"),
        ("tc", "-n", R, "class", "replace", "dev", "rs", "parent", "2:", "classid", "2:1", "htb",
         "rate", "8000000bit", "ceil", "8000000bit", "burst", "2514", "cburst", "2514", "quantum", "1514"),
        ("tc", "-n", R, "qdisc", "replace", "dev", "rs", "parent", "2:1", "handle", "12:", "bfifo",
         "limit", "50000"),
        # down: router -> client (rc), 10 Mbit/s, queue one BDP (62500 B)
        ("tc", "-n", R, "qdisc", "replace", "dev", "rc", "root", "handle", "1:") + netem,
        ("tc", "-n", R, "qdisc", "replace", "dev", "rc", "parent", "1:1", "handle", "2:", "htb", "default", "1"),
        ("tc", "-n", R, "class", "replace", "dev", "rc", "parent", "2:", "classid", "2:1", "htb",
         "rate", "10000000bit", "ceil", "10000000bit", "burst", "2764", "cburst", "2764", "quantum", "1514"),
        ("tc", "-n", R, "qdisc", "replace", "dev", "rc", "parent", "2:1", "handle", "12:", "bfifo",
         "limit", "62500"),
    ]
    assert plan.delay_argv is None
    assert plan.notes == ["netem reorders packets when jitter exceeds the packet spacing"]
    assert plan.endpoint == endpoint_commands(TOPO, SHAPED)
    assert plan.rules_v4 == firewall_rules(TOPO, SHAPED, queue=False)
    assert plan.rules_v6 == firewall_rules(TOPO, SHAPED, queue=False, ipv6=True)
    assert "NFQUEUE" not in plan.rules_v4 + plan.rules_v6


def test_netem_plan_without_rates_jitter_or_loss_is_netem_alone():
    """No rate: no htb at all; no jitter or loss: no arguments for them and no note."""
    plan = netem_plan(TOPO, profile(rtt_ms=20))
    assert plan.router_tc == [
        ("tc", "-n", R, "qdisc", "replace", "dev", dev, "root", "handle", "1:", "netem",
         "limit", "1000000", "delay", "10000us")
        for dev in ("rs", "rc")
    ]
    assert plan.notes == []


def test_netem_plan_shapes_only_the_limited_direction():
    plan = netem_plan(TOPO, profile(rtt_ms=20, down_mbit=5))
    assert [(cmd[3], cmd[6]) for cmd in plan.router_tc] == [
        ("qdisc", "rs"), ("qdisc", "rc"), ("qdisc", "rc"), ("class", "rc"), ("qdisc", "rc")]


@pytest.mark.parametrize(("loss", "arg"), [(1, "1%"), (0.01, "0.01%"), (2.5, "2.5%"), (100, "100%")])
def test_netem_loss_is_a_percentage(loss, arg):
    first = netem_plan(TOPO, profile(rtt_ms=10, loss_pct=loss)).router_tc[0]
    assert first[-3:] == ("loss", "random", arg)


# userspace backend ------------------------------------------------------------


def test_userspace_plan_is_exact():
    """No netem anywhere: htb at the root of each egress veth, the program does the rest."""
    plan = userspace_plan(TOPO, SHAPED, PROGRAM, STATS, seed=7)
    assert plan.backend == "userspace"
    assert plan.router_tc == htb_commands(R, "rs", "root", 1, 8, 50000) + htb_commands(R, "rc", "root", 1, 10, 62500)
    assert [cmd[7] for cmd in plan.router_tc if cmd[3] == "qdisc"] == ["root", "parent", "root", "parent"]
    assert not any("netem" in cmd for cmd in plan.router_tc)
    assert plan.delay_argv == (
        "ip", "netns", "exec", R, "/opt/pb/pagebench-delay",
        "--up-queue", "0", "--down-queue", "1",
        "--up-delay-us", "25000", "--down-delay-us", "25000",
        "--up-jitter-us", "5000", "--down-jitter-us", "5000",
        "--up-loss", "0.015", "--down-loss", "0.015",
        "--seed", "7", "--stats", "/run/pb/delay.stats", "--spin-us", "150",
    )
    assert plan.notes == []
    assert plan.endpoint == endpoint_commands(TOPO, SHAPED)
    assert plan.rules_v4 == firewall_rules(TOPO, SHAPED, queue=True)
    assert plan.rules_v6 == firewall_rules(TOPO, SHAPED, queue=True, ipv6=True)


def test_userspace_plan_without_rates_has_no_qdiscs_and_zero_loss():
    plan = userspace_plan(TOPO, profile(rtt_ms=0.5), PROGRAM, STATS, seed=1)
    assert plan.router_tc == []
    args = dict(zip(plan.delay_argv[5::2], plan.delay_argv[6::2]))
    assert args["--up-delay-us"] == args["--down-delay-us"] == "250"
    assert args["--up-jitter-us"] == args["--down-jitter-us"] == "0"
    assert args["--up-loss"] == args["--down-loss"] == "0"


# endpoints --------------------------------------------------------------------


def test_endpoint_commands_default_to_linux_buffers_and_cubic():
    """Explicit defaults so the host's own sysctl tuning never leaks into a run."""
    assert DEFAULT_RMEM == (4096, 131072, 6291456) and DEFAULT_WMEM == (4096, 16384, 4194304)
    sysctl = ("sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1",
              "net.ipv4.tcp_rmem=4096 131072 6291456", "net.ipv4.tcp_wmem=4096 16384 4194304",
              "net.ipv4.tcp_window_scaling=1", "net.ipv4.tcp_sack=1", "net.ipv4.tcp_timestamps=1")
    assert endpoint_commands(TOPO, profile()) == [
        ("ip", "netns", "exec", C) + sysctl,
        ("ip", "-n", C, "route", "replace", "default", "via", "198.18.0.1", "dev", "pb0", "congctl", "cubic"),
        ("ip", "-n", C, "-6", "route", "replace", "default", "via", "2001:2::1", "dev", "pb0", "congctl", "cubic"),
        ("ip", "netns", "exec", S) + sysctl,
        ("ip", "-n", S, "route", "replace", "default", "via", "198.18.1.1", "dev", "pb0", "congctl", "cubic"),
        ("ip", "-n", S, "-6", "route", "replace", "default", "via", "2001:2:0:1::1", "dev", "pb0",
         "congctl", "cubic"),
    ]


def test_endpoint_commands_use_the_profiles_buffers_initcwnd_and_congctl():
    cmds = endpoint_commands(TOPO, profile(initcwnd=4, congctl="bbr", tcp_rmem=(4096, 87380, 1000000),
                                           tcp_wmem=(8192, 65536, 2000000)))
    assert cmds[0][:9] == ("ip", "netns", "exec", C, "sysctl", "-qw", "net.ipv4.tcp_no_metrics_save=1",
                           "net.ipv4.tcp_rmem=4096 87380 1000000", "net.ipv4.tcp_wmem=8192 65536 2000000")
    assert cmds[3][3] == S and cmds[3][6:] == cmds[0][6:]
    routes = [cmd for cmd in cmds if "route" in cmd]
    assert len(routes) == 4
    assert all(cmd[-4:] == ("initcwnd", "4", "congctl", "bbr") for cmd in routes)


def test_endpoint_commands_turn_off_the_tcp_options_of_today_for_the_era():
    """1994's TCP: no window scaling, no SACK, no timestamps, Reno, one segment."""
    cmds = endpoint_commands(TOPO, profile(window_scaling=False, sack=False, timestamps=False, congctl="reno",
                                           initcwnd=1))
    for sysctl in (cmds[0], cmds[3]):
        assert sysctl[-3:] == ("net.ipv4.tcp_window_scaling=0", "net.ipv4.tcp_sack=0", "net.ipv4.tcp_timestamps=0")
    assert all(cmd[-4:] == ("initcwnd", "1", "congctl", "reno") for cmd in cmds if "route" in cmd)


# firewall ---------------------------------------------------------------------


def test_userspace_ipv4_rules_are_exact():
    """Count (and queue) in raw PREROUTING, clamp MSS, count new flows, forward only rc <-> rs."""
    assert firewall_rules(TOPO, profile(mss=536), queue=True) == (
        "*raw\n"
        "-A PREROUTING -i rc -d 198.18.1.0/24 -m comment --comment pb:up -j NFQUEUE --queue-num 0\n"
        "-A PREROUTING -i rc -d 198.19.0.0/16 -m comment --comment pb:up -j NFQUEUE --queue-num 0\n"
        "-A PREROUTING -i rs -d 198.18.0.0/24 -m comment --comment pb:down -j NFQUEUE --queue-num 1\n"
        "COMMIT\n"
        "*mangle\n"
        "-A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 536\n"
        "-A POSTROUTING -o rs -p tcp --tcp-flags SYN,ACK,RST SYN -m conntrack ! --ctstatus CONFIRMED"
        " -m comment --comment pb:tcp_conns\n"
        "-A POSTROUTING -o rs -p udp -m conntrack ! --ctstatus CONFIRMED -m comment --comment pb:udp_flows\n"
        "COMMIT\n"
        "*filter\n"
        ":FORWARD DROP [0:0]\n"
        "-A FORWARD -i rc -o rs -j ACCEPT\n"
        "-A FORWARD -i rs -o rc -j ACCEPT\n"
        "COMMIT\n"
    )


def test_netem_ipv6_rules_count_without_queueing():
    """netem needs no NFQUEUE (it would stall every packet with nobody listening)."""
    lines = firewall_rules(TOPO, profile(), queue=False, ipv6=True).splitlines()
    assert lines[1:4] == [
        "-A PREROUTING -i rc -d 2001:2:0:1::/64 -m comment --comment pb:up",
        "-A PREROUTING -i rc -d 2001:2:0:100::/64 -m comment --comment pb:up",  # the origins' routed range
        "-A PREROUTING -i rs -d 2001:2::/64 -m comment --comment pb:down",
    ]
    assert not any("NFQUEUE" in line or "TCPMSS" in line for line in lines)
    assert sum("--ctstatus CONFIRMED" in line for line in lines) == 2


def test_userspace_ipv6_rules_queue_to_the_same_queues():
    lines = firewall_rules(TOPO, profile(mss=1220), queue=True, ipv6=True).splitlines()
    assert lines[1].endswith("-d 2001:2:0:1::/64 -m comment --comment pb:up -j NFQUEUE --queue-num 0")
    assert lines[2].endswith("-d 2001:2:0:100::/64 -m comment --comment pb:up -j NFQUEUE --queue-num 0")
    assert lines[3].endswith("-d 2001:2::/64 -m comment --comment pb:down -j NFQUEUE --queue-num 1")
    assert "-A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1220" in lines
    assert not any("--queue-bypass" in line for line in lines)  # fail closed


def _blocks(document: str) -> dict[str, list[str]]:
    """iptables-restore structure: `*table`, then chain policies and rules, then COMMIT."""
    assert document.endswith("COMMIT\n")
    blocks: dict[str, list[str]] = {}
    table = None
    for line in document.splitlines():
        if table is None:
            assert line.startswith("*"), line
            table = line[1:]
            assert table not in blocks
            blocks[table] = []
        elif line == "COMMIT":
            table = None
        else:
            assert line.startswith(("-A ", ":")), line
            blocks[table].append(line)
    assert table is None, "a table block is not committed"
    return blocks


@pytest.mark.parametrize("queue", [False, True])
@pytest.mark.parametrize("ipv6", [False, True])
@pytest.mark.parametrize("mss", [None, 1400])
@pytest.mark.parametrize("rwnd", [None, 32767])
def test_rules_parse_as_iptables_restore_input(queue, ipv6, mss, rwnd):
    blocks = _blocks(firewall_rules(TOPO, profile(mss=mss, rwnd_bytes=rwnd), queue, ipv6))
    assert list(blocks) == ["raw", "mangle", "filter"]
    assert [line.split()[1] for line in blocks["raw"]] == ["PREROUTING"] * 3
    assert len(blocks["mangle"]) == 2 + bool(mss) + bool(rwnd)
    assert blocks["filter"][0] == ":FORWARD DROP [0:0]"
    tags = [line.split("--comment ")[1].split()[0] for block in blocks.values() for line in block if "--comment" in line]
    assert tags == ["pb:up", "pb:up", "pb:down", "pb:tcp_conns", "pb:udp_flows"]


# the receive-window clamp ---------------------------------------------------------

CLAMPED = profile(rtt_ms=120, mss=1400, rwnd_bytes=32767)
RWND_RULE = "-A FORWARD -i rc -o rs -p tcp -j NFQUEUE --queue-num 2"


@pytest.mark.parametrize("queue", [False, True])
@pytest.mark.parametrize("ipv6", [False, True])
def test_rwnd_queues_the_clients_tcp_last_in_mangle_forward(queue, ipv6):
    """Both backends, both families: after the MSS clamp, and last (an accepted packet
    resumes at the next table); fail closed (no --queue-bypass)."""
    mangle = _blocks(firewall_rules(TOPO, CLAMPED, queue, ipv6))["mangle"]
    forward = [line for line in mangle if line.startswith("-A FORWARD")]
    assert forward == ["-A FORWARD -p tcp --tcp-flags SYN,RST SYN -j TCPMSS --set-mss 1400", RWND_RULE]
    assert firewall_rules(TOPO, CLAMPED, queue, ipv6) == firewall_rules(
        TOPO, profile(rtt_ms=120, mss=1400), queue, ipv6).replace(
        "--set-mss 1400\n", f"--set-mss 1400\n{RWND_RULE}\n")


def test_no_rwnd_no_third_queue():
    for queue in (False, True):
        assert "--queue-num 2" not in firewall_rules(TOPO, SHAPED, queue) + firewall_rules(TOPO, SHAPED, queue, True)


def test_userspace_plan_clamps_in_the_same_program():
    plan = userspace_plan(TOPO, CLAMPED, PROGRAM, STATS, seed=7)
    without = userspace_plan(TOPO, profile(rtt_ms=120, mss=1400), PROGRAM, STATS, seed=7)
    assert plan.delay_argv == without.delay_argv + ("--rwnd-queue", "2", "--rwnd-bytes", "32767")
    assert plan.router_tc == without.router_tc and plan.endpoint == without.endpoint
    assert plan.notes == ["client receive window clamped to 32767 B at the router (window scaling off both ways): "
                          "one TCP connection at most 2.18 Mbit/s"]


def test_netem_plan_runs_the_program_for_the_clamp_alone():
    plan = netem_plan(TOPO, CLAMPED, PROGRAM, STATS)
    assert plan.delay_argv == (
        "ip", "netns", "exec", R, "/opt/pb/pagebench-delay", "--no-delay-queues",
        "--rwnd-queue", "2", "--rwnd-bytes", "32767", "--stats", "/run/pb/delay.stats",
    )
    without = netem_plan(TOPO, profile(rtt_ms=120, mss=1400), PROGRAM, STATS)
    assert without.delay_argv is None  # no clamp: no program with netem
    assert plan.router_tc == without.router_tc
    assert plan.rules_v4 == firewall_rules(TOPO, CLAMPED, queue=False)
    assert plan.rules_v6 == firewall_rules(TOPO, CLAMPED, queue=False, ipv6=True)
    assert plan.notes == rwnd_notes(CLAMPED)
    with pytest.raises(ValueError, match="rwnd_bytes needs the delay program"):
        netem_plan(TOPO, CLAMPED)


def test_rwnd_note_gives_the_rate_one_connection_gets():
    assert rwnd_notes(profile(rtt_ms=50)) == []
    assert rwnd_notes(profile(rtt_ms=100, rwnd_bytes=65535)) == [
        "client receive window clamped to 65535 B at the router (window scaling off both ways): "
        "one TCP connection at most 5.24 Mbit/s"]
    assert rwnd_notes(profile(rwnd_bytes=8192)) == [
        "client receive window clamped to 8192 B at the router (window scaling off both ways)"]


# a V.42bis modem's line -------------------------------------------------------

MODEM = profile(rtt_ms=120, down_mbit=0.0288, up_mbit=0.0288, mss=1460, modem_compression="v42bis",
                v42bis_codewords=4096, v42bis_max_string=64)


def test_userspace_plan_makes_the_program_the_compressing_line():
    """No htb: the program serializes at the rates, with the default queues (8 frames at
    this rate), and compresses by V.42bis with the profile's N2 and N7."""
    plan = userspace_plan(TOPO, MODEM, PROGRAM, STATS, seed=7)
    plain = userspace_plan(TOPO, profile(rtt_ms=120, down_mbit=0.0288, up_mbit=0.0288, mss=1460), PROGRAM, STATS,
                           seed=7)
    assert plan.router_tc == [] and plain.router_tc != []
    assert plan.delay_argv == plain.delay_argv + (
        "--up-rate-bps", "28800", "--up-queue-bytes", "12112",
        "--down-rate-bps", "28800", "--down-queue-bytes", "12112",
        "--v42bis", "4096", "--v42bis-max-string", "64")
    assert plan.notes == ["the line compresses by V.42bis (N2 4096 codewords, N7 64): a packet holds it for its "
                          "headers and its payload's compressed size"]
    assert plan.endpoint == plain.endpoint and plan.rules_v4 == plain.rules_v4


def test_netem_refuses_a_compressing_line_in_one_line():
    with pytest.raises(ProfileError, match=r"^profile t: modem_compression: v42bis needs the userspace backend"):
        netem_plan(TOPO, MODEM, PROGRAM, STATS)
    check_backend_profile("userspace", MODEM)
    check_backend_profile("netem", SHAPED)


def test_a_calibrated_userspace_plan_shortens_the_holds_and_releases_cold_packets_early():
    plan = userspace_plan(TOPO, profile(rtt_ms=50), PROGRAM, STATS, seed=1, hold=Hold(151, 30))
    args = dict(zip(plan.delay_argv[5::2], plan.delay_argv[6::2]))
    assert (args["--up-delay-us"], args["--down-delay-us"], args["--cold-early-us"]) == ("24924", "24925", "30")
    plain = userspace_plan(TOPO, profile(rtt_ms=50), PROGRAM, STATS, seed=1, hold=Hold(151))
    assert "--cold-early-us" not in plain.delay_argv
