"""The CI gate: the composite action (action.yml) and the example workflow that uses it
(.github/workflows/pageload.yml). actionlint finds nothing in the workflow (checking its
`with:` against the action's inputs) and does find a planted mistake; shellcheck finds
nothing in the action's scripts; and both keep their promises: when the gate runs, what it
measures (a pull request's merge commit and, interleaved in the same run, its base checked
out beside it), where the report goes, and that the job fails only after the report was
posted. actionlint and shellcheck come from `harness/bootstrap test`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pagebench.runner.prepare import Baseline, prepare
from pagebench.yamlfiles import spec_document

REPO = Path(__file__).resolve().parents[3]
WORKFLOW = REPO / ".github" / "workflows" / "pageload.yml"
ACTION = REPO / "action.yml"
SPEC = REPO / "examples" / "shop" / "pagebench.yaml"
#: Beside the Python that runs the tests: the test command's `.venv/bin` (wherever the
#: checkout is, a worktree of it included), where it installs actionlint and pagebench.
VENV_BIN = Path(sys.prefix) / "bin"
INSTALL_HINT = "run `sudo harness/bootstrap test` (it installs actionlint into .venv/bin, and shellcheck)"


def pinned_actionlint_version() -> str:
    found = re.search(r'^ACTIONLINT_VERSION="([^"]+)"', (REPO / "harness" / "bootstrap").read_text(), re.M)
    assert found, "harness/bootstrap pins ACTIONLINT_VERSION"
    return found.group(1)


def actionlint(path: Path) -> subprocess.CompletedProcess[str]:
    """actionlint on one file, shellcheck on its `run:` scripts; fails (never skips)
    when a tool is missing: a lint that silently does not run proves nothing."""
    binary = VENV_BIN / "actionlint"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"actionlint is not installed at {binary}: {INSTALL_HINT}")
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail(f"shellcheck is not on PATH (actionlint checks run: scripts with it): {INSTALL_HINT}")
    return subprocess.run(
        [str(binary), "-no-color", f"-shellcheck={shellcheck}", "-pyflakes=", str(path)],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def steps(job: str) -> list[dict]:
    return workflow()["jobs"][job]["steps"]


def action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def action_steps() -> list[dict]:
    return action()["runs"]["steps"]


def action_step(step_id: str) -> int:
    hits = [i for i, step in enumerate(action_steps()) if step.get("id") == step_id]
    assert len(hits) == 1, step_id
    return hits[0]


def checkouts(job: str) -> list[int]:
    return [i for i, step in enumerate(steps(job)) if step.get("uses", "").startswith("actions/checkout@")]


def index_of(job: str, needle: str) -> int:
    """The one step of `job` whose run script, name, `uses` or github-script contains `needle`."""
    def text(step: dict) -> str:
        return "\n".join([step.get("run", ""), step.get("name", ""), step.get("uses", ""),
                          str(step.get("with", {}).get("script", ""))])
    hits = [i for i, step in enumerate(steps(job)) if needle in text(step)]
    assert len(hits) == 1, f"{job}: expected one step with {needle!r}, found {len(hits)}"
    return hits[0]


def test_actionlint_is_the_pinned_version():
    binary = VENV_BIN / "actionlint"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"actionlint is not installed at {binary}: {INSTALL_HINT}")
    version = subprocess.run([str(binary), "-version"], capture_output=True, text=True, timeout=30).stdout
    assert version.splitlines()[0] == pinned_actionlint_version(), f"{version!r}: {INSTALL_HINT}"


def test_actionlint_finds_nothing():
    result = actionlint(WORKFLOW)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ("timeout-minutes: 30", "timeout-minute: 30", 'unexpected key "timeout-minute"'),
        ('apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null',
         'apt-get install -y -qq --no-install-recommends git ca-certificates > $NULL', "SC2086"),
        ("steps.gate.outputs.report", "steps.gates.outputs.report", 'property "gates" is not defined'),
        ("baseline-spec: pagebench-base/", "baseline_spec: pagebench-base/", 'input "baseline_spec" is not defined'),
        ("steps.base.outputs.sha", "steps.bases.outputs.sha", 'property "bases" is not defined'),
    ],
)
def test_actionlint_catches_a_planted_mistake(tmp_path, old, new, needle):
    text = WORKFLOW.read_text()
    assert old in text
    # a repository of its own (actionlint finds one by its .git), so `uses: ./` is the action
    (tmp_path / ".git").mkdir()
    shutil.copy(ACTION, tmp_path / "action.yml")
    broken = tmp_path / ".github" / "workflows" / "pageload.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new, 1))
    result = actionlint(broken)
    assert result.returncode == 1 and needle in result.stdout, result.stdout + result.stderr


def test_triggers_push_to_main_and_pull_requests():
    document = workflow()
    triggers = document.get("on", document.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"]
    assert "pull_request" in triggers
    assert "pull_request_target" not in triggers  # would run PR code with a write token


def test_least_privilege_timeouts_and_concurrency():
    document = workflow()
    assert document["permissions"] == {}
    assert "group" in document["concurrency"]
    for name, job in document["jobs"].items():
        assert 0 < job["timeout-minutes"] <= 60, name
        assert job["permissions"]["contents"] == "read", name
        assert "write" not in job["permissions"].values() or name == "gate", name
        # the lab's namespaces, qdiscs and SCHED_FIFO need a privileged Debian 12 container
        assert job["container"] == {"image": "debian:bookworm", "options": "--privileged"}, name
    assert document["jobs"]["gate"]["permissions"]["pull-requests"] == "write"
    # the baseline is checked out, not downloaded from another run
    assert not any("actions" in job["permissions"] for job in document["jobs"].values())


def test_both_jobs_gate_the_example_app_with_the_action():
    document = workflow()
    assert document["env"]["SPEC"] == "examples/shop/pagebench.yaml"
    assert (REPO / document["env"]["APP_REQUIREMENTS"]).is_file()
    budgets = steps("budgets")[index_of("budgets", "./")]["with"]
    gate = steps("gate")[index_of("gate", "./")]["with"]
    assert budgets["spec"] == gate["spec"] == "${{ env.SPEC }}"
    assert budgets["app-requirements"] == gate["app-requirements"] == "${{ env.APP_REQUIREMENTS }}"
    assert "baseline-spec" not in budgets  # main: its budgets only
    assert gate["metric"] == "${{ env.GATE_METRIC }}"


def test_the_gate_checks_the_base_out_beside_the_merge_commit():
    gate = steps("gate")
    merge, base = checkouts("gate")
    find, action_at = index_of("gate", "HEAD^1"), index_of("gate", "./")
    assert index_of("gate", "apt-get install") < merge < find < base < action_at
    # the event's own ref (the merge commit), deep enough that its first parent is there
    assert "ref" not in gate[merge]["with"] and gate[merge]["with"]["fetch-depth"] >= 2
    assert gate[base]["with"]["ref"] == f"${{{{ steps.{gate[find]['id']}.outputs.sha }}}}"
    path = gate[base]["with"]["path"]
    assert path and not path.startswith(("/", ".")) and path != "pagebench-gate"  # the action's own folder
    assert gate[action_at]["with"]["baseline-spec"] == f"{path}/${{{{ env.SPEC }}}}"
    for step in (merge, base):
        assert gate[step]["with"]["persist-credentials"] is False
    # the event's base.sha can lag the merge commit's base: main's commits since would count as the change
    assert not re.search(r"\$\{\{[^}]*base\.sha", WORKFLOW.read_text())


def test_the_base_commit_is_the_merge_commits_first_parent(tmp_path):
    """The step's script on a merge commit fetched two deep, as actions/checkout fetches it."""
    def git(*args: str, cwd: Path) -> str:
        identity = ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
        return subprocess.run(["git", *identity, *args], cwd=cwd, check=True, capture_output=True, text=True,
                              timeout=30).stdout.strip()
    origin = tmp_path / "origin"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    git("commit", "-q", "--allow-empty", "-m", "fork point", cwd=origin)
    git("checkout", "-q", "-b", "change", cwd=origin)
    git("commit", "-q", "--allow-empty", "-m", "the change", cwd=origin)
    git("checkout", "-q", "main", cwd=origin)
    git("commit", "-q", "--allow-empty", "-m", "main since the fork", cwd=origin)
    base = git("rev-parse", "HEAD", cwd=origin)
    git("merge", "-q", "--no-ff", "--no-edit", "change", cwd=origin)
    git("clone", "-q", "--depth", "2", f"file://{origin}", "work", cwd=tmp_path)
    work, output = tmp_path / "work", tmp_path / "output"
    script = steps("gate")[index_of("gate", "HEAD^1")]["run"]
    result = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=work, capture_output=True, text=True,
                            timeout=30, env={**os.environ, "GITHUB_WORKSPACE": str(work), "GITHUB_OUTPUT": str(output)})
    assert result.returncode == 0, result.stderr
    assert output.read_text() == f"sha={base}\n"


