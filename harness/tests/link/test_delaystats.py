"""Delay stats: decoding the file pagebench-delay shares (netem/stats.h), and its histogram."""

import math
import random
import struct

import pytest

from pagebench.link import delaystats
from pagebench.link.delaystats import (
    DIR_FIELDS,
    HIST_BUCKETS,
    MAGIC,
    RWND_FIELDS,
    SIZE,
    DirStats,
    RwndStats,
    bucket_bounds_us,
    decode,
    percentile_us,
    read,
)

UP = tuple(range(101, 116))  # the 15 named fields of pb_dir_stats, each a distinct value
DOWN = tuple(range(201, 216))
RWND = (32767, 301, 302, 303, 304, 305)  # the window clamp's 6 fields in the header
JUNK = 0xDEADBEEF  # reserved words: must never be read


def image(seq=2, magic=MAGIC, version=2, ready=1, hist_up=None, hist_down=None) -> bytes:
    """struct pb_stats, field by field, exactly as stats.h lays it out."""
    header = struct.pack("<9Q", magic, version, seq, 4242, 1_000_000, 2_000_000, ready, 17, 23)
    header += struct.pack("<6Q", *RWND) + struct.pack("<Q", JUNK)
    dirs = b"".join(struct.pack("<15Q", *d) + struct.pack("<Q", JUNK) for d in (UP, DOWN))
    hists = b"".join(
        struct.pack(f"<{HIST_BUCKETS}Q", *(h or [0] * HIST_BUCKETS)) for h in (hist_up, hist_down))
    raw = header + dirs + hists
    # The C static asserts, checked on our own image.
    assert len(raw) == SIZE == 32384
    assert struct.unpack_from("<Q", raw, 16)[0] == seq and struct.unpack_from("<Q", raw, 48)[0] == ready
    assert struct.unpack_from("<2Q", raw, 56) == (17, 23) and struct.unpack_from("<Q", raw, 128)[0] == UP[0]
    assert struct.unpack_from("<Q", raw, 72)[0] == RWND[0] and struct.unpack_from("<Q", raw, 112)[0] == RWND[-1]
    return raw


def sparse(counts: dict[int, int]) -> list[int]:
    """A full-size histogram with `counts` at the given buckets."""
    hist = [0] * HIST_BUCKETS
    for index, count in counts.items():
        hist[index] = count
    return hist


def test_decode_maps_every_field():
    hist_up = sparse({0: 5, 999: 6, 1999: 7})
    hist_down = sparse({0: 1, 1000: 2})
    stats = decode(image(hist_up=hist_up, hist_down=hist_down))
    assert len(DIR_FIELDS) == 15
    assert (stats.pid, stats.ready, stats.updated_ns, stats.recv_enobufs, stats.nl_errors) == (
        4242, True, 2_000_000, 17, 23)
    assert stats.up == DirStats(*UP) and stats.down == DirStats(*DOWN)
    assert len(RWND_FIELDS) == 6 and stats.rwnd == RwndStats(*RWND)
    assert (stats.rwnd.bytes, stats.rwnd.clamped, stats.rwnd.wscale_stripped) == (32767, 302, 303)
    assert stats.up.lateness_sum_ns == 112 and stats.down.received == 201
    assert (stats.up.line_dropped, stats.up.v42_in_bytes, stats.down.v42_out_bits) == (113, 114, 215)
    assert stats.hist_up == tuple(hist_up) and stats.hist_down == tuple(hist_down)
    assert stats.hist[:2] == (6, 0) and (stats.hist[999], stats.hist[1000], stats.hist[1999]) == (6, 2, 7)
    assert decode(image(ready=0)).ready is False


def test_decode_rejects_other_files():
    with pytest.raises(ValueError, match="magic"):
        decode(image(magic=0x1122334455667788))
    with pytest.raises(ValueError, match="version"):
        decode(image(version=1))  # before the window clamp: another layout
    with pytest.raises(ValueError, match="version"):
        decode(image(version=3))


def test_read_returns_a_consistent_snapshot(tmp_path):
    path = tmp_path / "stats"
    path.write_bytes(image(seq=8, hist_up=sparse({3: 9})))
    stats = read(path)
    assert stats == decode(path.read_bytes())
    assert stats.hist_up[3] == 9


