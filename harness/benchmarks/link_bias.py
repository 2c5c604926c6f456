"""Where the userspace link's RTT bias comes from: each handshake timed at every point of
the path by the kernel's own receive timestamps.

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/python harness/benchmarks/link_bias.py [--count N] > bias.md

For each case a lab is built (or reused) and N TCP handshakes cross it. Packet sockets
in the three namespaces stamp the SYN and the SYN-ACK where each arrives (the router's
two interfaces, the server's, the client's: all receive timestamps, taken by the kernel
when the veth hands the packet on), and the client reads its kernel's own handshake RTT
(TCP_INFO's tcpi_rtt, from the SYN's send to the SYN-ACK's arrival) besides the time
connect() took in Python. So each handshake splits into:

* client out: SYN sent by the client's kernel -> SYN at the router (client veth);
* up: SYN at the router -> SYN at the server (the hold, the router's forwarding after it);
* server: SYN at the server -> SYN-ACK at the router (the server's kernel answers);
* down: SYN-ACK at the router -> SYN-ACK at the client;
* client in: the remainder of the kernel RTT (the client's kernel processing it);
* wake-up: connect() in Python - kernel RTT (the process woken, Python's syscall).

Cases: the veths alone (rules without NFQUEUE), then the delay program at 0, 20, 50 and
100 ms RTT. Prints a Markdown table of medians (and p90) per component, in µs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import select
import signal
import socket
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

PORT = 5301
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
TCP_INFO_LEN, RTT_AT = 104, 68  # struct tcp_info: tcpi_rtt (µs) at byte 68
SYN, ACK = 0x02, 0x10


# ---- inside the namespaces ------------------------------------------------------------


def sniff(ifaces: list[str], out: Path) -> None:
    """Record (interface, kernel RX time ns, 'S' or 'SA', client port) of every handshake
    packet of PORT received on `ifaces`, until SIGTERM; then write them as JSON."""
    socks = []
    for name in ifaces:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        s.bind((name, 0))
        socks.append((s, name))
    seen: list[tuple[str, int, str, int]] = []
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    print("ready", flush=True)
    while not stop:
        try:
            readable, _, _ = select.select([s for s, _ in socks], [], [], 0.2)
        except InterruptedError:
            continue
        for s, name in socks:
            if s not in readable:
                continue
            data, anc, _, addr = s.recvmsg(256, 64)
            if addr[2] == PACKET_OUTGOING or len(data) < 14 + 20 + 20 or data[12:14] != b"\x08\x00":
                continue
            ihl = (data[14] & 0x0F) * 4
            if data[14 + 9] != socket.IPPROTO_TCP:
                continue
            tcp = 14 + ihl
            sport, dport = struct.unpack_from("!HH", data, tcp)
            flags = data[tcp + 13]
            if not flags & SYN or PORT not in (sport, dport):
                continue
            ts = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                       if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), None)
            if ts is None:
                continue
            kind = "SA" if flags & ACK else "S"
            seen.append((name, ts[0] * 1_000_000_000 + ts[1], kind, sport if kind == "S" else dport))
    out.write_text(json.dumps(seen))


def handshakes(host: str, count: int, pause: float = 0.002) -> list[dict[str, float]]:
    """`count` handshakes: the client port, connect() in Python (µs), the kernel's RTT (µs)."""
    rows = []
    for i in range(count + 1):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("", 0))
        start = time.perf_counter_ns()
        sock.connect((host, PORT))
        took = (time.perf_counter_ns() - start) / 1000
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
        (kernel,) = struct.unpack_from("I", info, RTT_AT)
        if i:  # the first also resolves neighbours
            rows.append({"port": sock.getsockname()[1], "user_us": took, "kernel_us": float(kernel)})
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        time.sleep(pause)
    return rows


# ---- the orchestration ----------------------------------------------------------------


def _in_ns(ns: str, *args: str) -> list[str]:
    return ["ip", "netns", "exec", ns, sys.executable, __file__, *args]


def components(packets: list[list], rows: list[dict], names: dict[str, str], rtt_ms: float) -> list[dict]:
    """Per handshake, its components in µs (see the module's docstring)."""
    at: dict[tuple[str, str, int], int] = {}
    for iface, ts, kind, port in packets:
        at.setdefault((names[iface], kind, port), ts)  # a retransmission keeps the first
    half = rtt_ms * 1000 / 2
    out = []
    for row in rows:
        p = row["port"]
        kernel, user = row["kernel_us"], row["user_us"]
        try:
            r_syn, s_syn = at[("router-in-client", "S", p)], at[("server", "S", p)]
            r_sa, c_sa = at[("router-in-server", "SA", p)], at[("client", "SA", p)]
        except KeyError:
            out.append({"kernel_excess": kernel - 2 * half, "wakeup": user - kernel, "user_excess": user - 2 * half})
            continue
        path = (c_sa - r_syn) / 1000
        out.append({
            "up": (s_syn - r_syn) / 1000 - half,
            "server": (r_sa - s_syn) / 1000,
            "down": (c_sa - r_sa) / 1000 - half,
            "client": kernel - path,
            "kernel_excess": kernel - 2 * half,
            "wakeup": user - kernel,
            "user_excess": user - 2 * half,
        })
    return out


