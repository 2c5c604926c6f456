"""Measurement endpoints for `link check`, run inside the namespaces as
`python -m pagebench.link.probe serve|rtt|down|up|loss ...`; results are JSON on stdout.

The server speaks a one-line text protocol per TCP connection:
  (nothing)            a handshake probe: the client connects and resets
  DOWN <seconds>       the server sends until the client resets (at most that long)
  UP <seconds>         the client sends; the server samples for that long after the
                       first byte, replies with the samples as JSON, and the client resets
  UDPRECV <port>       the server counts datagrams on <port> until the client sends DONE
  UDPSEND <n> <pps> <host> <port>   the server sends n datagrams at pps

Bulk transfers end when the receiver has sampled long enough and aborts the
connection, so what sits in socket buffers and the queue is discarded, not drained.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import socket
import struct
import sys
import threading
import time

CHUNK = 256 * 1024
SAMPLE_EVERY_S = 0.02
#: Fixed bulk socket buffers (root may force them past net.core.*mem_max). Linux's
#: defaults cannot keep 100 Mbit/s x 100 ms in flight without GSO (each 1448 B
#: segment costs ~2.3 KB of buffer); the check measures the link, not those caps.
BULK_BUFFER = 32 << 20
SO_SNDBUFFORCE, SO_RCVBUFFORCE = 32, 33
ABORT = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a reset


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _big_buffers(sock: socket.socket) -> None:
    """Before connect/listen, so the window scale and clamp are sized for them. The
    congestion control stays the profile's (set per route, which overrides sockets)."""
    sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, BULK_BUFFER)
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BULK_BUFFER)


def _abort(sock: socket.socket) -> None:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, ABORT)
    sock.close()


#: struct tcp_info (linux/tcp.h): tcpi_rcv_mss at byte 20, tcpi_data_segs_in at 152.
TCP_INFO_LEN, RCV_MSS_AT, DATA_SEGS_IN_AT = 160, 20, 152


