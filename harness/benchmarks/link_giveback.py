"""Whether the link check's give-back (`link.calibration.give_back`) undoes a calibration
that overdrew, on the real delay program: each hold in turn is applied to a profile the
path cannot reach (a link faster than its profile), its handshakes measured, what
`give_back` returns applied, and the handshakes measured again.

    sudo flock /tmp/pagebench-e2e.lock .venv/bin/python harness/benchmarks/link_giveback.py [--rtt 20] [--count 50]

Prints a Markdown table: each hold, its handshakes' median and fastest in µs from the
profile (the client kernel's own RTT, TCP_INFO), the hold after the give-back, and the
same two figures with it. The check's rule: a median never under the profile.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pagebench.core.layout import Layout, new_prefix  # noqa: E402
from pagebench.core.profiles import make_profile  # noqa: E402
from pagebench.lab.netns import NamespaceBed  # noqa: E402
from pagebench.link.calibration import Calibration, Hold, give_back  # noqa: E402
from pagebench.link.check import serve_probe  # noqa: E402
from pagebench.link.emulator import Link  # noqa: E402

PORT = 7190
#: (offset, cold) in µs: from a little over the path's own ~0.15 ms to far over it
HOLDS = (Hold(80, 40), Hold(100, 30), Hold(150, 40), Hold(200, 60), Hold(300, 0))


def tcp_rtts_ms(bed: NamespaceBed, host: str, count: int) -> list[float]:
    argv = bed.exec_argv(bed.layout.client, [sys.executable, "-m", "pagebench.link.probe", "rtt", "--host", host,
                                              "--port", str(PORT), "--count", str(count), "--tcp"])
    return [tcp for _, tcp in json.loads(bed.run(argv).stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtt", type=float, default=20.0, help="the profile's RTT, ms")
    parser.add_argument("--count", type=int, default=50, help="handshakes per measurement (a check's: 50)")
    args = parser.parse_args()
    profile = make_profile({"name": "giveback", "rtt_ms": args.rtt})

    def excess(samples: list[float]) -> str:
        return f"{(statistics.median(samples) - args.rtt) * 1000:+.0f} / {(min(samples) - args.rtt) * 1000:+.0f}"

    print("| hold (offset / cold, µs) | median / fastest (µs) | given back to | median / fastest after (µs) |")
    print("|---|---|---|---|")
    with NamespaceBed(Layout(new_prefix("gb"), server_ips=1)) as bed:
        link = Link(bed)
        if link.backend != "userspace":
            sys.exit("the kernel's netem has no hold to calibrate: nothing to measure")
        serve_probe(bed, "::", PORT)
        host = bed.layout.server_addresses[0]
        for hold in HOLDS:
            link.calibrate(profile, hold)
            link.wait_settled()
            before = tcp_rtts_ms(bed, host, args.count)
            fixed = give_back(profile, Calibration(hold, Hold(), 0.0, 0.0, 0.0, 0), before)
            if fixed is None:
                print(f"| {hold.offset_us} / {hold.cold_us} | {excess(before)} | (nothing to give back) | |", flush=True)
                continue
            link.calibrate(profile, fixed.hold)
            link.wait_settled()
            after = tcp_rtts_ms(bed, host, args.count)
            print(f"| {hold.offset_us} / {hold.cold_us} | {excess(before)} | {fixed.hold.offset_us} / "
                  f"{fixed.hold.cold_us} | {excess(after)} |", flush=True)


if __name__ == "__main__":
    main()