def test_the_pr_comment_follows_the_gate_even_when_it_failed():
    gate = steps("gate")
    action_at, comment = index_of("gate", "./"), index_of("gate", "createComment")
    assert action_at < comment
    assert "!cancelled()" in gate[comment]["if"] and "steps.gate.outputs.report" in gate[comment]["env"]["REPORT"]


def test_the_action_declares_what_it_reads_and_gives():
    document = action()
    assert document["runs"]["using"] == "composite"
    text = ACTION.read_text()
    used = set(re.findall(r"inputs\.([a-z][a-z-]*)", text))
    assert used == set(document["inputs"]), used ^ set(document["inputs"])
    assert {"spec", "budgets", "baseline-spec", "loads"} <= set(document["inputs"])
    # the baseline is measured in the same run, not downloaded from another one
    assert not {"baseline-artifact", "require-baseline", "allow-different", "github-token"} & set(document["inputs"])
    assert document["inputs"]["spec"]["required"] is True
    ids = {step.get("id") for step in action_steps()}
    for name, output in document["outputs"].items():
        found = re.fullmatch(r"\$\{\{ steps\.([a-z-]+)\.outputs\.[a-z-]+ \}\}", output["value"])
        assert found and found.group(1) in ids, name
    for step in action_steps():
        assert "${{" not in step.get("run", ""), f"{step['name']}: expressions go through env:, not into scripts"


