"""`reproduce --export`: the answer's data in one small xz-compressed file, read back exactly;
a missing, corrupt or other-version export is one line naming the file."""

from __future__ import annotations

import gzip
import lzma
import json

import pytest

from pagebench.analysis.reproduce import export as exported
from pagebench.analysis.reproduce import verdicts
from pagebench.analysis.reproduce.export import Export, ExportError
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.core.encodings import GZIP
from pagebench.core.modes import H2, HTTP10
from pagebench.results.store import Store
from tests.analysis.reproduce.loads import data, load, resource
from tests.helpers import META, PROFILES as STORED_PROFILES, SPEC, fake_load, make_plan

PROFILES = {"remote": {"name": "remote", "rtt_ms": 70.0, "down_mbit": 1.544, "queue_packets": None}}


def _export() -> Export:
    pages = {(ERA, ""): [load(HTTP10, 812.25, [resource(0, 2048, 0.0, 140.1, 141.0),
                                               resource(1, 20480, 141.5, 290.0, 0.1 + 0.2, encoded=3000)],
                              site="gen-i1-b20480-o1", notes=("a note",), link={"drops": 2})],
             (TODAY, "C=2"): [load(H2, 400.0 / 3, encoding=GZIP, version=3, flags=(), ttfb_ms=None)]}
    return Export(("000",), True, {"000-transfer": data(pages, PROFILES)},
                  {("000-transfer", ERA, ""): "r1", ("000-transfer", TODAY, "C=2"): "r2"},
                  {"measured": "2026-11-26 16:21-16:25 UTC", "command": "pagebench reproduce 000 --quick"},
                  {("000", ERA): "cleartext", ("000", TODAY): "TLS 1.3"})


def test_an_export_reads_back_exactly_what_was_written(tmp_path):
    written = _export()
    path = tmp_path / "x.json.xz"
    size = exported.write(path, written)
    assert size == path.stat().st_size < 2048
    back = exported.read(path)
    assert back == written  # every load field, resource, profile, fact (in order) and note
    assert list(back.facts) == ["measured", "command"]
    [first] = back.data["000-transfer"].loads[(ERA, "")]
    assert first.load_ms == 812.25 and back.data["000-transfer"].resources_of(first)[1].resource.end_ms == 0.1 + 0.2


def test_the_same_answer_gives_the_same_bytes_whatever_the_order_of_its_dicts():
    one = _export()
    two = Export(one.seeds, one.quick, {name: type(d)(d.loads, dict(reversed(d.profiles.items())), d.resources)
                                        for name, d in one.data.items()}, dict(reversed(one.runs.items())),
                 one.facts, one.variants)
    assert exported.encode(one) == exported.encode(two)
    text = lzma.decompress(exported.encode(one)).decode()
    assert text.startswith('{"facts":[["measured",') and '"format":"pagebench-reproduce-export"' in text


def _xz(document: object) -> bytes:
    return lzma.compress(json.dumps(document).encode())


def _document(**changes: object) -> dict:
    return exported.to_json(_export()) | changes


