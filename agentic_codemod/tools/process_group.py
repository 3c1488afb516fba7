"""Stopping a process group the tool started in a session of its own (start_new_session=True): one way,
one grace (config.KILL_GRACE_S).

    stop_group(target, grace_s=KILL_GRACE_S, stragglers=None) -> exit code | None
        SIGTERM the group, wait up to grace_s until it is gone, SIGKILL whatever is left; grace_s=0 sends
        SIGKILL at once, then waits (up to DRAIN_S) until every member has exited. `target` is a Popen
        (its leader is reaped last, and its exit code returned) or the group id of a group another
        process of the tool started (`llm:up` -> `llm:down`; returns None).
        `stragglers()` lists more pids that belong to the group's work and get the same signals (a
        verification's daemons that called setsid, found by their run tag).
    leader_exited(proc) -> bool     the leader is gone, checked without reaping it
    live_task(pid, state) -> str | None   /proc/PID, or a live thread's path where the main thread of a
                                    process exited alone (the process shows as a zombie), or None
    stat_fields(where) -> list[bytes] | None   /proc/PID/stat's fields after the name (state first)
    exit_fd(proc) -> int | None     a descriptor that turns readable once the leader has exited (Linux
                                    pidfd; None where there is none): a wait wakes at the exit, not a
                                    poll later. The caller closes it.

The leader of a Popen is not reaped before the SIGKILL: while it is a zombie its pid keeps the group id
reserved, so the SIGKILL cannot reach an unrelated group that reused the number. A leader that another
process traces (ptrace) exits into a zombie only its tracer can reap: stop_group kills the tracer first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any, overload

from agentic_codemod.config import KILL_GRACE_S

POLL_S = 0.05
FIRST_PAUSE_S = 0.002  # the first wait for killed processes to be gone (then doubling up to POLL_S)
DRAIN_S = 1.0  # after the SIGKILL: how long to wait for the stragglers to disappear


@overload
def stop_group(
    target: subprocess.Popen[Any], grace_s: float = ..., stragglers: Callable[[], list[int]] | None = ...
) -> int: ...
@overload
def stop_group(
    target: int, grace_s: float = ..., stragglers: Callable[[], list[int]] | None = ...
) -> None: ...
def stop_group(
    target: subprocess.Popen[Any] | int,
    grace_s: float = KILL_GRACE_S,
    stragglers: Callable[[], list[int]] | None = None,
) -> int | None:
    """SIGTERM, up to grace_s, SIGKILL; the Popen's exit code (None for a bare group id)."""
    proc, pgid = (target, target.pid) if isinstance(target, subprocess.Popen) else (None, target)
    if pgid <= 1:  # killpg(0) is the caller's own group, and 1 is init's
        raise ValueError(f"refusing to signal process group {pgid}")
    extra = stragglers or (lambda: [])
    if proc is None and not _alive(None, pgid) and not extra():
        return None  # a bare group id that is gone: its number may already be someone else's
    if grace_s > 0:
        _signal(pgid, extra(), signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and (_alive(proc, pgid) or extra()):
            time.sleep(POLL_S)
    _signal(pgid, extra(), signal.SIGKILL)
    # A SIGKILLed process still runs until the kernel schedules its exit: wait (up to DRAIN_S) until no
    # member of the group but a zombie is left, so that "killed" means gone when the caller goes on. That
    # is a matter of milliseconds: the waits start short and double up to POLL_S.
    deadline = time.monotonic() + DRAIN_S
    pause = FIRST_PAUSE_S
    while time.monotonic() < deadline and (extra() or _running_members(pgid)):
        time.sleep(pause)
        pause = min(2 * pause, POLL_S)
    if proc is None:
        return None
    _release(proc)
    return proc.wait()


def _release(proc: subprocess.Popen[Any]) -> None:
    """A leader that another process traces (ptrace) exits into a zombie only that tracer can reap, and
    `proc.wait()` would wait for as long as the tracer lives (one the command started, that left the
    session and its run tag, could live forever): SIGKILL whatever traces it, which hands it back."""
    deadline = time.monotonic() + DRAIN_S
    pause = FIRST_PAUSE_S
    while not leader_exited(proc) and time.monotonic() < deadline:
        tracer = _tracer(proc.pid)
        if tracer > 0:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(tracer, signal.SIGKILL)
        time.sleep(pause)
        pause = min(2 * pause, POLL_S)


def _tracer(pid: int) -> int:
    """The pid tracing `pid` (its /proc status's TracerPid), 0 for none or where /proc cannot say."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"TracerPid:"):
                    return int(line.split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return 0


def _running_members(pgid: int) -> bool:
    """Some process of the group has not exited yet (zombies have); False where /proc cannot say."""
    try:
        entries = os.scandir("/proc")
    except OSError:
        return False
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            fields = stat_fields(f"/proc/{entry.name}")  # None: gone meanwhile, or not ours to read
            if (
                fields
                and len(fields) > 2
                and fields[2] == str(pgid).encode()
                and live_task(entry.name, fields[0])
            ):
                return True
    return False


def stat_fields(where: str) -> list[bytes] | None:
    """The fields of `where`/stat (a /proc process or task) after its name, the state first (field 3);
    None where it cannot be read (gone, not ours)."""
    try:
        with open(f"{where}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def live_task(pid: str, state: bytes) -> str | None:
    """Where a live thread of process `pid` shows in /proc: the process itself unless its state (the
    third field of its stat) says zombie or dead; for a zombie whose main thread exited alone while other
    threads still run (what /proc shows of it is empty), one of those threads; None: nothing of it runs."""
    if state not in (b"Z", b"X"):
        return f"/proc/{pid}"
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for task in tasks:
        fields = stat_fields(f"/proc/{pid}/task/{task}")
        if fields and fields[0] not in (b"Z", b"X"):
            return f"/proc/{pid}/task/{task}"
    return None


def _signal(pgid: int, pids: list[int], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def leader_exited(proc: subprocess.Popen[Any]) -> bool:
    """Whether the leader has exited, without reaping it (its pid keeps the group id reserved)."""
    if not hasattr(os, "waitid"):
        return proc.poll() is not None
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def exit_fd(proc: subprocess.Popen[Any]) -> int | None:
    """A pidfd of the (unreaped) leader: readable once it has exited; None where the system has none."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # ENOSYS (kernel before 5.3), or a seccomp filter that refuses it
        return None


def _alive(proc: subprocess.Popen[Any] | None, pgid: int) -> bool:
    """The group still has a member: for our own child, its leader has not exited; for a group another
    process started, some process still carries the group id."""
    if proc is not None:
        return not leader_exited(proc)
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
