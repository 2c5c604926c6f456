"""Profiles: validation, the built-in catalogue, YAML files and sweeps."""

from pathlib import Path

import pytest

from pagebench.core.profiles import (
    FRAME_BYTES,
    MIN_QUEUE_FRAMES,
    ProfileError,
    make_profile,
    parse_profiles,
    resolve,
)
from pagebench.yamlfiles import builtin_profiles, load_profile_file


def test_builtin_catalogue_has_the_issue_profiles_with_sources():
    catalogue = builtin_profiles()
    expected = {
        "none": (0, None, None),
        "cable": (28, 5, 1),
        "dsl": (50, 1.5, 0.384),
        "3g": (300, 1.6, 0.768),
        "3gfast": (150, 1.6, 0.768),
        "4g": (170, 9, 9),
        "lte": (70, 12, 12),
        "fios": (4, 20, 5),
        "lan-1994": (0.5, 10, 10),
        "t1-1994": (70, 1.544, 1.544),
        "t1-1994-mss536": (70, 1.544, 1.544),
        "lan-1994-tcp": (0.5, 10, 10),
        "t1-1994-tcp": (70, 1.544, 1.544),
        "modem-28k8": (120, 0.0288, 0.0288),
        "modem-28k8-v42bis": (120, 0.0288, 0.0288),
        "isdn-bri": (40, 0.128, 0.128),
        "t1-1994-mss536-tcp": (70, 1.544, 1.544),
        "us-nz-1999": (120, 34.368, 34.368),
        "ec2-2013": (140, 16.8, 16.8),
        "vlab-2013": (200, 25, 25),
    }
    assert set(catalogue) == set(expected)
    for name, (rtt, down, up) in expected.items():
        profile = catalogue[name]
        assert (profile.rtt_ms, profile.down_mbit, profile.up_mbit) == (rtt, down, up), name
        assert profile.source, f"{name} must state its source"
    assert catalogue["t1-1994"].mss == 1460
    assert catalogue["t1-1994-mss536"].mss == 536
    for link in ("lan-1994", "t1-1994", "t1-1994-mss536"):  # the era's TCP on the era's links
        today, era = catalogue[link], catalogue[f"{link}-tcp"]
        assert today.sack and today.timestamps and today.window_scaling and today.congctl == "cubic"
        assert not (era.sack or era.timestamps or era.window_scaling) and era.congctl == "reno"
        assert (era.rtt_ms, era.down_mbit, era.up_mbit, era.mss) == (today.rtt_ms, today.down_mbit, today.up_mbit,
                                                                    today.mss)
    assert catalogue["t1-1994-tcp"].initcwnd == catalogue["t1-1994-mss536-tcp"].initcwnd == 1
    modem = catalogue["modem-28k8-v42bis"]  # the seed 001 modem, compressing as its modems did
    assert (modem.modem_compression, modem.v42bis_codewords, modem.v42bis_max_string) == ("v42bis", 2048, 32)
    assert catalogue["modem-28k8"].modem_compression is None


