"""Run one command the way verification must: own process group, timeout, scrubbed env, bounded output.

API (contract used by adapters and the pipeline):

    env = scrubbed_env(os.environ, allowlist, markers, home=Path, tmp=Path, extra={...}) -> dict[str, str]
    result = run_process(argv, cwd=Path, timeout_s=float, env=dict, tail_bytes=int) -> ProcessResult
        never raises; on timeout or cancel kills the whole process group (children included);
        output is stdout+stderr merged, cut head+tail to tail_bytes.
    runner = SandboxRunner(env=..., tail_bytes=...)   # satisfies adapters.types.Runner

Additions: `run_process(..., grace_s=KILL_GRACE_S, cancel=threading.Event)`; `SandboxRunner(..., trace=,
redactor=, markers=, actor=)` drops secret-named names from a per-call `env` (each drop is a refused trace
line), redacts the output tail and records every run. A cancel (KeyboardInterrupt, or whatever exception
the CLI's SIGTERM handler raises) during the wait kills the group and is re-raised — the only exception
that escapes. A run waited on by another thread than the one the signal reaches (the baseline's tests
beside the bump: workflow/baseline_run.py) is cancelled through `cancel` (`runner.cancelled_by(event)`):
once the event is set, the wait stops within a poll, kills the group and raises Cancelled.

Cleanup after every run: the command leads a new session (its pid, the group and session id, stays
reserved because the leader is reaped last). Whatever is left in that group or session, or carries this
run's RUN_TAG_VAR (a daemon that called setsid), is killed: SIGTERM, grace, SIGKILL on timeout or cancel;
SIGKILL at once after a normal exit.
"""

from __future__ import annotations

import copy
import os
import select
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentic_codemod.adapters.types import ProcessResult
from agentic_codemod.config import KILL_GRACE_S, SECRET_NAME_MARKERS
from agentic_codemod.errors import Cancelled
from agentic_codemod.tools.process_group import exit_fd, leader_exited, live_task, stat_fields, stop_group
from agentic_codemod.tools.sandbox import Box
from agentic_codemod.tools.trace import Redactor, Trace

RUN_TAG_VAR = "AGENTIC_CODEMOD_RUN"
_POLL_S = 0.05
_DRAIN_S = 1.0
_START_TIME = 19  # field 22 of /proc/PID/stat (clock ticks since boot), counted after the ")" of its name


def scrubbed_env(
    environ: Mapping[str, str],
    allowlist: Sequence[str],
    markers: Sequence[str],
    *,
    home: Path,
    tmp: Path,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Allowlisted variables only, never a secret-named one (also not from `extra`); HOME and TMP*
    point into the run dir (created here). The ecosystem's own settings (no bytecode, no test cache, no
    update checks: the adapter's `sandbox_env`) come as `extra`."""
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env = {name: environ[name] for name in allowlist if name in environ}
    env.update(
        {
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "TMP": str(tmp),
            "TEMP": str(tmp),
        }
    )
    env.update(extra or {})
    return {k: v for k, v in env.items() if not secret_name(k, markers)}


def secret_name(name: str, markers: Sequence[str] = SECRET_NAME_MARKERS) -> bool:
    return any(marker.upper() in name.upper() for marker in markers)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout_s: float,
    env: Mapping[str, str],
    tail_bytes: int,
    grace_s: float = KILL_GRACE_S,
    cancel: threading.Event | None = None,
) -> ProcessResult:
    argv = [str(a) for a in argv]
    tag = uuid.uuid4().hex
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**env, RUN_TAG_VAR: tag},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        return ProcessResult(argv, None, time.monotonic() - start, "", error=f"{type(exc).__name__}: {exc}")
    output = _HeadTail(tail_bytes)
    timed_out = False
    born = _start_ticks(proc.pid)  # read while the leader's pid is surely its own (unreaped)
    assert proc.stdout is not None
    try:
        timed_out = _pump(proc, proc.stdout.fileno(), output, start + timeout_s, cancel)
        stop_group(proc, grace_s if timed_out else 0.0, lambda: _members(proc.pid, tag, born))
        _drain(proc.stdout.fileno(), output)
    except BaseException:  # a cancel; once the cleanup above has reaped the leader, its ids are not ours
        if proc.returncode is None:
            stop_group(proc, grace_s, lambda: _members(proc.pid, tag, born))
        raise
    finally:
        proc.stdout.close()
        proc.wait()
    duration = time.monotonic() - start
    exit_code = None if timed_out else proc.returncode
    error = f"timed out after {timeout_s:g}s; process group killed" if timed_out else None
    return ProcessResult(argv, exit_code, duration, output.text(), timed_out=timed_out, error=error)


