"""`agentic-codemod publish`: the argument parser and the command. Kept apart from runner.py so that
building the CLI parser imports nothing heavy; the command imports the publisher when it runs."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_codemod.errors import InputError

if TYPE_CHECKING:
    from agentic_codemod.publish.gitlab import GitLabToken
    from agentic_codemod.publish.runner import PublishOptions

DEFAULT_LABELS = ("agentic-codemod",)  # = runner.DEFAULT_LABELS


def add_publish_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "publish",
        help="publish an approved run: branch, commit, push, merge request",
        epilog="exit codes: 0 published, 1 refused or conflict, 2 bad input, 75 GitLab unavailable",
    )
    p.add_argument("--run-dir", type=Path, required=True, help="the run directory of an approved run")
    p.add_argument(
        "--remote", help="git remote to push to (default in CI: $CI_SERVER_URL/$CI_PROJECT_PATH.git)"
    )
    p.add_argument(
        "--repo", type=Path, help="local clone holding the base commit (default: fetch from --remote)"
    )
    p.add_argument("--target-branch", help="merge request target (default: $CI_DEFAULT_BRANCH, else main)")
    p.add_argument("--gitlab-url", help="GitLab API base URL (default: $CI_API_V4_URL)")
    p.add_argument("--project", help="GitLab project id or path (default: $CI_PROJECT_ID)")
    p.add_argument(
        "--label",
        action="append",
        default=[],
        help=f"merge request label (repeatable; default: {', '.join(DEFAULT_LABELS)} and the task id)",
    )
    p.add_argument("--no-merge-request", action="store_true", help="push the branch only")
    p.add_argument("--check-only", action="store_true", help="only re-check the candidate (the CI gate job)")
    from agentic_codemod.cli import add_json_option

    add_json_option(p, "what was checked or published (candidate, branch, commit, merge request)")
    p.set_defaults(handler=publish_command)


def publish_command(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> int:
    from agentic_codemod.cli import print_json
    from agentic_codemod.publish.check import check_candidate
    from agentic_codemod.publish.gitlab import token_from_env
    from agentic_codemod.publish.remote_git import safe_url
    from agentic_codemod.publish.runner import branch_name, publish

    env = os.environ if env is None else env
    if args.check_only:
        approved = check_candidate(args.run_dir)
        branch = branch_name(approved)
        if args.json:
            print_json(
                {"candidate_sha256": approved.sha256, "base_commit": approved.base_commit, "branch": branch}
                | {"title": approved.title, "publishable": True}
            )
            return 0
        print(f"candidate {approved.sha256} on {approved.base_commit[:12]}: approved, verified, publishable")
        print(f"would publish {branch}: {approved.title}")
        return 0
    options = _options(args, env, token_from_env(env))
    result = publish(options)
    mr = result.merge_request
    if args.json:
        merge_request = {"iid": mr.iid, "action": mr.action, "web_url": mr.web_url} if mr else None
        print_json(
            {"branch": result.branch, "push": result.push, "remote": safe_url(options.remote)}
            | {"commit": result.commit, "merge_request": merge_request}
        )
        return 0
    print(f"branch   {result.branch} ({result.push}) -> {safe_url(options.remote)}")
    print(f"commit   {result.commit}")
    print(f"merge request  {f'!{mr.iid} {mr.action} {mr.web_url}' if mr else 'not requested'}")
    return 0


def _options(args: argparse.Namespace, env: Mapping[str, str], token: GitLabToken | None) -> PublishOptions:
    from agentic_codemod.publish.runner import GitLabTarget, PublishOptions

    remote = args.remote or (
        f"{env['CI_SERVER_URL'].rstrip('/')}/{env['CI_PROJECT_PATH']}.git"
        if env.get("CI_SERVER_URL") and env.get("CI_PROJECT_PATH")
        else None
    )
    if not remote:
        raise InputError("publish: no remote: pass --remote (outside GitLab CI)")
    gitlab = None
    if not args.no_merge_request:
        api, project = args.gitlab_url or env.get("CI_API_V4_URL"), args.project or env.get("CI_PROJECT_ID")
        if not api or not project:
            raise InputError(
                "publish: --gitlab-url and --project are needed for the merge request "
                "(CI_API_V4_URL / CI_PROJECT_ID in CI)",
                hint="or pass --no-merge-request",
            )
        gitlab = GitLabTarget(api, project)
    return PublishOptions(
        run_dir=args.run_dir,
        remote=remote,
        source=args.repo,
        gitlab=gitlab,
        token=token,
        target_branch=args.target_branch or env.get("CI_DEFAULT_BRANCH") or "main",
        labels=tuple(args.label) or DEFAULT_LABELS,
    )