def test_derived_values():
    profile = make_profile({"name": "x", "rtt_ms": 50, "jitter_ms": 2, "down_mbit": 10})
    assert profile.one_way_delay_us == 25_000
    assert profile.jitter_us == 2000
    # default queue: one BDP (10 Mbit/s x 50 ms = 62500 B), at least 32 frames
    assert profile.queue_limit_bytes(10) == 62_500
    assert profile.queue_limit_bytes(1) == MIN_QUEUE_FRAMES * FRAME_BYTES
    assert make_profile({"name": "q", "queue_ms": 20}).queue_limit_bytes(10) == 25_000
    assert make_profile({"name": "q", "queue_bytes": 3000}).queue_limit_bytes(10) == 3000


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"rtt_ms": -1}, "rtt_ms"),
        ({"loss_pct": 101}, "loss_pct"),
        ({"down_mbit": 0}, "down_mbit"),
        ({"up_mbit": -3}, "up_mbit"),
        ({"jitter_ms": 30, "rtt_ms": 50}, "jitter_ms must be <= rtt_ms / 2"),
        ({"queue_bytes": 5000, "queue_ms": 10}, "exclusive"),
        ({"congctl": "vegas"}, "congctl: must be one of cubic, reno, bbr"),
        ({"mss": 20}, "mss"),
        ({"tcp_rmem": [9000, 4096, 100000]}, "tcp_rmem"),
        ({"rwnd_bytes": 1000}, "rwnd_bytes: must be at least one MSS (1460, the default MSS) and at most 65535"),
        ({"rwnd_bytes": 500, "mss": 536}, "rwnd_bytes: must be at least one MSS (536, the profile's mss)"),
        ({"rwnd_bytes": 65536}, "rwnd_bytes: must be at least one MSS (1460, the default MSS) and at most 65535 "
                                "(16 bits: no window scaling) (got 65536)"),
        ({"rwnd_bytes": "lots"}, "rwnd_bytes"),
        ({"rttms": 3}, "rttms: unknown field; allowed:"),
        ({"modem_compression": "mnp5", "down_mbit": 1, "up_mbit": 1},
         "modem_compression: must be one of v42bis (or left out: no compression) (got 'mnp5')"),
        ({"modem_compression": "v42bis", "down_mbit": 1}, "modem_compression needs down_mbit and up_mbit"),
        ({"v42bis_codewords": 256}, "v42bis_codewords"),
        ({"v42bis_max_string": 251}, "v42bis_max_string"),
    ],
)
def test_bad_fields_give_one_line_errors_naming_the_field(fields, needle):
    with pytest.raises(ProfileError) as caught:
        parse_profiles({"profiles": [{"name": "x", **fields}]}, "mine.yaml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("mine.yaml: profiles[0]")
    assert needle in message


def test_unknown_profile_name_lists_the_known_ones():
    with pytest.raises(ProfileError, match=r"unknown profile 'cabel'; known: .*cable"):
        resolve("cabel", builtin_profiles())


def test_sweep_expands_to_the_cartesian_product_with_names():
    profiles = parse_profiles(
        {"profiles": [{"name": "s", "rtt_ms": [20, 50, 100], "down_mbit": [1, 10], "up_mbit": 1}]}, "f"
    )
    assert len(profiles) == 6
    assert profiles[0].name == "s[rtt_ms=20,down_mbit=1]"
    assert {(p.rtt_ms, p.down_mbit) for p in profiles} == {(r, d) for r in (20, 50, 100) for d in (1, 10)}
    assert all(p.up_mbit == 1 for p in profiles)


def test_sweep_of_window_caps_takes_lists_of_triples():
    profiles = parse_profiles(
        {"profiles": [{"name": "w", "tcp_rmem": [[4096, 65536, 65536], [4096, 131072, 6291456]]}]}, "f"
    )
    assert [p.tcp_rmem for p in profiles] == [(4096, 65536, 65536), (4096, 131072, 6291456)]
    single = parse_profiles({"profiles": [{"name": "w", "tcp_wmem": [4096, 16384, 65536]}]}, "f")
    assert single[0].tcp_wmem == (4096, 16384, 65536)


def test_base_inherits_and_overrides():
    (profile,) = parse_profiles({"profiles": [{"name": "slowcable", "base": "cable", "loss_pct": 2}]}, "f",
                                builtin_profiles())
    assert (profile.rtt_ms, profile.down_mbit, profile.loss_pct) == (28, 5, 2)
    with pytest.raises(ProfileError, match=r"profiles\[0\]\.base: unknown profile 'nope'"):
        parse_profiles({"profiles": [{"name": "x", "base": "nope"}]}, "f", builtin_profiles())


def test_empty_sweep_and_duplicates_are_refused():
    with pytest.raises(ProfileError, match="at least one value"):
        parse_profiles({"profiles": [{"name": "x", "rtt_ms": []}]}, "f")
    with pytest.raises(ProfileError, match="duplicate profile name 'x'"):
        parse_profiles({"profiles": [{"name": "x"}, {"name": "x"}]}, "f")


def test_yaml_file_errors_name_the_file(tmp_path: Path):
    good = tmp_path / "p.yaml"
    good.write_text("profiles:\n  - {name: a, rtt_ms: [10, 20]}\n")
    assert [p.name for p in load_profile_file(good)] == ["a[rtt_ms=10]", "a[rtt_ms=20]"]
    broken = tmp_path / "broken.yaml"
    broken.write_text("profiles: [\n")
    with pytest.raises(ProfileError, match=r"broken.yaml: line \d+: not valid YAML"):
        load_profile_file(broken)
    with pytest.raises(ProfileError, match=r"missing.yaml: cannot read"):
        load_profile_file(tmp_path / "missing.yaml")
    extra = tmp_path / "extra.yaml"
    extra.write_text("profiles: []\nlinks: []\n")
    with pytest.raises(ProfileError, match=r"extra.yaml: links: unknown top-level key"):
        load_profile_file(extra)


def test_rwnd_bytes_from_one_segment_to_sixteen_bits():
    """No clamp by default; one MSS (the profile's, else Ethernet's 1460) to 65535."""
    assert make_profile({"name": "x"}).rwnd_bytes is None
    assert make_profile({"name": "x", "mss": 536, "rwnd_bytes": 536}).rwnd_bytes == 536
    assert make_profile({"name": "x", "rwnd_bytes": 1460}).rwnd_bytes == 1460
    clamped = make_profile({"name": "x", "rtt_ms": 120, "rwnd_bytes": 32767})
    assert clamped.rwnd_bytes == 32767 and clamped.fields()["rwnd_bytes"] == 32767
    assert clamped.describe() == "120 ms, unlimited, rwnd 32767 B"
    assert make_profile({"name": "x", "rwnd_bytes": 65535}).describe().endswith("rwnd 65535 B")
    assert "rwnd" not in make_profile({"name": "x"}).describe()
