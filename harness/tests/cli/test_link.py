"""`pagebench link`: bad link options and profile files get one line naming the field and
what is allowed, and leave nothing behind: all refused before the command needs root or
the machine lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import nothing_left, pagebench


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rtt", "-5"], "rtt_ms"),
        (["--loss", "101"], "loss_pct"),
        (["--down", "0"], "down_mbit"),
        (["--rtt", "10", "--jitter", "8"], "jitter_ms must be <= rtt_ms / 2"),
        (["--congctl", "vegas"], "congctl: must be one of cubic, reno, bbr"),
        (["--profile", "nope"], "--profile: unknown profile 'nope'; known:"),
        (["--backend", "bogus"], "error: --backend: unknown backend 'bogus'; allowed: netem, userspace"),
    ],
)
def test_bad_link_options_fail_with_one_line(args, needle, tmp_path: Path):
    # a machine lock of its own: another measurement holding this machine's is no business of this test
    result = pagebench("link", "check", *args, env={"PAGEBENCH_LOCK": str(tmp_path / "lock")})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert needle in lines[0]
    assert nothing_left()


def refused_profile_file(tmp_path: Path, text: str) -> list[str]:
    """The error lines of `link check` with a profile `mine` from a file holding `text`
    (exit 2: the input is wrong)."""
    bad = tmp_path / "links.yaml"
    bad.write_text(f"profiles:\n  - name: mine\n{text}")
    result = pagebench("link", "check", "--profiles", str(bad), "--profile", "mine")
    assert result.returncode == 2
    return [line.replace(str(bad), "FILE") for line in result.stderr.strip().splitlines()]


def test_unknown_field_in_a_profile_file(tmp_path: Path):
    assert refused_profile_file(tmp_path, "    rtt: 20\n") == [
        "error: FILE: profiles[0].rtt: unknown field; allowed: base, name, source, rtt_ms, jitter_ms, "
        "loss_pct, down_mbit, up_mbit, queue_bytes, queue_ms, mss, initcwnd, congctl, tcp_rmem, tcp_wmem, "
        "window_scaling, sack, timestamps, rwnd_bytes, modem_compression, v42bis_codewords, v42bis_max_string"]


def test_a_window_clamp_below_one_segment_starts_nothing(tmp_path: Path):
    assert refused_profile_file(tmp_path, "    rtt_ms: 120\n    rwnd_bytes: 1000\n") == [
        "error: FILE: profiles[0].rwnd_bytes: must be at least one MSS (1460, the default MSS) and at most "
        "65535 (16 bits: no window scaling) (got 1000)"]
    assert nothing_left()


def test_link_devices_lists_the_table_and_its_reference():
    result = pagebench("link", "devices")
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "desktop │ 1280x720, no CPU throttling" in text
    assert "moto-g-power │ 412x823 @1.75x, mobile, touch, own user agent, CPU 4x" in text
    assert "CPU slowdowns against the reference desktop: a 2-core Debian 12 VM" in text
