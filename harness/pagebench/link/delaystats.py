"""Read the counters `pagebench-delay` publishes in its shared stats file (netem/stats.h).

The program updates the file under a seqlock once per loop; readers copy it and retry
while a write is in progress, so a snapshot is always consistent and costs no syscall
in the program's hot loop.
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass
from pathlib import Path

MAGIC = 0x31594C4544425050
VERSION = 2  # 2: the window clamp's counters (header words 9..14)
HIST_BUCKETS = 2000
HEADER_WORDS = 16
DIR_WORDS = 16
DIR_FIELDS = (
    "received", "accepted", "dropped_loss", "dropped_full", "bytes_received", "bytes_accepted",
    "held", "held_max", "no_timestamp", "verdict_errors", "lateness_max_ns", "lateness_sum_ns",
    "line_dropped", "v42_in_bytes", "v42_out_bits",
)
RWND_AT = 9
RWND_FIELDS = ("bytes", "received", "clamped", "wscale_stripped", "uncopied", "verdict_errors")
TOTAL_WORDS = HEADER_WORDS + 2 * DIR_WORDS + 2 * HIST_BUCKETS
SIZE = TOTAL_WORDS * 8


@dataclass(frozen=True)
class DirStats:
    received: int
    accepted: int
    dropped_loss: int
    dropped_full: int
    bytes_received: int
    bytes_accepted: int
    held: int
    held_max: int
    no_timestamp: int
    verdict_errors: int
    lateness_max_ns: int
    lateness_sum_ns: int
    # the program's own line (a modem profile), 0 without one: its queue's drops, and what
    # V.42bis took in (payload bytes) and sent (bits)
    line_dropped: int
    v42_in_bytes: int
    v42_out_bits: int


@dataclass(frozen=True)
class RwndStats:
    """The window clamp (`--rwnd-queue`); all zero without one."""

    bytes: int  # the clamp, 0 = none
    received: int  # packets queued to it
    clamped: int  # window field lowered
    wscale_stripped: int  # SYNs whose window-scale option became NOPs
    uncopied: int  # longer than the copy range: passed unchanged
    verdict_errors: int


@dataclass(frozen=True)
class DelayStats:
    pid: int
    ready: bool
    updated_ns: int
    recv_enobufs: int  # our socket overflowed: the kernel dropped packets (direction unknown)
    nl_errors: int
    rwnd: RwndStats
    up: DirStats
    down: DirStats
    hist_up: tuple[int, ...]
    hist_down: tuple[int, ...]

    @property
    def hist(self) -> tuple[int, ...]:
        return tuple(a + b for a, b in zip(self.hist_up, self.hist_down))


def decode(raw: bytes) -> DelayStats:
    """Decode one consistent copy of the stats file."""
    words = struct.unpack(f"<{TOTAL_WORDS}Q", raw[:SIZE])
    if words[0] != MAGIC or words[1] != VERSION:
        raise ValueError(f"delay stats: bad magic/version {words[0]:#x}/{words[1]}")
    dirs = []
    for d in range(2):
        base = HEADER_WORDS + d * DIR_WORDS
        dirs.append(DirStats(*words[base : base + len(DIR_FIELDS)]))
    hist_base = HEADER_WORDS + 2 * DIR_WORDS
    return DelayStats(
        pid=words[3],
        ready=bool(words[6]),
        updated_ns=words[5],
        recv_enobufs=words[7],
        nl_errors=words[8],
        rwnd=RwndStats(*words[RWND_AT : RWND_AT + len(RWND_FIELDS)]),
        up=dirs[0],
        down=dirs[1],
        hist_up=tuple(words[hist_base : hist_base + HIST_BUCKETS]),
        hist_down=tuple(words[hist_base + HIST_BUCKETS : hist_base + 2 * HIST_BUCKETS]),
    )


def read(path: Path, attempts: int = 1000) -> DelayStats:
    """A consistent snapshot: retry while the writer holds the seqlock (odd sequence)."""
    with path.open("rb", buffering=0) as handle:  # unbuffered: every retry reads the file anew
        for _ in range(attempts):
            handle.seek(16)
            before = struct.unpack("<Q", handle.read(8))[0]
            if before % 2:
                time.sleep(0)
                continue
            handle.seek(0)
            raw = handle.read(SIZE)
            handle.seek(16)
            after = struct.unpack("<Q", handle.read(8))[0]
            if before == after and len(raw) == SIZE:
                return decode(raw)
    raise RuntimeError(f"{path}: could not get a consistent snapshot of the delay stats")


def bucket_bounds_us(index: int) -> tuple[float, float]:
    """[low, high) lateness in µs covered by a histogram bucket (netem/delay.c)."""
    if index < 1000:
        return float(index), float(index + 1)
    if index < HIST_BUCKETS - 1:
        low = 1000 + (index - 1000) * 100
        return float(low), float(low + 100)
    return 100_900.0, float("inf")


def percentile_us(hist: tuple[int, ...] | list[int], pct: float) -> float:
    """Upper bound of the bucket holding the pct-th percentile (conservative)."""
    total = sum(hist)
    if total == 0:
        raise ValueError("empty histogram")
    rank = max(1, -(-total * pct // 100))
    seen = 0
    for index, count in enumerate(hist):
        seen += count
        if seen >= rank:
            low, high = bucket_bounds_us(index)
            return high if high != float("inf") else low
    raise AssertionError("unreachable")
