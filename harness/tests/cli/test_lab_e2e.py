"""`pagebench doctor` and `cleanup` answer on this machine."""

from __future__ import annotations

from tests.helpers import needs_root, pagebench

pytestmark = needs_root


def test_doctor_reports_every_requirement():
    result = pagebench("doctor")
    for name in ("root / CAP_NET_ADMIN", "ip:", "tc:", "iptables:", "ethtool:", "sch_netem", "NFQUEUE",
                 "pagebench-delay"):
        assert name in result.stdout, name
    assert result.returncode == 0, result.stdout


def test_cleanup_with_nothing_to_do():
    result = pagebench("cleanup")
    assert result.returncode == 0
    assert "nothing to clean" in result.stdout or "kept" in result.stdout or "removed" in result.stdout
