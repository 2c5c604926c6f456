"""The fault matrix (docs/reliability.md): during a real run, one part fails. For each:
what the user sees (one line, no traceback), what the store holds (every load recorded
before the fault, none duplicated or half-written), what the machine holds afterwards
(nothing of the run's), and that `--resume` then completes exactly the planned loads."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pagebench.results.store import Store
from tests.conftest import Postgres
from tests.helpers import fresh_database, drop_database, needs_root, nothing_left, pagebench, write_spec
from tests.runner import runs
from tests.runner.runs import PLANNED, SPEC, KilledRun, Stored, assert_killed_reads_as_interrupted, start_run, \
    wait_for_loads

pytestmark = needs_root

RUNS: list[subprocess.Popen[str]] = []


def start(spec: Path, db: str) -> subprocess.Popen[str]:
    """`pagebench run` as from a terminal (`runs.start_run`), stopped after the test if it is not."""
    proc = start_run(spec, db)
    RUNS.append(proc)
    return proc


@pytest.fixture(autouse=True)
def _no_run_outlives_its_test() -> Iterator[None]:
    """A test that fails mid-way must not leave its run holding the machine."""
    yield
    while RUNS:
        proc = RUNS.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    pagebench("cleanup")


def finish(proc: subprocess.Popen[str], timeout: float = 180) -> str:
    """The run's stderr once it has ended (its last lines in the failure if it does not)."""
    try:
        return proc.communicate(timeout=timeout)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the run did not end: {proc.communicate()[1][-1500:]}") from None


def pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    return [int(pid) for pid in found]


def kill(pattern: str, sig: int = signal.SIGKILL) -> None:
    found = pids(pattern)
    assert found, f"no process matches {pattern!r}"
    for pid in found:
        subprocess.run(["kill", f"-{int(sig)}", str(pid)], check=False)


def one_line_error(stderr: str) -> str:
    """The error the user sees: the last line, `error: ...`, and no traceback anywhere."""
    assert "Traceback" not in stderr, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), stderr[-2000:]
    return last


def stored(db: str, run: str) -> tuple[list[int], Stored]:
    """The run's seqs and how its store reads it; no load half-written (each has its resources)."""
    found = runs.stored(db, run)
    assert found.half_written == [], found.half_written
    return found.seqs, found


def resumed(db: str, run: str, done_before: list[int]) -> None:
    result = pagebench("run", "--resume", run, "--db", db)
    assert result.returncode == 0, result.stderr[-2000:]
    seqs, experiment = stored(db, run)
    assert sorted(seqs) == list(range(PLANNED))  # each planned load exactly once
    assert set(done_before) <= set(seqs) and experiment.status == "complete"
    assert nothing_left()


def fault_then_resume(tmp_path: Path, inject: Callable[[], None], expect: str, db: str | None = None,
                      spec: dict | None = None) -> tuple[str, str]:
    """Run, inject the fault after 3 loads, check what is left, resume. Returns (run, error)."""
    db = db or f"sqlite:///{tmp_path}/f.sqlite"
    proc = start(write_spec(tmp_path, **(spec or SPEC)), db)
    run = wait_for_loads(db, 3, proc)
    inject()
    stderr = finish(proc)
    assert proc.returncode == 2, stderr[-2000:]
    error = one_line_error(stderr)
    assert expect in error and f"pagebench run --resume {run}" in error, error
    seqs, experiment = stored(db, run)
    assert len(seqs) == len(set(seqs)) and 3 <= len(seqs) < PLANNED
    assert experiment.status == "failed" and expect in experiment.reason
    assert nothing_left()
    resumed(db, run, seqs)
    return run, error


def test_killing_the_delay_program_fails_the_run_and_resume_completes_it(tmp_path, session_tag):
    fault_then_resume(tmp_path, lambda: kill(f"pagebench-delay.*pb{session_tag}"),
                      "pagebench-delay exited with status -9: the link is down")


def test_killing_nginx_fails_the_run_and_resume_completes_it(tmp_path, session_tag):
    fault_then_resume(tmp_path, lambda: kill(f"nginx: master process .*pb{session_tag}"),
                      "nginx exited with status -9: the sites are down")


def test_killing_caddy_fails_an_h3_run_and_resume_completes_it(tmp_path, session_tag):
    fault_then_resume(tmp_path, lambda: kill(f"caddy run --config /run/pagebench/pb{session_tag}"),
                      "caddy exited with status -9: the sites are down", spec={**SPEC, "modes": ["h3", "h2"]})


def test_killing_the_edge_proxy_fails_a_proxy_run_and_resume_completes_it(tmp_path, session_tag):
    fault_then_resume(tmp_path, lambda: kill(f"pagebench.edge.serve .*pb{session_tag}"),
                      "the edge proxy", spec={**SPEC, "topology": "proxy", "modes": ["keepalive", "pipelining"]})


def browser_pid(tag: str) -> int:
    """The browser process of the run's client namespace (the one without --type=)."""
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    client = next(ns for ns in namespaces if ns.startswith(f"pb{tag}") and ns.endswith("-client"))
    for pid in subprocess.run(["ip", "netns", "pids", client], capture_output=True, text=True).stdout.split():
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended between the listing and the read (a renderer, a utility process)
        if argv and argv[0].endswith(b"chromium-headless-shell") and not any(a.startswith(b"--type=") for a in argv):
            return int(pid)
    raise AssertionError("no browser process in the client namespace")