@pytest.mark.parametrize(("content", "needle"), [
    (None, "No such file or directory"),
    (b"not xz at all", "not an xz-compressed export"),
    (gzip.compress(b"{}"), "not an xz-compressed export"),
    (lzma.compress(b"{broken"), "corrupt export (its JSON: "),
    (_xz({"rows": []}), "not a readable export: not a pagebench-reproduce-export file"),
    (_xz(_document(version=0)), "not a readable export: format version 0, this pagebench reads version 1: "
                                     "export it again"),
    (_xz({k: v for k, v in _document().items() if k != "facts"}), "not a readable export: no field 'facts'"),
])
def test_a_bad_export_is_one_line_naming_the_file(tmp_path, content, needle):
    path = tmp_path / "bad.json.xz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ExportError) as error:
        exported.read(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and needle in message and "\n" not in message


def test_a_required_column_missing_or_a_mode_unknown_is_named(tmp_path):
    document = _document()
    loads = document["scenarios"]["000-transfer"]["runs"][0]["loads"]
    path = tmp_path / "x.json.xz"
    loads["mode"] = ["http9"]
    path.write_bytes(_xz(document))
    with pytest.raises(ExportError, match="the store holds unknown mode 'http9'"):
        exported.read(path)
    del loads["requests"]
    path.write_bytes(_xz(document))
    with pytest.raises(ExportError, match="scenario 000-transfer loads: no column 'requests'"):
        exported.read(path)


def test_a_column_an_older_export_lacks_reads_as_none_where_none_is_allowed(tmp_path):
    document = _document()
    del document["scenarios"]["000-transfer"]["runs"][0]["loads"]["fcp_ms"]
    del document["scenarios"]["000-transfer"]["resources"]["encoded_bytes"]
    path = tmp_path / "x.json.xz"
    path.write_bytes(_xz(document))
    data = exported.read(path).data["000-transfer"]
    [first] = data.loads[(ERA, "")]
    assert first.fcp_ms is None and first.load_ms == 812.25
    assert [r.resource.encoded_bytes for r in data.resources_of(first)] == [None, None]


def test_what_the_store_gives_is_what_the_export_gives_back(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    plan = make_plan(reps=2, warmups=1)
    store.create_experiment("r1", SPEC, {**META, verdicts.META_KEY: {"scenario": "000-transfer", "variant": ERA,
                                                                      "label": ""}}, plan, STORED_PROFILES)
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned, 1800.0 + planned.seq / 3)], started_at=1.0)
    store.set_status("r1", "complete")
    runs = verdicts.latest_runs(store, ["000-transfer"])
    gathered = verdicts.gather(store, runs)
    assert gathered["000-transfer"].resources  # a scenario whose claims read resources
    written = Export(("000",), False, gathered, runs, verdicts.facts(store, runs, "pagebench reproduce 000"))
    path = tmp_path / "x.json.xz"
    exported.write(path, written)
    assert exported.read(path) == written


def test_a_later_export_replaces_its_scenarios_and_keeps_the_rest():
    older = _export()
    other = data({(ERA, ""): [load(H2, 900.0, site="seed002")]}, {"ec2-2013": {"name": "ec2-2013"}})
    older = Export(("000", "002"), True, older.data | {"002-page": other},
                   older.runs | {("002-page", ERA, ""): "r3"}, older.facts, older.variants,
                   {"000-transfer": 0.95, "002-page": 0.975})
    again = data({(ERA, ""): [load(H2, 700.0, site="seed002")], (TODAY, ""): [load(H2, 650.0, site="seed002")]},
                 {"ec2-2013": {"name": "ec2-2013", "rtt_ms": 90.0}})
    newer = Export(("002",), True, {"002-page": again}, {("002-page", ERA, ""): "r4", ("002-page", TODAY, ""): "r5"},
                   {"measured": "2026-11-27 01:00-01:14 UTC", "command": "pagebench reproduce 002 --quick",
                    "commit": "abc"}, {("002", ERA): "TLS 1.2"}, {"002-page": 0.95})
    merged = exported.merge(older, newer)
    assert merged.seeds == ("000", "002") and merged.data == {"000-transfer": older.data["000-transfer"],
                                                             "002-page": again}
    assert merged.runs == {("000-transfer", ERA, ""): "r1", ("000-transfer", TODAY, "C=2"): "r2",
                           ("002-page", ERA, ""): "r4", ("002-page", TODAY, ""): "r5"}  # r3's loads are gone: so is it
    assert merged.levels == {"000-transfer": 0.95, "002-page": 0.95}
    assert merged.facts == {"measured": "2026-11-26 16:21-16:25 UTC; then for 002: 2026-11-27 01:00-01:14 UTC",
                            "command": "pagebench reproduce 000 --quick; then for 002: pagebench reproduce 002 --quick",
                            "commit": "then for 002: abc"}
    assert merged.variants[("002", ERA)] == "TLS 1.2" and merged.variants[("000", TODAY)] == "TLS 1.3"
    with pytest.raises(ExportError, match="--quick and a full reproduction do not merge"):
        exported.merge(older, Export(("002",), False, {"002-page": again}, {}))
