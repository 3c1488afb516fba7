"""The worktree as git would stage it — new, untracked, deleted and renamed files included — computed from
the raw bytes on disk, never through the repository's own git configuration.

    snapshot_diff(root, base, *diff_args) -> bytes    `git diff <diff_args> <base> <snapshot tree>`
    snapshot_diffs(root, base, *arg_lists) -> [bytes] one snapshot, one diff per argument list
    snapshot_tree(root, base) -> tree id              (in a Scratch; see tools/safe_git.py)
    resolve_base(root, base) -> str                   commit id, or the empty tree for an unborn HEAD
    read_blob(root, commit, path) -> bytes            a file of a commit, as stored
    read_blobs(root, commit, paths) -> {path: bytes}  many of them, one git process
    export_tree(root, tree_ish, dest)                 write a tree's exact bytes and modes into dest
    git(root, *args) -> bytes                         one hardened git command in root (the tool's own clones)

How: file bytes are read with O_NOFOLLOW and hashed as blobs (no clean filter, no eol or ident conversion,
whatever .git/config or .gitattributes say), written into a throwaway bare repository that borrows the
repository's objects; the tree is built and diffed there. Which files count is git's rule (tracked at
base, or untracked and not ignored by .gitignore), listed by that bare repository. The repository's .git
is only read (objects, refs); nothing in it runs or changes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from agentic_codemod.tools.safe_git import (
    EMPTY_TREE,
    GitError,
    Scratch,
    checked,
    objects_dir,
    read_ref,
)

__all__ = [
    "EMPTY_TREE",
    "GitError",
    "export_tree",
    "git",
    "read_blob",
    "read_blobs",
    "resolve_base",
    "snapshot_diff",
    "snapshot_diffs",
    "snapshot_tree",
]
GITLINK, SYMLINK, EXECUTABLE, REGULAR = "160000", "120000", "100755", "100644"
_V = TypeVar("_V")


def git(root: Path, *args: str, env: Mapping[str, str] | None = None) -> bytes:
    """One git command in root, hardened (tools/safe_git.py). It still reads root's own config: use it
    only on repositories the tool made itself; hashing and diffing go through snapshot_* instead."""
    return checked(["-C", str(root), *args], cwd=root, env=env)


def resolve_base(root: Path, base: str) -> str:
    with Scratch(objects_dir(root)) as s:
        return _resolve(s, root, base)


def _resolve(s: Scratch, root: Path, base: str) -> str:
    """resolve_base in an open scratch repository that borrows root's objects (one git process less)."""
    oid = read_ref(root, base)
    if oid is None:
        if base == "HEAD":
            return EMPTY_TREE
        raise GitError(f"{root}: unknown revision {base!r}")
    if oid == EMPTY_TREE:
        return oid
    key = _repository(root, oid)
    if key not in _PEELED:
        try:
            peeled = s.git("rev-parse", "--verify", "--quiet", f"{oid}^{{commit}}").decode().strip()
        except GitError:
            raise GitError(f"{root}: {base!r} is not a commit in this repository") from None
        _remember(_PEELED, key, peeled)
    return _PEELED[key]


# What a commit id resolves to, in a repository's objects, never changes: a run asks for the same base in
# every snapshot, so each answer costs one git process per process, not one per snapshot. Bounded.
_Key = tuple[str, int, int, int, str]  # the objects dir (path, device, inode, ctime: another repository at
# the same path is another directory, even where its inode number is reused), the object id
_PEELED: dict[_Key, str] = {}  # -> the commit it peels to
_BASES: dict[_Key, tuple[bytes, list[tuple[str, str, bytes]]]] = {}  # -> (index file, ls-tree)
_REMEMBERED = 16


def _repository(root: Path, oid: str) -> _Key:
    objects = objects_dir(root)
    try:
        st = os.stat(objects)
    except OSError as exc:
        raise GitError(f"{root}: cannot read the repository's objects: {exc}") from exc
    return os.fspath(objects), st.st_dev, st.st_ino, st.st_ctime_ns, oid


def _remember(cache: dict[_Key, _V], key: _Key, value: _V) -> None:
    if len(cache) >= _REMEMBERED:
        cache.pop(next(iter(cache)))
    cache[key] = value


def snapshot_diff(root: Path, base: str, *diff_args: str) -> bytes:
    """Diff of the whole worktree (as `git add -A` would stage its raw bytes) against `base`."""
    return snapshot_diffs(root, base, diff_args)[0]