def test_killing_the_browser_costs_the_load_in_flight_and_the_run_goes_on(tmp_path, session_tag):
    """Usually Playwright sees the browser go: the load in flight fails and the next load
    launches a new browser. Now and then it does not, and the call waits for an answer
    that never comes: the load's deadline (its timeout + LOAD_GRACE_S) then fails the run
    with one line, and --resume completes it."""
    db = f"sqlite:///{tmp_path}/b.sqlite"
    proc = start(write_spec(tmp_path, **{**SPEC, "timeouts": {"link_check": False, "load_s": 10}}), db)
    run = wait_for_loads(db, 3, proc)
    subprocess.run(["kill", "-9", str(browser_pid(session_tag))], check=True)
    stderr = finish(proc, 240)
    assert "Traceback" not in stderr, stderr[-2000:]
    if proc.returncode == 2:
        assert "the browser stopped answering" in one_line_error(stderr)
        assert nothing_left()
        resumed(db, run, stored(db, run)[0])
    assert proc.returncode in (0, 2), stderr[-2000:]
    with Store(db) as store:
        loads = store.loads(run, include_warmup=True)
        assert sorted(load.seq for load in loads) == list(range(PLANNED))
        failed = [load for load in loads if not load.ok]
        assert len(failed) <= 1  # the load in flight, if the kill caught one: recorded as failed, with why
        assert all("the browser was lost during the load" in " ".join(load.errors) for load in failed), [load.errors for load in failed]
        assert store.experiment(run).status == "complete"
    assert nothing_left()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_interrupts_the_run_which_says_so_and_resumes(tmp_path, sig):
    db = f"sqlite:///{tmp_path}/s.sqlite"
    proc = start(write_spec(tmp_path, **SPEC), db)
    run = wait_for_loads(db, 3, proc)
    proc.send_signal(sig)
    stderr = finish(proc)
    assert proc.returncode == 130, stderr[-2000:]
    assert one_line_error(stderr) == f"error: interrupted; loads so far are kept: pagebench run --resume {run}"
    seqs, experiment = stored(db, run)
    assert experiment.status == "interrupted" and experiment.reason == f"signal {sig.name}"
    assert nothing_left()
    resumed(db, run, seqs)


def test_sigkill_leaves_a_run_that_reads_as_interrupted(killed_run: KilledRun):
    """The session's killed run (`runs.kill_cleanup_resume`): its resume is
    `test_run_e2e.py`'s (the same run, made once)."""
    assert_killed_reads_as_interrupted(killed_run)


def test_a_postgresql_restart_under_a_run_costs_a_pause_not_a_load(tmp_path, postgres: Postgres, session_tag):
    name = f"faults_{session_tag}"
    db = fresh_database(postgres.url, name)
    try:
        proc = start(write_spec(tmp_path, **SPEC), db)
        run = wait_for_loads(db, 3, proc)
        postgres.restart()
        stderr = finish(proc, 240)
        assert proc.returncode == 0 and "Traceback" not in stderr, stderr[-2000:]
        seqs, experiment = stored(db, run)
        assert sorted(seqs) == list(range(PLANNED)) and experiment.status == "complete"
        assert nothing_left()
    finally:
        drop_database(postgres.url, name)


@contextmanager
def tmpfs(size: str, tag: str) -> Iterator[Path]:
    """A small filesystem of our own (named with the session's tag), unmounted whatever happens."""
    where = Path(tempfile.mkdtemp(prefix=f"pb{tag}-fs-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)
        where.rmdir()


def test_a_full_filesystem_fails_the_run_keeping_what_was_recorded(tmp_path, session_tag):
    with tmpfs("3m", session_tag) as fs:
        db = f"sqlite:///{fs}/results.sqlite"
        filler = fs / "filler"

        def fill_up() -> None:
            """Write until the filesystem is full: ENOSPC is the end wanted, any other error is not."""
            fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
            try:
                while True:
                    os.write(fd, b"\0" * 4096)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
            finally:
                os.close(fd)

        proc = start(write_spec(tmp_path, **SPEC), db)
        run = wait_for_loads(db, 3, proc)
        fill_up()
        stderr = finish(proc)
        assert proc.returncode == 2, stderr[-2000:]
        error = one_line_error(stderr)
        assert "cannot write" in error and ("full" in error or "No space left on device" in error) and f"--resume {run}" in error, error
        filler.unlink()
        seqs, experiment = stored(db, run)
        assert len(seqs) == len(set(seqs)) and 3 <= len(seqs) < PLANNED
        # Nothing could be written, its status neither: the run's process is gone, so it reads as interrupted.
        assert experiment.status in ("failed", "interrupted")
        assert nothing_left()
        resumed(db, run, seqs)


def test_a_read_only_results_directory_starts_nothing_and_loses_nothing(tmp_path, session_tag):
    """A read-only filesystem cannot be remounted so while the run has its store open (the
    kernel refuses: busy), so the run is stopped first, then its store is made read-only:
    resuming it, and starting a new run, is then one line and starts no lab."""
    with tmpfs("64m", session_tag) as fs:
        db = f"sqlite:///{fs}/results.sqlite"
        proc = start(write_spec(tmp_path, **SPEC), db)
        run = wait_for_loads(db, 3, proc)
        proc.send_signal(signal.SIGTERM)
        finish(proc)
        seqs, _ = stored(db, run)
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        for args in (["run", "--resume", run, "--db", db], ["run", str(write_spec(tmp_path, **SPEC)), "--db", db]):
            result = pagebench(*args)
            assert result.returncode == 2, result.stderr[-2000:]
            error = one_line_error(result.stderr)
            assert "readonly" in error.replace("read-only", "readonly"), error
            assert nothing_left()
        subprocess.run(["mount", "-o", "remount,rw", str(fs)], check=True)
        assert stored(db, run)[0] == seqs  # nothing lost
        resumed(db, run, seqs)
