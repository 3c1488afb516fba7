"""The whole flow in --offline mode on the acme-app fixture, for real: git, pip, ast-grep, pytest."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.workflow.artifacts import ARTIFACTS

pytestmark = pytest.mark.slow


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def assert_all_artifacts(run_dir: Path) -> None:
    missing = [name for name in ARTIFACTS if not (run_dir / name).exists()]
    assert not missing, f"missing artifacts: {missing}"


def test_rule_fixable_task_is_approved_and_patch_applies_to_base(
    acme_repo: Path, run_codemod, tmp_path: Path
):
    before = git(acme_repo, "status", "--porcelain") + git(acme_repo, "rev-parse", "HEAD")
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml")

    assert result.code == 0, result.manifest["reason"]
    assert_all_artifacts(result.run_dir)
    assert not any((result.run_dir / "install-cache").iterdir())  # emptied as the run ends (CI uploads it)
    m = result.manifest
    assert m["format"] == "agentic-codemod/run@1" and m["status"] == "succeeded"
    assert m["classification"] == "green"
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    # exit 1 is the canary's own failure (the tool's must-fail test); every test of the repository passed
    assert all(v["exit_code"] == 1 and v["canary"] == "failed" for v in m["verifications"])
    assert all(
        v["passed"] and v["tests"]["passed"] == 17 and not v["tests"]["failed"] for v in m["verifications"]
    )
    assert all(v["isolation"] == "sandbox" and not v["tampered"] for v in m["verifications"])
    for name, fmt in (("plan.json", "plan@1"), ("profile.json", "profile@1"), ("review.json", "review@1")):
        assert result.json(name)["format"] == f"agentic-codemod/{fmt}"

    patch = result.artifact("changes.patch").read_bytes()
    review = result.json("review.json")
    assert review["verdict"] == "approve"
    assert review["candidate_sha256"] == hashlib.sha256(patch).hexdigest() == m["candidate"]["sha256"]
    assert all(g["passed"] and g["candidate_sha256"] == review["candidate_sha256"] for g in m["gates"])

    # The repository given with --repo is untouched.
    assert git(acme_repo, "status", "--porcelain") + git(acme_repo, "rev-parse", "HEAD") == before
    # The patch applies cleanly to the base commit, and the bump kept the file's formatting.
    check = tmp_path / "apply"
    subprocess.run(["git", "clone", "-q", str(acme_repo), str(check)], check=True)
    git(check, "checkout", "-q", m["base_commit"])
    git(check, "apply", "--index", str(result.artifact("changes.patch")))
    original = (acme_repo / "requirements.txt").read_text()
    assert (check / "requirements.txt").read_text() == original.replace("acme-sdk==1.4.0", "acme-sdk==2.0.0")

    # Every write of the run is in the trace, attributed to its actor.
    writes = {(t["actor"], t["arguments"].get("path")) for t in result.trace() if t["tool"] == "write"}
    assert ("bump", "requirements.txt") in writes
    changed = set(m["candidate"]["files"])
    assert changed == {path for _actor, path in writes}
    mr = result.artifact("merge_request.md").read_text()
    assert mr.startswith("# Migrate acme-sdk")
    # the counts a reviewer needs (skips too: a test skipped in both runs proved nothing) and where the
    # command came from
    assert "17 passed, 0 failed, 0 errors, 0 skipped" in mr, mr
    source = "Test command taken from: pyproject.toml \\[tool.pytest.ini_options\\]."  # Markdown-escaped
    assert source in mr, mr


def test_full_task_offline_ends_honestly_as_requires_human(acme_repo: Path, run_codemod):
    result = run_codemod(acme_repo, "acme-sdk-2.yml")

    assert result.code == 3
    assert_all_artifacts(result.run_dir)
    m = result.manifest
    assert m["status"] == "requires_human"
    assert "ACME900 src/acme_app/reports.py" in m["reason"]
    assert m["classification"] == "introduced"
    assert not m["verifications"][-1]["passed"]
    plan = result.json("plan.json")
    assert [h["rule_id"] for h in plan["requires_human"]] == ["ACME900"]
    review = result.json("review.json")
    assert review["verdict"] == "reject" and "not green" in review["summary"]
    text = result.artifact("merge_request.md").read_text()
    assert "[not ready]" in text and "requires_human" in text and "reports.py" in text


def migrated_repo(make_repo, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    """acme-app as its owners would have migrated it by hand: on 2.1.0, no old API left."""
    from fixtures_support import ACME_APP, ast_grep, fixable_rule_files

    work = tmp_path / "hand-migrated"
    shutil.copytree(ACME_APP, work)
    for rule in fixable_rule_files():
        subprocess.run(
            [ast_grep(), "scan", "--rule", str(rule), "-U", "src"], cwd=work, check=True, capture_output=True
        )
    reports = work / "src/acme_app/reports.py"
    reports.write_text(reports.read_text().replace('"load": "fetch"', '"load": "get"'))
    requirements = (work / "requirements.txt").read_text().replace("acme-sdk==1.4.0", "acme-sdk==2.1.0")
    files = {str(p.relative_to(work)): p.read_text() for p in work.rglob("*") if p.is_file()}
    return make_repo("on-target", {**files, "requirements.txt": requirements})


def test_repo_already_on_target_is_nothing_to_do(make_repo, run_codemod, tmp_path: Path):
    result = run_codemod(migrated_repo(make_repo, tmp_path), "acme-sdk-2.yml")
    m = result.manifest
    assert result.code == 0 and m["status"] == "nothing_to_do", m["reason"]
    assert "already excludes >=1,<2 and admits 2.1.0" in m["reason"]
    assert result.json("plan.json")["nothing_to_do"] is True
    assert result.artifact("changes.patch").read_bytes() == b""
    assert_all_artifacts(result.run_dir)


def test_a_pin_already_on_the_target_with_code_on_the_old_api_requires_a_human(make_repo, run_codemod):
    """Not "nothing to do" (the bumped pin alone would leave the old API in the code), and not a green
    run either: no baseline can test the old version the task migrates from."""
    repo = make_repo(
        "pin-only", {"requirements.txt": "acme-sdk==2.0.0  # bumped by hand, code not migrated\n"}
    )
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "acme-sdk>=1,<2" in m["reason"]
    assert m["verifications"] == []


def test_an_open_range_that_still_admits_the_old_version_is_narrowed(make_repo, run_codemod):
    repo = make_repo("open-range", {"requirements.txt": "acme-sdk>=1.4  # any recent release\n"})
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert not result.json("plan.json")["nothing_to_do"]
    patch = result.artifact("changes.patch").read_text()
    assert "+acme-sdk>=2.1.0  # any recent release" in patch  # the open range stays open: no cap added
    assert result.code == 3 and "ACME900" in m["reason"]  # the dispatch still needs a human offline


def test_repo_that_neither_declares_nor_uses_the_sdk_is_nothing_to_do(make_repo, run_codemod):
    repo = make_repo(
        "no-sdk",
        {
            "requirements.txt": "pytest\n",
            "src/acme_app": None,
            "tests": None,
            "src/hello.py": "print('hello')\n",
        },
    )
    result = run_codemod(repo, "acme-sdk-2.yml")
    assert result.code == 0 and "neither declares" in result.manifest["reason"]
    assert result.artifact("changes.patch").read_bytes() == b""


def test_a_repo_that_neither_declares_nor_uses_the_sdk_but_cannot_install_is_no_nothing_to_do(
    make_repo, run_codemod
):
    """Whether its dependencies bring the SDK in is unknown where they cannot be installed (requests 2.0 is
    in no wheelhouse here): a human's, exit 3, never `nothing_to_do` (before the install looked, exit 0)."""
    repo = make_repo("no-sdk", {"requirements.txt": "requests==2.0\n", "src/acme_app": None, "tests": None})
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert m["reason"].startswith("cannot install the repository's dependencies for verification"), m[
        "reason"
    ]
    assert "requests" in result.artifact("trace.jsonl").read_text()


