"""File operations below one root directory that never follow a symlink — the filesystem half of the
workspace (policy, budgets and the trace are the other half, in workspace.py).

Paths are already-normalised repository-relative POSIX strings (tools/paths.normalise). The tree is walked
from a descriptor of the root one component at a time: lstat, refuse anything but a real directory, open
with O_NOFOLLOW relative to the parent's descriptor, compare the opened inode with the checked one. The
last component must be a regular file; a write also refuses st_nlink > 1, writes a temporary file in the
same directory, checks the target again and renames over it (rename replaces a directory entry, it never
follows one). `between_check_and_use(dir_fd, name)` runs between every check and its use (a no-op that
tests use to swap files).

    fs = RootedFS(root, max_read_bytes)
    fs.stat(path, write) -> os.stat_result | None     the checks alone; None when the file does not exist
    fs.read_bytes(path) -> bytes
    fs.write_bytes(path, data)                        creates missing parent directories
    fs.unlink(path)
    fs.files(path, want) -> iterator of (path, bytes | None)   regular files, .git never entered
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Generator
from pathlib import Path

from agentic_codemod.tools.paths import Refused, inside_git

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SWAPPED = (errno.ELOOP, errno.EMLINK, errno.ENOTDIR)
SWAPPED = "path changed between check and use"


class RootedFS:
    def __init__(self, root: Path, max_read_bytes: int) -> None:
        self.root = root
        self.max_read_bytes = max_read_bytes

    def between_check_and_use(self, dir_fd: int, name: str) -> None:
        """Between the check of a component and its use. A no-op; tests swap files in here."""

    def stat(self, path: str, write: bool) -> os.stat_result | None:
        fd = self._walk(_parent(path), create=False)
        if fd is None:
            return None
        try:
            return self._final(fd, path, write)
        finally:
            os.close(fd)

    def read_bytes(self, path: str) -> bytes:
        fd = self._walk(_parent(path), create=False)
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", path)
        try:
            checked = self._final(fd, path, write=False)
            if checked is None:
                raise FileNotFoundError(errno.ENOENT, "no such file", path)
            self.between_check_and_use(fd, _name(path))
            return self._read_at(fd, _name(path), path, checked)
        finally:
            os.close(fd)

    def write_bytes(self, path: str, data: bytes) -> None:
        fd = self._walk(_parent(path), create=True)
        assert fd is not None
        name = _name(path)
        tmp = f".{name[:64]}.codemod-{secrets.token_hex(4)}.tmp"
        try:
            checked = self._final(fd, path, write=True)
            self.between_check_and_use(fd, name)
            with os.fdopen(os.open(tmp, _NEW_FILE, 0o666, dir_fd=fd), "wb") as handle:
                handle.write(data)
                if checked is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(checked.st_mode))
            _same(fd, name, checked, path)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            if _lstat(fd, tmp) is not None:
                os.unlink(tmp, dir_fd=fd)
            raise
        finally:
            os.close(fd)

    def unlink(self, path: str) -> None:
        fd = self._walk(_parent(path), create=False)
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "no such file", path)
        try:
            checked = self._final(fd, path, write=True)
            if checked is None:
                raise FileNotFoundError(errno.ENOENT, "no such file", path)
            self.between_check_and_use(fd, _name(path))
            _same(fd, _name(path), checked, path)
            os.unlink(_name(path), dir_fd=fd)
        finally:
            os.close(fd)

    def files(
        self, path: str, want: Callable[[str], bool] | None = None
    ) -> Generator[tuple[str, bytes | None], None, None]:
        """Regular files below `path` in sorted order; content read when `want(path)` (None: unreadable)."""
        fd = self._walk([_plain(p, path) for p in path.split("/")] if path else [], create=False)
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "no such directory", path)
        try:
            for top, dirnames, filenames, top_fd in os.fwalk(".", dir_fd=fd, follow_symlinks=False):
                dirnames[:] = sorted(d for d in dirnames if not inside_git(d))
                base = os.path.normpath(os.path.join(path or ".", top)).replace(os.sep, "/")
                for name in sorted(filenames):
                    rel = name if base == "." else f"{base}/{name}"
                    yield rel, (self._content(top_fd, name, rel) if want and want(rel) else None)
        finally:
            os.close(fd)

    def _walk(self, dirs: list[str], create: bool) -> int | None:
        """Descriptor of the directory `dirs` below the root, each component checked; None if missing."""
        fd = os.open(self.root, _DIR)
        try:
            for depth, name in enumerate(dirs):
                shown = "/".join(dirs[: depth + 1])
                checked = _lstat(fd, name)
                if checked is None and not create:
                    os.close(fd)
                    return None
                if checked is None:
                    os.mkdir(name, dir_fd=fd)
                    checked = _lstat(fd, name)
                if checked is None or stat.S_ISLNK(checked.st_mode):
                    raise Refused("symlink in path", shown)
                if not stat.S_ISDIR(checked.st_mode):
                    raise Refused("path component is not a directory", shown)
                self.between_check_and_use(fd, name)
                child = _open(fd, name, _DIR, shown)
                os.close(fd)
                fd = child
                if not _same_object(os.fstat(fd), checked):
                    raise Refused(SWAPPED, shown)
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _final(self, dir_fd: int, path: str, write: bool) -> os.stat_result | None:
        checked = _lstat(dir_fd, _name(path))
        if checked is None:
            return None
        mode = checked.st_mode
        if stat.S_ISLNK(mode):
            raise Refused("symlink in path", path)
        if stat.S_ISDIR(mode):
            raise Refused("is a directory", path)
        if not stat.S_ISREG(mode):
            raise Refused("device file, FIFO or socket", path)
        if write and checked.st_nlink > 1:
            raise Refused(f"hard link (st_nlink={checked.st_nlink})", path)
        return checked

    def _read_at(self, dir_fd: int, name: str, path: str, checked: os.stat_result) -> bytes:
        fd = _open(dir_fd, name, _FILE, path)
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or not _same_object(opened, checked):
                raise Refused(SWAPPED, path)
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(self.max_read_bytes + 1)
            if len(data) > self.max_read_bytes:
                raise Refused(f"file larger than max_file_bytes ({self.max_read_bytes})", path)
            return data
        finally:
            os.close(fd)

    def _content(self, dir_fd: int, name: str, path: str) -> bytes | None:
        checked = _lstat(dir_fd, name)
        if checked is None or not stat.S_ISREG(checked.st_mode):
            return None
        try:
            return self._read_at(dir_fd, name, path, checked)
        except OSError:  # Refused included: skipped, not fatal, while walking
            return None


def _parent(path: str) -> list[str]:
    return [_plain(part, path) for part in path.split("/")[:-1]]


def _name(path: str) -> str:
    return _plain(path.rsplit("/", 1)[-1], path)


def _plain(part: str, path: str) -> str:
    """A second line behind paths.normalise: openat() on ".." would leave the root."""
    if part in ("", ".", "..") or "\0" in part:
        raise Refused("not a plain path component", path)
    return part


def _lstat(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _same(dir_fd: int, name: str, checked: os.stat_result | None, path: str) -> None:
    now = _lstat(dir_fd, name)
    if (now is None) != (checked is None) or (now and checked and not _same_object(now, checked)):
        raise Refused(SWAPPED, path)


def _same_object(a: os.stat_result, b: os.stat_result) -> bool:
    """Same file, not merely the same inode number: a freed inode is reused at once by the next file
    (a symlink planted in its place), so type and change time are compared too."""
    return (a.st_dev, a.st_ino, stat.S_IFMT(a.st_mode), a.st_ctime_ns) == (
        b.st_dev,
        b.st_ino,
        stat.S_IFMT(b.st_mode),
        b.st_ctime_ns,
    )


def _open(dir_fd: int, name: str, flags: int, shown: str) -> int:
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in _SWAPPED:
            raise Refused(f"{SWAPPED} (symlink or not a directory)", shown) from exc
        raise
