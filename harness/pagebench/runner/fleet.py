"""One run across a fleet of lab machines on Ray (`run --ray ADDRESS`).

Ray places the work, pagebench measures: every lab machine joins the cluster with the
`pagebench_lab` resource (`ray start --resources '{"pagebench_lab": 1}'`), and each
shard of the run (`core.spec.shard`) is a Ray task pinned to one machine that runs
`pagebench run --resume RUN --shard K/N` there, under that machine's own lock, into the
shared store. Nothing but a shard's exit status comes back through Ray: the driver
follows the loads in the store. Before anything is measured, each machine's versions
are compared with the run's (the driver's machine's) and a machine that differs is
refused. A machine lost mid-shard leaves its loads done in the store; its shard is
resumed on another machine, exactly where it stopped (the store's keys say which loads
are done). Ctrl-C cancels every shard; each tears its lab down as a signal makes it.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pagebench.core.errors import PagebenchError
from pagebench.core.spec import shard as shard_mod
from pagebench.core.spec.model import SpecError
from pagebench.core.spec.shard import Shard
from pagebench.lab import netns
from pagebench.link.emulator import choose_backend
from pagebench.results.database import StoreError
from pagebench.results.store import Store
from pagebench.runner import shards
from pagebench.runner.environment import environment, machine
from pagebench.runner.prepare import Prepared, sharded
from pagebench.runner.runs import create
from pagebench.runner.shards import VERSIONED, check_versions

#: The custom resource a lab machine offers the cluster: one lab at a time per machine.
LAB = "pagebench_lab"
#: What a run whose lab machines share a host says of itself (a test's cluster): its
#: statistics still run, its timings are not a fleet's.
SHARED = "shared machine: timings not comparable (several lab machines of the fleet run on one host)"
#: How often the driver looks at the store and the cluster.
POLL_S = 1.0
#: How long a cancelled shard may take to tear its lab down.
CANCEL_S = 120.0
INSTALL = "pip install -e 'harness[ray]'"


class FleetError(PagebenchError):
    """The fleet cannot run the run (no lab machine, every machine refused, a shard failed)."""


@dataclass(frozen=True)
class Node:
    """A lab machine of the cluster, as the driver knows it."""

    id: str
    address: str
    machine: str = ""  # its name in the loads it measures (`environment.machine`), once probed

    @property
    def label(self) -> str:
        return f"{self.machine} ({self.address})" if self.machine else self.address


@dataclass
class Status:
    """What the driver shows: loads done and planned, in all and per machine (by the
    store's `loads.machine`), and what each machine is doing."""

    done: int
    total: int
    by_machine: dict[str, int] = field(default_factory=dict)
    doing: dict[str, str] = field(default_factory=dict)  # machine -> "shard 2/4", "lost", ...


def _ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise SpecError(f"--ray needs Ray, an optional extra: {INSTALL}") from None


def connect(address: str) -> Any:
    """Ray, connected to the cluster at `address` (a GCS host:port, or ray://)."""
    ray = _ray()
    _reachable(address)
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    except Exception as error:  # noqa: BLE001 - Ray's connection errors have no common class
        raise FleetError(f"--ray {address}: cannot join the cluster: {_first_line(error)}") from None
    return ray


def _reachable(address: str) -> None:
    """A GCS address that nothing answers at, refused at once (Ray itself retries for minutes)."""
    if "://" in address or address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise FleetError(f"--ray {address}: not a GCS address (HOST:PORT, or ray://HOST:PORT)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as error:
        raise FleetError(f"--ray {address}: cannot join the cluster: {error.strerror or error} "
                         "(is the head's `ray start --head` running there?)") from None


def lab_nodes(ray: Any) -> list[Node]:
    """The live nodes offering the lab resource, in a stable order."""
    found = [Node(node["NodeID"], node.get("NodeManagerAddress", "?"))
             for node in ray.nodes() if node.get("Alive") and node.get("Resources", {}).get(LAB, 0) >= 1]
    if not found:
        raise FleetError(f"no node of the cluster offers the {LAB} resource: start each lab machine with "
                         f"ray start --address HEAD:PORT --resources '{{\"{LAB}\": 1}}'")
    return sorted(found, key=lambda node: (node.address, node.id))


def _pinned(ray: Any, node: Node, **options: Any) -> dict[str, Any]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"scheduling_strategy": NodeAffinitySchedulingStrategy(node.id, soft=False), "num_cpus": 0,
            "max_retries": 0, **options}


def probe(backend: str | None) -> dict[str, Any]:
    """On a lab machine: its name and the versions a run compares (`shards.VERSIONED`)."""
    return environment() | {"backend": choose_backend(backend), "machine": machine()}


def probed(ray: Any, nodes: list[Node], backend: str | None, say: Callable[[str], None]) -> list[tuple[Node, dict[str, Any]]]:
    """Each node's `probe`, run there; a node that cannot answer is said and left out."""
    task = ray.remote(probe)
    refs = [task.options(**_pinned(ray, node)).remote(backend) for node in nodes]
    found = []
    for node, ref in zip(nodes, refs):
        try:
            seen = ray.get(ref, timeout=120)
        except Exception as error:  # noqa: BLE001 - a node that died or hangs is not used
            say(f"node {node.address}: left out: it did not say its versions ({_first_line(error)})")
            continue
        found.append((Node(node.id, node.address, seen["machine"]), seen))
    return found


def accepted(where: str, stored: dict[str, Any], machines: list[tuple[Node, dict[str, Any]]], allow_mixed: bool,
             say: Callable[[str], None]) -> list[Node]:
    """The machines whose versions match those `stored` `where` (`shards.check_versions`);
    each refused one said in one line."""
    kept = []
    for node, versions in machines:
        try:
            check_versions(where, stored, versions, allow_mixed)
        except SpecError as error:
            say(f"node {node.address}: {error}")
            continue
        kept.append(node)
    if not kept:
        raise FleetError(f"no lab machine of the cluster can measure: each was refused (versions other than those "
                         f"{where}) or did not answer")
    return kept


def _die_with_parent() -> None:
    """In the shard's process: SIGTERM when the Ray worker that started it dies (its node
    lost), so that it stops measuring and tears its lab down instead of racing the retry."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


@dataclass(frozen=True)
class Part:
    """A fleet's unit of work on one machine: a shard of a run, or a scenario variant of a
    reproduction. Its `argv` (pagebench's arguments) does it there, or the rest of it:
    done again after its machine is lost, it resumes where the store says it stopped."""

    name: str  # "shard 2/4", "000-transfer/era"
    argv: tuple[str, ...]


def run_part(argv: tuple[str, ...]) -> tuple[int, str]:
    """On a lab machine (a Ray task): `pagebench ARGV` (a shard's `run --resume RUN --shard
    K/N`, a reproduction's `reproduce --scenario`), after the labs of dead runs are cleaned
    up (`lab.netns.cleanup`); its exit code and last line. Cancelled (Ctrl-C on the
    driver), it stops pagebench as a SIGTERM does and waits for its lab to go."""
    # Ray cancels a running task with `_thread.interrupt_main()`, which does nothing while
    # SIGINT is ignored, as it is in a cluster started from a background job: Python's own
    # handler, for this task (run in the worker's main thread).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # What a lab of this machine left when its process was killed (its node lost: Ray kills
    # a dead worker's children outright): the lab of a live run is kept.
    netns.cleanup()
    # A session of its own: the signals sent to the worker's process group are not its
    # (one SIGTERM from here stops it); a worker that dies sends it SIGTERM (`_die_with_parent`).
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "pagebench", *argv], stdout=subprocess.DEVNULL,
                                   stderr=stderr, text=True, preexec_fn=_die_with_parent, start_new_session=True,
                                   env=os.environ | {"COLUMNS": "200"})
        try:
            while process.poll() is None:  # Python between waits: a cancel's KeyboardInterrupt lands
                time.sleep(0.2)
        except BaseException:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=CANCEL_S)
            except subprocess.TimeoutExpired:
                process.kill()
            raise
        stderr.seek(0)
        lines = [line.strip() for line in stderr.read().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    return process.returncode, (errors or lines or [""])[-1]


def status(store: Store, run_id: str) -> Status:
    """The run's loads done, in all and per machine, from the store."""
    by_machine = {machine or "?": count for machine, count in store.done_by_machine(run_id).items()}
    return Status(sum(by_machine.values()), store.experiment(run_id).planned, by_machine)


def left(store: Store, run_id: str, count: int, db: str, allow_mixed: bool) -> list[Part]:
    """The shards with loads not yet recorded, each as the `run --resume` that does its rest."""
    done = store.done_seqs(run_id) | store.stopped_seqs(run_id)
    plan = store.plan(run_id)
    return [Part(f"shard {shard}", ("run", "--resume", run_id, "--shard", str(shard), "--db", db,
                              *(["--allow-mixed"] if allow_mixed else [])))
            for shard in (Shard(k, count) for k in range(1, count + 1))
            if any(load.seq not in done for load in shard_mod.loads_of(plan, shard))]


def lab_machines(ray: Any, backend: str | None, where: str, stored: dict[str, Any], allow_mixed: bool,
                 say: Callable[[str], None]) -> list[Node]:
    """The cluster's lab machines whose versions match those `stored` `where`."""
    return accepted(where, stored, probed(ray, lab_nodes(ray), backend, say), allow_mixed, say)


def shared(nodes: list[Node]) -> bool:
    """Whether lab machines share a host (a test's cluster): timings not a fleet's."""
    return len({node.address for node in nodes}) < len(nodes)


def note_shared(store: Store, run_id: str) -> None:
    """The run says its machines shared a host (`SHARED`): the run's note, not each load's,
    so its statistics still run."""
    if SHARED not in (notes := store.experiment(run_id).meta.get("notes") or []):
        store.note(run_id, notes=[*notes, SHARED])


def start(store: Store, db: str, prepared: Prepared, address: str, run_id: str | None, allow_mixed: bool,
          show: Callable[[Status], None], say: Callable[[str], None],
          created: Callable[[str], None] = lambda _: None) -> str:
    """The run created in shards, one per accepted lab machine of the cluster (at most one
    per block), then driven to its end (`drive`). Its id."""
    ray = connect(address)
    head = environment() | {"backend": choose_backend(prepared.spec.backend)}
    nodes = lab_machines(ray, prepared.spec.backend, "on the driver", head, allow_mixed, say)
    blocks = 1 + max((load.repetition for load in prepared.loads if not load.warmup), default=-1)
    count = min(len(nodes), blocks)
    prepared = sharded(prepared, count)
    run_id, _ = create(store, prepared, {"shards": count, "fleet": [node.machine for node in nodes]},
                          run_id or shards.run_id_of(prepared, count), exist_ok=True)
    if shared(nodes):
        note_shared(store, run_id)
    created(run_id)
    say(f"run {run_id}: {count} shard(s) on {len(nodes)} lab machine(s): "
        + ", ".join(node.label for node in nodes) + (f" ({SHARED})" if shared(nodes) else ""))
    drive(ray, left(store, run_id, count, db, allow_mixed), nodes, lambda: status(store, run_id), show, say,
          f"--resume {run_id} --ray")
    return run_id


def resume(store: Store, db: str, run_id: str, address: str, allow_mixed: bool, show: Callable[[Status], None],
           say: Callable[[str], None]) -> None:
    """A sharded run's loads left, on the cluster's lab machines that match its versions."""
    experiment = store.experiment(run_id)
    if not experiment.meta.get("shards"):
        raise SpecError(f"run {run_id}: not a sharded run: resume it without --ray")
    ray = connect(address)
    stored = {name: getattr(experiment, name) for name in VERSIONED}
    nodes = lab_machines(ray, experiment.spec.get("backend"), f"in run {run_id}", stored, allow_mixed, say)
    drive(ray, left(store, run_id, int(experiment.meta["shards"]), db, allow_mixed), nodes,
          lambda: status(store, run_id), show, say, f"--resume {run_id} --ray")


def drive(ray: Any, parts: list[Part], nodes: list[Node], progress: Callable[[], Status],
          show: Callable[[Status], None], say: Callable[[str], None], again: str) -> None:
    """Run every part, one per machine at a time, in order, until all are done; `progress`
    says from the store how far they are. A machine lost mid-part is said and its part
    given to another; one that fails otherwise (its one line) stops them all, as does
    Ctrl-C (every part cancelled). `again`: the options that resume the work."""
    task = ray.remote(run_part)
    queue = list(parts)
    live = list(nodes)
    running: dict[Any, tuple[Part, Node]] = {}
    last, away = Status(0, 0), None
    try:
        while queue or running:
            busy = {node.id for _, node in running.values()}
            for node in [node for node in live if node.id not in busy]:
                if not queue:
                    break
                part = queue.pop(0)
                running[task.options(**_pinned(ray, node, resources={LAB: 1})).remote(part.argv)] = (part, node)
            if not live and queue:
                raise FleetError(f"no lab machine left for {', '.join(part.name for part in queue)}: "
                                 f"resume with {again}")
            try:
                current, away = progress(), None
            except StoreError as error:  # the parts' own writes wait for it, then stop and say so
                if away is None:
                    say(f"the store is unreachable from the driver ({error}): each part's writes wait for it")
                current, away = last, error
            current.doing = {node.machine: part.name for part, node in running.values()}
            show(last := current)
            finished, _ = ray.wait(list(running), num_returns=1, timeout=POLL_S)
            for ref in finished:
                part, node = running.pop(ref)
                try:
                    code, line = ray.get(ref)
                except ray.exceptions.RayTaskError as error:
                    raise FleetError(f"{part.name} on {node.label}: {_first_line(error)}") from None
                except ray.exceptions.RayError as error:
                    live = [n for n in live if n.id != node.id]
                    say(f"node {node.label} lost during {part.name} ({_first_line(error)}): its loads done are "
                        f"kept, the rest resume on another machine")
                    queue.append(part)
                    continue
                if code != 0:
                    raise FleetError(f"{part.name} on {node.label}: {line or f'exit {code}'}")
        show(progress())
    except BaseException:
        _cancel(ray, list(running))
        raise


def _cancel(ray: Any, refs: list[Any]) -> None:
    """Every running shard interrupted, and waited for (each takes its lab down)."""
    for ref in refs:
        try:
            ray.cancel(ref)
        except Exception:  # noqa: BLE001 - one already finished, or its node is gone
            pass
    deadline = time.monotonic() + CANCEL_S
    pending = list(refs)
    while pending and time.monotonic() < deadline:
        _, pending = ray.wait(pending, num_returns=len(pending), timeout=POLL_S)


def _first_line(error: BaseException) -> str:
    """A Ray error's message in one line: a task's exception's own (`RayTaskError.cause`)."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException):
        error = cause
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