def _payload_arrived(sock: socket.socket) -> int:
    """Payload bytes the kernel has received, in order or not: data segments x MSS.

    The application sees a TCP stream in stalls and bursts (a hole waits a round trip
    for its retransmission, then the queued data comes at once); the segments
    arriving from the link are a smooth series whose difference is the goodput."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
    (mss,) = struct.unpack_from("I", info, RCV_MSS_AT)
    (segments,) = struct.unpack_from("I", info, DATA_SEGS_IN_AT)
    return segments * mss


def _receive_samples(sock: socket.socket, seconds: float) -> list[tuple[float, int, int]]:
    """(seconds since first byte, application bytes, payload bytes arrived) every
    ~20 ms, for `seconds`."""
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    total, first, last_sample = 0, None, 0.0
    samples: list[tuple[float, int, int]] = []
    while first is None or time.monotonic() - first < seconds:
        n = sock.recv_into(view)
        now = time.monotonic()
        if n == 0:
            break
        if first is None:
            first = now
        total += n
        if now - last_sample >= SAMPLE_EVERY_S:
            samples.append((now - first, total, _payload_arrived(sock)))
            last_sample = now
    if first is not None:
        samples.append((time.monotonic() - first, total, _payload_arrived(sock)))
    return samples


def _bulk_data() -> bytes:
    """Random bytes, not zeros: a compressing line (a V.42bis modem's) is measured at its
    rate for what does not compress, the rate its profile states."""
    return os.urandom(CHUNK)


def _send_for(sock: socket.socket, seconds: float) -> int:
    data = _bulk_data()
    end = time.monotonic() + seconds
    sent = 0
    while time.monotonic() < end:
        sent += sock.send(data)
    return sent


def _paced_send(sock: socket.socket, dest: tuple[str, int], count: int, pps: float) -> None:
    start = time.monotonic()
    for seq in range(count):
        due = start + seq / pps
        delay = due - time.monotonic()
        if delay > 0.0005:
            time.sleep(delay)
        sock.sendto(struct.pack("!Q", seq) + bytes(56), dest)


def _handle(conn: socket.socket) -> None:
    try:
        _serve_one(conn)
    except OSError:
        pass  # handshake probes close with a reset; bulk peers may go away mid-transfer


def _serve_one(conn: socket.socket) -> None:
    with conn:
        conn.settimeout(120)
        reader = conn.makefile("rb")
        line = reader.readline().decode().split()
        if not line:
            return
        if line[0] == "DOWN":
            _send_for(conn, float(line[1]))  # ends with the client's reset
        elif line[0] == "UP":
            conn.sendall((json.dumps(_receive_samples(conn, float(line[1]))) + "\n").encode())
            while conn.recv(1 << 20):  # discard until the client resets
                pass
        elif line[0] == "UDPRECV":
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
            udp.bind((conn.getsockname()[0], int(line[1])))
            udp.settimeout(0.05)
            conn.sendall(b"READY\n")
            seen: set[int] = set()
            done = threading.Event()
            threading.Thread(target=lambda: (reader.readline(), done.set()), daemon=True).start()
            while not done.is_set():
                try:
                    data = udp.recv(2048)
                    seen.add(struct.unpack("!Q", data[:8])[0])
                except TimeoutError:
                    pass
            udp.close()
            conn.sendall(f"{len(seen)}\n".encode())
        elif line[0] == "UDPSEND":
            count, pps, host, port = int(line[1]), float(line[2]), line[3], int(line[4])
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            _paced_send(udp, (host, port), count, pps)
            udp.close()
            conn.sendall(b"SENT\n")


def serve(host: str, port: int) -> None:
    listener = socket.socket(_family(host), socket.SOCK_STREAM)  # "::" also accepts IPv4
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _big_buffers(listener)  # accepted sockets inherit them
    listener.bind((host, port))
    listener.listen(512)
    print("ready", flush=True)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_handle, args=(conn,), daemon=True).start()


#: struct tcp_info: tcpi_rtt (µs) at byte 68; after the handshake it is the SYN's own RTT.
TCP_RTT_AT = 68


def paced_datagrams(host: str, port: int, pps: float) -> None:
    """Paced 64-byte datagrams to a port nobody listens on, for as long as the process lives."""
    sock = socket.socket(_family(host), socket.SOCK_DGRAM)
    start, seq = time.monotonic(), 0
    while True:
        seq += 1
        delay = start + seq / pps - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sock.sendto(bytes(64), (host, port))


def rtt(host: str, port: int, count: int, tcp: bool = False,
        busy_pps: float = 0) -> list[float] | list[tuple[float, float]]:
    """Handshake times in ms: connect() returns when the SYN-ACK arrives, one RTT. With
    `tcp`, (connect() time, the client kernel's own RTT of the handshake) pairs: the
    kernel's runs from the SYN's send to the SYN-ACK's arrival, without this process's
    wake-up and system calls (what the link did, apart from what the host did). With
    `busy_pps`, paced datagrams cross the link meanwhile (to port + 2, closed), so the
    path is never idle between handshakes, as on a link a page load keeps busy."""
    if busy_pps:
        threading.Thread(target=paced_datagrams, args=(host, port + 2, busy_pps), daemon=True).start()
        time.sleep(0.2)
    samples: list = []
    for _ in range(count + 1):  # the first one also resolves neighbours: discarded
        sock = socket.socket(_family(host), socket.SOCK_STREAM)
        start = time.perf_counter_ns()
        sock.connect((host, port))
        took = (time.perf_counter_ns() - start) / 1e6
        if tcp:
            info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)
            samples.append((took, struct.unpack_from("I", info, TCP_RTT_AT)[0] / 1000))
        else:
            samples.append(took)
        _abort(sock)
        time.sleep(0.002)
    return samples[1:]


def _bulk_connection(host: str, port: int) -> socket.socket:
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    _big_buffers(sock)
    sock.connect((host, port))
    return sock


def down(host: str, port: int, seconds: float) -> list[tuple[float, int, int]]:
    sock = _bulk_connection(host, port)
    sock.sendall(f"DOWN {seconds + 30}\n".encode())
    samples = _receive_samples(sock, seconds)
    _abort(sock)
    return samples


def up(host: str, port: int, seconds: float) -> list[tuple[float, int, int]]:
    """Send until the server's samples come back, then reset."""
    sock = _bulk_connection(host, port)
    sock.sendall(f"UP {seconds}\n".encode())
    sock.setblocking(False)
    data, reply = _bulk_data(), b""
    deadline = time.monotonic() + seconds + 30
    while not reply.endswith(b"\n") and time.monotonic() < deadline:
        readable, writable, _ = select.select([sock], [] if reply else [sock], [], 1.0)
        if readable:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            reply += chunk
        elif writable:
            try:
                sock.send(data)
            except BlockingIOError:
                pass
    _abort(sock)
    return json.loads(reply)


def loss(host: str, port: int, me: str, count_up: int, pps_up: float, count_down: int, pps_down: float,
         grace: float) -> dict[str, dict[str, int]]:
    """Datagrams sent and received each way, paced below the link rate."""
    udp_port = port + 1
    with socket.create_connection((host, port)) as ctl:
        reader = ctl.makefile("rb")
        ctl.sendall(f"UDPRECV {udp_port}\n".encode())
        assert reader.readline().strip() == b"READY"
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        _paced_send(sender, (host, udp_port), count_up, pps_up)
        sender.close()
        time.sleep(grace)
        ctl.sendall(b"DONE\n")
        received_up = int(reader.readline())
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    sink.bind((me, 0))
    seen: set[int] = set()
    stop = threading.Event()

    def collect() -> None:
        sink.settimeout(0.05)
        while not stop.is_set():
            try:
                seen.add(struct.unpack("!Q", sink.recv(2048)[:8])[0])
            except TimeoutError:
                pass

    thread = threading.Thread(target=collect)
    thread.start()
    with socket.create_connection((host, port)) as ctl:
        ctl.sendall(f"UDPSEND {count_down} {pps_down} {me} {sink.getsockname()[1]}\n".encode())
        ctl.makefile("rb").readline()
    time.sleep(grace)
    stop.set()
    thread.join()
    sink.close()
    return {"up": {"sent": count_up, "received": received_up},
            "down": {"sent": count_down, "received": len(seen)}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="pagebench.link.probe")
    sub = parser.add_subparsers(dest="cmd", required=True)
    for name in ("serve", "rtt", "down", "up", "loss"):
        p = sub.add_parser(name)
        p.add_argument("--host", required=True)
        p.add_argument("--port", type=int, required=True)
        if name == "rtt":
            p.add_argument("--count", type=int, default=50)
            p.add_argument("--tcp", action="store_true", help="(connect, kernel RTT) pairs")
            p.add_argument("--busy-pps", type=float, default=0.0, help="paced datagrams across the link meanwhile")
        if name in ("down", "up"):
            p.add_argument("--seconds", type=float, required=True)
        if name == "loss":
            p.add_argument("--me", required=True)
            for key in ("count-up", "count-down"):
                p.add_argument(f"--{key}", type=int, required=True)
            for key in ("pps-up", "pps-down", "grace"):
                p.add_argument(f"--{key}", type=float, required=True)
    args = parser.parse_args(argv)
    if args.cmd == "serve":
        serve(args.host, args.port)
        return
    if args.cmd == "rtt":
        result: object = rtt(args.host, args.port, args.count, args.tcp, args.busy_pps)
    elif args.cmd == "down":
        result = down(args.host, args.port, args.seconds)
    elif args.cmd == "up":
        result = up(args.host, args.port, args.seconds)
    else:
        result = loss(args.host, args.port, args.me, args.count_up, args.pps_up, args.count_down,
                      args.pps_down, args.grace)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
