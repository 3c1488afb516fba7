"""The disposable copy of the candidate that repository code runs on, and what that code did to it.

    stamp = fresh_copy(worktree, dest)          dest = the worktree's files (no .git), modes kept,
                                                symlinks copied as symlinks; dest is emptied first
    remove(path)                                whatever is at path, never following a link
    write_new(path, text)                       a file of the tool's own in the copy, in place of whatever
                                                the repository has at that path (never written through)
    copy_tree(src, dest)                        a directory the tool made (an environment) copied whole:
                                                links stay links, modes and mtimes kept
    copy_into_empty(src, dest) -> bool          the same into a missing or empty dest only
    touched(dest, stamp, code_suffixes, shadowing=) -> list[str]
                                                candidate files written, replaced, re-moded or deleted
                                                since the copy was made — restoring the bytes does not
                                                hide it (the inode change time moves with every write,
                                                rename or chmod and cannot be set back) — and new files
                                                that carry code where they can shadow the candidate's:
                                                beside its files, and where the ecosystem's rules say
                                                (adapters/types.py Shadowing: a cache folder beside its
                                                files, a package file making a folder named like one of
                                                its modules, a module named like one of its folders;
                                                npm: anything new in a node_modules folder or a link
                                                named so, a package.json above candidate code)

The tool's clone is never seen by repository code: what is hashed, reviewed and published comes from
the clone, and the copy is thrown away after each install or test run.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from agentic_codemod.adapters.types import Shadowing

SKIPPED = frozenset({".git"})
LOOKUP_LINK = "new link where packages are looked up"
RESOLVING_FILE = "new file where modules are resolved"


@dataclass(frozen=True)
class FileStamp:
    inode: int
    ctime_ns: int
    mtime_ns: int
    size: int
    mode: int


Stamp = dict[str, FileStamp]


def fresh_copy(worktree: Path, dest: Path) -> Stamp:
    """Replace dest with a copy of the worktree's files and return the stamp of every copied entry."""
    if dest.exists() or dest.is_symlink():
        remove(dest)
    dest.mkdir(parents=True)
    stamp: Stamp = {}
    for directory, dirs, files in os.walk(worktree):
        rel_dir = Path(directory).relative_to(worktree)
        dirs[:] = sorted(d for d in dirs if not (rel_dir == Path(".") and d in SKIPPED))
        target_dir = dest / rel_dir
        for name in [*dirs, *files]:
            src, dst = Path(directory, name), target_dir / name
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            elif src.is_dir():
                dst.mkdir()
                continue
            elif src.is_file():
                shutil.copy2(src, dst, follow_symlinks=False)
            else:
                continue  # sockets, fifos, devices: never part of a candidate
            stamp[(rel_dir / name).as_posix()] = _stamp(dst)
    return stamp


def stamp_file(dest: Path, stamp: Stamp, rel: str) -> None:
    """Watch one more file of the copy (the tool's own, e.g. the canary) like a candidate file."""
    stamp[rel] = _stamp(dest / rel)


def touched(
    dest: Path,
    stamp: Stamp,
    code_suffixes: Iterable[str] = (),
    *,
    shadowing: Shadowing | None = None,
    source: Path | None = None,
    strict: Collection[str] = (),
    rewritten: list[str] | None = None,
) -> list[str]:
    """What the run did to the copy that makes its result no proof. With `source` (the clone the copy
    was made from), a data file rewritten with its own bytes and mode — a test that regenerates a
    fixture identically — is only listed in `rewritten`, unless it carries code, the candidate changed it
    (`strict`), or it is the tool's own (not in `source`). A new file with a code suffix counts where it
    can shadow candidate code: beside candidate files, and by the ecosystem's `shadowing` rules."""
    found: list[str] = []
    suffixes = tuple(code_suffixes)
    for rel, before in stamp.items():
        try:
            now = _stamp(dest / rel)
        except OSError:
            found.append(f"{rel} (deleted)")
            continue
        if now == before:
            continue
        if (
            source is not None
            and rewritten is not None
            and not rel.endswith(suffixes or ("\0",))
            and rel not in strict
            and _same(dest / rel, source / rel)
        ):
            rewritten.append(rel)
            continue
        found.append(f"{rel} (written or replaced)")
    if suffixes:
        rules = shadowing or Shadowing((), (), (), file_beats_folder=False)
        candidate = _Candidate(stamp, rules)
        for directory, dirs, files in os.walk(dest):  # links to folders are listed in dirs, never entered
            here = PurePosixPath(Path(directory).relative_to(dest).as_posix())
            for name in dirs:
                new = here / name
                if new.as_posix() not in stamp and candidate.new_lookup(
                    new, Path(directory, name).is_symlink()
                ):
                    found.append(f"{new} ({LOOKUP_LINK})")
            for name in files:
                new = here / name
                if new.as_posix() in stamp:
                    continue
                if candidate.new_lookup(new, True) or candidate.new_scope(new):
                    link = os.path.islink(os.path.join(directory, name))  # a link to nothing is listed here
                    found.append(f"{new} ({LOOKUP_LINK if link else RESOLVING_FILE})")
                elif name.endswith(suffixes) and candidate.shadowed_by(new):
                    found.append(f"{new} (new code file)")
    return sorted(found)