class SandboxRunner:
    """`adapters.types.Runner` for production: fixed scrubbed env, bounded output, traced runs."""

    def __init__(
        self,
        env: Mapping[str, str],
        tail_bytes: int,
        *,
        trace: Trace | None = None,
        redactor: Redactor | None = None,
        markers: Sequence[str] = SECRET_NAME_MARKERS,
        actor: str = "verification",
        grace_s: float = KILL_GRACE_S,
    ) -> None:
        self.markers = tuple(markers)
        self.trace = trace
        self.redactor = redactor or (trace.redactor if trace else None)
        self.actor = actor
        self.tail_bytes = tail_bytes
        self.grace_s = grace_s
        self.env = self._admit(dict(env))
        self.box: Box | None = None
        self.cancel: threading.Event | None = None

    def boxed(self, box: Box) -> SandboxRunner:
        """The same runner, running every command inside `box` (tools/sandbox.py)."""
        runner = copy.copy(self)
        runner.box = box
        return runner

    def cancelled_by(self, event: threading.Event) -> SandboxRunner:
        """The same runner; its commands are stopped (group killed, Cancelled raised) once `event` is set."""
        runner = copy.copy(self)
        runner.cancel = event
        return runner

    def keeping(self, tail_bytes: int) -> SandboxRunner:
        """The same runner, keeping up to `tail_bytes` of each command's output (head + tail)."""
        runner = copy.copy(self)
        runner.tail_bytes = tail_bytes
        return runner

    def __call__(
        self, argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
    ) -> ProcessResult:
        merged = {**self.env, **self._admit(dict(env or {}))}
        outer, outer_cwd = [str(a) for a in argv], cwd
        if self.box is not None:
            outer, outer_cwd, merged = self.box.wrap(argv, cwd, merged)
        result = run_process(
            outer,
            cwd=outer_cwd,
            timeout_s=timeout_s,
            env=merged,
            tail_bytes=self.tail_bytes,
            grace_s=self.grace_s,
            cancel=self.cancel,
        )
        result = ProcessResult(
            [str(a) for a in argv],
            result.exit_code,
            result.duration_s,
            result.output_tail,
            timed_out=result.timed_out,
            error=result.error,
        )
        if self.redactor is not None:
            result = ProcessResult(
                result.argv,
                result.exit_code,
                result.duration_s,
                self.redactor.redact(result.output_tail),
                timed_out=result.timed_out,
                error=result.error,
            )
        if self.trace is not None:
            self.trace.record(
                self.actor,
                "run_process",
                {
                    "argv": list(result.argv),
                    "cwd": str(cwd),
                    "timeout_s": timeout_s,
                    "isolation": self.box.isolation if self.box else "none",
                },
                f"exit={result.exit_code} duration={result.duration_s:.2f}s\n{result.output_tail}",
                decision="refused" if result.timed_out else "allowed",
                reason=result.error or "",
            )
        return result

    def _admit(self, env: dict[str, str]) -> dict[str, str]:
        for name in [n for n in env if secret_name(n, self.markers)]:
            del env[name]
            if self.trace is not None:
                self.trace.record(
                    self.actor,
                    "env",
                    {"name": name},
                    "",
                    decision="refused",
                    reason="secret-named variable never reaches a verification process",
                )
        return env


