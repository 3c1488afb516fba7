"""The run's private copy of the repository, and the candidate frozen from it.

The repository given with --repo is never touched: the run works in a clone inside the run dir, and the
candidate leaves only as `changes.patch`, identified by its sha256 and the base commit.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agentic_codemod.models import Candidate
from agentic_codemod.tools.snapshot import export_tree, git, snapshot_diff, snapshot_diffs


def clone_worktree(repo: Path, dest: Path) -> str:
    """Clone the repository's HEAD into dest (no hard links into the source) and return the base commit."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    git(dest.parent, "clone", "--quiet", "--no-hardlinks", "--no-checkout", str(repo), str(dest))
    base = git(repo, "rev-parse", "HEAD").decode().strip()
    export_tree(dest, base, dest)  # the stored bytes: no eol, ident or filter of the repository's attributes
    git(dest, "update-ref", "--no-deref", "HEAD", base)
    git(dest, "read-tree", base)
    return base


# Text forced (no "Binary files differ", no `GIT binary patch` for a text file), no textconv or external
# diff; attributes are never read (tools/snapshot.py diffs in a bare scratch repository).
PATCH_ARGS = ("--text", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv")


def candidate_patch(worktree: Path, base_commit: str) -> bytes:
    """The full diff of the worktree against base: modified, added, deleted and untracked files
    (computed with a throwaway index and object store; the clone's .git is never written)."""
    return snapshot_diff(worktree, base_commit, *PATCH_ARGS)


def candidate_sha256(worktree: Path, base_commit: str) -> str:
    return hashlib.sha256(candidate_patch(worktree, base_commit)).hexdigest()


def candidate_sha256_and_files(worktree: Path, base_commit: str) -> tuple[str, set[str]]:
    """candidate_sha256 and the files the candidate changes, from one snapshot of the worktree."""
    patch, names = snapshot_diffs(worktree, base_commit, PATCH_ARGS, ("--name-only", "-z"))
    files = {n for n in names.decode("utf-8", "surrogateescape").split("\0") if n}
    return hashlib.sha256(patch).hexdigest(), files


def freeze(worktree: Path, base_commit: str, patch_path: Path) -> Candidate:
    """Write changes.patch and return the candidate's identity (patch and file list from one snapshot)."""
    patch, listing = snapshot_diffs(worktree, base_commit, PATCH_ARGS, ("--name-only", "-z"))
    patch_path.write_bytes(patch)
    names = listing.decode().split("\0")
    return Candidate(
        base_commit=base_commit,
        sha256=hashlib.sha256(patch).hexdigest(),
        files=[n for n in names if n],
        bytes=len(patch),
    )


def patch_sha256(patch_path: Path) -> str:
    return hashlib.sha256(patch_path.read_bytes()).hexdigest()
