"""The `apm` CLI's verdict, once per lock: a record that `apm install --frozen` and `apm audit` passed on
exactly this context, so the next run on the same bytes does not start the CLI again (about 6 s a run).

    verification_key(root, manifest) -> str     sha256 over every byte the CLI's verdict depends on
    VerifiedCache.from_environment()            where the records live (CODEMOD_APM_CACHE, else
                                                $XDG_CACHE_HOME or ~/.cache, /agentic-codemod/apm-verified)
    cache.holds(key) / cache.record(key, ...)

The key covers, byte for byte: apm.yml, apm.lock.yaml, apm-policy.yml, the project's .apm/, everything
installed (apm_modules/, .agents/: every file, symlink and directory, nothing skipped) and the source
of every local dependency apm.yml names; plus the apm CLI's version and this tool's. Any change to any
of them, a hand edit of one installed file included, is another key: the CLI runs again. The in-process
checks (content hash against the lock, hooks, symlinks, hidden Unicode, pins) run on every run whatever
the cache says (load.py).

Where a record may live: a directory of the current user that no one else can write (owned by the uid,
no group or other write bit, like ssh's checks), outside the repository under change (the sandbox never
sees the caller's HOME or the CI project directory). A cache that fails these checks is not read and not
written: the CLI runs, as without a cache. A record is written only after the CLI passed on this run.

In GitLab, `codemod:context` verifies (`python -m agentic_codemod.apm --record-key FILE`) and hands the
record and its key on as artifacts; a run job sets CODEMOD_APM_CACHE to that directory and
CODEMOD_APM_VERIFIED_KEY to that key, so no other file in the directory (say, one committed to the
checkout) can vouch for anything.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from agentic_codemod import __version__
from agentic_codemod.apm.manifest import Manifest
from agentic_codemod.tools.private import private

FORMAT = "agentic-codemod/apm-verified@1"
ENV = "CODEMOD_APM_CACHE"
PINNED_ENV = "CODEMOD_APM_VERIFIED_KEY"  # CI: the one key the context job verified (other records ignored)
KEYED_FILES = ("apm.yml", "apm.lock.yaml", "apm-policy.yml")
KEYED_TREES = (".apm", "apm_modules", ".agents")


def verification_key(root: Path, manifest: Manifest, apm: str) -> str:
    """sha256 (hex) over everything the CLI's verdict depends on (see the module docstring)."""
    parts: dict[str, str] = {"format": FORMAT, "tool": __version__, "apm": _apm_identity(apm)}
    for name in KEYED_FILES:
        parts[name] = _file_digest(root / name)
    for name in KEYED_TREES:
        parts[name] = tree_digest(root / name)
    for dep in manifest.dependencies:
        if dep.local_path is not None:
            parts[f"local:{dep.local_path}"] = tree_digest(
                (root / Path(dep.local_path).expanduser()).resolve()
            )
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def tree_digest(root: Path) -> str:
    """sha256 over a whole tree: every directory, regular file (bytes and executable bit) and symlink
    (its target text), by relative path; nothing skipped. "absent" when there is no such directory."""
    if root.is_symlink() or not root.is_dir():
        return "symlink:" + os.readlink(root) if root.is_symlink() else "absent"
    h = hashlib.sha256()
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        base = Path(current)
        for name in sorted(dirs + files):
            path = base / name
            rel = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                h.update(b"L\0" + rel + b"\0" + os.fsencode(os.readlink(path)) + b"\0")
            elif stat.S_ISDIR(st.st_mode):
                h.update(b"D\0" + rel + b"\0")
            elif stat.S_ISREG(st.st_mode):
                content = hashlib.sha256(path.read_bytes()).hexdigest().encode()
                mode = b"x" if st.st_mode & 0o111 else b"-"
                h.update(b"F\0" + rel + b"\0" + mode + content + b"\0")
            else:
                h.update(b"O\0" + rel + b"\0" + str(stat.S_IFMT(st.st_mode)).encode() + b"\0")
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    if path.is_symlink():
        return "symlink:" + os.readlink(path)
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"


def _apm_identity(apm: str) -> str:
    """The apm CLI's version where its distribution is installed here, else the executable's path and
    status (a replaced binary is another key)."""
    try:
        return f"apm-cli {metadata.version('apm-cli')} at {apm}"
    except metadata.PackageNotFoundError:
        st = os.stat(apm)
        return f"{apm} size {st.st_size} mtime {st.st_mtime_ns}"


@dataclass(frozen=True)
class VerifiedCache:
    directory: Path
    pinned: str | None = None  # when set, the only key a record may vouch for

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> VerifiedCache | None:
        """The cache the environment names; None (no cache: the CLI always runs) without any home."""
        env = os.environ if environ is None else environ
        pinned = env.get(PINNED_ENV) or None
        if env.get(ENV):
            return cls(Path(env[ENV]).expanduser(), pinned)
        try:
            home = env.get("HOME") or str(Path.home())
        except (RuntimeError, KeyError):  # no HOME and no passwd entry (an arbitrary container uid)
            return None
        base = env.get("XDG_CACHE_HOME") or str(Path(home) / ".cache")
        return cls(Path(base) / "agentic-codemod" / "apm-verified", pinned)

    def holds(self, key: str) -> bool:
        """True only for a record of exactly this key, in a directory and file only this user can write
        (and, with a pinned key, only for that key)."""
        if self.pinned is not None and key != self.pinned:
            return False
        entry = self.directory / f"{key}.json"
        if not (private(self.directory) and private(entry, regular=True)):
            return False
        try:
            data = json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(data, dict) and data.get("format") == FORMAT and data.get("key") == key

    def record(self, key: str, lock_sha256: str) -> Path | None:
        """Write the record (atomically, mode 0600); None when the directory is not safe to write."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
        if not private(self.directory):
            return None
        body = {"format": FORMAT, "key": key, "lock_sha256": lock_sha256, "verified_at": _now()}
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".record-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(body, handle)
        entry = self.directory / f"{key}.json"
        os.replace(tmp, entry)
        return entry

    def lock_path(self, key: str) -> Path | None:
        """A lock file for one key, so that concurrent runs on the same context verify once."""
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return None
        return self.directory / f"{key}.lock" if private(self.directory) else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
