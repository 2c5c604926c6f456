"""Link check verdict: how hard to probe, what the samples say, and the JSON contract."""

import statistics

import pytest

from pagebench.core.profiles import make_profile
from pagebench.core.quantiles import percentile
from pagebench.link.calibration import MARGIN_US, Calibration, Hold
from pagebench.link.counters import EMPTY_HIST, LinkCounters
from pagebench.link.verdict import MAX_PPS, PROBE_WIRE_BITS, probe_plan, steady_goodput_mbit, summarize


def profile(**fields):
    return make_profile({"name": "t", **fields})


def test_probe_plan_for_a_short_lossless_link():
    """Warm-up is at least 2 s; UDP is paced at half the rate, capped at MAX_PPS."""
    plan = probe_plan(profile(rtt_ms=50, down_mbit=10, up_mbit=1))
    assert (plan.rtt_samples, plan.warm_s, plan.bulk_s) == (50, 2.0, 6.0)
    assert plan.udp_down == (2000, MAX_PPS)  # half of 10 Mbit/s is 5896 pps: capped
    assert plan.udp_up == (590, pytest.approx(589.62, abs=0.01))  # 0.5 Mbit/s / 848 bit, for 1 s
    assert plan.grace_s == pytest.approx(0.55)


def test_probe_plan_warm_up_is_ten_round_trips_with_a_full_queue():
    """Slow start needs ~10 RTTs, and a full queue lengthens each: the slowest to drain counts."""
    plan = probe_plan(profile(rtt_ms=300))  # no rate, no queue
    assert (plan.warm_s, plan.bulk_s) == (pytest.approx(3.0), pytest.approx(7.0))
    # 125000 B drain in 1 s at 1 Mbit/s up, in 10 ms at 100 Mbit/s down
    plan = probe_plan(profile(rtt_ms=50, up_mbit=1, down_mbit=100, queue_bytes=125_000))
    assert (plan.warm_s, plan.bulk_s) == (pytest.approx(10 * (0.05 + 1.0)), pytest.approx(14.5))


def test_probe_plan_sends_more_with_loss_and_waits_for_jitter():
    """Loss needs many samples (4 s, up to 20000 datagrams); grace covers RTT + jitter."""
    plan = probe_plan(profile(rtt_ms=100, jitter_ms=10, loss_pct=2, down_mbit=10, up_mbit=1))
    assert plan.udp_down == (20000, MAX_PPS)
    assert plan.udp_up[0] == 2358  # 589.6 pps * 4 s
    assert plan.grace_s == pytest.approx(0.1 + 0.5 + 0.01)


@pytest.mark.parametrize(
    ("mbit", "count", "pps"),
    [
        (None, 2000, MAX_PPS),  # unlimited
        (10_000, 2000, MAX_PPS),
        (0.05, 100, 25_000 / PROBE_WIRE_BITS),  # 29.5 pps, but never fewer than 100 datagrams
    ],
)
def test_probe_pacing_limits(mbit, count, pps):
    plan = probe_plan(profile(down_mbit=mbit))
    assert plan.udp_down == (count, pytest.approx(pps))
    assert plan.udp_down[1] <= MAX_PPS


def test_goodput_of_a_constant_rate():
    samples = [(i / 50, i * 20_000) for i in range(301)]  # 1 MB/s for 6 s, every 20 ms
    assert steady_goodput_mbit(samples, warm_s=2.0) == pytest.approx(8.0)


def test_goodput_excludes_the_warm_up():
    """Slow start (here 1 Mbit/s for 2 s) must not drag the steady rate down."""
    slow = [(i / 10, i * 12_500) for i in range(20)]  # 125 kB/s until 1.9 s
    fast = [(2 + i / 10, 250_000 + i * 125_000) for i in range(41)]  # then 1.25 MB/s
    assert steady_goodput_mbit(slow + fast, warm_s=2.0) == pytest.approx(10.0)
    assert steady_goodput_mbit(slow + fast, warm_s=0.0) < 9.0


@pytest.mark.parametrize(
    "samples",
    [
        [],
        [(3.0, 1000)],
        [(0.0, 0), (0.0, 5000)],  # no time passed
        [(0.0, 0), (1.0, 1000), (2.5, 5000)],  # only the last sample is after the warm-up
    ],
)
def test_goodput_of_degenerate_samples_is_zero(samples):
    assert steady_goodput_mbit(samples, warm_s=2.0) == 0.0


def numpy_linear(values, pct):
    """numpy.percentile(method="linear") by hand: interpolate at rank (n - 1) * pct / 100."""
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    below = int(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] * (1 - (rank - below)) + ordered[above] * (rank - below)


def test_percentile_interpolates_like_numpy():
    values = [40.0, 10.0, 30.0, 20.0]
    assert percentile(values, 0) == 10.0 and percentile(values, 100) == 40.0
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile([7.0], 95) == 7.0
    data = [float(x * x % 97) for x in range(1, 60)]
    inclusive = statistics.quantiles(data, n=100, method="inclusive")
    for pct in (1, 25, 50, 75, 95, 99):
        assert percentile(data, pct) == pytest.approx(inclusive[pct - 1]) == pytest.approx(numpy_linear(data, pct))


RTT = [50.0 + i / 10 for i in range(50)]  # 50.0 .. 54.9 ms
UDP = {"up": {"sent": 2000, "received": 1980}, "down": {"sent": 2000, "received": 1960}}


def lateness(bucket: int) -> tuple[int, ...]:
    return EMPTY_HIST[:bucket] + (100,) + EMPTY_HIST[bucket + 1:]