def snapshot_diffs(root: Path, base: str, *diff_args: Sequence[str]) -> list[bytes]:
    """One snapshot of the worktree, diffed against `base` once per argument list (the same bytes for every
    diff: a file changed between two of them cannot make the patch and its file list disagree)."""
    with Scratch(objects_dir(root)) as s:
        base_id = _resolve(s, root, base)
        tree = _snapshot(s, root, base_id)
        diff = ("diff", "--no-ext-diff", "--no-textconv")
        return [s.git(*diff, *args, base_id, tree, "--") for args in diff_args]


def snapshot_tree(root: Path, base: str) -> str:
    """The tree id of the worktree snapshot (its objects vanish with the scratch repository)."""
    with Scratch(objects_dir(root)) as s:
        return _snapshot(s, root, _resolve(s, root, base))


def read_blob(root: Path, commit: str, path: str) -> bytes:
    """The stored bytes of `path` at `commit` (GitError if it does not exist there)."""
    with Scratch(objects_dir(root)) as s:
        return s.git("cat-file", "blob", f"{commit}:{path}")


def read_blobs(root: Path, commit: str, paths: Iterable[str]) -> dict[str, bytes]:
    """read_blob for many paths with one git process: the stored bytes of each path that is a blob (file or
    symlink) at `commit`; a path missing there, or not a blob, is left out. A name `cat-file --batch` cannot
    take (a line break in it) is read alone."""
    wanted = list(dict.fromkeys(paths))
    batch = [p for p in wanted if "\n" not in p and "\r" not in p]
    found: dict[str, bytes] = {}
    with Scratch(objects_dir(root)) as s:
        if batch:
            out = s.git("cat-file", "--batch", stdin="".join(f"{commit}:{p}\n" for p in batch).encode())
            pos = 0
            for path in batch:
                header_end = out.index(b"\n", pos)
                header = _OBJECT_HEADER.fullmatch(out[pos:header_end])
                pos = header_end + 1
                if header is None:  # "<name> missing" (or ambiguous): not there
                    continue
                size = int(header.group(2))
                if header.group(1) == b"blob":
                    found[path] = out[pos : pos + size]
                pos += size + 1
        for path in wanted:
            if path not in batch:
                with contextlib.suppress(GitError):
                    found[path] = s.git("cat-file", "blob", f"{commit}:{path}")
    return found


_OBJECT_HEADER = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})? (blob|tree|commit|tag) (\d+)")


