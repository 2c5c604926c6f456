"""The hold calibration's arithmetic: one-sided (a link never faster than its profile)."""

from __future__ import annotations

import pytest

from pagebench.core.profiles import make_profile
from pagebench.link.calibration import MARGIN_US, Hold, busy_pps, calibrate, first_try, give_back, holds_us


def profile(**fields):
    return make_profile({"name": "p", **fields})


def test_the_busy_floor_comes_off_every_round_trip_and_the_idle_rest_off_each_cold_release():
    idle = [50.25, 50.16, 50.3, 50.2]  # fastest 160 µs over
    busy = [50.09, 50.1, 50.08]  # fastest 80 µs over
    cal = calibrate(profile(rtt_ms=50), idle, busy)
    assert (cal.idle_floor_us, cal.busy_floor_us) == (pytest.approx(160), pytest.approx(80))
    assert cal.idle_median_us == pytest.approx(225)
    assert cal.hold == Hold(80 - MARGIN_US, 40)  # a handshake's two cold releases: 80 µs between them
    assert (cal.before, cal.n) == (Hold(), 7)


def test_a_calibrated_link_measured_again_keeps_what_it_has_and_adds_what_is_left():
    # 140 off the round trip and 20 off each cold release already; still 30 (busy), 50 (idle) over
    cal = calibrate(profile(rtt_ms=20), [20.05], [20.03], before=Hold(140, 20))
    assert cal.hold == Hold(140 + 30 - MARGIN_US, (50 + 40 - 30) // 2)


def test_a_link_already_faster_than_its_profile_gives_back_hold():
    cal = calibrate(profile(rtt_ms=20), [20.0], [19.99], before=Hold(140, 0))
    assert cal.hold == Hold(140 - 10 - MARGIN_US, 5)


def test_a_busy_pass_slower_than_the_idle_one_takes_nothing_for_cold_releases():
    cal = calibrate(profile(rtt_ms=20), [20.1], [20.2])
    assert cal.hold == Hold(100 - MARGIN_US, 0)


def test_the_holds_are_never_negative_nor_overdrawn():
    assert calibrate(profile(rtt_ms=20), [19.0], [19.0]).hold == Hold(0, 0)
    assert calibrate(profile(rtt_ms=0.1), [0.5], [0.5]).hold == Hold(100, 0)  # both 50 µs holds gone, no more
    cal = calibrate(profile(rtt_ms=0.1), [0.9], [0.12])
    assert cal.hold.offset_us + 2 * cal.hold.cold_us <= 100


def test_no_samples_is_an_error():
    with pytest.raises(ValueError):
        calibrate(profile(rtt_ms=20), [], [20.1])
    with pytest.raises(ValueError):
        calibrate(profile(rtt_ms=20), [20.1], [])


def test_a_stored_calibration_gives_its_hold_and_an_older_one_no_cold_releases():
    assert Hold.of({"offset_us": 60, "cold_us": 25, "n": 60}) == Hold(60, 25)
    assert Hold.of({"offset_us": 60, "floor_us": 80.0}) == Hold(60, 0)


def test_holds_split_the_offset_between_the_directions_and_stay_non_negative():
    p = profile(rtt_ms=50)
    assert holds_us(p, Hold()) == (25_000, 25_000)
    assert holds_us(p, Hold(150)) == (24_925, 24_925)
    assert holds_us(p, Hold(151, 40)) == (24_924, 24_925)  # cold releases are the program's, not the holds'
    assert holds_us(p, Hold(-5)) == (25_000, 25_000)
    assert holds_us(profile(rtt_ms=0.1), Hold(500)) == (0, 0)


def test_the_busy_pass_stays_a_tenth_of_the_uplink_and_at_most_2000_a_second():
    assert busy_pps(profile(rtt_ms=50)) == 2000
    assert busy_pps(profile(rtt_ms=50, up_mbit=100, down_mbit=100)) == 2000
    assert busy_pps(profile(rtt_ms=50, up_mbit=0.848, down_mbit=1)) == pytest.approx(100)


def test_handshakes_that_were_retransmitted_are_left_out():
    pairs = [(50.2, 50.1), (1050.3, 50.2), (50.3, 0.0), (50.25, 50.12)]
    assert first_try(pairs) == [50.1, 50.12]


def test_a_check_whose_median_came_under_gets_back_what_puts_its_fastest_over_cold_releases_first():
    cal = calibrate(profile(rtt_ms=20), [20.1], [20.06])  # Hold(40, 20)
    assert give_back(profile(rtt_ms=20), cal, [19.99, 20.0, 20.01]) is None  # median at the profile: nothing
    assert give_back(profile(rtt_ms=20), cal, []) is None
    small = give_back(profile(rtt_ms=20), cal, [19.995, 19.998, 20.2])  # fastest 5 µs under
    assert small.hold == Hold(40, 20 - (5 + MARGIN_US + 1) // 2) and small.given_back_us == 5 + MARGIN_US + 1
    large = give_back(profile(rtt_ms=20), cal, [19.9])  # 100 µs under: more than both hold
    assert large.hold == Hold(0, 0) and large.given_back_us == 40 + 2 * 20
    assert give_back(profile(rtt_ms=20), large, [19.9]) is None  # nothing left to give back
