"""The CI gate: the composite action (action.yml) and the example workflow that uses it
(.github/workflows/pageload.yml). actionlint finds nothing in the workflow (checking its
`with:` against the action's inputs) and does find a planted mistake; shellcheck finds
nothing in the action's scripts; and both keep their promises: when the gate runs, what it
measures, where the report goes, and that the job fails only after the report was posted.
actionlint and shellcheck come from `harness/bootstrap test`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pagebench.runner.prepare import prepare
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
        ("baseline-artifact: ${{", "baseline_artifact: ${{", 'input "baseline_artifact" is not defined'),
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
    assert document["jobs"]["gate"]["permissions"]["actions"] == "read"  # the baseline's artifact


def test_both_jobs_gate_the_example_app_with_the_action():
    document = workflow()
    assert document["env"]["SPEC"] == "examples/shop/pagebench.yaml"
    assert (REPO / document["env"]["APP_REQUIREMENTS"]).is_file()
    baseline = steps("baseline")[index_of("baseline", "./")]["with"]
    gate = steps("gate")[index_of("gate", "./")]["with"]
    assert baseline["spec"] == gate["spec"] == "${{ env.SPEC }}"
    # main's store is what pull requests download as their baseline
    assert baseline["store-artifact"] == gate["baseline-artifact"] == "${{ env.BASELINE_ARTIFACT }}"
    assert "baseline-artifact" not in baseline and gate["store-artifact"] != gate["baseline-artifact"]
    assert gate["metric"] == "${{ env.GATE_METRIC }}"


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
    assert {"spec", "budgets", "baseline-artifact", "loads"} <= set(document["inputs"])
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


def test_the_action_downloads_the_baseline_from_another_run():
    download = action_steps()[action_step("download")]
    assert download["uses"].startswith("actions/download-artifact@")
    assert {"github-token", "run-id", "repository"} <= set(download["with"])
    assert download["with"]["run-id"] == "${{ steps.baseline.outputs.run-id }}"
    compare = action_steps()[action_step("compare")]
    assert compare["env"]["BASELINE"].startswith(download["with"]["path"])


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


def test_the_example_spec_is_valid_and_small():
    prepared = prepare(spec_document(SPEC), str(SPEC))
    assert prepared.spec.name == "shop"
    assert len(prepared.loads) <= 30  # the gate's measurement: about a minute on two cores
