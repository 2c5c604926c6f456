"""harness/benchmarks/peers.py's pure part: browsertime's results read, the figures and
the table. The fixture is a real browsertime.json of the tuned configuration (the script's
run of 2026-11-27), trimmed to its first iterations and the fields read."""

from __future__ import annotations

import copy
import importlib.util
import json
import statistics
import sys
from datetime import datetime
from types import ModuleType

import pytest

from tests.helpers import HARNESS

FIXTURE = HARNESS / "tests" / "fixtures" / "browsertime-26.3.2-seed000-tuned.json"


def load_peers() -> ModuleType:
    """The script is not a package module: load it by its path."""
    spec = importlib.util.spec_from_file_location("peers", HARNESS / "benchmarks" / "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers"] = module
    spec.loader.exec_module(module)
    return module


peers = load_peers()


@pytest.fixture
def doc() -> list[dict]:
    return json.loads(FIXTURE.read_text())


def test_load_times_and_starts_are_each_iterations(doc: list[dict]) -> None:
    times, starts = peers.browsertime_loads(doc)
    runs = doc[0]["browserScripts"]
    assert times == [run["timings"]["loadEventEnd"] for run in runs]
    assert times == [run["timings"]["navigationTiming"]["loadEventEnd"] for run in runs]
    assert starts == [datetime.fromisoformat(stamp).timestamp() for stamp in doc[0]["timestamps"]]
    assert starts == sorted(starts) and len(starts) == len(runs) == 3


def test_a_failed_run_is_an_error(doc: list[dict]) -> None:
    failed = copy.deepcopy(doc)
    failed[0]["markedAsFailure"] = 1
    failed[0]["failureMessages"] = ["Could not load https://www.seed000.test/ is the web page down?"]
    with pytest.raises(ValueError, match="web page down"):
        peers.browsertime_loads(failed)


def test_more_than_one_url_is_an_error(doc: list[dict]) -> None:
    with pytest.raises(ValueError, match="one URL"):
        peers.browsertime_loads(doc + doc)


def test_figures() -> None:
    result = peers.Result("x", times=(300.0, 330.0, 360.0), starts=(100.0, 103.0, 106.0), wall_s=18.0)
    assert result.steady_per_min == pytest.approx(20.0)  # two intervals of 3 s
    assert result.end_to_end_per_min == pytest.approx(10.0)
    assert result.median_ms == 330.0
    assert result.cv == pytest.approx(statistics.stdev([300, 330, 360]) / 330)


def test_table_and_verdicts() -> None:
    default = peers.Result("browsertime, default", (400.0, 440.0), (0.0, 12.0), 30.0)
    tuned = peers.Result("browsertime, tuned", (380.0, 400.0), (0.0, 3.0), 8.0)
    ours = peers.Result("pagebench", (320.0, 330.0), (0.0, 0.9), 40.0)
    bare = peers.Result("pagebench --no-frames", (310.0, 311.0), (0.0, 0.8), 40.0)
    lines = peers.table([default, tuned], [ours, bare]).splitlines()
    assert lines[2] == "| browsertime, default | 2 | 5.0 | 4.0 | 420 ms | 6.7 % |"
    assert lines[4] == "| pagebench | 2 | 66.7 | 3.0 | 325 ms | 2.2 % |"
    assert lines[5] == "| pagebench --no-frames | 2 | 75.0 | 3.0 | 310 ms | 0.2 % |"
    assert lines[6] == "| pagebench / browsertime, default | | 13.3x | 0.8x | 0.77 | 0.32 |"
    assert lines[7] == "| pagebench / browsertime, tuned | | 3.3x | 0.2x | 0.83 | 0.60 |"
    assert lines[9] == "| pagebench --no-frames / browsertime, tuned | | 3.8x | 0.2x | 0.80 | 0.06 |"
    said = peers.verdicts(default, tuned, ours)
    assert said[0].endswith("13.3x, met") and said[1].endswith("3.3x, NOT met")
    assert said[2] == "- CV <= half of browsertime's: 2.2 % against 6.7 % (default: met) and 3.6 % (tuned: NOT met)"
    assert peers.verdicts(default, tuned, bare)[1] == \
        "- pagebench --no-frames: steady >= 5x browsertime tuned: 3.8x, NOT met"


def test_lab_argv_puts_the_lab_url_in_the_check() -> None:
    url = "https://www.seed000.test/"
    argv = peers.lab_argv(peers.TUNED, url, "MAP www.seed000.test 198.19.0.1, MAP * ~NOTFOUND", "KEY=",
                          "/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromedriver")
    check = argv[argv.index("--pageCompleteCheck") + 1]
    assert check == ("return document.documentURI === 'https://www.seed000.test/' "
                     "&& performance.timing.loadEventEnd > 0;")
    assert argv[-1] == url
    assert "--chrome.args=--host-resolver-rules=MAP www.seed000.test 198.19.0.1, MAP * ~NOTFOUND" in argv
    assert argv[argv.index("--chrome.ignoreCertificateErrors") + 1] == "false"
    # the lab leaf's key trusted as pagebench's browser trusts it, and no other error ignored
    assert [arg for arg in argv if "ignore-certificate-errors" in arg] == [
        "--chrome.args=--ignore-certificate-errors-spki-list=KEY="]


def test_both_configurations_keep_certificate_errors_errors() -> None:
    for _, options in peers.CONFIGURATIONS:
        assert options[:2] == ["--chrome.ignoreCertificateErrors", "false"]


def test_rounds_are_judged_on_their_medians() -> None:
    tuned = [peers.Result("browsertime, tuned", (380.0, 400.0), (0.0, 3.0), 8.0),
             peers.Result("browsertime, tuned", (300.0, 400.0), (0.0, 2.0), 8.0),
             peers.Result("browsertime, tuned", (390.0, 400.0), (0.0, 4.0), 8.0)]
    ours = [peers.Result("pagebench", (320.0, 330.0), (0.0, 0.5), 40.0),
            peers.Result("pagebench", (320.0, 322.0), (0.0, 0.6), 40.0),
            peers.Result("pagebench", (300.0, 360.0), (0.0, 0.4), 40.0)]
    lines = peers.rounds_table(tuned, ours).splitlines()
    assert lines[2] == "| 1 | 20.0, 3.6 % | 120.0, 2.2 % | 6.0x | 0.60 |"
    assert lines[-1] == "| median | 20.0, 3.6 % | 120.0, 2.2 % | 6.0x | 0.60 |"  # each column's own median
    assert lines[0].startswith("| round | browsertime tuned: loads/min steady, CV | pagebench: loads/min steady, CV |")
    said = peers.round_verdicts(tuned, ours)
    assert said == [
        "- pagebench, over 3 rounds, steady >= 5x browsertime tuned: 6.0x (medians), met",
        "- pagebench, over 3 rounds, CV <= half of browsertime tuned's: 2.2 % against 3.6 % (medians), NOT met"]