def test_summary_is_the_json_contract():
    shaped = profile(rtt_ms=50, loss_pct=1.5, down_mbit=10, up_mbit=2)
    delta = LinkCounters(tcp_conns=52, udp_flows=2, packets_up=4100, drops_loss_up=20, drops_queue_down=3,
                         lateness_hist=lateness(120))
    report = summarize("userspace", shaped, RTT, 9.41234, 1.8849, UDP, delta)
    assert set(report) == {"backend", "configured", "measured", "lateness_us", "drops", "counters", "valid",
                           "problems", "calibration"}
    assert report["calibration"] is None
    assert report["backend"] == "userspace"
    assert report["configured"] == shaped.fields()
    assert report["measured"] == {
        "rtt_ms": {"median": 52.45, "p95": 54.655, "min": 50.0, "n": 50},
        "tcp_rtt_ms": None,  # connect() times alone: no kernel RTT was read
        "down_mbit": 9.412,
        "up_mbit": 1.885,
        "loss_pct": 1.5,  # 60 of 4000
        "loss": {"up": {"sent": 2000, "received": 1980, "loss_pct": 1.0},
                 "down": {"sent": 2000, "received": 1960, "loss_pct": 2.0}},
    }
    assert report["lateness_us"] == {"p50": 121.0, "p99": 121.0, "max": 121.0}
    assert report["drops"] == {"queue_up": 0, "queue_down": 3, "loss_up": 20, "loss_down": 0, "nfqueue": 0}
    assert report["counters"]["tcp_conns"] == 52 and report["counters"]["packets_up"] == 4100
    assert "lateness_hist" not in report["counters"] and "lateness_us" not in report["counters"]
    assert (report["valid"], report["problems"]) == (True, [])


def test_netem_summary_has_no_lateness_and_is_valid():
    report = summarize("netem", profile(rtt_ms=50), RTT, 100.0, 100.0, UDP, LinkCounters())
    assert report["lateness_us"] == {"p50": None, "p99": None, "max": None}
    assert report["valid"] is True


@pytest.mark.parametrize(("bucket", "valid"), [(999, True), (1000, False), (1999, False)])
def test_late_release_invalidates_the_link(bucket, valid):
    """p99 is a bucket's upper bound: bucket 999 ends at exactly 1000 µs, which is allowed."""
    report = summarize("userspace", profile(rtt_ms=50), RTT, 1.0, 1.0, UDP,
                       LinkCounters(lateness_hist=lateness(bucket)))
    assert report["valid"] is valid
    assert report["problems"] == ([] if valid else [f"release lateness p99 {report['lateness_us']['p99']:.0f} µs"
                                                    " > 1000 µs"])


def test_nfqueue_drops_invalidate_the_link():
    report = summarize("userspace", profile(rtt_ms=50), RTT, 1.0, 1.0, UDP,
                       LinkCounters(drops_nfqueue=4, lateness_hist=lateness(5)))
    assert report["valid"] is False
    assert report["problems"] == ["4 packets dropped at the NFQUEUE hand-over"]


def test_a_window_clamp_that_missed_a_syn_invalidates_the_link():
    """With rwnd_bytes, every new connection's SYN must have lost its window scaling."""
    clamped = profile(rtt_ms=50, rwnd_bytes=32767)
    held = summarize("userspace", clamped, RTT, 1.0, 1.0, UDP, LinkCounters(tcp_conns=53, rwnd_wscale_stripped=54,
                                                                            rwnd_clamped=900))
    assert (held["valid"], held["problems"]) == (True, [])
    assert held["counters"]["rwnd_clamped"] == 900 and held["counters"]["rwnd_wscale_stripped"] == 54
    missed = summarize("userspace", clamped, RTT, 1.0, 1.0, UDP, LinkCounters(tcp_conns=53, rwnd_wscale_stripped=52))
    assert missed["problems"] == ["window clamp: window scaling stripped from 52 SYNs of 53 new TCP connections"]
    # the era's TCP sends no window scale to strip
    era = profile(rtt_ms=50, rwnd_bytes=32767, window_scaling=False)
    assert summarize("netem", era, RTT, 1.0, 1.0, UDP, LinkCounters(tcp_conns=53))["valid"] is True


def test_the_tcp_rtt_is_reported_beside_connect_and_a_link_faster_than_its_profile_is_invalid():
    pairs = [(50.3 + i / 1000, 50.02 + i / 1000) for i in range(11)]
    report = summarize("userspace", profile(rtt_ms=50), pairs, 1.0, 1.0, UDP, LinkCounters())
    assert report["measured"]["rtt_ms"] == {"median": 50.305, "p95": 50.309, "min": 50.3, "n": 11}
    assert report["measured"]["tcp_rtt_ms"] == {"median": 50.025, "p95": 50.029, "min": 50.02, "n": 11}
    assert report["valid"] is True
    fast = [(50.1, 49.95)] * 6 + [(50.1, 50.2)] * 5
    report = summarize("userspace", profile(rtt_ms=50), fast, 1.0, 1.0, UDP, LinkCounters())
    assert report["problems"] == ["TCP RTT median 49.950 ms < the profile's 50 ms"]


def test_the_calibration_is_reported():
    cal = Calibration(Hold(230, 40), Hold(), idle_floor_us=320.0, busy_floor_us=240.0, idle_median_us=350.0, n=60)
    report = summarize("userspace", profile(rtt_ms=50), RTT, 1.0, 1.0, UDP, LinkCounters(), cal)
    assert report["calibration"] == {"offset_us": 230, "cold_us": 40, "before_offset_us": 0, "before_cold_us": 0,
                                     "idle_floor_us": 320.0, "busy_floor_us": 240.0, "idle_median_us": 350.0,
                                     "n": 60, "margin_us": MARGIN_US, "given_back_us": 0}
