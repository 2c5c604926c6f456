"""The hold calibration's arithmetic: one-sided (a link never faster than its profile)."""

from __future__ import annotations

import pytest

from pagebench.core.profiles import make_profile
from pagebench.link.calibration import MARGIN_US, busy_pps, calibrate, holds_us


def profile(**fields):
    return make_profile({"name": "p", **fields})


def test_the_offset_puts_the_fastest_handshake_a_margin_above_the_profile():
    samples = [50.25, 50.16, 50.3, 50.2]  # fastest 160 µs over
    cal = calibrate(profile(rtt_ms=50), samples)
    assert cal.floor_us == pytest.approx(160)
    assert cal.median_us == pytest.approx(225)
    assert (cal.offset_us, cal.before_us, cal.n) == (160 - MARGIN_US, 0, 4)


def test_a_calibrated_link_measured_again_keeps_what_it_has_and_adds_what_is_left():
    # the holds were 140 µs short already; the fastest handshake is still 30 µs over
    cal = calibrate(profile(rtt_ms=20), [20.03, 20.05], before_us=140)
    assert cal.offset_us == 140 + 30 - MARGIN_US


def test_a_link_already_faster_than_its_profile_gives_back_hold():
    cal = calibrate(profile(rtt_ms=20), [19.99, 20.05], before_us=140)
    assert cal.offset_us == 140 - 10 - MARGIN_US


def test_the_offset_is_never_negative_nor_more_than_the_holds():
    assert calibrate(profile(rtt_ms=20), [19.0], before_us=0).offset_us == 0
    assert calibrate(profile(rtt_ms=0.1), [0.5]).offset_us == 100  # both 50 µs holds gone, no more


def test_no_samples_is_an_error():
    with pytest.raises(ValueError):
        calibrate(profile(rtt_ms=20), [])


def test_holds_split_the_offset_between_the_directions_and_stay_non_negative():
    p = profile(rtt_ms=50)
    assert holds_us(p, 0) == (25_000, 25_000)
    assert holds_us(p, 150) == (24_925, 24_925)
    assert holds_us(p, 151) == (24_924, 24_925)
    assert holds_us(p, -5) == (25_000, 25_000)
    assert holds_us(profile(rtt_ms=0.1), 500) == (0, 0)


def test_the_busy_pass_stays_a_tenth_of_the_uplink_and_at_most_2000_a_second():
    assert busy_pps(profile(rtt_ms=50)) == 2000
    assert busy_pps(profile(rtt_ms=50, up_mbit=100, down_mbit=100)) == 2000
    assert busy_pps(profile(rtt_ms=50, up_mbit=0.848, down_mbit=1)) == pytest.approx(100)
