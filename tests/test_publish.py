"""Publish: the re-check of the candidate (issue 6 part 5) and branch + commit + push + MR (issue 7 part 2).

One real offline run of the rule-fixable task on acme-app is made per session; every test works on a copy
of its artifacts. Tampered copies must be refused with zero remote changes; the real one is pushed to a
bare repository on disk (then cloned and inspected) and its merge request opened on a loopback fake GitLab.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ACME_APP, ROOT, materialize

from agentic_codemod.cli import main
from agentic_codemod.config import MR_TITLE_MAX_CHARS
from agentic_codemod.errors import EXIT_REJECTED, EXIT_UNAVAILABLE
from agentic_codemod.publish.check import PublishRefused, check_candidate
from agentic_codemod.publish.cli import add_publish_parser
from agentic_codemod.publish.gitlab import GitLabToken, RetryPolicy, inert_text, inert_title
from agentic_codemod.publish.remote_git import AUTHOR
from agentic_codemod.publish.runner import GitLabTarget, PublishConflict, PublishOptions, publish
from agentic_codemod.workflow.artifacts import ARTIFACTS

sys.path.insert(0, str(Path(__file__).parent / "gitlab"))
from fake_gitlab import TOKEN, FakeGitLab

TASK = ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml"
FAST = RetryPolicy(attempts=2, backoff_s=0.0, timeout_s=5.0)
OTHER_SHA = "0" * 64


@pytest.fixture(scope="session")
def approved_run(tmp_path_factory: pytest.TempPathFactory, wheels: Path, context_root: Path) -> Path:
    """A real, approved offline run (its repo is the run.json `repo`)."""
    base = tmp_path_factory.mktemp("approved")
    materialize.materialize(ACME_APP, base / "acme-app")
    run_dir = base / "run"
    code = main(
        [
            "run",
            "--repo",
            str(base / "acme-app"),
            "--task",
            str(TASK),
            "--run-dir",
            str(run_dir),
            "--context",
            str(context_root),
            "--offline",
            "--quiet",
            "--find-links",
            str(wheels),
            "--no-index",
        ]
    )
    manifest = json.loads((run_dir / "run.json").read_text())
    assert code == 0, f"the offline run did not succeed: {manifest['status']}: {manifest['reason']}"
    return run_dir


@pytest.fixture
def run_copy(approved_run: Path, tmp_path: Path) -> Path:
    """The run's artifacts only (no worktree, no venv): what a CI publish job receives."""
    dest = tmp_path / "run"
    dest.mkdir()
    for name in ARTIFACTS:
        shutil.copy2(approved_run / name, dest / name)
    return dest


@pytest.fixture
def remote(approved_run: Path, tmp_path: Path) -> Path:
    repo = json.loads((approved_run / "run.json").read_text())["repo"]
    bare = tmp_path / "remote.git"
    git("clone", "--quiet", "--bare", repo, str(bare), cwd=tmp_path)
    return bare


@pytest.fixture
def fake_gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab(tokens={("PRIVATE-TOKEN", TOKEN)}).start()
    yield fake
    fake.stop()


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def refs(bare: Path) -> str:
    return git("for-each-ref", "--format=%(refname) %(objectname)", cwd=bare)


