"""`pagebench run` and `reproduce`: a bad spec, seed, store or export is one line and starts
nothing; `reproduce --from` answers from an export with no store and no lab."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import nothing_left, pagebench, write_spec


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"modes": ["h4"]}, "modes: unknown mode 'h4'"),
        ({"sites": ["nosuchsite"]}, "sites[0]:"),
        ({"colour": 1}, "colour: unknown field"),
        ({"repetitions": 0}, "repetitions: 0: loads per condition run from 1 to 100000"),
        ({"modes": ["pipelining"]}, "pipelining needs the edge-proxy topology"),
        ({"modes": ["h2"], "tls": ["none"]}, "h2 with tls none in topology direct: Chromium speaks HTTP/2 only"),
        ({"modes": ["h3"], "tls": ["none"]}, 'h3: QUIC always uses TLS 1.3; add "1.3" to tls'),
        ({"budgets": [{"max": 1}, {"metric": "lcp", "max": 1}]}, "budgets.1.metric: unknown metric 'lcp'; allowed: "),
    ],
)
def test_bad_specs_start_nothing(tmp_path, fields, needle):
    spec = write_spec(tmp_path, **{"sites": ["seed000-small-n1"], "modes": ["h2"], **fields})
    result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/b.sqlite")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and str(spec) in lines[0]
    assert nothing_left()


@pytest.mark.parametrize(("seeds", "needle"), [
    (["005"], "error: unknown seed '005'; known: 000, 001, 002, 004"),
    (["000", "003"], "error: unknown seed '003' (003 is the same paper as 000: use 000); known: 000, 001, 002, 004"),
])
def test_reproduce_refuses_an_unknown_seed_before_anything_starts(tmp_path, seeds, needle):
    result = pagebench("reproduce", *seeds, "--quick", "--db", f"sqlite:///{tmp_path}/r.sqlite")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [needle]
    assert not (tmp_path / "r.sqlite").exists() and nothing_left()


def test_unreadable_spec(tmp_path):
    missing = tmp_path / "missing.yaml"
    result = pagebench("run", str(missing))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: {missing}: cannot read: No such file or directory"]


def test_bad_encoding_input_is_one_line(tmp_path):
    versioned = {"generate": {"images": 2, "origins": 2, "css": 2, "js": 2, "html_bytes": 30000,
                              "versions": [0.01], "changed": 0.5}}  # two versions
    cases = [
        (dict(encoding=["identity", "lzma"]), "encoding: unknown encoding 'lzma'"),
        (dict(sites=[versioned], version=[3]), "version: 3: site"),
        (dict(sites=[{"generate": {"images": 1}}], encoding=["dcz"]), "encoding: dcz needs a site with versions"),
    ]
    for fields, expected in cases:
        spec = write_spec(tmp_path, **{"name": "bad", "sites": ["seed000-small-n1"], "modes": ["h2"], **fields})
        result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/bad.sqlite")
        assert result.returncode != 0
        lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
        assert len(lines) == 1 and expected in lines[0], result.stderr


def test_an_unreachable_database_is_one_line_and_starts_nothing(tmp_path):
    spec = write_spec(tmp_path, name="nodb", sites=["seed000-small-n1"], modes=["h2"])
    url = f"postgresql://bench:secret@/results?host={tmp_path}"  # no server listens there
    result = pagebench("run", str(spec), "--db", url)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: --db: cannot connect to postgresql://bench:***@/results") and "secret" not in line
    assert "No such file or directory" in line
    assert nothing_left()


@pytest.mark.parametrize(("options", "line"), [
    (["--budget", "speed<=1"], "error: --budget 'speed<=1': metric: unknown metric 'speed'; allowed: load_ms, "),
    (["--budget", "load_ms<=1", "--budget", "load_ms<1"], "error: --budget 'load_ms<1': want METRIC<=MAX"),
    (["--budget", "nowhere.yaml"], "error: nowhere.yaml: cannot read: No such file or directory"),
    (["--junit", "no/such/dir/j.xml"], "error: --junit no/such/dir/j.xml: no directory no/such/dir"),
    (["--markdown", "no/such/dir/m.md"], "error: --markdown no/such/dir/m.md: no directory no/such/dir"),
])
def test_bad_budget_options_start_nothing(tmp_path, options, line):
    spec = write_spec(tmp_path, sites=["seed000-small-n1"], modes=["h2"])
    result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/b.sqlite", *options)
    assert result.returncode == 2
    [got] = result.stderr.strip().splitlines()
    assert got.startswith(line), got
    assert not (tmp_path / "b.sqlite").exists() and nothing_left()


def test_a_budget_file_of_the_spec_s_kind(tmp_path):
    """`--budget FILE` is the file `compare --budget` takes; its errors name the file and field."""
    budgets = tmp_path / "b.yaml"
    budgets.write_text("budgets:\n  - {metric: load_ms, max: 1500}\n  - {metric: lcp_ms, max: 1200, mod: h2}\n")
    spec = write_spec(tmp_path, sites=["seed000-small-n1"], modes=["h2"])
    result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/b.sqlite", "--budget", str(budgets))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {budgets}: budgets.1.mod: unknown field; allowed: metric, max, site, mode, topology, profile, "
        "cache, tls, encoding, version, device"]


FIXTURE = Path(__file__).parents[1] / "analysis" / "reproduce" / "fixtures"


def test_reproduce_from_an_export_writes_the_page_its_template_gives_with_no_store(tmp_path):
    shutil.copy(FIXTURE / "quick-004.md.in", tmp_path / "page.md.in")
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "fig-old.svg").write_text("<svg/>")  # a figure the export no longer draws
    result = pagebench("reproduce", "--from", str(FIXTURE / "quick-004-export.json.xz"),
                       "--markdown", str(tmp_path / "page.md"))
    assert result.returncode == 0, result.stderr
    assert "seeds 004 (quick): paper against measured" in result.stdout
    assert "removed 1 it no longer draws: fig-old.svg" in result.stdout
    expected = (FIXTURE / "quick-004.md").read_text().replace("](quick-004/", "](page/")
    assert (tmp_path / "page.md").read_text() == expected
    drawn = sorted(p.name for p in (FIXTURE / "quick-004").iterdir())
    assert sorted(p.name for p in (tmp_path / "page").iterdir()) == drawn and "fig-5b.svg" in drawn
    assert all((tmp_path / "page" / name).read_text() == (FIXTURE / "quick-004" / name).read_text() for name in drawn)
    assert not list(tmp_path.glob("*.sqlite")) and nothing_left()


def test_reproduce_merges_exports_into_one_that_answers_alike(tmp_path):
    fixture = FIXTURE / "quick-004-export.json.xz"
    merged = tmp_path / "merged.json.xz"
    result = pagebench("reproduce", "--from", str(fixture), "--from", str(fixture), "--export", str(merged))
    assert result.returncode == 0, result.stderr
    assert merged.read_bytes() == fixture.read_bytes()  # the same seed again, measured alike: the same export
    assert "seeds 004 (quick): paper against measured" in result.stdout and nothing_left()


@pytest.mark.parametrize(("args", "needle"), [
    (["--from", "{tmp}/none.json.xz"], "error: --from: {tmp}/none.json.xz: No such file or directory"),
    (["--from", "{tmp}/bad.json.xz", "--from", "{tmp}/bad.json.xz", "--markdown", "{tmp}/page.md"],
     "error: --markdown: from several --from exports, needs --export FILE"),
    (["--from", "{tmp}/bad.json.xz"], "error: --from: {tmp}/bad.json.xz: not an xz-compressed export"),
    (["004", "--from", "{tmp}/bad.json.xz"], "error: --from: not with seeds (the export says which seeds"),
    (["--from", "{tmp}/bad.json.xz", "--reuse"], "error: --from: not with --reuse"),
    (["004", "--markdown", "{tmp}/page.md"], "error: --markdown: needs --from EXPORT or --export FILE"),
    (["--from", "{tmp}/bad.json.xz", "--markdown", "{tmp}/page.md"], "error: --markdown {tmp}/page.md: no template "
                                                                      "{tmp}/page.md.in"),
])
def test_reproduce_refuses_a_bad_export_or_option_in_one_line(tmp_path, args, needle):
    (tmp_path / "bad.json.xz").write_bytes(b"not an export")
    result = pagebench("reproduce", *(a.format(tmp=tmp_path) for a in args))
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(needle.format(tmp=tmp_path)), line


def test_reproduce_resume_says_what_there_is_to_resume(tmp_path):
    from pagebench.results.store import Store
    from tests.helpers import META, PROFILES, SPEC, make_plan

    db = f"sqlite:///{tmp_path}/r.sqlite"
    result = pagebench("reproduce", "--resume", "latest", "--db", db)
    assert (result.returncode, result.stderr.strip().splitlines()) == (2, [f"error: {db}: no results store there"])
    assert pagebench("reproduce", "000", "--resume", "latest", "--db", db).stderr.strip().splitlines() == [
        "error: --resume: a reproduction resumes with its own seeds and --quick (leave them out), and runs (not "
        "with --reuse)"]
    with Store(db) as store:
        store.create_experiment("plain", SPEC, META, make_plan(), PROFILES)
    lines = pagebench("reproduce", "--resume", "latest", "--db", db).stderr.strip().splitlines()
    assert lines == ["error: reproduce --resume: the store holds no reproduction to resume (runs made before "
                     "reproductions had ids cannot be); run pagebench reproduce"]
    with Store(db) as store:
        store.create_experiment("r", SPEC, META | {"reproduce": {"scenario": "004-window", "variant": "era",
                                                                 "label": "", "reproduction": "reproduction-x",
                                                                 "seeds": ["004"], "quick": True}},
                                make_plan(), PROFILES)
    lines = pagebench("reproduce", "--resume", "reproduction-y", "--db", db).stderr.strip().splitlines()
    assert lines == ["error: reproduce --resume: no reproduction 'reproduction-y' in the store; latest: "
                     "reproduction-x"]
    assert nothing_left()


@pytest.mark.parametrize(("options", "needle"), [
    (["--shard", "3/2"], "error: --shard 3/2: K/N needs 1 <= K <= N"),
    (["--shard", "two"], "error: --shard 'two': expected K/N, e.g. 1/4 (shard K of N, K from 1)"),
    (["--shard", "1/4"], "error: --shard .../4: the run has 3 block(s) (one load of every condition each); a shard "
                         "is whole blocks: at most 3 shards"),
    (["--run", "x"], "error: --run: names the run the shards of an experiment share: with --shard or --ray, and a "
                     "spec"),
])
def test_a_bad_shard_starts_nothing(tmp_path, options, needle):
    spec = write_spec(tmp_path, sites=["seed000-small-n1"], modes=["h2"], repetitions=3)
    result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/s.sqlite", *options)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [needle]
    assert not (tmp_path / "s.sqlite").exists() and nothing_left()