def export_tree(root: Path, tree_ish: str, dest: Path) -> None:
    """Write every file of `tree_ish` into dest with its exact bytes and mode (no attribute, filter or
    eol conversion); submodules become empty directories. dest must not exist, or hold only `.git`
    (a clone made with --no-checkout: this is its checkout)."""
    if dest.exists() and {p.name for p in dest.iterdir()} - {".git"}:
        raise GitError(f"{dest}: exporting needs an empty directory (or one holding only .git)")
    with Scratch(objects_dir(root)) as s:
        entries = _ls_tree(s, tree_ish)
        blobs = [e for e in entries if e[0] != GITLINK]
        contents = _cat_blobs(s, [sha for _, sha, _ in blobs])
    dest.mkdir(parents=True, exist_ok=True)
    for mode, sha, path in entries:
        target = dest / os.fsdecode(path)
        _check_exported(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == GITLINK:
            target.mkdir()
        elif mode == SYMLINK:
            os.symlink(os.fsdecode(contents[sha]), target)
        else:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            fd = os.open(target, flags, 0o755 if mode == EXECUTABLE else 0o644)
            with os.fdopen(fd, "wb") as out:
                out.write(contents[sha])


# -- building the snapshot -------------------------------------------------------------------------------


def _snapshot(s: Scratch, root: Path, base_id: str) -> str:
    if len(base_id) != 40:
        raise GitError(f"{root}: only SHA-1 repositories are supported (base {base_id})")
    base_index = s.dir / "base.index"
    tracked = _base(s, root, base_id, base_index)
    untracked = s.git(
        "ls-files", "-z", "--others", "--exclude-standard", index=base_index, work_tree=root.resolve()
    )
    lines: list[bytes] = []
    for mode, sha, path in tracked:
        entry = (mode, sha) if mode == GITLINK else _store(s, root, path, sha)
        if entry is not None:
            lines.append(_index_line(*entry, path))
    for path in filter(None, untracked.split(b"\0")):
        if path.endswith(b"/"):  # a nested repository: recorded as a submodule, which the gates refuse
            nested = read_ref(root / os.fsdecode(path), "HEAD") or EMPTY_TREE
            lines.append(_index_line(GITLINK, nested, path.rstrip(b"/")))
            continue
        entry = _store(s, root, path)
        if entry is not None:
            lines.append(_index_line(*entry, path))
    index = s.dir / "snapshot.index"
    s.git("update-index", "-z", "--index-info", stdin=b"".join(lines), index=index)
    if not lines:
        return EMPTY_TREE
    return s.git("write-tree", index=index).decode().strip()


def _base(s: Scratch, root: Path, base_id: str, index: Path) -> list[tuple[str, str, bytes]]:
    """The base commit's files (ls-tree), with its index file written at `index` (what `ls-files --others`
    needs to tell tracked from untracked). Both are the same bytes for the same commit: made once."""
    key = _repository(root, base_id)
    known = _BASES.get(key)
    if known is None:
        s.git("read-tree", base_id, index=index)
        known = (index.read_bytes(), _ls_tree(s, base_id))
        _remember(_BASES, key, known)
    else:
        index.write_bytes(known[0])
    return known[1]


def _index_line(mode: str, sha: str, path: bytes) -> bytes:
    return f"{mode} {sha}\t".encode() + path + b"\0"


def _store(s: Scratch, root: Path, path: bytes, base_sha: str | None = None) -> tuple[str, str] | None:
    """Mode and blob id of the file now at `path`, or None (gone, a directory, not a regular file or
    symlink, or reached through a symlinked directory). `base_sha`: the blob the base commit has at
    `path`, in the repository's objects, which the scratch repository borrows: bytes that hash to it are
    not stored again (a snapshot of a large worktree wrote every unchanged file as a new object)."""
    found = _read_entry(root, path)
    if found is None:
        return None
    mode, data = found
    return mode, _write_blob(s.objects, data, base_sha)


def _read_entry(root: Path, path: bytes) -> tuple[str, bytes] | None:
    *parents, name = path.split(b"/")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise GitError(f"{root}: cannot open the worktree: {exc}") from exc
    try:
        for part in parents:
            child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = child
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            return SYMLINK, os.fsencode(os.readlink(name, dir_fd=fd))
        if not stat.S_ISREG(info.st_mode):
            return None
        handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
        with os.fdopen(handle, "rb") as f:
            mode = EXECUTABLE if os.fstat(f.fileno()).st_mode & stat.S_IXUSR else REGULAR
            return mode, f.read()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  #: a parent became a symlink; git lists the link itself as untracked
            return None
        raise GitError(f"{root}: cannot read {os.fsdecode(path)!r}: {exc}") from exc
    finally:
        os.close(fd)


def _write_blob(objects: Path, data: bytes, present: str | None = None) -> str:
    """Store `data` as a loose blob (git's object format) and return its id; not when its id is `present`
    (an object the scratch repository already reaches)."""
    raw = b"blob %d\0" % len(data) + data
    oid = hashlib.sha1(raw, usedforsecurity=False).hexdigest()
    if oid == present:
        return oid
    target = objects / oid[:2] / oid[2:]
    if not target.exists():
        target.parent.mkdir(exist_ok=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_bytes(zlib.compress(raw, 1))
        tmp.replace(target)
    return oid


def _ls_tree(s: Scratch, tree_ish: str) -> list[tuple[str, str, bytes]]:
    entries = []
    for record in filter(None, s.git("ls-tree", "-r", "-z", "--full-tree", tree_ish).split(b"\0")):
        meta, _, path = record.partition(b"\t")
        mode, _kind, sha = meta.decode().split()
        entries.append((mode, sha, path))
    return entries


def _cat_blobs(s: Scratch, shas: list[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(shas))
    out = s.git("cat-file", "--batch", stdin="".join(f"{sha}\n" for sha in unique).encode())
    contents: dict[str, bytes] = {}
    pos = 0
    for sha in unique:
        header_end = out.index(b"\n", pos)
        got, kind, size = out[pos:header_end].decode().split()
        if got != sha or kind != "blob":
            raise GitError(f"cat-file: expected blob {sha}, got {kind} {got}")
        start = header_end + 1
        contents[sha] = out[start : start + int(size)]
        pos = start + int(size) + 1
    return contents


def _check_exported(path: bytes) -> None:
    parts = path.split(b"/")
    if path.startswith(b"/") or any(p in (b"", b".", b"..") or p.lower() == b".git" for p in parts):
        raise GitError(f"refusing to export the path {os.fsdecode(path)!r}")
