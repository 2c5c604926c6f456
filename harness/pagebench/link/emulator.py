"""Apply a profile to a live bed's router and read its counters.

The only I/O in `link/`: it executes what `plan` renders, runs `pagebench-delay` for
the userspace backend (and, with netem, for a profile's window clamp alone), and
gathers the raw text that `counters` parses.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pagebench.core.profiles import Profile
from pagebench.system import places
from pagebench.system.commands import Bed, LabError, probe_in_throwaway_namespace, run
from pagebench.system.process import ManagedProcess
from pagebench.link import delaystats
from pagebench.link.calibration import Hold
from pagebench.link.ceiling import machine_kind, over_ceiling
from pagebench.link.counters import EMPTY_HIST, LinkCounters, parse_iptables_save, parse_nfqueue, parse_qdisc_drops, queue_and_loss_drops
from pagebench.link.plan import LinkPlan, check_backend, netem_plan, reset_commands, userspace_plan

READY_TIMEOUT_S = 5.0
#: How often `wait_settled` looks (at 10 ms the drain was seen 5 ms late on average).
SETTLED_POLL_S = 0.002
#: The router's counters as three programs print them: IPv4's and IPv6's rule counters
#: (`counters.parse_iptables_save`) and the qdiscs' drops (`counters.parse_qdisc_drops`).
READS: tuple[tuple[str, ...], ...] = (("iptables-save", "-c"), ("ip6tables-save", "-c"),
                                      ("tc", "-s", "-j", "qdisc", "show"))
NETEM_PROBE = ("tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms")


def delay_program() -> Path:
    """The userspace delay program: `$PAGEBENCH_DELAY_BIN`; else the one `make -C netem` built
    in the checkout pagebench runs from (the newest build while developing); else the one
    installed beside pagebench's Python (`harness/bootstrap` puts it in the virtualenv's bin/)
    or on PATH. When there is none, where one would be, for the message that says so."""
    if os.environ.get("PAGEBENCH_DELAY_BIN"):
        return Path(os.environ["PAGEBENCH_DELAY_BIN"])
    repo = places.checkout()
    built = repo / "netem" / "build" / "pagebench-delay" if repo is not None else None
    if built is not None and built.exists():
        return built
    return places.program("pagebench-delay") or built or Path(sys.prefix) / "bin" / "pagebench-delay"


DELAY_PROGRAM = delay_program()


def netem_available() -> bool:
    """Does this kernel have sch_netem? Tried in a throwaway namespace; where none can be
    made (a container without CAP_SYS_ADMIN), on this namespace's own loopback, removed
    at once."""
    if probe_in_throwaway_namespace(NETEM_PROBE):
        return True
    if probe_in_throwaway_namespace(("true",)):
        return False  # namespaces work, netem does not
    here = run(NETEM_PROBE, check=False).returncode == 0
    if here:
        run(("tc", "qdisc", "del", "dev", "lo", "root"), check=False)
    return here


def choose_backend(requested: str | None) -> str:
    """The backend a run will use, known before anything is built (it is recorded)."""
    check_backend(requested)
    has_netem = netem_available()
    if requested == "netem" and not has_netem:
        raise LabError("--backend netem: this kernel has no sch_netem; use --backend userspace")
    if requested is not None:
        return requested
    return "netem" if has_netem else "userspace"


def this_machine() -> str:
    """This machine's kind, as the table of link ceilings names kinds (`link.ceiling`)."""
    try:
        virtual = " hypervisor" in Path("/proc/cpuinfo").read_text()
    except OSError:
        virtual = False
    return machine_kind(os.cpu_count() or 1, virtual)


def ceiling_warning(profile: Profile, backend: str) -> str | None:
    """The line to print when the profile asks more of the backend than it was measured to
    give on this kind of machine (`link.ceiling.over_ceiling`)."""
    return over_ceiling(profile, backend, this_machine())


def delay_scheduling(pid: int, warnings: str) -> str:
    """How the delay program runs, as the kernel has it (its policy and locked memory),
    with the program's own reason where it was refused: real time and locked memory keep
    its release lateness in microseconds, and an engine without the rlimits or capabilities
    for them (some Docker hosts) refuses both. For the run's record."""
    try:
        fifo = os.sched_getscheduler(pid) == os.SCHED_FIFO
        priority = os.sched_getparam(pid).sched_priority
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "unknown (the delay program is gone)"
    locked_kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmLck:")), 0)
    refused = re.search(r"warning: SCHED_FIFO (\d+): ([^;\n]+)", warnings)
    lock_error = re.search(r"warning: mlockall: ([^\n]+)", warnings)
    sched = (f"SCHED_FIFO {priority}" if fifo else
             f"normal (SCHED_FIFO {refused[1]} refused: {refused[2]})" if refused else "normal")
    memory = ("memory locked" if locked_kb > 0 else
              f"memory not locked (mlockall: {lock_error[1]})" if lock_error else "memory not locked")
    return f"{sched}, {memory}"