def edit_json(path: Path, change: Callable[[Any], object]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def options(
    run_dir: Path, remote: Path, fake: FakeGitLab | None = None, token: str = TOKEN
) -> PublishOptions:
    return PublishOptions(
        run_dir=run_dir,
        remote=str(remote),
        target_branch="main",
        gitlab=GitLabTarget(fake.api_url, fake.project) if fake else None,
        token=GitLabToken("PRIVATE-TOKEN", token, "GITLAB_TOKEN") if fake else None,
        policy=FAST,
    )


# -- the re-check ------------------------------------------------------------------------------------


def test_the_untouched_approved_run_passes_the_recheck(run_copy: Path) -> None:
    approved = check_candidate(run_copy)
    assert approved.sha256 == hashlib.sha256((run_copy / "changes.patch").read_bytes()).hexdigest()
    assert approved.task_id == "acme-sdk-2-rules" and approved.title
    assert len(approved.base_commit) == 40 and approved.apm_lock_sha256


def test_a_patch_edited_after_review_is_refused_and_the_old_approval_is_void(run_copy: Path) -> None:
    patch = run_copy / "changes.patch"
    patch.write_bytes(patch.read_bytes().replace(b"acme-sdk==2.0.0", b"acme-sdk==2.0.1", 1))
    with pytest.raises(PublishRefused) as caught:
        check_candidate(run_copy)
    problems = " | ".join(caught.value.problems)
    assert "changed after it was frozen" in problems
    assert "an approval for another candidate is void" in problems
    assert caught.value.exit_code == EXIT_REJECTED


def test_an_approval_for_another_hash_is_void(run_copy: Path) -> None:
    edit_json(run_copy / "review.json", lambda d: d.update(candidate_sha256=OTHER_SHA))
    with pytest.raises(PublishRefused, match=r"review\.json: the approval is for candidate 000000000000"):
        check_candidate(run_copy)


@pytest.mark.parametrize("verdict", ["reject", "unsure"])
def test_a_verdict_other_than_approve_is_refused(run_copy: Path, verdict: str) -> None:
    edit_json(run_copy / "review.json", lambda d: d.update(verdict=verdict))
    with pytest.raises(PublishRefused, match=f"verdict is {verdict}"):
        check_candidate(run_copy)


def test_a_run_that_did_not_succeed_is_refused(run_copy: Path) -> None:
    edit_json(run_copy / "run.json", lambda d: d.update(status="rejected", exit_code=1))
    with pytest.raises(PublishRefused, match="ended rejected"):
        check_candidate(run_copy)


def test_a_candidate_on_another_base_is_refused(run_copy: Path) -> None:
    edit_json(run_copy / "run.json", lambda d: d["candidate"].update(base_commit="f" * 40))
    with pytest.raises(PublishRefused, match="differs from the run's base"):
        check_candidate(run_copy)


def test_a_gate_that_judged_another_hash_is_refused(run_copy: Path) -> None:
    edit_json(run_copy / "run.json", lambda d: d["gates"][0].update(candidate_sha256=OTHER_SHA))
    with pytest.raises(PublishRefused, match="judged candidate 000000000000"):
        check_candidate(run_copy)


def test_verification_evidence_for_another_hash_is_refused(run_copy: Path) -> None:
    edit_json(run_copy / "run.json", lambda d: d["verifications"][-1].update(candidate_sha256=OTHER_SHA))
    with pytest.raises(PublishRefused, match="proved candidate 000000000000"):
        check_candidate(run_copy)


def test_red_last_verification_is_refused(run_copy: Path) -> None:
    edit_json(run_copy / "run.json", lambda d: d["verifications"][-1].update(passed=False))
    with pytest.raises(PublishRefused, match="is not green"):
        check_candidate(run_copy)


def test_missing_artifacts_are_refused(run_copy: Path) -> None:
    (run_copy / "review.json").unlink()
    (run_copy / "merge_request.md").unlink()
    with pytest.raises(PublishRefused) as caught:
        check_candidate(run_copy)
    assert caught.value.problems == ["review.json is missing", "merge_request.md is missing"]


def test_a_refused_run_makes_zero_remote_changes(
    run_copy: Path, remote: Path, fake_gitlab: FakeGitLab
) -> None:
    before = refs(remote)
    edit_json(run_copy / "review.json", lambda d: d.update(candidate_sha256=OTHER_SHA))
    with pytest.raises(PublishRefused):
        publish(options(run_copy, remote, fake_gitlab))
    assert refs(remote) == before
    assert fake_gitlab.requests == [] and not (run_copy / "publish.json").exists()


# -- branch, commit, push, merge request -------------------------------------------------------------


def test_publish_pushes_one_commit_equal_to_base_plus_patch(
    run_copy: Path, remote: Path, fake_gitlab: FakeGitLab, tmp_path: Path
) -> None:
    approved = check_candidate(run_copy)
    result = publish(options(run_copy, remote, fake_gitlab))

    assert result.branch == f"codemod/acme-sdk-2-rules-{approved.sha256[:12]}" and result.push == "created"
    clone = tmp_path / "clone"
    git("clone", "--quiet", "--branch", result.branch, str(remote), str(clone), cwd=tmp_path)
    assert git("rev-parse", "HEAD", cwd=clone).strip() == result.commit
    assert git("rev-parse", "HEAD^", cwd=clone).strip() == approved.base_commit
    who = git("log", "-1", "--format=%an <%ae>|%cn <%ce>", cwd=clone).strip()
    assert who == f"{AUTHOR[0]} <{AUTHOR[1]}>|{AUTHOR[0]} <{AUTHOR[1]}>"
    trailers = git("log", "-1", "--format=%(trailers:only,unfold)", cwd=clone)
    assert f"Codemod-Run-Id: {approved.run_id}" in trailers
    assert f"Codemod-Candidate-Sha256: {approved.sha256}" in trailers
    assert f"Codemod-Apm-Lock: {approved.apm_lock_sha256}" in trailers
    assert git("log", "-1", "--format=%s", cwd=clone).strip() == approved.title
    diff = subprocess.run(
        ["git", "diff", "--binary", "--full-index", "--no-color", approved.base_commit, "HEAD"],
        cwd=clone,
        check=True,
        capture_output=True,
    ).stdout
    assert hashlib.sha256(diff).hexdigest() == approved.sha256

    (mr,) = fake_gitlab.merge_requests
    assert (mr["source_branch"], mr["target_branch"], mr["title"]) == (result.branch, "main", approved.title)
    assert mr["labels"] == ["agentic-codemod", "acme-sdk-2-rules"]
    assert "### Reviewer findings" in mr["description"] and approved.sha256 in mr["description"]
    record = json.loads((run_copy / "publish.json").read_text())
    assert record["commit"] == result.commit and record["merge_request"]["iid"] == 1


def test_publishing_twice_changes_nothing(run_copy: Path, remote: Path, fake_gitlab: FakeGitLab) -> None:
    first = publish(options(run_copy, remote, fake_gitlab))
    after_first = refs(remote)
    second = publish(options(run_copy, remote, fake_gitlab))

    assert second.commit == first.commit and second.push == "unchanged"
    assert second.merge_request is not None and second.merge_request.action == "unchanged"
    assert refs(remote) == after_first
    assert len(fake_gitlab.merge_requests) == 1 and not fake_gitlab.calls("PUT")


def test_an_existing_branch_with_other_history_is_never_overwritten(
    run_copy: Path, remote: Path, tmp_path: Path
) -> None:
    approved = check_candidate(run_copy)
    branch = f"refs/heads/codemod/acme-sdk-2-rules-{approved.sha256[:12]}"
    git("update-ref", branch, approved.base_commit, cwd=remote)  # someone else's branch of that name
    with pytest.raises(PublishConflict):
        publish(options(run_copy, remote))
    assert git("rev-parse", branch, cwd=remote).strip() == approved.base_commit


def test_a_bad_token_pauses_before_anything_is_pushed(
    run_copy: Path, remote: Path, fake_gitlab: FakeGitLab
) -> None:
    before = refs(remote)
    with pytest.raises(Exception) as caught:
        publish(options(run_copy, remote, fake_gitlab, token="glpat-revoked-000000000000000"))
    assert getattr(caught.value, "exit_code", None) == EXIT_UNAVAILABLE
    assert refs(remote) == before and len(fake_gitlab.requests) == 1


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_cli_publish_never_prints_or_stores_the_token(
    run_copy: Path,
    remote: Path,
    fake_gitlab: FakeGitLab,
    capsys: pytest.CaptureFixture[str],
    json_flag: list[str],
) -> None:
    parser = argparse.ArgumentParser()
    add_publish_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["publish", "--run-dir", str(run_copy), "--remote", str(remote), *json_flag])
    env = {
        "GITLAB_TOKEN": TOKEN,
        "CI_API_V4_URL": fake_gitlab.api_url,
        "CI_PROJECT_ID": fake_gitlab.project,
        "CI_DEFAULT_BRANCH": "main",
    }
    assert args.handler(args, env) == 0
    out = capsys.readouterr()
    assert "codemod/acme-sdk-2-rules-" in out.out
    assert TOKEN not in out.out + out.err
    if json_flag:  # one JSON document: what was pushed, where, and the merge request
        printed = json.loads(out.out)
        assert printed["branch"].startswith("codemod/acme-sdk-2-rules-") and printed["push"] == "created"
        assert printed["merge_request"]["action"] == "created" and len(printed["commit"]) == 40
    for path in run_copy.iterdir():
        assert TOKEN not in path.read_text(errors="replace"), path.name


