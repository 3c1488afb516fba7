"""The worktree as git sees it — new, untracked, deleted and renamed files included — without touching
the repository: `git add -A` goes into a temporary index (GIT_INDEX_FILE) and its new blobs into a
temporary object directory that borrows the real one as an alternate. `.git/` stays byte-identical.

    snapshot_diff(root, base, *diff_args) -> bytes     `git diff --cached <base> <diff_args>` of the snapshot
    git(root, *args) -> bytes                          one git command, hooks and ext-diff tools off
    resolve_base(root, base) -> str                    commit id, or the empty tree for an unborn HEAD
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agentic_codemod.config import GIT_TIMEOUT_S

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# Settings that would run programs named in the repository's config or attributes.
_SAFE = ("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null")


class GitError(RuntimeError):
    """A git command failed; the message carries its stderr."""


def git(root: Path, *args: str, env: Mapping[str, str] | None = None) -> bytes:
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base_env["GIT_OPTIONAL_LOCKS"] = "0"
    base_env.update(env or {})
    try:
        done = subprocess.run(
            ["git", *_SAFE, "-C", str(root), *args],
            capture_output=True,
            env=base_env,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {' '.join(args)}: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)}: {message}")
    return done.stdout


def resolve_base(root: Path, base: str) -> str:
    try:
        return git(root, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}").decode().strip()
    except GitError:
        if base == "HEAD":
            return EMPTY_TREE
        raise


def snapshot_diff(root: Path, base: str, *diff_args: str) -> bytes:
    """Diff of the whole worktree (as `git add -A` would stage it) against `base`."""
    base_id = resolve_base(root, base)
    real_index = Path(
        git(root, "rev-parse", "--path-format=absolute", "--git-path", "index").decode().strip()
    )
    objects = git(root, "rev-parse", "--path-format=absolute", "--git-path", "objects").decode().strip()
    with tempfile.TemporaryDirectory(prefix="codemod-snapshot-") as tmp:
        index, own_objects = Path(tmp) / "index", Path(tmp) / "objects"
        own_objects.mkdir()
        if real_index.is_file():
            shutil.copyfile(real_index, index)  # a warm stat cache; the real index is never written
        env = {
            "GIT_INDEX_FILE": str(index),
            "GIT_OBJECT_DIRECTORY": str(own_objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": objects,
        }
        git(root, "add", "-A", "--", ".", env=env)
        return git(root, "diff", "--cached", "--no-ext-diff", "--no-textconv", *diff_args, base_id, env=env)
