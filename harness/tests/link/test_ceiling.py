"""The table of measured link ceilings, its lookup and its one-line warning."""

from __future__ import annotations

from pagebench.core.profiles import make_profile
from pagebench.link.ceiling import CEILINGS, ceiling_for, machine_kind, over_ceiling
from pagebench.link.plan import BACKENDS


def profile(**fields):
    return make_profile({"name": "p", "rtt_ms": 20, **fields})


VM = machine_kind(2, True)
TOP = ceiling_for("userspace", VM)


def test_the_table_names_known_backends_once_per_kind_of_machine():
    keys = [(c.backend, c.machine) for c in CEILINGS]
    assert len(keys) == len(set(keys))
    assert all(c.backend in BACKENDS and c.max_mbit > 0 and c.max_pps > 0 and c.measured for c in CEILINGS)


def test_machine_kinds():
    assert machine_kind(2, True) == "2-vCPU VM"
    assert machine_kind(8, False) == "8-core host"


def test_the_development_vm_has_a_measured_userspace_ceiling_and_netem_none():
    assert TOP is not None
    assert ceiling_for("netem", VM) is None  # this kernel has no netem: never measured
    assert ceiling_for("userspace", machine_kind(64, False)) is None


def test_a_profile_within_the_ceiling_is_quiet():
    assert over_ceiling(profile(down_mbit=TOP.max_mbit, up_mbit=1), "userspace", VM) is None


def test_a_profile_past_the_ceiling_gets_one_line():
    line = over_ceiling(profile(down_mbit=TOP.max_mbit * 2, up_mbit=1), "userspace", VM)
    assert line is not None and "\n" not in line
    assert line.startswith(f"warning: profile p asks for {TOP.max_mbit * 2:g} Mbit/s;")
    assert f"up to {TOP.max_mbit:g} Mbit/s" in line and VM in line


def test_an_unlimited_direction_asks_for_no_rate_and_is_not_warned():
    assert over_ceiling(profile(down_mbit=1), "userspace", VM) is None
    assert over_ceiling(profile(), "userspace", VM) is None
    assert over_ceiling(profile(up_mbit=TOP.max_mbit + 1), "userspace", VM) is not None


def test_nothing_is_said_where_nothing_was_measured():
    assert over_ceiling(profile(), "netem", VM) is None
    assert over_ceiling(profile(), "userspace", machine_kind(64, False)) is None
