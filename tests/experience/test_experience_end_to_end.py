"""Carry-over across runs, for real (offline mode: git, pip, ast-grep, pytest, apm):

1. the full task on acme-app proposes a lesson about the getattr dispatch (ACME900);
2. the lesson published in the migration package is read by a run of another task on another repository
   (acme-worker): it is in plan.json as a hypothesis, and the plan's human item for ACME900 cites it;
3. a lesson proposed by one run, once published (a new package content, installed by `apm install`),
   is what the next run on the other repository reads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from fixtures_support import ROOT, materialize
from lessons_support import ACME_WORKER, PACKAGE_CONTEXT

from agentic_codemod.apm.command import find_apm
from agentic_codemod.experience import PROPOSED, Lesson, render_index, validate
from agentic_codemod.experience.records import run_time

pytestmark = pytest.mark.slow

CONTEXT_FILES = ("apm.yml", "apm.lock.yaml", "apm-policy.yml", ".apm", "fixtures/packages")


@pytest.fixture(autouse=True)
def apm_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """APM writes under $HOME: a temp one. The runs are wired as shipped (proposals after
    artifacts.write_all in run.py, lessons in steps.plan); nothing is patched."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture
def worker_repo(tmp_path: Path) -> Path:
    materialize.materialize(ACME_WORKER, tmp_path / "acme-worker")
    return tmp_path / "acme-worker"


def proposed(run_dir: Path) -> list[Lesson]:
    lines = (run_dir / PROPOSED).read_text().splitlines()
    return [Lesson.model_validate_json(line) for line in lines]


def published() -> Lesson:
    [lesson] = [
        Lesson.model_validate_json(x)
        for x in (PACKAGE_CONTEXT / "lessons.jsonl").read_text(encoding="utf-8").split("\n")
        if x.strip()
    ]
    return lesson


def test_the_full_task_on_acme_app_proposes_a_lesson_about_the_dispatch(acme_repo: Path, run_codemod) -> None:
    result = run_codemod(acme_repo, "acme-sdk-2.yml")

    assert result.code == 3 and result.manifest["status"] == "requires_human"
    assert validate(result.artifact(PROPOSED)) == []
    [lesson] = proposed(result.run_dir)
    run_id = result.manifest["run_id"]
    assert lesson.cue.construct_ == "ACME900" and lesson.cue.target == ">=2.1.0"
    assert lesson.source_run == lesson.evidence.run_id == run_id
    assert "src/acme_app/reports.py:19" in lesson.lesson and "no attribute 'fetch'" in lesson.lesson
    assert lesson.confidence == "medium"
    assert not (acme_repo / PROPOSED).exists(), "the repository is never written"


def test_the_published_lesson_is_read_and_used_on_another_repository(worker_repo: Path, run_codemod) -> None:
    lesson = published()
    result = run_codemod(worker_repo, "acme-worker-sdk-2.yml")

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "ACME900 src/acme_worker/worker.py:25" in m["reason"]
    assert run_time(lesson.source_run) < run_time(m["run_id"]), "the lesson comes from an earlier run"

    plan = result.json("plan.json")
    assert plan["lessons"] == [lesson.as_hypothesis()]  # read
    [item] = plan["requires_human"]
    assert item["rule_id"] == "ACME900" and item["file"] == "src/acme_worker/worker.py"
    assert lesson.lesson in item["reason"] and lesson.id in item["reason"]  # used: the human item cites it
    assert lesson.lesson in result.artifact("merge_request.md").read_text()
    reads = [t for t in result.trace() if t["tool"] == "read_lessons"]
    assert (
        len(reads) == 1
        and lesson.id in reads[0]["result"]
        and "ACME900" in reads[0]["arguments"]["constructs"]
    )

    # Never the gates: paths, criteria and the verdict are what they would be without it.
    task = m["task"]
    assert plan["allowed_paths"] == task["allowed_paths"]
    assert plan["acceptance_criteria"] == task["acceptance_criteria"]
    assert lesson.lesson not in json.dumps(m["gates"]) + result.artifact("review.json").read_text()
    assert result.json("review.json")["verdict"] == "reject"

    # The worker run corroborates the construct from a second repository with its own proposal.
    [again] = proposed(result.run_dir)
    assert again.cue.construct_ == "ACME900" and "src/acme_worker/worker.py:25" in again.lesson


def test_a_lesson_proposed_by_one_run_is_used_by_the_next_once_published(
    acme_repo: Path, worker_repo: Path, run_codemod, tmp_path: Path
) -> None:
    first = run_codemod(acme_repo, "acme-sdk-2.yml")
    [lesson] = proposed(first.run_dir)

    # Publishing is a change to the package, installed with apm, never done by a run.
    project = tmp_path / "context"
    for rel in CONTEXT_FILES:
        source, target = ROOT / rel, project / rel
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    folder = project / "fixtures" / "packages" / "acme-sdk-2-migration" / ".apm" / "context"
    (folder / "lessons.jsonl").write_text(lesson.model_dump_json() + "\n")
    (folder / "experience.context.md").write_text(
        "---\ndescription: lessons\n---\n\n" + render_index([lesson])
    )
    assert validate(folder / "lessons.jsonl") == []
    assert validate(folder / "lessons.jsonl", runs_root=first.run_dir.parent) == []
    apm = find_apm(True)
    assert apm is not None
    subprocess.run(
        [apm, "install", "--no-policy"], cwd=project, env=dict(os.environ), check=True, capture_output=True
    )

    second = run_codemod(worker_repo, "acme-worker-sdk-2.yml", context=project)

    assert second.code == 3
    plan = second.json("plan.json")
    assert plan["lessons"] == [lesson.as_hypothesis()]
    assert first.manifest["run_id"] in plan["lessons"][0]
    assert lesson.lesson in plan["requires_human"][0]["reason"]