def discard(dest: Path) -> None:
    if dest.exists() or dest.is_symlink():
        remove(dest)


class _Candidate:
    """Where the candidate's files are, as the shadowing rules need it."""

    def __init__(self, stamp: Stamp, rules: Shadowing) -> None:
        paths = [PurePosixPath(r) for r in stamp]
        self.rules = rules
        self.dirs = {p.parent for p in paths}  # folders holding candidate files
        suffixes = rules.module_suffixes or ("\0",)
        self.modules = {(p.parent, p.stem) for p in paths if p.name.endswith(suffixes)}
        self.folders = {(d.parent, d.name) for p in paths for d in p.parents if d.name}  # every folder
        self.above = {d for p in paths for d in p.parents}  # folders holding or above candidate files

    def new_lookup(self, rel: PurePosixPath, entry: bool) -> bool:
        """Whether a new entry (`entry`: a file or link, not a folder) can add a package where code looks
        packages up: inside a lookup folder (node_modules) under a name that can be a package (not
        ".cache"), or a link named like one (wherever it leads). Anywhere in the copy: any file can be
        code to node (an extensionless script, a `require("./app.txt")`; helper-40: narrowed to folders
        above files with a code suffix, `bin/orders` loading a package the tests wrote was green), so a
        test's scratch project with packages of its own reads as tampering too (a false alarm, fail
        closed: docs/failure-modes.md)."""
        lookup = self.rules.lookup_dirs
        if not lookup or not entry:
            return False
        parts = rel.parts
        if parts[-1] in lookup:
            return True
        return any(part in lookup and not parts[i + 1].startswith(".") for i, part in enumerate(parts[:-1]))

    def new_scope(self, rel: PurePosixPath) -> bool:
        """Whether a new file is one of the ecosystem's scope files where candidate files sit below it."""
        return rel.name in self.rules.scope_files and rel.parent in self.above

    def shadowed_by(self, rel: PurePosixPath) -> bool:
        """Whether a new code file can change what the candidate's code loads: it sits beside candidate
        files, in a cache folder beside them, is a package file making a folder that shadows a candidate
        module, or a module named like a candidate folder (where the ecosystem resolves files first).
        New code in a folder of its own (a test tool's scratch tree) cannot."""
        parent, rules = rel.parent, self.rules
        if parent in self.dirs or (parent.name in rules.cache_dirs and parent.parent in self.dirs):
            return True
        if rel.name in rules.package_files and (parent.parent, parent.name) in self.modules:
            return True
        return (
            rules.file_beats_folder
            and rel.name.endswith(rules.module_suffixes or ("\0",))
            and (parent, rel.stem) in self.folders
        )


def _same(copied: Path, original: Path) -> bool:
    try:
        a, b = copied.lstat(), original.lstat()
        if a.st_mode != b.st_mode or stat.S_ISLNK(a.st_mode) or not stat.S_ISREG(a.st_mode):
            return False
        return a.st_size == b.st_size and copied.read_bytes() == original.read_bytes()
    except OSError:
        return False


def _stamp(path: Path) -> FileStamp:
    st = path.lstat()
    return FileStamp(st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size, st.st_mode)


def copy_into_empty(src: Path, dest: Path) -> bool:
    """copy_tree into `dest` only when it is missing or empty (an environment's copy never lands on top
    of something); whether it was copied (False also when the copy failed: what it left is dest's)."""
    if dest.exists() and any(dest.iterdir()):
        return False
    dest.mkdir(parents=True, exist_ok=True)
    try:
        copy_tree(src, dest)
    except OSError:
        return False
    return True


def copy_tree(src: Path, dest: Path) -> None:
    """src's contents into the directory dest, for what the tool made itself (an environment template, an
    environment): symlinks stay symlinks, modes and mtimes kept (what shutil.copytree(symlinks=True) does).
    GNU cp where it exists: about 3x faster than copytree on a venv of ~1,000 files, which every run copies.
    Raises OSError (cp failing included)."""
    cp = shutil.which("cp") if sys.platform.startswith("linux") else None
    if cp is None:
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        return
    argv = [cp, "-R", "--no-dereference", "--preserve=mode,timestamps", "--no-target-directory"]
    argv += [str(src), str(dest)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise OSError(f"cp {src} {dest}: exit {done.returncode}: {done.stderr.strip()[-300:]}")


def remove(path: Path) -> None:
    """Remove whatever is at `path` without following a link: a file, link, FIFO or device is unlinked, a
    folder removed with its tree, which hostile code may have made read-only or filled with odd modes."""

    def unlock(func: Any, target: str, _exc: Any) -> None:
        parent = os.path.dirname(target)
        os.chmod(parent, stat.S_IRWXU)
        if os.path.isdir(target) and not os.path.islink(target):
            os.chmod(target, stat.S_IRWXU)
        func(target)

    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=unlock)
    else:
        shutil.rmtree(path, onerror=unlock)


def write_new(path: Path, text: str) -> None:
    """`text` in a new file at `path` (in the disposable copy), in place of the repository's own entry of
    that name, whatever it is: a link is replaced, never written through; a folder goes with its tree."""
    remove(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
