"""A store written before the domain folders (issue 23): pagebench at 271554b ran
`tests/fixtures/store-271554b.yaml` (a real run: 3 modes x cold/warm x identity/br, 2
loads and a warm-up each) into `store-271554b.sqlite.gz`, and printed its report into
`store-271554b.report.txt`. Today's code opens it, reads its names back as rows, and
prints the same report, byte for byte (the file was printed again when the table gained
its LCP median column: every other figure was unchanged)."""

from __future__ import annotations

import gzip
import shutil

from pagebench.core import encodings, modes
from pagebench.results.store import Store
from tests.helpers import HARNESS, pagebench

FIXTURES = HARNESS / "tests" / "fixtures"
RUN = "20261126-033444-552b"


def _copy(tmp_path) -> str:
    db = tmp_path / "old.sqlite"
    with gzip.open(FIXTURES / "store-271554b.sqlite.gz") as old, db.open("wb") as copy:
        shutil.copyfileobj(old, copy)
    return f"sqlite:///{db}"


def test_an_old_store_reads_back_as_rows(tmp_path):
    with Store(_copy(tmp_path)) as store:
        [run] = store.runs()
        loads = store.loads(RUN, include_warmup=True)
        conditions = {load.condition for load in loads}
    assert (run.run_id, run.planned, run.recorded, run.status) == (RUN, 36, 36, "complete")
    assert len(loads) == 36 and all(load.ok for load in loads)
    assert {c.mode for c in conditions} == {modes.HTTP10, modes.KEEPALIVE, modes.H2}
    assert {c.encoding for c in conditions} == {encodings.IDENTITY, encodings.BR}
    assert {c.device for c in conditions} == {"desktop"}  # stored before devices: the browser as it ran
    assert len(conditions) == 12


def test_an_old_store_reports_as_it_did(tmp_path):
    result = pagebench("report", RUN, "--db", _copy(tmp_path))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (FIXTURES / "store-271554b.report.txt").read_text()


def test_an_old_store_keeps_no_evidence_and_its_html_report_says_so(tmp_path):
    url = _copy(tmp_path)
    with Store(url) as store:
        assert all(load.har is None and load.trace is None for load in store.loads(RUN, include_warmup=True))
    result = pagebench("report", RUN, "--db", url, "--html", str(tmp_path / "old.html"))
    assert result.returncode == 0, result.stderr
    evidence = (tmp_path / "old.html").read_text().split('<section id="evidence">', 1)[1].split("</section>")[0]
    assert "download>HAR" not in evidence and evidence.count("no evidence kept</span>") == 2 * 12  # median, slowest