class _HeadTail:
    """Keeps the first quarter and the last bytes of a stream; at most `limit` bytes in total."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 64)
        self.head_limit = self.limit // 4
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        keep = self.limit - self.head_limit
        if len(self.tail) > keep:
            del self.tail[: len(self.tail) - keep]

    def text(self) -> str:
        if self.total <= self.limit:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        widest = len(_cut_marker(self.total))
        tail = bytes(self.tail[-(self.limit - len(self.head) - widest) :])
        marker = _cut_marker(self.total - len(self.head) - len(tail))
        return (bytes(self.head) + marker + tail).decode("utf-8", "replace")


def cut_to(text: str, limit: int) -> str:
    """`text` as a run's output of at most `limit` bytes keeps it: the first quarter and the tail."""
    kept = _HeadTail(limit)
    kept.add(text.encode("utf-8", "replace"))
    return kept.text()


def _cut_marker(cut: int) -> bytes:
    return f"\n[... {cut} bytes cut ...]\n".encode()


def _pump(
    proc: subprocess.Popen[bytes], fd: int, output: _HeadTail, deadline: float, cancel: threading.Event | None
) -> bool:
    """Read output until the leader exits (left unreaped) or the deadline passes; True on timeout.
    Cancelled once `cancel` is set (the caller kills the group). The wait wakes when output comes or the
    leader exits (its pidfd, where there is one), else within a poll."""
    os.set_blocking(fd, False)
    exited = exit_fd(proc)
    waits_on = [fd] if exited is None else [fd, exited]
    try:
        while not leader_exited(proc):
            if cancel is not None and cancel.is_set():
                raise Cancelled("the run was cancelled while a command ran")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            if not waits_on:  # the pipe is closed and there is no pidfd
                time.sleep(min(_POLL_S, remaining))
                continue
            ready, _, _ = select.select(waits_on, [], [], min(_POLL_S, remaining))
            if fd in ready and not _read(fd, output):
                waits_on.remove(fd)  # closed: a daemon of the command may still run, the leader too
            if exited is not None and exited in ready:
                # Its whole thread group has exited. Where waitid does not show it yet, a tracer (ptrace,
                # the command's own) holds the zombie: the cleanup kills the tracer and takes it back.
                return False
        return False
    finally:
        if exited is not None:
            os.close(exited)


def _drain(fd: int, output: _HeadTail) -> None:
    """Read what is left in the pipe, bounded in time (a killed daemon may hold it briefly)."""
    deadline = time.monotonic() + _DRAIN_S
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], _POLL_S)
        if ready and not _read(fd, output):
            return


def _read(fd: int, output: _HeadTail) -> bool:
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return True
    except OSError:
        return False
    if chunk:
        output.add(chunk)
    return bool(chunk)


def _members(sid: int, tag: str, born: int | None = None) -> list[int]:
    """Live processes in the session or group `sid`, or carrying the run tag (Linux /proc); a zombie whose
    threads still run counts as live (its main thread exited alone).
    Only processes started no earlier than the leader `sid` are looked at: the tag is new with the leader,
    so an older process cannot have inherited it (and one that exec'd itself with it was the command's
    already, outside of it). That keeps the environ reads to the processes born since. `born`: the
    leader's start time, read while it was unreaped (default: read now)."""
    found: list[int] = []
    needle = f"{RUN_TAG_VAR}={tag}".encode()
    born = _start_ticks(sid) if born is None else born
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) in (os.getpid(), sid):
            continue
        fields = stat_fields(f"/proc/{entry}")
        if not fields:
            continue
        try:
            where = live_task(entry, fields[0])
            if where is None:
                continue
            if sid in (int(fields[2]), int(fields[3])):
                found.append(int(entry))
                continue
            if int(fields[_START_TIME]) < born:
                continue
            with open(f"{where}/environ", "rb") as handle:
                if needle in handle.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _start_ticks(pid: int) -> int:
    """When `pid` started, in clock ticks since boot; 0 (every process is then looked at) if unknown."""
    fields = stat_fields(f"/proc/{pid}")
    try:
        return int(fields[_START_TIME]) if fields else 0
    except (IndexError, ValueError):
        return 0
