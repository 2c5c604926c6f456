"""The CI regression-gate example (.github/workflows/pageload.yml): actionlint finds
nothing in it (and does find a planted mistake), and the workflow keeps its promises:
when it runs, what it runs, where the report goes, and that the job fails only after
the report was posted. actionlint and shellcheck come from `harness/bootstrap test`."""

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
EXPERIMENT = REPO / "experiments" / "ci.yaml"
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
        ('"status=$status" >> "$GITHUB_OUTPUT"', '"status=$status" >> $GITHUB_OUTPUT', "SC2086"),
        ("steps.compare.outputs.status", "steps.comparison.outputs.status", 'property "comparison" is not defined'),
        ("run-id: ${{", "run_id: ${{", 'input "run_id" is not defined'),
    ],
)
def test_actionlint_catches_a_planted_mistake(tmp_path, old, new, needle):
    text = WORKFLOW.read_text()
    assert old in text
    broken = tmp_path / "pageload.yml"
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
    assert workflow()["jobs"]["gate"]["permissions"]["pull-requests"] == "write"


def test_main_uploads_the_baseline_that_pull_requests_download():
    document = workflow()
    artifact = document["env"]["BASELINE_ARTIFACT"]
    upload = steps("baseline")[index_of("baseline", "actions/upload-artifact@")]
    assert upload["with"]["name"] == "${{ env.BASELINE_ARTIFACT }}" and upload["with"]["path"] == "results/ci.sqlite"
    download = steps("gate")[index_of("gate", "actions/download-artifact@")]
    assert download["with"]["name"] == "${{ env.BASELINE_ARTIFACT }}" and download["with"]["path"] == "baseline"
    assert {"github-token", "run-id"} <= set(download["with"])
    assert artifact == "pageload-baseline"
    for job in ("baseline", "gate"):
        run = steps(job)[index_of(job, ".venv/bin/pagebench run")]["run"]
        assert "sqlite:///results/ci.sqlite" in run and document["env"]["EXPERIMENT"] == "experiments/ci.yaml"


def test_compare_reports_then_the_last_step_fails():
    gate = steps("gate")
    compare = index_of("gate", ".venv/bin/pagebench compare")
    run = gate[compare]["run"]
    for flag in ("--markdown", "--junit compare.xml", "--base-db sqlite:///baseline/ci.sqlite",
                 "--db sqlite:///results/ci.sqlite", '--metric "$GATE_METRIC"'):
        assert flag in run, flag
    assert "set +e" in run and 'status=$status' in run  # the exit status is kept, not acted on
    summary = index_of("gate", "GITHUB_STEP_SUMMARY")
    comment = index_of("gate", "createComment")
    junit = index_of("gate", "actions/upload-artifact@")
    assert "compare.xml" in gate[junit]["with"]["path"]
    final = len(gate) - 1
    assert compare < summary < final and compare < comment < final and junit < final
    for step in (summary, comment, junit, final):
        assert "!cancelled()" in gate[step]["if"], gate[step].get("name")  # also after a failure
    for status in ("1) ", "2) "):
        assert status in gate[final]["run"] and "exit" in gate[final]["run"]


def test_every_pagebench_subcommand_it_runs_exists():
    text = WORKFLOW.read_text()
    used = set(re.findall(r"\.venv/bin/pagebench\s+([a-z][a-z-]*)", text))
    assert {"run", "compare"} <= used
    env = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1"}
    result = subprocess.run([str(VENV_BIN / "pagebench"), "--help"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    listed = set(re.findall(r"^[│|]\s([a-z][a-z-]*)\s", result.stdout, re.M))
    assert "run" in listed, result.stdout
    assert used <= listed, f"the workflow runs {sorted(used - listed)}, which pagebench --help does not list"


def test_ci_experiment_is_valid_and_small():
    prepared = prepare(spec_document(EXPERIMENT), str(EXPERIMENT))
    assert prepared.spec.name == "ci"
    assert len({load.condition for load in prepared.loads}) >= 2  # something to compare within a run
    assert len(prepared.loads) <= 100  # a couple of minutes on two cores