def test_read_retries_while_writing_then_gives_up(tmp_path, monkeypatch):
    """An odd sequence means the writer is mid-update: retry `attempts` times, then raise."""
    path = tmp_path / "stats"
    path.write_bytes(image(seq=7))
    waits = []
    monkeypatch.setattr(delaystats.time, "sleep", waits.append)
    with pytest.raises(RuntimeError, match="consistent snapshot"):
        read(path, attempts=25)
    assert len(waits) == 25


def test_read_rejects_a_truncated_file(tmp_path):
    path = tmp_path / "stats"
    path.write_bytes(image()[: SIZE - 8])
    with pytest.raises(RuntimeError):
        read(path, attempts=3)


def test_read_sees_the_writer_finish(tmp_path, monkeypatch):
    path = tmp_path / "stats"
    path.write_bytes(image(seq=7))

    def writer_finishes(_):
        with path.open("r+b") as handle:
            handle.seek(16)
            handle.write(struct.pack("<Q", 8))

    monkeypatch.setattr(delaystats.time, "sleep", writer_finishes)
    assert read(path, attempts=5).pid == 4242


def c_bucket(lateness_us: int) -> int:
    """pb_hist_bucket() in netem/delay.c."""
    if lateness_us < 1000:
        return lateness_us
    if lateness_us < 100900:
        return 1000 + (lateness_us - 1000) // 100
    return 1999


@pytest.mark.parametrize(
    ("index", "bounds"),
    [
        (0, (0, 1)),
        (999, (999, 1000)),
        (1000, (1000, 1100)),
        (1989, (99900, 100000)),
        (1998, (100800, 100900)),
        (1999, (100900, math.inf)),
    ],
)
def test_bucket_bounds(index, bounds):
    assert bucket_bounds_us(index) == bounds


def test_bucket_bounds_match_the_c_bucket_function():
    """Every bucket's [low, high) maps back to that bucket, and nothing in between is missed."""
    for index in range(HIST_BUCKETS - 1):
        low, high = bucket_bounds_us(index)
        assert c_bucket(int(low)) == index and c_bucket(int(high) - 1) == index
        assert bucket_bounds_us(index + 1)[0] == high
    rng = random.Random(5)
    for lateness in [0, 1, 999, 1000, 1099, 1100, 100899, 100900, 10**12] + [rng.randrange(200_000)
                                                                             for _ in range(1000)]:
        low, high = bucket_bounds_us(c_bucket(lateness))
        assert low <= lateness < high


def nearest_rank_us(hist: list[int], pct: float) -> float:
    """Brute force: expand to one value per sample, take the nearest rank, report its
    bucket's upper bound (the overflow bucket has none: its lower bound)."""
    values = [index for index, count in enumerate(hist) for _ in range(count)]
    index = values[max(1, math.ceil(len(values) * pct / 100)) - 1]
    low, high = bucket_bounds_us(index)
    return low if math.isinf(high) else high


def test_percentile_matches_brute_force_on_random_histograms():
    rng = random.Random(20240611)
    for _ in range(200):
        hist = [0] * HIST_BUCKETS
        for _ in range(rng.randint(1, 30)):
            hist[rng.choice([rng.randrange(1000), rng.randrange(1000, HIST_BUCKETS), 1999])] += rng.randint(1, 50)
        for pct in (0, 1, 25, 50, 90, 95, 99, 99.9, 100):
            assert percentile_us(hist, pct) == nearest_rank_us(hist, pct), (hist, pct)


def test_percentile_edge_cases():
    single = sparse({42: 7})
    assert {percentile_us(single, p) for p in (0, 50, 100)} == {43.0}
    assert percentile_us(sparse({1999: 1}), 50) == 100_900.0
    assert percentile_us(sparse({0: 99, 1001: 1}), 99) == 1.0
    assert percentile_us(sparse({0: 99, 1001: 1}), 99.5) == 1200.0
    with pytest.raises(ValueError, match="empty"):
        percentile_us([0] * HIST_BUCKETS, 50)
    with pytest.raises(ValueError):
        percentile_us([], 50)
