"""The report: JSON and the terminal table, read from a store filled with loads."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from pagebench.analysis.report.text import human_bytes, report_json, report_table
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.results.database import StoreError
from pagebench.results.store import Store
from html import escape

from tests.analysis.report.pages import report
from tests.helpers import META, PROFILES, SPEC, fake_load, fill, fill_sharded, make_plan

@pytest.fixture
def store(tmp_path):
    with Store(f"sqlite:///{tmp_path / 'pb.sqlite'}") as opened:
        yield opened


def test_report_json(store):
    fill(store)
    store.set_status("r1", "complete")
    report = report_json(store, "r1")
    json.dumps(report, allow_nan=False)
    assert report["run"] == "r1" and report["status"] == "complete"
    assert report["created_at"].endswith("+00:00")
    assert (report["backend"], report["chromium_version"], report["nginx_version"], report["seed"]) == (
        "userspace", "131.0.6778.33", "1.22.1", 42)
    assert (report["planned"], report["recorded"]) == (28, 28)
    [check] = report["link_checks"]
    assert (check["profile"], check["valid"], check["rtt_median_ms"], check["problems"]) == ("3g", True, 300.4, [])
    keys = [(c["mode"], c["profile"]) for c in report["conditions"]]
    assert keys == [("keepalive", "3g"), ("keepalive", "cable"), ("h2", "3g"), ("h2", "cable")]
    keepalive_3g, _, h2_3g, _ = report["conditions"]
    assert (keepalive_3g["n"], keepalive_3g["flagged"], keepalive_3g["planned"]) == (6, 0, 6)
    assert (h2_3g["n"], h2_3g["flagged"], h2_3g["planned"]) == (5, 1, 6)  # seq 6 was flagged
    # repetitions 0..5 -> 2000..2050 ms: median 2025, p90 2045; warm-ups (9000 ms) left out
    assert keepalive_3g["metrics"]["load_ms"] == {"median": 2025.0, "p90": pytest.approx(2045.0),
                                                  "min": 2000.0, "max": 2050.0}
    assert h2_3g["metrics"]["connections_browser"]["median"] == 2
    assert keepalive_3g["metrics"]["connections_link"]["median"] == 5
    assert h2_3g["metrics"]["bytes"]["median"] == 327_105
    assert report["warnings"] == []


def test_report_warns_about_incomplete_runs_and_small_n(store):
    fill(store, reps=6, record=12)  # 4 warm-ups and 8 measured loads of 24
    report = report_json(store, "r1")
    assert report["status"] == "running" and report["recorded"] == 12
    assert len(report["warnings"]) == 4
    assert report["warnings"][2] == (
        "demo h2 direct 3g cold tls1.3: 2 of 6 planned loads recorded: resume the run; "
        "n=1 (1 flagged or failed left out): can't tell: n too small (want at least 5)"
    )


def test_a_sharded_run_reports_each_machines_medians_and_the_machine_that_differs(store):
    fill(store, "one")
    fill_sharded(store, "two", slower=1.1)  # lab-b 10 % slower: lab-a 2000 + 10 r (r even), lab-b 2200 + 10 r (r odd)
    one, two = report_json(store, "one"), report_json(store, "two")
    assert not any("machines" in c for c in one["conditions"])
    keepalive, h2 = two["conditions"]
    assert {name: (m["n"], m["medians"]["load_ms"]) for name, m in keepalive["machines"].items()} == {
        "lab-a": (10, 2090.0), "lab-b": (10, 2300.0)}
    assert {name: m["medians"]["load_ms"] for name, m in h2["machines"].items()} == {"lab-a": 1290.0, "lab-b": 1420.0}
    assert keepalive["n"] == 20 and keepalive["metrics"]["load_ms"]["median"] == 2195.0  # (2180 + 2210) / 2
    json.dumps(two, allow_nan=False)
    assert [line.split(": ", 1)[0] for line in two["warnings"]] == [
        "demo keepalive direct 3g cold tls1.3", "demo h2 direct 3g cold tls1.3"]
    assert all(": machine lab-b's load_ms differs from lab-a's (median " in line for line in two["warnings"])

    def text(run_id: str) -> str:
        console = Console(record=True, width=200)
        console.print(report_table(store, run_id))
        return console.export_text()

    assert "machines:" not in text("one") and "lab-a" not in text("one")
    sharded = text("two")
    assert "machines: each condition's medians per lab machine" in sharded
    assert "warning: demo keepalive direct 3g cold tls1.3: machine lab-b's load_ms differs from lab-a's" in sharded
    rows = [line.strip("│ ").split() for line in sharded.splitlines() if line.startswith("│") and " lab-" in line]
    assert [[cell for cell in row if cell != "│"] for row in rows] == [  # against all: 2090 / 2195 - 1, ...
        ["keepalive", "lab-a", "10", "2090", "-4.8%", "312"], ["lab-b", "10", "2300", "+4.8%", "312"],
        ["h2", "lab-a", "10", "1290", "-4.8%", "312"], ["lab-b", "10", "1420", "+4.8%", "312"]]


def test_report_table_renders(store):
    fill(store, reps=6, record=12)
    console = Console(record=True, width=200)
    console.print(report_table(store, "r1"))
    text = console.export_text()
    assert "run r1: running, 12/28 loads (backend userspace, chromium 131.0.6778.33, nginx 1.22.1)" in text
    assert "demo keepalive direct 3g cold tls1.3" in text and "demo h2 direct cable cold tls1.3" in text
    assert "1 (+1 flagged)" in text
    assert "5/5/5" in text and "2/2/2" in text  # connections browser/link/server
    assert "319.4 KiB" in text  # 327 105 bytes
    assert "warning: demo keepalive direct cable cold tls1.3: 2 of 6 planned loads recorded" in text
    assert "can't tell: n too small" in text


def test_the_reports_say_what_kind_each_site_was_in_the_kinds_tables_words(store, tmp_path):
    from pagebench.core.sites import kinds
    from pagebench.runner.prepare import site_meta
    from pagebench.core.sites.builtin import builtin
    from pagebench.lab import sites as sitefiles

    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "index.html").write_text("<p>hi</p>")
    folder_kind, folder = sitefiles.found({"name": "docs", "path": str(tmp_path / "build")})
    sites = {"demo": site_meta(folder_kind, folder), "modern": site_meta(kinds.BUILTIN, builtin("modern"))}
    store.create_experiment("r1", SPEC, META | {"sites": sites}, make_plan(), PROFILES)
    console = Console(record=True, width=300)
    console.print(report_table(store, "r1"))
    text = " ".join(console.export_text().split())
    assert f"site demo: folder ({kinds.FOLDER.summary}), from {tmp_path / 'build'}" in text
    assert f"site modern: builtin ({kinds.BUILTIN.summary})" in text
    page = report(store, tmp_path)
    assert f"<dt>site</dt><dd>demo: folder ({escape(kinds.FOLDER.summary)}), from {tmp_path / 'build'}</dd>" in page
    assert '"kind"' not in page  # the meta's sites are said, not dumped as JSON
    store.create_experiment("r0", SPEC, META, make_plan(), PROFILES)  # stored before kinds were kept
    console = Console(record=True, width=300)
    console.print(report_table(store, "r0"))
    assert "site demo:" not in console.export_text()


def test_report_of_an_unknown_run(store):
    with pytest.raises(StoreError, match="unknown run 'nope'"):
        report_json(store, "nope")


def test_human_bytes():
    assert [human_bytes(v) for v in (None, 812, 14_540, 1_373_000, 3 << 30)] == [
        "–", "812 B", "14.2 KiB", "1.31 MiB", "3.00 GiB"]


def test_the_reports_say_which_edge_proxy_pool_the_run_used(store):
    from dataclasses import replace

    from pagebench.analysis.report.gather import gather
    from pagebench.analysis.report.html import render
    from pagebench.core.records import Condition, PlannedLoad
    from tests.helpers import META, PROFILES, SPEC, fake_load

    proxied = Condition("demo", H2, "proxy", "3g", "cold")
    plan = [PlannedLoad(seq, proxied, seq, False) for seq in range(5)]
    settings = {"connections": 2, "depth": 4, "pool": "warm"}
    store.create_experiment("w1", {**SPEC, "topology": "proxy", "proxy": {"connections": 2, "pool": "warm"}},
                            {**META, "proxy": settings}, plan, {"3g": PROFILES["3g"]})
    for planned in plan:  # reused two, opened none: no SYN at the router
        load = replace(fake_load(planned), connections_proxy=0, connections_proxy_reused=2, connections_link=0)
        store.record_loads("w1", planned, [load], started_at=1_790_000_000.0 + planned.seq)
    report = report_json(store, "w1")
    assert report["proxy"] == settings
    assert report["conditions"][0]["metrics"]["connections_proxy_reused"]["median"] == 2
    console = Console(record=True, width=230)
    console.print(report_table(store, "w1"))
    text = console.export_text()
    line = "edge proxy: pool warm (upstream connections kept open across each condition's loads), up to 2"
    assert line in text and "browser/proxy/reused/link/server" in text and "2/0/2/0/2" in text
    assert "pool warm (upstream connections kept open" in render(gather(store, "w1"))
    # a run stored before the pool was recorded: its spec's settings, the defaults filled in
    store.create_experiment("c1", {**SPEC, "topology": "proxy"}, META, plan, {"3g": PROFILES["3g"]})
    assert report_json(store, "c1")["proxy"] == {"connections": 6, "depth": 4, "pool": "cold"}
    fill(store)
    assert report_json(store, "r1")["proxy"] is None  # direct: no edge proxy


def test_a_run_with_several_encodings_sets_each_against_identity(store):
    """Identity, gzip and dcz of one site version: the JSON, the table and the page say
    what each saved, measured and estimated; a run with only identity says nothing of it."""
    from dataclasses import replace

    from pagebench.analysis.report.gather import gather
    from pagebench.analysis.report.html import render
    from pagebench.core.records import Condition, PlannedLoad
    from tests.helpers import META, PROFILES, SPEC, fake_load

    base = Condition("demo", H2, "direct", "3g", "cold", encoding=IDENTITY, version=2)
    conditions = [base, replace(base, encoding=GZIP), replace(base, encoding=DCZ)]
    plan = [PlannedLoad(seq, conditions[seq % 3], seq // 3, False) for seq in range(15)]
    store.create_experiment("e1", {**SPEC, "encoding": ["identity", "gzip", "dcz"]}, META, plan,
                            {"3g": PROFILES["3g"]})
    share = {"identity": 1.0, "gzip": 0.25, "dcz": 0.05}  # of the bytes sent
    for planned in plan:
        name = planned.condition.encoding.name
        load = fake_load(planned, {"identity": 1800.0, "gzip": 1500.0, "dcz": 1400.0}[name] + planned.repetition)
        resources = tuple(replace(r, encoded_bytes=round(r.body_bytes * (share[name] if i < 3 else 1.0)),
                                  content_encoding="" if name == "identity" or i >= 3 else name,
                                  dictionary_offered=name == "dcz" and 0 < i < 3,
                                  dictionary_used=name == "dcz" and i == 1)
                          for i, r in enumerate(load.resources))
        store.record_loads("e1", planned, [replace(load, resources=resources)], started_at=1_790_000_000.0 + planned.seq)
    report = report_json(store, "e1")
    json.dumps(report, allow_nan=False)
    rows = {row["encoding"]: row for row in report["encodings"]}
    assert [row["encoding"] for row in report["encodings"]] == ["identity", "gzip", "dcz"]
    assert rows["identity"]["baseline"] is None and rows["identity"]["bytes_saved"] is None
    text_bytes = 14_210 + 22_400 + 91_200
    gzip = rows["gzip"]
    assert gzip["baseline"] == base.key and gzip["reason"] is None and (gzip["n"], gzip["n_baseline"]) == (5, 5)
    assert gzip["bytes_saved"]["estimate"] == pytest.approx(0.75 * text_bytes, abs=2)
    # each text response took 89.75 ms from first to last byte: 3 x 89.75 x 0.75
    assert gzip["estimated_ms"]["estimate"] == pytest.approx(3 * 89.75 * 0.75, abs=0.01)
    assert gzip["measured_ms"]["estimate"] == pytest.approx(300.0)
    assert (rows["dcz"]["dictionary_offered"], rows["dcz"]["dictionary_used"], rows["dcz"]["revalidated"]) == (2, 1, 0)
    assert report["conditions"][1]["encoding"] == "gzip" and report["conditions"][1]["version"] == 2

    console = Console(record=True, width=250)
    console.print(report_table(store, "e1"))
    text = console.export_text()
    assert "encodings against identity" in text and "baseline" in text
    assert "┃ encoding ┃" in text and "tls 1.3, version 2" in text  # a column (varies), the title (the same)
    page = render(gather(store, "e1"))
    assert 'id="encodings"' in page and 'data-chart="encodings"' in page and "<th>encoding</th>" in page
    assert f"<b>{300.0:.0f}</b>" in page  # gzip's measured time saved

    fill(store)  # identity only: no encodings table, and the report as it was
    assert report_json(store, "r1")["encodings"] == []
    assert 'id="encodings"' not in render(gather(store, "r1"))
    console = Console(record=True, width=200)
    console.print(report_table(store, "r1"))
    assert "encoding" not in console.export_text() and "version" not in console.export_text()


def test_a_run_of_two_devices_shows_each_and_the_cpu_slowdown_it_achieved(store):
    """Desktop and moto-g-power: a column of the table (it varies), each device's line in
    the caption, the JSON and the page's header, with the calibration's achieved factor; a
    desktop-only run says nothing of devices."""
    from dataclasses import replace

    from pagebench.analysis.report.gather import gather
    from pagebench.analysis.report.html import render
    from pagebench.core.devices import DESKTOP, Reference, calibration
    from pagebench.core.records import Condition, PlannedLoad
    from pagebench.yamlfiles import builtin_devices

    phone = builtin_devices().devices["moto-g-power"]
    made = calibration(phone, Reference(script_ms=150, machine="m"), [140.0, 150.0, 160.0], 4.3, [610.0, 615.0])
    devices = {"desktop": DESKTOP.fields(), "moto-g-power": {**phone.fields(), "calibration": made.as_meta()}}
    base = Condition("demo", H2, "direct", "3g", "cold")
    conditions = [base, replace(base, device="moto-g-power")]
    plan = [PlannedLoad(seq, conditions[seq % 2], seq // 2, False) for seq in range(10)]
    store.create_experiment("d1", {**SPEC, "devices": ["desktop", "moto-g-power"]}, {**META, "devices": devices},
                            plan, {"3g": PROFILES["3g"]})
    for planned in plan:
        slower = 600.0 if planned.condition.device == "moto-g-power" else 0.0
        store.record_loads("d1", planned, [fake_load(planned, 1800.0 + slower + planned.repetition)],
                           started_at=1_790_000_000.0 + planned.seq)
    line = ("device moto-g-power: 412x823 @1.75x, mobile, touch, own user agent, CPU 4x; CPU 4.1x slower than the "
            "reference (DevTools rate 4.3; asked 4x)")
    report = report_json(store, "d1")
    assert [(c["device"], c["metrics"]["load_ms"]["median"]) for c in report["conditions"]] == [
        ("desktop", 1802.0), ("moto-g-power", 2402.0)]
    assert report["devices"]["moto-g-power"]["calibration"]["achieved"] == pytest.approx(612.5 / 150, abs=1e-3)  # the median
    console = Console(record=True, width=250)
    console.print(report_table(store, "d1"))
    text = console.export_text()
    assert "┃ device " in text and line in text and "device desktop: 1280x720, no CPU throttling" in text
    page = render(gather(store, "d1"))
    assert f"<dt>device</dt><dd>{escape(line.removeprefix('device '))}</dd>" in page
    assert '<th rowspan="2">device</th>' in page  # a column of the conditions table

    fill(store)  # desktop only (before devices: no meta): nothing said of devices
    assert report_json(store, "r1")["devices"] == {}
    console = Console(record=True, width=200)
    console.print(report_table(store, "r1"))
    assert "device" not in console.export_text()
    assert "<dt>device</dt>" not in render(gather(store, "r1"))
