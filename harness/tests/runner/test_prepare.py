"""A spec's sites read before anything runs (`prepare`): a folder site's paths are the spec
file's directory's, whatever the working directory, and kept absolute in the document the
run stores (a resumed run, a split lab's sites role find the same folder); each site's kind
as the report states it; the hosts a folder's pages name that the lab does not serve, one
note each; bad entries one line naming the spec file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.sites import kinds
from pagebench.core.spec.model import SpecError
from pagebench.runner.prepare import Baseline, prepare

PAGE = (b'<!DOCTYPE html><script src="https://cdn.example.com/lib.js"></script>'
        b'<img src="https://img.example.net/a.png"><img src="https://img.example.net/b.png">'
        b'<script>const links = ["https://github.com/acme", "https://a.example.com/", "https://b.example.com/", '
        b'"https://c.example.com/", "https://d.example.com/", "https://e.example.com/"]</script>')


def _spec(tmp_path: Path, *sites: object) -> tuple[dict, Path]:
    specs = tmp_path / "specs"
    (specs / "site").mkdir(parents=True, exist_ok=True)
    (specs / "site" / "index.html").write_bytes(PAGE)
    (specs / "cdn").mkdir(exist_ok=True)
    return {"name": "t", "sites": list(sites), "modes": ["h2"]}, specs


def test_folder_paths_are_the_spec_files_and_the_stored_document_names_them_absolute(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    document, specs = _spec(tmp_path, "modern", {"name": "docs", "path": "./site", "origins": {"cdn.example.com": "cdn"}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    prepared = prepare(document, "specs/t.yaml", Path("../specs"))
    assert prepared.document["sites"] == ["modern", {"name": "docs", "path": str(specs / "site"),
                                                     "origins": {"cdn.example.com": str(specs / "cdn")}}]
    assert document["sites"][1]["path"] == "./site"  # the caller's document as read
    assert list(prepared.sites) == ["modern", "docs"]
    assert prepared.site_kinds["modern"] == {"kind": "builtin", "summary": kinds.BUILTIN.summary}
    docs = prepared.site_kinds["docs"]
    assert docs["kind"] == "folder" and docs["summary"] == kinds.FOLDER.summary
    assert Path(docs["path"]).resolve() == (specs / "site").resolve() and len(docs["digest"]) == 64
    assert prepared.notes == [
        "site docs: img.example.net: not served (2 URL(s), fetched by the page, first in index.html): requests to "
        "it fail at once (the lab has no internet)",
        "site docs: 6 host(s) only its scripts name are not served (github.com, a.example.com, b.example.com, "
        "c.example.com, d.example.com and 1 more; `pagebench site show` lists them): a request a script makes to "
        "one fails at once"]
    resumed = prepare(prepared.document, "run x")  # as `run --resume` reads it back, from anywhere
    monkeypatch.chdir(tmp_path)
    assert resumed.site_kinds == prepared.site_kinds


@pytest.mark.parametrize(("entry", "message"), [
    ({"name": "docs", "path": "./nothere"}, "specs/t.yaml: sites[0]: path: {specs}/nothere: no such directory"),
    ({"name": "docs", "path": "./cdn"},
     "specs/t.yaml: sites[0]: path: {specs}/cdn: no index.html in it (a folder site serves its index.html as "
     "https://docs.test/)"),
    ({"name": "Docs", "path": "./site"}, "specs/t.yaml: sites[0]: name: 'Docs': a site name must be lower-case "
                                         "letters, digits, '.' and '-' (it is the host <name>.test)"),
    ({"name": "docs", "path": "./site", "cache": "no"},
     "specs/t.yaml: sites[0]: cache: unknown field; a folder site takes name, path, host, origins"),
])
def test_a_bad_folder_entry_is_one_line_naming_the_spec_file_and_field(tmp_path: Path, entry, message):
    document, specs = _spec(tmp_path, entry)
    with pytest.raises(SpecError) as error:
        prepare(document, "specs/t.yaml", specs)
    assert str(error.value) == message.replace("{specs}", str(specs))


def test_two_sites_of_one_name_are_refused(tmp_path: Path):
    document, specs = _spec(tmp_path, "modern", {"name": "modern", "path": "site"})
    with pytest.raises(SpecError, match=r"^specs/t.yaml: sites\[1\]: site modern is named twice$"):
        prepare(document, "specs/t.yaml", specs)


def test_a_baseline_spec_adds_its_twins_to_the_stored_document_its_paths_its_own(tmp_path: Path):
    """`run --baseline`: the baseline checkout's folder and app sites join the run as twins
    on the change's hosts, their paths (and an app's working directory) the baseline's; both
    sides interleaved in the one order; a site of neither kind not paired, said."""
    document, specs = _spec(tmp_path, "modern", {"name": "docs", "path": "site"},
                            {"name": "shop", "app": {"command": "serve {port}"}})
    _, main = _spec(tmp_path / "main", {"name": "docs", "path": "site"})
    base = {"name": "t", "sites": [{"name": "docs", "path": "./site"}, {"name": "shop", "app": {"command": "old {port}"}}]}
    prepared = prepare(document, "specs/t.yaml", specs, Baseline(base, main, "main/t.yaml"))
    assert prepared.document["sites"][3:] == [
        {"name": "docs.baseline", "path": str(main / "site"), "host": "docs.test"},
        {"name": "shop.baseline", "app": {"command": "old {port}"}, "origins": ["shop.test"], "dir": str(main)}]
    assert prepared.pairs == {"docs.baseline": "docs", "shop.baseline": "shop"}
    assert prepared.sites["shop.baseline"].root == main and prepared.sites["shop"].root == specs
    assert prepared.sites["docs.baseline"].entry == prepared.sites["docs"].entry == "https://docs.test/"
    assert {load.condition.site for load in prepared.loads} == {"modern", "docs", "shop", "docs.baseline",
                                                                "shop.baseline"}
    assert ("baseline: sites[0] (modern) is not a folder or an app: the same on both sides, measured once and "
            "not compared") in prepared.notes
    with pytest.raises(SpecError, match=r"^gone/t.yaml: site docs \(its twin docs.baseline\): path: .*/gone/site: "
                                        "no such directory$"):
        prepare(document, "specs/t.yaml", specs, Baseline(base, tmp_path / "gone", "gone/t.yaml"))
    base["sites"] = base["sites"][1:]
    with pytest.raises(SpecError, match=r"^gone/t.yaml: site shop \(its twin shop.baseline\): app site shop.baseline: "
                                        "its working directory dir: .*/gone is missing$"):
        prepare(document, "specs/t.yaml", specs, Baseline(base, tmp_path / "gone", "gone/t.yaml"))


def test_a_recorded_site_s_think_time_is_said_with_the_modes_that_cannot_apply_it(tmp_path: Path):
    from tests.lab.servers.recorded import write_recorded_site

    site = write_recorded_site(tmp_path / "rec")
    prepared = prepare({"name": "t", "sites": [str(site.root)], "modes": ["keepalive", "h2", "h3"]}, "t.yaml")
    think = [note for note in prepared.notes if "think time" in note]
    assert len(think) == 1 and think[0].startswith("site rec: server think time (HAR wait less one RTT) of 2 ")
    assert think[0].endswith("; on: each response is delayed by it; except in h3: Caddy has no handler that waits, "
                             "so its responses go at once")


def test_a_spec_s_devices_become_the_table_s_rows_before_anything_runs(tmp_path: Path):
    document, specs = _spec(tmp_path, "modern")
    prepared = prepare({**document, "devices": ["desktop", "moto-g-power"], "repetitions": 2, "warmup": 0},
                       "specs/t.yaml", specs)
    assert list(prepared.devices) == ["desktop", "moto-g-power"]
    assert prepared.devices["moto-g-power"].cpu_slowdown == 4 and prepared.reference is not None
    assert {load.condition.device for load in prepared.loads} == {"desktop", "moto-g-power"} and len(prepared.loads) == 4
    assert list(prepare(document, "specs/t.yaml", specs).devices) == ["desktop"]  # none named: desktop
    with pytest.raises(SpecError) as caught:
        prepare({**document, "devices": ["moto-g-powr"]}, "specs/t.yaml", specs)
    assert str(caught.value) == "specs/t.yaml: devices[0]: unknown device 'moto-g-powr'; allowed: desktop, moto-g-power"