def test_the_action_scripts_pass_shellcheck(tmp_path):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.fail(f"shellcheck is not on PATH: {INSTALL_HINT}")
    scripts = [step for step in action_steps() if "run" in step]
    assert scripts
    for step in scripts:
        assert step["shell"] == "bash", step["name"]
        script = tmp_path / "step.sh"
        script.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])  # GitHub's bash
        result = subprocess.run([shellcheck, "-s", "bash", str(script)], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"{step['name']}:\n{result.stdout}"


def test_the_action_reports_then_its_last_step_fails():
    gate = action_steps()
    measure, compare, report, final = (action_step(i) for i in ("measure", "compare", "report", "gate"))
    upload = next(i for i, step in enumerate(gate) if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert measure < compare < report < upload < final == len(gate) - 1
    for script in (gate[measure]["run"], gate[compare]["run"]):
        assert "set +e" in script and "status=$status" in script  # the exit status is kept, not acted on
    assert "--junit" in gate[measure]["run"] and "--markdown" in gate[measure]["run"]
    assert "--junit" in gate[compare]["run"] and "--markdown" in gate[compare]["run"]
    assert "GITHUB_STEP_SUMMARY" in gate[report]["run"]
    assert gate[upload]["with"]["path"] == "pagebench-gate/"  # the store, its artifacts, the reports
    for step in (report, upload, final):
        assert "!cancelled()" in gate[step]["if"], gate[step]["name"]  # also after a failure
    for status in ("1) ", "*) "):
        assert status in gate[final]["run"]
    assert "exit 1" in gate[final]["run"] and "exit 2" in gate[final]["run"]


def test_the_action_measures_the_baseline_in_the_same_run_and_compares_it():
    gate = action_steps()
    assert not [step for step in gate if re.match(r"actions/(download-artifact|github-script)@", step.get("uses", ""))]
    measure, compare, report = (gate[action_step(i)] for i in ("measure", "compare", "report"))
    assert measure["env"]["BASELINE_SPEC"] == report["env"]["BASELINE_SPEC"] == "${{ inputs.baseline-spec }}"
    assert 'args+=(--baseline "$BASELINE_SPEC")' in measure["run"]
    # only when a baseline was measured, and the run finished (its last line names it)
    assert "inputs.baseline-spec != ''" in compare["if"] and "steps.measure.outputs.run-id != ''" in compare["if"]
    assert compare["env"]["RUN_ID"] == "${{ steps.measure.outputs.run-id }}"
    # one run id: the run holds both sides, measured alike (no second store, nothing to allow)
    assert re.search(r'"\$PAGEBENCH" compare "\$RUN_ID" --db sqlite:///pagebench-gate/store\.sqlite', compare["run"])
    assert "--base-db" not in compare["run"] and "--allow-different" not in compare["run"]


@pytest.mark.parametrize(
    ("baseline", "run_status", "compare_status", "status"),
    [
        ("", "0", "", "0"),
        ("", "1", "", "1"),
        ("", "2", "", "2"),
        ("", "", "", "2"),  # the Measure step itself failed
        ("base/pagebench.yaml", "0", "0", "0"),
        ("base/pagebench.yaml", "0", "1", "1"),
        ("base/pagebench.yaml", "1", "0", "1"),
        ("base/pagebench.yaml", "1", "2", "2"),
        ("base/pagebench.yaml", "2", "1", "2"),
        ("base/pagebench.yaml", "2", "", "2"),  # no run to compare
        ("base/pagebench.yaml", "0", "", "2"),  # a baseline asked for and not compared
    ],
)
def test_the_report_gives_one_verdict(tmp_path, baseline, run_status, compare_status, status):
    """The report step's script: an error over a breach or a regression over fine."""
    (tmp_path / "pagebench-gate").mkdir()
    (tmp_path / "pagebench-gate" / "run.err").write_text(
        "note: baseline: site docs: no site of that name in base/pagebench.yaml: measured without a baseline "
        "(not compared)\n")
    output, summary = tmp_path / "output", tmp_path / "summary"
    env = {**os.environ, "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
           "SPEC": "pagebench.yaml", "BASELINE_SPEC": baseline, "RUN_STATUS": run_status,
           "COMPARE_STATUS": compare_status, "METRIC": "lcp_ms", "THRESHOLD": "5%"}
    script = action_steps()[action_step("report")]["run"]
    result = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True,
                            text=True, timeout=30, env=env)
    assert result.returncode == 0, result.stderr
    assert f"status={status}\n" in output.read_text()
    report = (tmp_path / "pagebench-gate" / "report.md").read_text()
    assert report == summary.read_text()
    if baseline:  # a site the baseline lacks is said in the report, not only in the log
        assert "- baseline: site docs: no site of that name" in report
    if baseline and run_status == "0" and not compare_status:
        assert "not compared with its baseline" in report


def test_every_pagebench_subcommand_it_runs_exists():
    text = ACTION.read_text()
    used = set(re.findall(r'"\$PAGEBENCH"\s+([a-z][a-z-]*)', text))
    assert used == {"run", "compare"}
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run([str(VENV_BIN / "pagebench"), "--help"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    listed = set(re.findall(r"^[│|]\s([a-z][a-z-]*)\s", result.stdout, re.M))
    assert "run" in listed, result.stdout
    assert used <= listed, f"the action runs {sorted(used - listed)}, which pagebench --help does not list"
    result = subprocess.run([str(VENV_BIN / "pagebench"), "run", "--help"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0 and "--baseline" in result.stdout, result.stdout + result.stderr


def test_the_example_spec_is_valid_and_small():
    prepared = prepare(spec_document(SPEC), str(SPEC))
    assert prepared.spec.name == "shop"
    assert len(prepared.loads) <= 30  # main's measurement: about a minute on two cores
    # a pull request's: its base's checkout of the spec (here the same file) as the baseline
    paired = prepare(spec_document(SPEC), str(SPEC), SPEC.parent, Baseline(spec_document(SPEC), SPEC.parent, str(SPEC)))
    assert paired.pairs == {"shop.baseline": "shop"} and not paired.notes
    assert len(paired.loads) == 2 * len(prepared.loads)