class LinkControl(Protocol):
    """What the runner and the link check use of a link: a native `Link`, or the router
    role's link driven over the control channel (`remote.RemoteLink`)."""

    backend: str
    profile: Profile | None
    #: how the delay program runs, once applied (`delay_scheduling`); None when none runs
    #: (kernel netem without a window clamp)
    scheduling: str | None
    #: each profile's calibrated hold by name (`calibrate`)
    holds: dict[str, Hold]

    def apply(self, profile: Profile) -> None: ...

    def calibrate(self, profile: Profile, hold: Hold) -> bool:
        """Take `hold` off the profile's holds from now on (`link.calibration`) and apply
        it; False where this link cannot (then nothing changed)."""
        ...

    def counters(self) -> LinkCounters: ...

    def wait_settled(self, timeout: float = 2.0) -> None: ...

    def drained_counters(self, timeout: float = 2.0) -> LinkCounters:
        """`wait_settled`, then `counters`."""
        ...


class Link:
    """The emulated link of one bed. `apply` may be called again to change profile.

    Natively it also sets the endpoints' TCP knobs (their namespaces are the bed's);
    with `endpoints=False` (the router role of a split lab) only the router's half is
    applied and each endpoint applies its own (`lab.split.endpoint`)."""

    def __init__(self, bed: Bed, backend: str | None = None, seed: int = 1,
                 endpoints: bool = True) -> None:
        self.bed = bed
        self.endpoints = endpoints
        self.backend = choose_backend(backend)
        self.seed = seed
        self.profile: Profile | None = None
        self.plan: LinkPlan | None = None
        self.delay: ManagedProcess | None = None
        self.scheduling: str | None = None
        self.stats_path = bed.state_dir / "delay.stats"
        #: A profile's calibrated hold by its name, from its link check (`calibrate`, or set
        #: from a run's stored checks); the userspace backend's.
        self.holds: dict[str, Hold] = {}

    def apply(self, profile: Profile) -> None:
        topo = self.bed.layout
        self._stop_delay()
        for cmd in reset_commands(topo):
            self.bed.run(cmd, check=False)
        if (self.backend == "userspace" or profile.rwnd_bytes is not None) and not DELAY_PROGRAM.exists():
            raise LabError(f"{DELAY_PROGRAM}: not built (run `make -C netem`)")
        if self.backend == "netem":
            plan = netem_plan(topo, profile, DELAY_PROGRAM, self.stats_path)
        else:
            plan = userspace_plan(topo, profile, DELAY_PROGRAM, self.stats_path, self.seed,
                                  self.holds.get(profile.name, Hold()))
        for cmd in (plan.endpoint if self.endpoints else []) + plan.router_tc:
            self.bed.run(cmd)
        if plan.delay_argv is not None:
            self._start_delay(plan.delay_argv)
        else:
            self.scheduling = None
        self.bed.run(("ip", "netns", "exec", topo.router, "iptables-restore"), input=plan.rules_v4)
        self.bed.run(("ip", "netns", "exec", topo.router, "ip6tables-restore"), input=plan.rules_v6)
        self.profile, self.plan = profile, plan

    def calibrate(self, profile: Profile, hold: Hold) -> bool:
        if self.backend != "userspace":
            return False  # netem's delay is the kernel's, with no hand-over to shorten
        self.holds[profile.name] = hold
        self.apply(profile)
        return True

    def reset(self) -> None:
        """Stop the delay program and remove the router's qdiscs (the firewall is the
        owner's to restore: natively the namespace goes, in the router role the service
        puts back what it found)."""
        self._stop_delay()
        for cmd in reset_commands(self.bed.layout):
            self.bed.run(cmd, check=False)
        self.profile, self.plan = None, None

    def _start_delay(self, argv: tuple[str, ...]) -> None:
        delay = ManagedProcess("pagebench-delay", argv, self.bed.state_dir / "delay.log", bed=self.bed)
        delay.start(lambda: delay.logged("ready"), READY_TIMEOUT_S)  # once every queue is bound
        self.delay = delay
        self.scheduling = delay_scheduling(delay.pid, delay.output())  # its warnings come before "ready"

    def _stop_delay(self) -> None:
        # Forget it before stopping it: `check_alive` (the runner's watchdog calls it from
        # another thread) must not take a program we stop for one that died.
        delay, self.delay = self.delay, None
        if delay is not None:
            delay.stop()

    def check_alive(self) -> None:
        """The userspace link fails closed: if the program died, nothing crosses. Say so."""
        delay = self.delay
        if delay is not None:
            delay.check_alive("the link is down")

    def counters(self) -> LinkCounters:
        """The link's counters now."""
        return self._read_after(lambda: None)

    def drained_counters(self, timeout: float = 2.0) -> LinkCounters:
        """`wait_settled`, then `counters`, as one step: a load's reading, which the next
        load's navigation waits for."""
        return self._read_after(lambda: self.wait_settled(timeout))

    def _read_after(self, wait: Callable[[], None]) -> LinkCounters:
        """The counters once `wait` returns. The router's three readers (`READS`) are started
        before it, let go together once it returns, and read at once: started after it and
        one at a time, through `ip netns exec`, they took 12-16 ms of a load's reading. An
        exception in `wait` lets them exit without reading."""
        script = 'read _ && exec "$@"'  # waits for the go, then becomes the reader
        readers: list[subprocess.Popen[str]] = []
        go = ""
        try:
            for argv in READS:
                readers.append(self.bed.spawn(
                    self.bed.exec_argv(self.bed.layout.router, ("sh", "-c", script, "sh", *argv)),
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
            wait()
            go = "\n"
        finally:
            outputs = []
            for reader in readers:
                assert reader.stdin is not None
                reader.stdin.write(go)
                reader.stdin.close()
            for reader in readers:
                assert reader.stdout is not None and reader.stderr is not None
                outputs.append((reader.stdout.read(), reader.stderr.read()))
                reader.wait()
        for argv, reader, (_, stderr) in zip(READS, readers, outputs):
            if reader.returncode != 0:
                why = stderr.strip().splitlines()
                raise LabError(f"`{' '.join(argv)}` in {self.bed.layout.router} failed: "
                               f"{why[-1] if why else f'exit status {reader.returncode}'}")
        return self._counted(*(stdout for stdout, _ in outputs))

    def _counted(self, ip4: str, ip6: str, qdiscs: str) -> LinkCounters:
        """The counters from the router's texts (`READS`) and the delay program's stats."""
        rules: dict[str, tuple[int, int]] = {}
        for text in (ip4, ip6):
            for tag, (packets, nbytes) in parse_iptables_save(text).items():
                old = rules.get(tag, (0, 0))
                rules[tag] = (old[0] + packets, old[1] + nbytes)
        topo = self.bed.layout
        q_up, loss_up = queue_and_loss_drops(parse_qdisc_drops(qdiscs, topo.router_server_if))
        q_down, loss_down = queue_and_loss_drops(parse_qdisc_drops(qdiscs, topo.router_client_if))
        nfq_drops, hist, rwnd, v42_in, v42_out = 0, EMPTY_HIST, None, 0, 0
        if self.delay is not None:
            self.check_alive()
            stats = delaystats.read(self.stats_path)
            rwnd = stats.rwnd
            if self.backend == "userspace":  # with netem the program only clamps the window
                loss_up, loss_down = stats.up.dropped_loss, stats.down.dropped_loss
                hist = stats.hist
                q_up, q_down = q_up + stats.up.line_dropped, q_down + stats.down.line_dropped  # a modem's line
                v42_in, v42_out = stats.down.v42_in_bytes, stats.down.v42_out_bits
            # Socket overruns (stats.recv_enobufs) are in /proc's user_dropped already.
            nfq_drops = stats.up.dropped_full + stats.down.dropped_full
            try:
                nfq_drops += parse_nfqueue(Path(f"/proc/{stats.pid}/net/netfilter/nfnetlink_queue").read_text())
            except OSError:
                pass
        return LinkCounters(
            tcp_conns=rules.get("tcp_conns", (0, 0))[0],
            udp_flows=rules.get("udp_flows", (0, 0))[0],
            packets_up=rules.get("up", (0, 0))[0],
            bytes_up=rules.get("up", (0, 0))[1],
            packets_down=rules.get("down", (0, 0))[0],
            bytes_down=rules.get("down", (0, 0))[1],
            drops_queue_up=q_up,
            drops_queue_down=q_down,
            drops_loss_up=loss_up,
            drops_loss_down=loss_down,
            drops_nfqueue=nfq_drops,
            rwnd_clamped=rwnd.clamped if rwnd else 0,
            rwnd_wscale_stripped=rwnd.wscale_stripped if rwnd else 0,
            lateness_hist=hist,
            v42_in_down=v42_in,
            v42_out_bits_down=v42_out,
        )

    def wait_settled(self, timeout: float = 2.0) -> None:
        """Wait until the delay program holds no packets (the previous interval drained),
        looking every SETTLED_POLL_S (a read of shared memory)."""
        if self.delay is None:
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            stats = delaystats.read(self.stats_path)
            if stats.up.held == 0 and stats.down.held == 0:
                return
            time.sleep(SETTLED_POLL_S)
