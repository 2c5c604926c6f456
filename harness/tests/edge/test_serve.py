"""How the edge proxy process is run (`serve.py`)."""

from __future__ import annotations

import os

from pagebench.edge.serve import realtime


def test_the_proxy_says_how_it_is_scheduled_when_real_time_is_refused():
    assert realtime(0) == "normal"
    assert realtime(100) == "normal (SCHED_FIFO 100 refused: Invalid argument)"  # 1..99 only
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # this process untouched
