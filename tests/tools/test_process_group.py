"""stop_group ends a whole process group the tool started: SIGTERM, the grace, SIGKILL for what is left."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentic_codemod.tools.process_group import exit_fd, leader_exited, stop_group

# A leader that ignores SIGTERM, with a child in its group that ignores it too (its pid: argv[1]).
STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
open(sys.argv[1], "w").write(str(child.pid))
print("ready", flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    """Not running any more (a zombie whose parent is gone counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def _start(script: str, tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    pid_file = tmp_path / "child.pid"
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(pid_file)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    return proc, int(pid_file.read_text())


def test_a_group_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    proc, child = _start(STUBBORN, tmp_path)
    try:
        code = stop_group(proc, grace_s=0.3)
    finally:
        proc.stdout.close()  # type: ignore[union-attr]
    assert code == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the child in the group survived"


def test_a_leader_that_obeys_sigterm_exits_with_it_and_its_group_goes_too(tmp_path: Path) -> None:
    obeys = STUBBORN.replace("signal.signal(signal.SIGTERM, signal.SIG_IGN)\nchild", "child", 1)
    proc, child = _start(obeys, tmp_path)
    try:
        code = stop_group(proc)
    finally:
        proc.stdout.close()  # type: ignore[union-attr]
    assert code == -signal.SIGTERM  # the leader ended on SIGTERM within the grace
    deadline = time.monotonic() + 10
    while not _gone(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(child), "the child that ignored SIGTERM was not killed after the leader left"


def test_a_group_started_by_another_process_is_stopped_by_its_id(tmp_path: Path) -> None:
    """llm:up starts the server and exits; llm:down knows only the group id."""
    pid_file = tmp_path / "server.pid"
    starter = (
        "import subprocess, sys\n"
        "argv = [sys.executable, '-c', 'import time; time.sleep(120)']\n"
        "p = subprocess.Popen(argv, start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
    )
    subprocess.run([sys.executable, "-c", starter], check=True, timeout=30)
    pgid = int(pid_file.read_text())
    assert os.getpgid(pgid) == pgid
    assert stop_group(pgid) is None
    deadline = time.monotonic() + 10
    while not _gone(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pgid)


def test_a_finished_leader_is_seen_without_being_reaped() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    deadline = time.monotonic() + 30
    while not leader_exited(proc) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert leader_exited(proc)
    assert proc.returncode is None  # not reaped: the pid still holds the group id
    assert stop_group(proc, grace_s=0) == 0


def test_the_exit_descriptor_turns_readable_when_the_leader_exits_and_leaves_it_unreaped() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE, start_new_session=True
    )
    exited = exit_fd(proc)
    if exited is None:
        proc.kill()
        proc.wait()
        pytest.skip("this system has no pidfd (Linux 5.3 and later): waits poll instead (test_verification)")
    try:
        assert select.select([exited], [], [], 0)[0] == []  # still reading its input
        assert proc.stdin is not None
        proc.stdin.close()  # end of its input: it exits
        assert select.select([exited], [], [], 30)[0] == [exited]
        assert leader_exited(proc) and proc.returncode is None  # seen, not reaped
    finally:
        os.close(exited)
    assert stop_group(proc, grace_s=0) == 0


@pytest.mark.parametrize("grace_s", [0.0, 0.5])
def test_stopping_a_group_that_is_already_gone_is_quiet(grace_s: float) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    proc.wait()
    assert stop_group(proc, grace_s=grace_s) == 0


def test_a_group_id_of_the_caller_or_init_is_refused() -> None:
    for pgid in (0, 1, -5):
        with pytest.raises(ValueError, match="refusing to signal process group"):
            stop_group(pgid)


def test_a_bare_group_id_that_is_gone_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """No SIGTERM or SIGKILL to a group that is gone: its number may already be another group's."""
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()  # reaped: the group id is free, and could be reused by anyone
    sent: list[int] = []
    real = os.killpg

    def recording(pgid: int, sig: int) -> None:
        sent.append(sig)
        real(pgid, sig)

    monkeypatch.setattr(os, "killpg", recording)
    assert stop_group(proc.pid, grace_s=0.0) is None
    assert sent == [0], sent  # only the probe