def test_code_using_the_sdk_without_a_declaration_requires_human(make_repo, run_codemod):
    repo = make_repo(
        "undeclared",
        {
            "requirements.txt": "# acme-sdk comes from somewhere else\n",
            "setup.py": "from setuptools import setup\nsetup(install_requires=['requests'])\n",
        },
    )
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human"
    assert "src/acme_app/billing.py line 7 imports acme-sdk, but no dependency file declares" in m["reason"]


def test_setup_py_declaration_outside_allowed_paths_is_bad_input(make_repo, run_codemod):
    """setup.py's install_requires is found (read with ast); the task must allow the file it bumps."""
    repo = make_repo(
        "setup-py-declared",
        {
            "requirements.txt": "# acme-sdk comes from setup.py\n",
            "setup.py": "from setuptools import setup\nsetup(install_requires=['acme-sdk==1.4.0'])\n",
        },
    )
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert result.code == 2 and m["status"] == "bad_input"
    assert "exclude the dependency file(s) to bump: setup.py" in m["reason"]


def test_green_tests_do_not_hide_a_usage_the_rules_cannot_migrate(make_repo, run_codemod):
    """Without the tests that cover the dispatch, the suite is green on 2.1.0 — and still broken."""
    repo = make_repo("uncovered", {"tests/test_reports.py": None})
    result = run_codemod(repo, "acme-sdk-2.yml")
    m = result.manifest
    assert m["verifications"][-1]["passed"]
    assert result.code == 3 and m["status"] == "requires_human"
    assert "ACME900 src/acme_app/reports.py" in m["reason"]
    assert "[not ready]" in result.artifact("merge_request.md").read_text()


