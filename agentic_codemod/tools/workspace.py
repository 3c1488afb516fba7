"""Sandboxed file access to one worktree.

API (contract used by the pipeline and the agents' tools):

    ws = Workspace(root, deny_globs=[...], allowed_paths=[...] | None, budgets=Budgets, trace=Trace)
    ws.resolve(rel, write=False) -> Path         # raises Refused(reason) ; Refused subclasses PermissionError
    ws.read(rel, actor) -> str
    ws.write(rel, content, actor) -> None        # whole-file write; creates parent dirs inside root
    ws.write_refreshed(rel, content, actor)      # a lockfile as its own tool wrote it: max_lockfile_bytes
    ws.replace(rel, old, new, actor) -> None     # exact-string replace; `old` must occur exactly once
    ws.delete(rel, actor) -> None
    ws.list(rel=".", actor) -> list[str]         # repo-relative POSIX paths, .git excluded
    ws.search(pattern, actor, glob=None) -> list[str]   # "path:line: text" (regex, bounded output)
    ws.diff(actor) -> str                        # `git diff` of the worktree incl. untracked files
    ws.changed_files -> set[str]; ws.bytes_written -> int
Every call (allowed or refused) lands in the trace. Budget hits raise errors.BudgetExceeded.

Additions: `ws.count_call(actor, tool="call")` (for tools outside the workspace, e.g. run_verification),
`ws.calls`, `Workspace(..., base_commit="HEAD")` for `diff`. Every public method except `resolve`
counts one tool call against `max_tool_calls`, refused calls included.

Order of checks: the spelling (tools/paths.normalise), then `.git`, the secret-file globs (reads and
writes), the deny globs and allowed_paths (writes), then budgets, then the filesystem walk that never
follows a symlink and refuses hard links and special files (tools/rooted.py). A path that allowed_paths
names exactly waives the nameable deny globs (setup.py, lockfiles ...) and may create a conftest.py;
any other new conftest.py (one absent from the base commit) is refused.
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import hashlib
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from agentic_codemod.config import (
    DEFAULT_DENY_GLOBS,
    MAX_LIST_ENTRIES,
    MAX_PATTERN_CHARS,
    MAX_SEARCH_HITS,
    MAX_SEARCH_LINE_CHARS,
    NAMEABLE_DENY_GLOBS,
    SECRET_FILE_GLOBS,
    Budgets,
)
from agentic_codemod.errors import BudgetExceeded
from agentic_codemod.tools.paths import (
    Refused,
    allowed_by,
    denied_by,
    inside_git,
    matches,
    named_paths,
    needs_naming_when_new,
    normalise,
)
from agentic_codemod.tools.rooted import RootedFS
from agentic_codemod.tools.snapshot import GitError, read_blob, resolve_base, snapshot_diff
from agentic_codemod.tools.trace import Trace

__all__ = ["Refused", "Workspace"]

_NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*[+*}](?:[^()\\]|\\.)*\)\s*[+*{]")
T = TypeVar("T")


class Workspace:
    def __init__(
        self,
        root: Path,
        deny_globs: Iterable[str] = DEFAULT_DENY_GLOBS,
        allowed_paths: Iterable[str] | None = None,
        budgets: Budgets | None = None,
        trace: Trace | None = None,
        *,
        base_commit: str = "HEAD",
    ) -> None:
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise NotADirectoryError(f"{root}: workspace root is not a directory")
        # The built-in globs are a floor: a caller adds deny globs, it never removes one.
        self.deny_globs = tuple(dict.fromkeys([*DEFAULT_DENY_GLOBS, *deny_globs, *SECRET_FILE_GLOBS]))
        self.allowed_paths = None if allowed_paths is None else tuple(allowed_paths)
        self.named = named_paths(self.allowed_paths or ())
        self.budgets = budgets or Budgets.model_validate({})
        self.trace = trace if trace is not None else Trace(None)
        self.base_commit = base_commit
        self.fs = RootedFS(self.root, max_read_bytes=self.budgets.max_file_bytes)
        self.changed_files: set[str] = set()
        self.bytes_written = 0
        self.calls: collections.Counter[str] = collections.Counter()
        self._protected: set[str] = set()
        if self.trace.path is not None and self.trace.path.resolve().is_relative_to(self.root):
            self._protected.add(self.trace.path.resolve().relative_to(self.root).as_posix().casefold())

    # -- tools ----------------------------------------------------------------------------------------

    def count_call(self, actor: str, tool: str = "call") -> int:
        """Count one tool call; over max_tool_calls it is traced as refused and BudgetExceeded raised.
        An allowed count writes no line: the tool that counted records its own call."""
        try:
            self._count(actor)
        except BudgetExceeded as exc:
            self.trace.record(actor, tool, {}, "", "refused", str(exc))
            raise
        return self.calls.total()

    def resolve(self, rel: str, write: bool = False) -> Path:
        try:
            norm = self._checked_path(rel, write)
            if norm:
                self.fs.stat(norm, write)
        except Refused as exc:
            self.trace.record("system", "resolve", {"path": rel, "write": write}, "", "refused", exc.reason)
            raise
        return self.root / norm

    def read(self, rel: str, actor: str) -> str:
        def action() -> tuple[str, str]:
            text = self.fs.read_bytes(self._checked_path(rel, write=False)).decode("utf-8")
            return text, f"read {len(text.encode())} bytes sha256={_sha(text)}"

        return self._traced(actor, "read", {"path": rel}, action)

    def write(self, rel: str, content: str, actor: str) -> None:
        def action() -> tuple[None, str]:
            self._write(self._checked_path(rel, write=True), content)
            return None, f"wrote {len(content.encode())} bytes sha256={_sha(content)}"

        self._traced(actor, "write", {"path": rel, "content": content}, action)

    def write_refreshed(self, rel: str, content: str, actor: str) -> None:
        """`write` for a lockfile its own tool refreshed (the bump's update_lockfiles): the same path
        checks, but the size is held to max_lockfile_bytes and left out of max_total_bytes: it is tool
        output the manifest gate pins by sha256, and real lockfiles outgrow max_file_bytes."""

        def action() -> tuple[None, str]:
            self._write(self._checked_path(rel, write=True), content, refreshed=True)
            return None, f"wrote {len(content.encode())} bytes sha256={_sha(content)} (refreshed lockfile)"

        self._traced(actor, "write", {"path": rel, "content": content}, action)

    def replace(self, rel: str, old: str, new: str, actor: str) -> None:
        def action() -> tuple[None, str]:
            norm = self._checked_path(rel, write=True)
            text = self.fs.read_bytes(norm).decode("utf-8")
            found = text.count(old) if old else 0
            if found != 1:
                raise ValueError(f"{rel}: `old` must occur exactly once, found {found}")
            updated = text.replace(old, new, 1)
            self._write(norm, updated)
            return None, f"replaced 1 occurrence; wrote {len(updated.encode())} bytes sha256={_sha(updated)}"

        self._traced(actor, "replace", {"path": rel, "old": old, "new": new}, action)

    def delete(self, rel: str, actor: str) -> None:
        def action() -> tuple[None, str]:
            norm = self._checked_path(rel, write=True)
            self._charge(norm, 0)
            self.fs.unlink(norm)
            self.changed_files.add(norm)
            return None, "deleted"

        self._traced(actor, "delete", {"path": rel}, action)

    def list(self, rel: str = ".", actor: str = "system") -> builtins.list[str]:
        def action() -> tuple[builtins.list[str], str]:
            norm = self._checked_path(rel, write=False)
            with contextlib.closing(self.fs.files(norm)) as files:
                found = [path for path, _ in files][:MAX_LIST_ENTRIES]
            return found, f"{len(found)} entries"

        return self._traced(actor, "list", {"path": rel}, action)

    def search(self, pattern: str, actor: str, glob: str | None = None) -> builtins.list[str]:
        def wanted(path: str) -> bool:
            return self._readable(path) and (glob is None or matches(path, glob))

        def action() -> tuple[builtins.list[str], str]:
            regex = _compile_search(pattern)
            hits: builtins.list[str] = []
            with contextlib.closing(self.fs.files("", wanted)) as files:
                for path, data in files:
                    if data is None or b"\0" in data[:8192]:
                        continue
                    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                        if regex.search(line[:MAX_SEARCH_LINE_CHARS]):
                            hits.append(f"{path}:{number}: {line.strip()[:200]}")
                            if len(hits) >= MAX_SEARCH_HITS:
                                return hits, f"{len(hits)} matches (limit reached)"
            return hits, f"{len(hits)} matches"

        return self._traced(actor, "search", {"pattern": pattern, "glob": glob}, action)

    def diff(self, actor: str) -> str:
        def action() -> tuple[str, str]:
            text = snapshot_diff(self.root, self.base_commit).decode("utf-8", "replace")
            return text, f"{len(text)} chars"

        return self._traced(actor, "diff", {}, action)

    # -- enforcement ----------------------------------------------------------------------------------

    def _traced(
        self, actor: str, tool: str, arguments: dict[str, object], action: Callable[[], tuple[T, str]]
    ) -> T:
        try:
            self._count(actor)
            value, summary = action()
        except (Refused, BudgetExceeded) as exc:
            reason = exc.reason if isinstance(exc, Refused) else str(exc)
            self.trace.record(actor, tool, arguments, "", "refused", reason)
            raise
        except (OSError, ValueError) as exc:  # not found, not UTF-8, `old` not unique: errors, not refusals
            self.trace.record(actor, tool, arguments, f"error: {type(exc).__name__}: {exc}")
            raise
        self.trace.record(actor, tool, arguments, summary)
        return value

    def _count(self, actor: str) -> None:
        """max_tool_calls holds per actor (a role: coder, reviewer, ... or a deterministic step), so the
        rules' own reads and writes never eat into an agent's budget."""
        self.calls[actor] += 1
        limit = self.budgets.role_tool_calls.get(actor, self.budgets.max_tool_calls)
        if self.calls[actor] > limit:
            raise BudgetExceeded("max_tool_calls", limit, self.calls[actor])
        if self.calls.total() > self.budgets.max_run_tool_calls:
            raise BudgetExceeded("max_run_tool_calls", self.budgets.max_run_tool_calls, self.calls.total())

    def _readable(self, norm: str) -> bool:
        return not (
            inside_git(norm) or denied_by(norm, SECRET_FILE_GLOBS) or norm.casefold() in self._protected
        )

    def _checked_path(self, rel: str, write: bool) -> str:
        norm = normalise(rel)
        if write and not norm:
            raise Refused("the worktree root is not a file", rel)
        if inside_git(norm):
            raise Refused("inside .git", rel)
        if norm.casefold() in self._protected:
            raise Refused("the run's trace file", rel)
        hit = denied_by(norm, SECRET_FILE_GLOBS)
        if hit:
            raise Refused(f"secret file (deny glob {hit!r})", rel)
        if write:
            hit = denied_by(norm, self.deny_globs, self.named)
            if hit:
                raise Refused(f"deny glob {hit!r}{_naming_hint(hit)}", rel)
            if self.allowed_paths is not None and not allowed_by(norm, self.allowed_paths):
                raise Refused("outside allowed_paths", rel)
            if needs_naming_when_new(norm) and norm not in self.named and not self._at_base(norm):
                raise Refused("a new conftest.py (name the exact path in allowed_paths to allow it)", rel)
        return norm

    def _at_base(self, norm: str) -> bool:
        """Whether the base commit has a file at `norm`; unknown counts as no (fail closed)."""
        try:
            read_blob(self.root, resolve_base(self.root, self.base_commit), norm)
        except GitError:
            return False
        return True

    def _charge(self, norm: str, size: int, *, refreshed: bool = False) -> None:
        limits = self.budgets
        if refreshed and size > limits.max_lockfile_bytes:
            raise BudgetExceeded("max_lockfile_bytes", limits.max_lockfile_bytes, size)
        if not refreshed and size > limits.max_file_bytes:
            raise BudgetExceeded("max_file_bytes", limits.max_file_bytes, size)
        if norm not in self.changed_files and len(self.changed_files) + 1 > limits.max_changed_files:
            raise BudgetExceeded("max_changed_files", limits.max_changed_files, len(self.changed_files) + 1)
        if not refreshed and self.bytes_written + size > limits.max_total_bytes:
            raise BudgetExceeded("max_total_bytes", limits.max_total_bytes, self.bytes_written + size)

    def _write(self, norm: str, content: str, *, refreshed: bool = False) -> None:
        if not isinstance(content, str):
            raise ValueError("content must be text (str)")
        data = content.encode("utf-8")
        self._charge(norm, len(data), refreshed=refreshed)
        self.fs.write_bytes(norm, data)
        self.changed_files.add(norm)
        if not refreshed:
            self.bytes_written += len(data)


def _naming_hint(glob: str) -> str:
    return " (name the exact path in allowed_paths to allow it)" if glob in NAMEABLE_DENY_GLOBS else ""


def _compile_search(pattern: str) -> re.Pattern[str]:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise Refused(f"search pattern longer than {MAX_PATTERN_CHARS} characters")
    if _NESTED_QUANTIFIER.search(pattern):
        raise Refused("search pattern with a nested quantifier (catastrophic backtracking)")
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from exc


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