def case(bed, link, label: str, rtt_ms: float, queue: bool, count: int, spin: int | None, sniffing: bool = True,
         warm_pps: float = 0) -> dict:
    from pagebench.core.profiles import make_profile
    from pagebench.link import plan as plan_mod
    from pagebench.link import delaystats

    topo = bed.layout
    saved = plan_mod.SPIN_US
    if spin is not None:
        plan_mod.SPIN_US = spin
    try:
        link.apply(make_profile({"name": label.replace(" ", "-"), "rtt_ms": rtt_ms}))
    finally:
        plan_mod.SPIN_US = saved
    if not queue:  # the same rules and counters, without the hand-over to the program
        bed.run(("ip", "netns", "exec", topo.router, "iptables-restore"),
                input=plan_mod.firewall_rules(topo, link.profile, False))
    state = bed.state_dir
    sniffers = []
    names = {topo.router_client_if: "router-in-client", topo.router_server_if: "router-in-server"}
    for ns, ifaces, tag in () if not sniffing else ((topo.router, [topo.router_client_if, topo.router_server_if], "router"),
                            (topo.client, [topo.endpoint_if], "client"), (topo.server, [topo.endpoint_if], "server")):
        out = state / f"sniff-{tag}.json"
        proc = subprocess.Popen(_in_ns(ns, "sniff", "--out", str(out), *ifaces), stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        sniffers.append((proc, out, tag))
    before = delaystats.read(link.stats_path)
    rows = json.loads(subprocess.run(_in_ns(topo.client, "connect", "--host", topo.server_addresses[0],
                                            "--count", str(count), "--warm-pps", str(warm_pps)),
                                     check=True, capture_output=True, text=True).stdout)
    after = delaystats.read(link.stats_path)
    packets = []
    for proc, out, tag in sniffers:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        for iface, ts, kind, port in json.loads(out.read_text()):
            packets.append([iface if tag == "router" else tag, ts, kind, port])
    names |= {"client": "client", "server": "server"}
    parts = components(packets, rows, names, rtt_ms)
    hist = [a - b for a, b in zip(after.hist, before.hist)]
    released = sum(hist)
    late = None
    if released:
        from pagebench.link.delaystats import percentile_us
        late = {k: percentile_us(hist, p) for k, p in (("p50", 50), ("p90", 90), ("max", 100))}
    return {"label": label, "rtt_ms": rtt_ms, "n": len(parts), "parts": parts, "lateness_us": late,
            "no_timestamp": (after.up.no_timestamp + after.down.no_timestamp
                             - before.up.no_timestamp - before.down.no_timestamp)}


def _steal() -> tuple[int, int]:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = list(map(int, fields))
    return values[7], sum(values)


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd")
    s = sub.add_parser("sniff")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("ifaces", nargs="+")
    c = sub.add_parser("connect")
    c.add_argument("--host", required=True)
    c.add_argument("--count", type=int, required=True)
    c.add_argument("--warm-pps", type=float, default=0)
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--rtts", default="0,20,50,100")
    parser.add_argument("--spin", type=int, default=None, help="the delay program's --spin-us (default: pagebench's)")
    parser.add_argument("--no-sniff", action="store_true", help="no packet sockets: kernel and connect() RTT only")
    parser.add_argument("--warm-pps", type=float, default=0, help="a paced UDP stream across the link meanwhile")
    parser.add_argument("--json", type=Path, help="also write every sample here")
    args = parser.parse_args()
    if args.cmd == "sniff":
        sniff(args.ifaces, args.out)
        return
    if args.cmd == "connect":
        if args.warm_pps:
            import threading

            from pagebench.link.probe import paced_datagrams
            threading.Thread(target=paced_datagrams, args=(args.host, 9, args.warm_pps), daemon=True).start()
            time.sleep(0.5)
        json.dump(handshakes(args.host, args.count), sys.stdout)
        return

    from pagebench.core.layout import Layout, new_prefix
    from pagebench.lab.netns import NamespaceBed
    from pagebench.link.check import serve_probe
    from pagebench.link.emulator import Link

    steal0, total0 = _steal()
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    results = []
    with NamespaceBed(Layout(new_prefix("bias"))) as bed:
        link = Link(bed, "userspace")
        serve_probe(bed, bed.layout.server_addresses[0], PORT)
        cases = [("veths alone", 0.0, False)] + [(f"program, {r} ms", float(r), True) for r in args.rtts.split(",")]
        for label, rtt, queue in cases:
            results.append(case(bed, link, label, rtt, queue, args.count, args.spin, not args.no_sniff, args.warm_pps))
    steal1, total1 = _steal()
    steal_pct = 100 * (steal1 - steal0) / max(1, total1 - total0)
    if args.json:
        args.json.write_text(json.dumps(results))
    print(f"{started}; host {platform.node()}, kernel {platform.release()}, {os.cpu_count()} cores; "
          f"steal during the run {steal_pct:.1f} %; load average before {os.getloadavg()[0]:.2f}\n")
    keys = ("up", "server", "down", "client", "kernel_excess", "wakeup", "user_excess")
    print("| case | n | " + " | ".join(keys) + " | program lateness p50 / p90 / max |")
    print("|---|---|" + "---|" * len(keys) + "---|")
    for r in results:
        cells = []
        for k in keys:
            values = [p[k] for p in r["parts"] if k in p]
            if not values:
                cells.append("-")
                continue
            values.sort()
            cells.append(f"{statistics.median(values):.0f} ({values[int(0.9 * (len(values) - 1))]:.0f})")
        late = r["lateness_us"]
        late_cell = f"{late['p50']:.0f} / {late['p90']:.0f} / {late['max']:.0f}" if late else "-"
        print(f"| {r['label']} | {r['n']} | " + " | ".join(cells) + f" | {late_cell} |")


if __name__ == "__main__":
    main()
