"""git's view of the worktree without touching .git."""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import zlib
from pathlib import Path

import pytest

from agentic_codemod.tools.safe_git import Scratch, checked
from agentic_codemod.tools.snapshot import (
    EMPTY_TREE,
    GitError,
    read_blob,
    read_blobs,
    resolve_base,
    snapshot_diff,
    snapshot_diffs,
)


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


def test_another_repository_at_the_same_path_is_asked_anew(tmp_path: Path, git) -> None:  # type: ignore[no-untyped-def]
    """What a base resolves to is remembered per repository, not per path: a repository made where another
    was (a fleet's next clone) and lacking its commit says so, and snapshots its own files."""
    root = tmp_path / "clone"

    def commit(name: str) -> str:
        root.mkdir()
        git(root, "init", "-q")
        (root / name).write_text(f"{name}\n")
        git(root, "add", name)
        git(root, "commit", "-qm", name)
        return str(git(root, "rev-parse", "HEAD"))

    first = commit("a.txt")
    assert resolve_base(root, first) == first
    assert snapshot_diff(root, first, "--name-only") == b""  # the caches now hold the first repository's
    shutil.rmtree(root)
    second = commit("b.txt")
    with pytest.raises(GitError, match="not a commit in this repository"):
        resolve_base(root, first)
    (root / "c.txt").write_text("new\n")
    assert snapshot_diff(root, second, "--name-only").decode().split() == ["c.txt"]


def test_git_environment_of_the_caller_cannot_redirect_the_snapshot(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "other-index"))
    (repo / "src/new.py").write_text("x\n")
    assert "src/new.py" in snapshot_diff(repo, "HEAD", "--name-only").decode()
    assert not (tmp_path / "other-index").exists()


def test_a_scratch_repository_is_what_git_init_bare_writes(tmp_path: Path) -> None:
    """Scratch lays out its bare repository without a git process: the same files, byte for byte, as this
    machine's `git init --bare --template=` (under the same clean environment), and git accepts it."""
    made = tmp_path / "by-git.git"
    checked(["init", "--quiet", "--bare", "--template=", str(made)], cwd=tmp_path)
    with Scratch() as scratch:
        ours = {p.relative_to(scratch.repo): p for p in scratch.repo.rglob("*")}
        theirs = {p.relative_to(made): p for p in made.rglob("*")}
        assert sorted(ours) == sorted(theirs)
        for rel, path in ours.items():
            assert path.is_dir() == theirs[rel].is_dir()
            if path.is_file():
                assert path.read_bytes() == theirs[rel].read_bytes(), rel
        assert scratch.git("rev-parse", "--is-bare-repository").strip() == b"true"


def test_diffs_of_one_snapshot_agree(repo: Path) -> None:
    (repo / "src/new.py").write_text("new\n")
    (repo / "README.md").unlink()
    patch, names = snapshot_diffs(repo, "HEAD", ("--name-status",), ("--name-only", "-z"))
    assert patch == snapshot_diff(repo, "HEAD", "--name-status")
    assert set(filter(None, names.split(b"\0"))) == {b"src/new.py", b"README.md"}


def test_read_blobs_reads_what_read_blob_reads_with_one_process(tmp_path: Path, git) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "names"
    (root / "dir").mkdir(parents=True)
    git(root, "init", "-q")
    files = {"a.txt": b"a\n", "with space.txt": b"s\n", "dir/x.py": b"", "new\nline.txt": b"n\n"}
    files["colon:x"] = b"c"
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "link").symlink_to("a.txt")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = resolve_base(root, "HEAD")
    asked = [*files, "link", "dir", "missing.txt", "a.txt"]
    got = read_blobs(root, base, asked)
    expected = {}
    for name in dict.fromkeys(asked):
        with contextlib.suppress(GitError):
            expected[name] = read_blob(root, base, name)
    assert got == expected
    assert got["link"] == b"a.txt" and got["new\nline.txt"] == b"n\n" and got["dir/x.py"] == b""
    assert "dir" not in got and "missing.txt" not in got


def test_unchanged_files_are_taken_from_the_repository_and_the_tree_is_gits_own(
    repo: Path,
    git,  # type: ignore[no-untyped-def]
) -> None:
    """Only what differs from the base is stored in the scratch repository (a snapshot stored every file
    of the worktree anew); the tree is the one `git add -A` makes of the same worktree."""
    from agentic_codemod.tools.snapshot import _snapshot, objects_dir

    (repo / "src/new.py").write_text("brand new content\n")
    (repo / "README.md").write_text("changed\n")
    with Scratch(objects_dir(repo)) as s:
        tree = _snapshot(s, repo, resolve_base(repo, "HEAD"))
        stored = {
            p.parent.name + p.name
            for p in s.objects.glob("??/*")
            if zlib.decompress(p.read_bytes()).startswith(b"blob ")
        }
    blob = {name: git(repo, "hash-object", name) for name in ("src/new.py", "README.md")}
    assert stored == set(blob.values())
    git(repo, "add", "-A")
    assert tree == git(repo, "write-tree")
