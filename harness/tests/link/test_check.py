"""`probe_link`'s sequencing with a fake link and probe client: a calibration whose own
check measures the link faster than its profile gives the deficit back and measures
again (the real link: `tests/cli/test_link_e2e.py`)."""

from __future__ import annotations

from pagebench.core.profiles import make_profile
from pagebench.link.calibration import MARGIN_US, Hold
from pagebench.link.check import probe_link
from pagebench.link.counters import LinkCounters

PROFILE = make_profile({"name": "p", "rtt_ms": 30})


class FakeLink:
    backend = "userspace"

    def __init__(self) -> None:
        self.holds: dict[str, Hold] = {}
        self.applied: list[Hold] = []

    def calibrate(self, profile, hold):
        self.holds[profile.name] = hold
        self.applied.append(hold)
        return True

    def counters(self):
        return LinkCounters()

    def wait_settled(self, timeout=2.0):
        pass

    def drained_counters(self, timeout=2.0):
        return self.counters()


class FakeClient:
    """Answers each probe; the check's handshake passes take their RTTs from `passes`."""

    def __init__(self, idle_ms, busy_ms, passes):
        self.idle, self.busy, self.passes = idle_ms, busy_ms, list(passes)
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, *args):
        self.calls.append(args)
        if args[0] == "rtt":
            count = int(args[args.index("--count") + 1])
            if count == 30:  # the calibration's passes
                ms = self.busy if "--busy-pps" in args else self.idle
            else:
                ms = self.passes.pop(0)
            return [[t + 0.15, t] for t in ms]
        if args[0] in ("down", "up"):
            return [[0.0, 0, 0], [20.0, 0, 25_000_000]]
        return {"up": {"sent": 100, "received": 100}, "down": {"sent": 100, "received": 100}}


def rtt_passes(client):
    return [c for c in client.calls if c[0] == "rtt" and "--count" in c and c[c.index("--count") + 1] == "50"]


def test_a_check_under_its_profile_gives_the_deficit_back_and_measures_again():
    link = FakeLink()
    client = FakeClient(idle_ms=[30.1] * 30, busy_ms=[30.06] * 30,
                        passes=[[29.97] * 50, [30.03] * 50])  # 30 µs under, then over
    result = probe_link(link, PROFILE, "10.0.0.2", "10.0.0.1", client)
    first, given = link.applied
    assert first == Hold(60 - MARGIN_US, 20)
    assert given == Hold(first.offset_us - (30 + MARGIN_US - 2 * first.cold_us), 0)
    assert result["calibration"]["given_back_us"] == 30 + MARGIN_US
    assert (result["calibration"]["offset_us"], result["calibration"]["cold_us"]) == (given.offset_us, 0)
    assert len(rtt_passes(client)) == 2
    assert result["measured"]["tcp_rtt_ms"]["median"] == 30.03
    assert result["valid"] is True


def test_a_check_at_or_over_its_profile_keeps_its_calibration():
    link = FakeLink()
    client = FakeClient(idle_ms=[30.1] * 30, busy_ms=[30.06] * 30, passes=[[30.0] * 50])
    result = probe_link(link, PROFILE, "10.0.0.2", "10.0.0.1", client)
    assert link.applied == [Hold(40, 20)] and len(rtt_passes(client)) == 1
    assert result["calibration"]["given_back_us"] == 0 and result["valid"] is True


def test_a_check_still_under_after_giving_back_is_invalid():
    link = FakeLink()
    client = FakeClient(idle_ms=[30.1] * 30, busy_ms=[30.06] * 30, passes=[[29.9] * 50, [29.99] * 50])
    result = probe_link(link, PROFILE, "10.0.0.2", "10.0.0.1", client)
    assert len(link.applied) == 2 and len(rtt_passes(client)) == 2  # gives back once, no more
    assert result["valid"] is False
    assert result["problems"] == ["TCP RTT median 29.990 ms < the profile's 30 ms"]