def test_allowed_paths_that_exclude_the_manifest_are_bad_input(acme_repo: Path, run_codemod, tmp_path: Path):
    task = tmp_path / "task.yml"
    text = (Path(__file__).parent.parent / "fixtures/tasks/acme-sdk-2-rules.yml").read_text()
    task.write_text(
        text.replace('allowed_paths: ["src/**", "requirements*.txt"]', 'allowed_paths: ["src/**"]')
    )
    result = run_codemod(acme_repo, task)
    m = result.manifest
    assert result.code == 2 and m["status"] == "bad_input"
    assert "exclude the dependency file(s) to bump: requirements.txt" in m["reason"]
    assert not m["verifications"], "refused before any install or test run"


def test_repo_without_working_tests_requires_human(make_repo, run_codemod):
    repo = make_repo("no-tests", {"tests": None, "pyproject.toml": "[tool.black]\nline-length = 100\n"})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human"
    assert "no test command" in m["reason"] or "does not work" in m["reason"]
    assert_all_artifacts(result.run_dir)


def test_broken_test_command_requires_human(make_repo, run_codemod):
    repo = make_repo("broken-tests", {"tests/conftest.py": "raise RuntimeError('broken conftest')\n"})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    assert result.code == 3
    assert "the test command does not work" in result.manifest["reason"]


def test_pre_existing_failure_is_classified_and_not_a_success(make_repo, run_codemod):
    broken = "def test_already_broken():\n    assert 1 == 2\n"
    repo = make_repo("pre-existing", {"tests/test_zz_broken.py": broken})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert m["verifications"][0]["tests"]["failing"] == ["tests.test_zz_broken::test_already_broken"]
    assert m["classification"] == "pre-existing"
    assert result.code == 3 and m["status"] == "requires_human"


def test_unreachable_index_pauses_with_exit_75(acme_repo: Path, run_codemod, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PIP_RETRIES", "1")
    monkeypatch.setenv("PIP_TIMEOUT", "2")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    result = run_codemod(
        acme_repo, "acme-sdk-2-rules.yml", "--index-url", "http://127.0.0.1:9/simple", packages=False
    )
    m = result.manifest
    assert result.code == 75 and m["status"] == "paused", m["reason"]
    assert_all_artifacts(result.run_dir)


def test_missing_migration_notes_requires_human(acme_repo: Path, run_codemod, tmp_path: Path):
    task = tmp_path / "task.yml"
    text = (Path(__file__).parent.parent / "fixtures/tasks/acme-sdk-2.yml").read_text()
    task.write_text(text.replace("skill: acme-sdk-2-migration", "skill: acme-sdk-3-migration"))
    result = run_codemod(acme_repo, task)
    assert result.code == 3 and "no migration notes for acme-sdk" in result.manifest["reason"]


def test_a_run_starts_with_an_empty_install_cache_whatever_a_killed_run_left_in_its_run_dir(
    acme_repo: Path, run_codemod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A run killed before its end (SIGKILL, a lost runner) leaves its install cache; a run reusing that
    --run-dir would read what the killed run's boxes wrote there (a build backend's plant) first."""
    from agentic_codemod.workflow import pipeline

    left = tmp_path / "run-1" / "install-cache"  # run_codemod's first run dir
    left.mkdir(parents=True)
    (left / "planted-wheel.whl").write_text("a box of the killed run wrote this")
    seen: list[list[str]] = []

    def workflow(state, brain):  # type: ignore[no-untyped-def]
        seen.append(sorted(p.name for p in left.iterdir()))
        state.stopped = "only the start of the run is looked at"

    monkeypatch.setattr(pipeline, "run_workflow", workflow)
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml")
    assert result.run_dir == left.parent
    assert seen == [[]], seen
    assert result.manifest["status"] == "nothing_to_do"
