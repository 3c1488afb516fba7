"""Publish an approved candidate: branch, commit, push, merge request (ARCHITECTURE.md §3, the last step).

    publish(PublishOptions) -> PublishResult

    1. check_candidate(run_dir)        the re-check: nothing below runs for an unapproved candidate
    2. GitLab preflight (list MRs)     a bad token pauses (75) before anything changes remotely
    3. commit, in a scratch repo       base commit fetched, changes.patch applied to the index only; the
                                       patch regenerated from base..tree must hash to the approved sha256,
                                       and the deterministic gates must pass again (publish_gates.prove)
    4. push                            codemod/<task-id>-<short hash>; never forced; idempotent
    5. merge request                   opened, or the open one updated (gitlab.py)
    6. publish.json                    what was published where (no token, no credentials in URLs)

The commit is deterministic — fixed author and committer, the run's finish time as date, trailers —
so publishing the same run twice pushes the same commit and changes nothing.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from agentic_codemod.errors import CandidateRejected, InputError
from agentic_codemod.mr_text import code, prose
from agentic_codemod.publish.check import ApprovedCandidate, PublishRefused, check_candidate
from agentic_codemod.publish.gates import prove
from agentic_codemod.publish.gitlab import (
    GitLabClient,
    GitLabToken,
    MergeRequestResult,
    MergeRequestSpec,
    RetryPolicy,
)
from agentic_codemod.publish.remote_git import Git, safe_url

BRANCH_PREFIX = "codemod/"
DEFAULT_LABELS = ("agentic-codemod",)


@dataclass(frozen=True)
class GitLabTarget:
    api_url: str
    project: str  # numeric id or full path


@dataclass(frozen=True)
class PublishOptions:
    run_dir: Path
    remote: str  # git URL or path the branch is pushed to
    target_branch: str = "main"
    source: Path | None = None  # a local clone holding the base commit; else it is fetched from remote
    gitlab: GitLabTarget | None = None  # None: push only, no merge request
    token: GitLabToken | None = field(default=None, repr=False)
    labels: tuple[str, ...] = DEFAULT_LABELS
    policy: RetryPolicy = field(default_factory=RetryPolicy)


@dataclass(frozen=True)
class PublishResult:
    branch: str
    commit: str
    push: Literal["created", "unchanged", "contained"]
    merge_request: MergeRequestResult | None


class PublishConflict(CandidateRejected):
    """The branch already exists remotely with other history; it is never overwritten (exit 1)."""


def branch_name(c: ApprovedCandidate) -> str:
    return f"{BRANCH_PREFIX}{c.task_id}-{c.short}"


def commit_message(c: ApprovedCandidate) -> str:
    return (
        f"{c.title}\n\n"
        f"Migration by agentic-codemod, task {c.task_id}: {len(c.files)} file(s) changed.\n"
        f"The reviewed candidate is applied unchanged on {c.base_commit[:12]}; the run artifacts hold\n"
        "the plan, the verification and the review it passed.\n\n"
        f"Codemod-Task: {c.task_id}\n"
        f"Codemod-Run-Id: {c.run_id}\n"
        f"Codemod-Candidate-Sha256: {c.sha256}\n"
        f"Codemod-Base-Commit: {c.base_commit}\n"
        f"Codemod-Apm-Lock: {c.apm_lock_sha256}\n"
    )


def merge_request_spec(c: ApprovedCandidate, options: PublishOptions) -> MergeRequestSpec:
    lines = [
        f"- **{f.severity}** {prose(f.message)}" + (f" ({code(f.path)})" if f.path else "")
        for f in c.findings
    ]
    description = (
        f"{c.description}\n\n### Reviewer findings\n\n" + ("\n".join(lines) or "None.") + "\n\n"
        f"<!-- agentic-codemod run={c.run_id} candidate={c.sha256} -->\n"
    )
    return MergeRequestSpec(
        source_branch=branch_name(c),
        target_branch=options.target_branch,
        title=c.title,
        description=description,
        labels=tuple(dict.fromkeys([*options.labels, c.task_id])),
    )


def publish(options: PublishOptions) -> PublishResult:
    candidate = check_candidate(options.run_dir)
    if options.gitlab is not None and options.token is None:
        raise InputError(
            "no GitLab token: set GITLAB_TOKEN (api scope) or run inside a CI job",
            hint="or pass --no-merge-request to push the branch only",
        )
    git = Git(options.token)
    branch = branch_name(candidate)
    client = None
    if options.gitlab is not None:
        assert options.token is not None
        client = GitLabClient(options.gitlab.api_url, options.gitlab.project, options.token, options.policy)
    try:
        with tempfile.TemporaryDirectory(prefix="codemod-publish-") as tmp:
            work = Path(tmp)
            commit = _commit(
                git, work, candidate, options
            )  # proves the candidate: GitLab sees nothing before
            if client is not None:  # preflight: a bad token or a down GitLab stops here, before the push
                client.find_open(branch, options.target_branch)
            push = _push(git, work, options.remote, branch, commit)
        mr = client.upsert(merge_request_spec(candidate, options)) if client is not None else None
    finally:
        if client is not None:
            client.close()
    result = PublishResult(branch, commit, push, mr)
    _record(options, candidate, result)
    return result


def _commit(git: Git, work: Path, c: ApprovedCandidate, options: PublishOptions) -> str:
    git.run("init", "--quiet", "--initial-branch=codemod-publish", cwd=work)
    sources = [str(options.source)] if options.source is not None else []
    for source in [*sources, options.remote]:
        fetched = git.run(
            "fetch", "--quiet", "--no-tags", "--depth=1", source, c.base_commit, cwd=work, check=False
        )
        if fetched.code == 0:
            break
    else:
        git.raise_for(
            fetched,
            "fetch",
            remote=True,
            fallback=InputError(
                f"base commit {c.base_commit[:12]} not found in "
                f"{' or '.join(safe_url(s) for s in [*sources, options.remote])}",
                hint="the base commit must still exist in the repository",
            ),
        )
    # Index only, never a checkout: no attribute, filter or hook of the repository takes part.
    git.run("read-tree", c.base_commit, cwd=work)
    applied = git.run(
        "apply", "--cached", "--binary", "--whitespace=nowarn", str(c.patch.resolve()), cwd=work, check=False
    )
    if applied.code != 0:
        raise PublishRefused(
            c.run_dir,
            [f"changes.patch does not apply on {c.base_commit[:12]}: {git.redact(applied.stderr)[-300:]}"],
        )
    tree = git.run("write-tree", cwd=work).stdout.strip()
    prove(work, c, tree)  # the same patch bytes, and every deterministic gate passes again
    dated = {"GIT_AUTHOR_DATE": c.finished_at, "GIT_COMMITTER_DATE": c.finished_at}
    made = git.run(
        "commit-tree", tree, "-p", c.base_commit, "-F", "-", cwd=work, input_text=commit_message(c), env=dated
    )
    return made.stdout.strip()


def _push(
    git: Git, work: Path, remote: str, branch: str, commit: str
) -> Literal["created", "unchanged", "contained"]:
    ref = f"refs/heads/{branch}"
    listed = git.run("ls-remote", remote, ref, cwd=work, remote=True).stdout.split()
    if listed and listed[0] == commit:
        return "unchanged"
    if listed:
        git.run("fetch", "--quiet", "--no-tags", remote, ref, cwd=work, remote=True)
        if git.run("merge-base", "--is-ancestor", commit, "FETCH_HEAD", cwd=work, check=False).code == 0:
            return "contained"  # someone built on the published commit: leave their work alone
        raise PublishConflict(
            f"branch {branch} already exists on the remote with other commits",
            hint="delete the branch or rerun the task on the current base; nothing is forced",
        )
    git.run("push", "--quiet", "--no-verify", remote, f"{commit}:{ref}", cwd=work, remote=True)
    return "created"


def _record(options: PublishOptions, c: ApprovedCandidate, result: PublishResult) -> None:
    record = {
        "format": "agentic-codemod/publish@1",
        "published_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "run_id": c.run_id,
        "candidate_sha256": c.sha256,
        "base_commit": c.base_commit,
        "remote": safe_url(options.remote),
        "branch": result.branch,
        "commit": result.commit,
        "push": result.push,
        "merge_request": asdict(result.merge_request) if result.merge_request else None,
    }
    (options.run_dir / "publish.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
