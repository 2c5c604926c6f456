"""Visual progress, SpeedIndex, CLS and TBT from frames and entries made here (the real
browser's: `tests/lab/test_visual_e2e.py`)."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from pagebench.core.measure import visual
from pagebench.core.measure.visual import Frame

W, H = 320, 240  # bands of 4k rows: JPEG blurs only their edges
RED, BLUE, WHITE = (200, 30, 30), (30, 30, 200), (255, 255, 255)


def frame(ms: float, *blocks: tuple[tuple[int, int, int], int]) -> Frame:
    """A white frame with horizontal bands of colour from the top: (colour, rows) each."""
    pixels = np.full((H, W, 3), 255, dtype=np.uint8)
    top = 0
    for colour, rows in blocks:
        pixels[top:top + 4 * rows] = colour
        top += 4 * rows
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, "JPEG", quality=90)
    return Frame(ms, base64.b64encode(out.getvalue()).decode())


def test_a_frame_s_completeness_is_its_share_of_the_final_colours():
    frames = [frame(0.0), frame(200.0, (RED, 15)), frame(200.0 + 16, (RED, 15)), frame(900.0, (RED, 15), (BLUE, 45))]
    curve = visual.progress(frames)
    assert [ms for ms, _ in curve] == [200.0, 900.0]  # the blank start and the repeated frame are no change
    assert curve[0][1] == pytest.approx(0.25, abs=0.03) and curve[1][1] == 1.0  # JPEG blurs the edges
    assert visual.speed_index(curve) == pytest.approx(200 + 0.75 * 700, rel=0.03)


def test_visual_metrics_of_a_load_that_paints_at_the_end_and_one_that_paints_early():
    at_end = visual.visual([frame(0.0), frame(1000.0, (RED, 15), (BLUE, 45))], {}, None)
    early = visual.visual([frame(0.0), frame(100.0, (RED, 30)), frame(1000.0, (RED, 30), (BLUE, 30))], {}, None)
    assert at_end.speed_index_ms == at_end.first_visual_change_ms == at_end.last_visual_change_ms == 1000.0
    assert early.speed_index_ms == pytest.approx(100 + 0.5 * 900, rel=0.03)
    assert (early.visual_complete_85_ms, early.visual_complete_95_ms, early.visual_complete_99_ms) == (1000.0,) * 3
    assert early.first_visual_change_ms == 100.0 and len(early.progress) == 2
    assert early.cls is None and early.tbt_ms is None and early.long_tasks is None  # not observed


def test_near_colours_match_within_the_slop_and_white_is_background():
    histograms = np.zeros((1, 3, 256), dtype=np.int64)
    final = np.zeros((3, 256), dtype=np.int64)
    final[:, 100] = 10
    histograms[0, :, 100 - visual.SLOP_BELOW] = 10  # the final's level matches these below it
    assert visual.completeness(histograms, final)[0] == 1.0
    histograms[0, :, 100 - visual.SLOP_BELOW] = 0
    histograms[0, :, 100 + visual.SLOP_ABOVE] = 10  # and above
    assert visual.completeness(histograms, final)[0] == 1.0
    histograms[0, :, 100 + visual.SLOP_ABOVE] = 0
    histograms[0, :, 100 + visual.SLOP_ABOVE + 1] = 10
    assert visual.completeness(histograms, final)[0] == 0.0
    off_white = np.full((4, 4, 3), visual.WHITE, dtype=np.int16)  # #fafafa: background, as WebPageTest has it
    assert not visual._histograms(off_white).any()
    off_white[0, 0] = visual.WHITE - 1
    assert visual._histograms(off_white).sum() == 3
    assert visual.progress([frame(0.0), frame(50.0)]) == []  # nothing but white: nothing shown


def test_no_frames_and_frames_before_navigation_start():
    assert visual.visual([], {"shifts": [], "longtasks": []}, 10.0) == visual.Visual(cls=0.0, tbt_ms=0.0,
                                                                                     long_tasks=0)
    shot = frame(0.0, (RED, 10)).jpeg
    events = [{"name": "Screenshot", "ph": "O", "ts": 900, "args": {"snapshot": shot}},
              {"name": "navigationStart", "ts": 1000, "args": {"data": {"documentLoaderURL": "", "isOutermostMainFrame": True}}},
              {"name": "navigationStart", "ts": 2000,
               "args": {"data": {"documentLoaderURL": "https://a.test/", "isOutermostMainFrame": True}}},
              {"name": "Screenshot", "ph": "I", "ts": 52000, "args": {"snapshot": shot}}]
    assert visual.frames_of(events) == [Frame(50.0, shot)]
    assert visual.frames_of(events[:2]) == []
    kept = visual.kept({"traceEvents": events}, [(50.0, 1.0)])
    assert kept == {"frames": [{"ms": 50.0, "progress": 1.0, "jpeg": shot}]}
    assert visual.kept(None, [(50.0, 1.0)]) is None and visual.kept({"traceEvents": events}, []) is None


def test_cls_is_the_worst_session_window_without_input():
    shifts = [{"start": 100, "value": 0.1, "input": False}, {"start": 600, "value": 0.05, "input": False},
              {"start": 2000, "value": 0.12, "input": False}, {"start": 2100, "value": 0.5, "input": True}]
    assert visual.cumulative_layout_shift(shifts) == pytest.approx(0.15)  # 0.1 + 0.05, then a gap > 1 s
    steady = [{"start": 900.0 * k, "value": 0.01, "input": False} for k in range(8)]  # gaps < 1 s, over 5 s
    assert visual.cumulative_layout_shift(steady) == pytest.approx(0.06)  # a window lasts 5 s at most


def test_blocking_time_counts_long_tasks_after_first_contentful_paint():
    tasks = [{"start": 0, "duration": 300}, {"start": 500, "duration": 49}, {"start": 1000, "duration": 120}]
    assert visual.blocking(tasks, 0.0) == (250 + 70, 2)
    assert visual.blocking(tasks, None) == (None, 2)  # no FCP, no blocking time (as Lighthouse)
    assert visual.blocking(tasks, 200.0) == (50 + 70, 2)  # only the part after FCP counts
    assert visual.blocking(tasks, 290.0) == (70, 2)
