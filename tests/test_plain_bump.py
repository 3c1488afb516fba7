"""A plain bump (a task without `migration:`) through the CLI on acme-app: bump + verify, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_support import PLAIN_TASK, stable_repo_files

from agentic_codemod.task import load_task

pytestmark = pytest.mark.slow


def _task(tmp_path: Path) -> Path:
    path = tmp_path / "plain.yml"
    path.write_text(PLAIN_TASK)
    return path


def _stable_repo(make_repo) -> Path:
    return make_repo("stable", stable_repo_files())


def test_task_without_migration_loads_and_old_tasks_still_do(tmp_path: Path):
    assert load_task(_task(tmp_path)).migration is None
    old = load_task(Path(__file__).parents[1] / "fixtures/tasks/acme-sdk-2-rules.yml")
    assert old.migration is not None and old.migration.package == "acme-sdk-2-migration"


def test_safe_plain_bump_is_green_and_the_mr_says_no_code_change(make_repo, run_codemod, tmp_path: Path):
    result = run_codemod(_stable_repo(make_repo), _task(tmp_path))

    m = result.manifest
    assert result.code == 0, m["reason"]
    assert m["status"] == "succeeded" and m["classification"] == "green"
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert all(v["passed"] and v["tests"]["passed"] == 1 for v in m["verifications"])
    assert m["candidate"]["files"] == ["requirements.txt"]
    assert not m["rule_edits"]
    implement = [s for s in m["steps"] if s["step"] == "implement"]
    assert implement and all("plain bump" in s["result"] for s in implement)
    mr = result.artifact("merge_request.md").read_text()
    assert "No code change was needed" in mr
    assert "`requirements.txt`: `acme-sdk==1.4.0` now admits 2.1.0" in mr
    assert "Before the bump (baseline): exit" in mr and "After the bump:" in mr
    assert "acme-sdk==2.1.0" in result.artifact("changes.patch").read_text()


def test_breaking_plain_bump_requires_a_human_naming_tests_and_no_migration(
    acme_repo: Path, run_codemod, tmp_path: Path
):
    result = run_codemod(acme_repo, _task(tmp_path))

    m = result.manifest
    assert result.code == 3, m["reason"]
    assert m["status"] == "requires_human"
    assert m["reason"].startswith("tests fail after the bump and no migration notes exist for acme-sdk: ")
    assert "tests/test_clients.py" in m["reason"] or "test_clients" in m["reason"]
    assert not m["rule_edits"]  # no rule ran and no model was asked: nothing migrated from memory
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert m["verifications"][0]["passed"] and not m["verifications"][1]["passed"]
