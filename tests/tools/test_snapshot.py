"""git's view of the worktree without touching .git."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agentic_codemod.tools.snapshot import EMPTY_TREE, GitError, resolve_base, snapshot_diff


def digest(path: Path) -> str:
    h = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        h.update(str(item).encode() + (item.read_bytes() if item.is_file() else b""))
    return h.hexdigest()


def test_snapshot_includes_untracked_and_deleted_files_and_writes_nothing_to_git(repo: Path) -> None:
    before = digest(repo / ".git")
    (repo / "src/new.py").write_text("brand new content\n")
    (repo / "README.md").unlink()
    names = snapshot_diff(repo, "HEAD", "--name-status").decode()
    assert "A\tsrc/new.py" in names and "D\tREADME.md" in names
    assert digest(repo / ".git") == before


def test_an_unborn_head_diffs_against_the_empty_tree(tmp_path: Path, git) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    assert resolve_base(root, "HEAD") == EMPTY_TREE
    assert "A\ta.txt" in snapshot_diff(root, "HEAD", "--name-status").decode()


def test_an_unknown_base_is_an_error(repo: Path) -> None:
    with pytest.raises(GitError):
        resolve_base(repo, "no-such-ref")


def test_git_environment_of_the_caller_cannot_redirect_the_snapshot(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other-index"))
    (repo / "src/new.py").write_text("x\n")
    assert "src/new.py" in snapshot_diff(repo, "HEAD", "--name-only").decode()
    assert not (tmp_path / "other-index").exists()
