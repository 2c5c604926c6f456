"""What a person sees of a load: its frames (the screenshots Chromium's compositor took
while it loaded), the visual progress they show, and the metrics WebPageTest and
browsertime report from them; with the page's layout shifts and long tasks.

Pure. Visual progress is histogram-based, as WebPageTest's visual metrics define it: a
frame's completeness is how much of the final frame's colour histogram (per RGB channel,
near-white pixels left out, a colour matching within SLOP levels) it already shows,
counted from the blank page every load here starts on. SpeedIndex is the area above that
curve from navigation start to the last visual change.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

#: A colour level matches the SLOP_BELOW levels below it and the SLOP_ABOVE above it
#: (JPEG's noise), as in WebPageTest's visualmetrics.py.
SLOP_BELOW, SLOP_ABOVE = 5, 4
#: A pixel whose three channels are all at least this is background (the blank page is
#: white), as in WebPageTest and browsertime.
WHITE = 250
#: The completeness thresholds reported (`visual_complete_85_ms`, ...).
THRESHOLDS = (85, 95, 99)
#: A frame differs from the one before when some pixel differs by more than this many
#: levels (JPEG's noise): one moved edge is a visual change.
CHANGED = 16
#: Long tasks block the main thread beyond this (the Long Tasks API's and Lighthouse's 50 ms).
BLOCKING_MS = 50.0
#: Layout shifts within this of each other belong to one session window, which lasts
#: at most WINDOW_MS (the CLS definition since 2021: the worst window counts).
SESSION_GAP_MS = 1000.0
WINDOW_MS = 5000.0
#: The trace category of the frames, and of navigation start.
SCREENSHOT_CATEGORY = "disabled-by-default-devtools.screenshot"
NAVIGATION_CATEGORY = "blink.user_timing"


@dataclass(frozen=True)
class Frame:
    """One screenshot: when (ms since navigation start) and the JPEG as the trace holds it."""

    ms: float
    jpeg: str  # base64


@dataclass(frozen=True)
class Visual:
    """A load's visual metrics (`records.VISUAL_METRICS`) and its progress curve."""

    first_visual_change_ms: float | None = None
    speed_index_ms: float | None = None
    visual_complete_85_ms: float | None = None
    visual_complete_95_ms: float | None = None
    visual_complete_99_ms: float | None = None
    last_visual_change_ms: float | None = None
    cls: float | None = None
    tbt_ms: float | None = None
    long_tasks: int | None = None
    inp_ms: float | None = None
    progress: tuple[tuple[float, float], ...] = ()

    def metrics(self) -> dict[str, Any]:
        """Its values by metric name (without the curve)."""
        return {name: value for name, value in vars(self).items() if name != "progress"}


def navigation_start(events: Iterable[dict[str, Any]]) -> float | None:
    """The trace time (µs) the main frame's navigation started: its first `navigationStart`
    with a document URL (Chromium emits another for the initial empty document)."""
    for event in events:
        if event.get("name") == "navigationStart":
            data = (event.get("args") or {}).get("data") or {}
            if data.get("documentLoaderURL") and data.get("isOutermostMainFrame", data.get("isLoadingMainFrame")):
                return float(event["ts"])
    return None


def frames_of(events: Sequence[dict[str, Any]]) -> list[Frame]:
    """The trace's screenshots from navigation start on, in time order (none without a
    navigation start: then nothing says when the load began)."""
    start = navigation_start(events)
    if start is None:
        return []
    shots = sorted((float(e["ts"]), e["args"]["snapshot"]) for e in events
                   if e.get("name") == "Screenshot" and (e.get("args") or {}).get("snapshot"))
    return [Frame((ts - start) / 1000.0, jpeg) for ts, jpeg in shots if ts >= start]


def kept(trace: Any, curve: Sequence[tuple[float, float]]) -> dict[str, Any] | None:
    """What a load keeps of its frames (the store's `frames` file): those that changed the
    screen, each with its time and completeness; None without any."""
    if not trace or not curve:
        return None
    by_ms = {frame.ms: frame.jpeg for frame in frames_of(trace["traceEvents"])}
    return {"frames": [{"ms": ms, "progress": complete, "jpeg": by_ms[ms]} for ms, complete in curve if ms in by_ms]}


def _pixels(frame: Frame) -> np.ndarray:
    with Image.open(io.BytesIO(base64.b64decode(frame.jpeg))) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8)


def _histograms(pixels: np.ndarray) -> np.ndarray:
    """Per channel, how many non-white pixels have each level: shape (3, 256). (Channel
    by channel: numpy reduces a short last axis slowly.)"""
    red, green, blue = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    coloured = np.minimum(np.minimum(red, green), blue) < WHITE
    return np.stack([np.bincount(channel[coloured], minlength=256) for channel in (red, green, blue)])


def _changed(before: np.ndarray, after: np.ndarray) -> bool:
    """Whether some pixel moved beyond JPEG's noise (CHANGED levels in a channel)."""
    if before.shape != after.shape:
        return True
    return bool((np.maximum(before, after) - np.minimum(before, after)).max() > CHANGED)