def test_cli_publish_of_a_tampered_run_exits_1_with_the_reason(
    run_copy: Path, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_copy / "changes.patch").write_bytes(b"")
    argv = ["publish", "--run-dir", str(run_copy), "--remote", str(remote), "--no-merge-request"]
    assert main(argv) == EXIT_REJECTED
    assert "publish refused" in capsys.readouterr().err


def test_cli_check_only_json_names_the_candidate_it_checked(
    run_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["publish", "--run-dir", str(run_copy), "--check-only", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    manifest = json.loads((run_copy / "run.json").read_text())
    assert printed["candidate_sha256"] == manifest["candidate"]["sha256"] and printed["publishable"] is True
    assert printed["base_commit"] == manifest["base_commit"] and printed["branch"].startswith("codemod/")
    (run_copy / "changes.patch").write_bytes(b"")  # tampered: refused, and nothing on stdout
    assert main(["publish", "--run-dir", str(run_copy), "--check-only", "--json"]) == EXIT_REJECTED
    assert capsys.readouterr().out == ""


# -- text sent to GitLab is inert ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/approve", "\\/approve"),
        ("ok\n/merge\nnot /this", "ok\n\\/merge\nnot /this"),
        ("  /assign_reviewer @someone", "  \\/assign_reviewer @someone"),
        ("\u200b/label ~x", "\u200b\\/label ~x"),
        ("a\r/merge\r\n/approve", "a\n\\/merge\n\\/approve"),
        ("```\n/merge\n```", "```\n\\/merge\n```"),  # a fence GitLab may read otherwise: escaped too
        ("\\/approve stays", "\\/approve stays"),
    ],
)
def test_inert_text_escapes_every_line_gitlab_could_run(text: str, expected: str) -> None:
    assert inert_text(text) == expected
    assert inert_text(inert_text(text)) == expected  # idempotent: an unchanged MR stays unchanged


def test_an_mr_title_is_one_inert_line_within_the_limit() -> None:
    assert inert_title("/merge\nnow\t please ") == "\\/merge now please"
    assert len(inert_title("x" * 1000)) == MR_TITLE_MAX_CHARS