def completeness(histograms: np.ndarray, final: np.ndarray) -> np.ndarray:
    """Each frame's completeness (0..1, whole percents) against the final frame, from the
    blank start: the final histogram's counts are matched greedily, level by level, each
    by the frame's counts within the slop, lowest first. `histograms`: (frames, 3, 256);
    `final`: (3, 256). Plain integers, one pass per channel: counts below a level's slop
    are spent or out of every later level's reach, so the pass never looks back."""
    wanted_levels = [[(int(level), int(final[channel, level])) for level in np.flatnonzero(final[channel])]
                     for channel in range(3)]
    total = max(1, int(final.sum()))
    done = []
    for histogram in histograms:
        if not histogram.any() or np.array_equal(histogram, final):
            done.append(0.0 if not histogram.any() else 1.0)  # blank, or the final frame's colours
            continue
        matched = 0
        for channel, levels in enumerate(wanted_levels):
            available = histogram[channel].tolist()
            low = 0
            for level, wanted in levels:
                if low < level - SLOP_BELOW:
                    low = level - SLOP_BELOW
                top = level + SLOP_ABOVE if level + SLOP_ABOVE < 256 else 255
                near = low
                while wanted and near <= top:
                    count = available[near]
                    if count:
                        take = count if count < wanted else wanted
                        available[near] = count - take
                        wanted -= take
                        matched += take
                    if near == low and not available[near]:
                        low += 1
                    near += 1
        done.append(matched * 100 // total / 100)  # whole percents, as WebPageTest and speedline
    return np.asarray(done)


def progress(frames: Sequence[Frame]) -> list[tuple[float, float]]:
    """The visual progress curve: (ms, completeness) at each frame that changed what is
    on screen, the last one complete."""
    if not frames:
        return []
    pixels = [_pixels(frame) for frame in frames]
    changed = [0] + [k for k in range(1, len(frames))
                     if frames[k].jpeg != frames[k - 1].jpeg and _changed(pixels[k - 1], pixels[k])]
    histograms = np.stack([_histograms(pixels[k]) for k in changed])
    if not histograms[-1].any():
        return []  # nothing but background: no visual change
    done = completeness(histograms, histograms[-1])
    curve = [(frames[k].ms, float(value)) for k, value in zip(changed, done)]
    if curve[0][1] == 0.0 and len(curve) > 1:
        curve = curve[1:]  # the blank page itself is no visual change
    return curve if curve[0][1] > 0.0 or len(curve) > 1 else []


def speed_index(curve: Sequence[tuple[float, float]]) -> float:
    """The area above the progress curve from navigation start (nothing shown) to the
    last visual change: each interval weighted by how incomplete the screen was."""
    area, at, shown = 0.0, 0.0, 0.0
    for ms, complete in curve:
        area += (1.0 - shown) * (ms - at)
        at, shown = ms, complete
    return area


def cumulative_layout_shift(shifts: Iterable[dict[str, Any]]) -> float:
    """CLS: the largest session window's sum of layout shifts not caused by input
    (`{"start": ms, "value": score, "input": bool}` per layout-shift entry)."""
    worst = current = 0.0
    first = last = None
    for shift in sorted((s for s in shifts if not s.get("input")), key=lambda s: s["start"]):
        start = float(shift["start"])
        if first is None or last is None or start - last > SESSION_GAP_MS or start - first > WINDOW_MS:
            first, current = start, 0.0
        current += float(shift["value"])
        last = start
        worst = max(worst, current)
    return worst


def blocking(tasks: Iterable[dict[str, Any]], after_ms: float | None) -> tuple[float | None, int]:
    """Total blocking time and the number of long tasks (`{"start": ms, "duration": ms}`):
    each long task's time beyond BLOCKING_MS, only the part after first contentful paint
    (as Lighthouse counts; its window ends at TTI, ours where the capture ends). Without a
    first contentful paint there is no blocking time (None), as in Lighthouse."""
    total, count = 0.0, 0
    for task in tasks:
        start, duration = float(task["start"]), float(task["duration"])
        if duration <= BLOCKING_MS:
            continue
        count += 1
        end = start + duration
        begin = max(start, after_ms or 0.0)
        if end - begin > BLOCKING_MS:
            total += end - begin - BLOCKING_MS
    return (None if after_ms is None else total), count


def visual(frames: Sequence[Frame], page: dict[str, Any], fcp_ms: float | None) -> Visual:
    """A load's Visual from its frames and what its page observed (`page["shifts"]`,
    `page["longtasks"]`, `page["interactions"]`: lists of entries, absent when not observed)."""
    curve = progress(frames)
    tbt, long_tasks = blocking(page["longtasks"], fcp_ms) if "longtasks" in page else (None, None)
    interactions = page.get("interactions")
    figures: dict[str, Any] = {
        "cls": cumulative_layout_shift(page["shifts"]) if "shifts" in page else None,
        "tbt_ms": tbt, "long_tasks": long_tasks,
        "inp_ms": max((float(i["duration"]) for i in interactions), default=None) if interactions else None,
    }
    if not curve:
        return Visual(**figures)
    reached = {t: next(ms for ms, complete in curve if complete * 100 >= t - 1e-9) for t in THRESHOLDS}
    return Visual(first_visual_change_ms=curve[0][0], speed_index_ms=speed_index(curve),
                  visual_complete_85_ms=reached[85], visual_complete_95_ms=reached[95],
                  visual_complete_99_ms=reached[99], last_visual_change_ms=curve[-1][0],
                  progress=tuple(curve), **figures)
