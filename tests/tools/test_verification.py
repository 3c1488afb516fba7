"""The verification process: own session, timeout and cancel kill everything it started, no secrets in."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentic_codemod.adapters.types import ProcessResult, Runner
from agentic_codemod.config import SECRET_NAME_MARKERS, VERIFICATION_ENV_ALLOWLIST
from agentic_codemod.tools import verification
from agentic_codemod.tools.trace import Redactor, Trace
from agentic_codemod.tools.verification import RUN_TAG_VAR, SandboxRunner, cut_to, run_process, scrubbed_env

PY = sys.executable


def py(code: str) -> list[str]:
    return [PY, "-c", code]


def gone(pid: int, within_s: float = 3.0) -> bool:
    """The process no longer exists (or is a zombie waiting for a reaper that is not us)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def wait_for_pid(path: Path, within_s: float = 5.0) -> int:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.02)
    raise AssertionError(f"{path} never written")


def env_for(tmp_path: Path) -> dict[str, str]:
    return scrubbed_env(
        os.environ, VERIFICATION_ENV_ALLOWLIST, SECRET_NAME_MARKERS, home=tmp_path / "h", tmp=tmp_path / "t"
    )


DAEMON = """
import os, sys, time
if os.fork() == 0:
    if os.fork() == 0:
        {escape}
        open(sys.argv[1], "w").write(str(os.getpid()))
        time.sleep(60)
    os._exit(0)
time.sleep({leader_sleep})
"""


def test_scrubbed_env_keeps_only_the_allowlist(tmp_path: Path) -> None:
    environ = {"PATH": "/bin", "LANG": "C", "HOME": "/root", "CI_JOB_TOKEN": "x" * 10, "AWS_PROFILE": "p"}
    env = scrubbed_env(
        environ, ["PATH", "LANG"], SECRET_NAME_MARKERS, home=tmp_path / "home", tmp=tmp_path / "tmp"
    )
    assert env["PATH"] == "/bin" and env["LANG"] == "C"
    assert "CI_JOB_TOKEN" not in env and "AWS_PROFILE" not in env
    assert env["HOME"] == str(tmp_path / "home") and (tmp_path / "home").is_dir()
    assert env["TMPDIR"] == env["TMP"] == env["TEMP"] == str(tmp_path / "tmp") and (tmp_path / "tmp").is_dir()
    assert "PYTHONDONTWRITEBYTECODE" not in env  # an ecosystem's settings come from its adapter


def test_the_adapters_sandbox_env_comes_as_extra(tmp_path: Path) -> None:
    from agentic_codemod.adapters import get_adapter

    extra = get_adapter("python").sandbox_env
    env = scrubbed_env({}, [], SECRET_NAME_MARKERS, home=tmp_path / "h", tmp=tmp_path / "t", extra=extra)
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["PYTEST_ADDOPTS"] == "-p no:cacheprovider"


def test_scrubbed_env_drops_secret_names_in_any_case_even_if_allowlisted_or_extra(tmp_path: Path) -> None:
    environ = {"my_api_key": "v" * 8, "Db_Password": "v" * 8, "PATH": "/bin"}
    env = scrubbed_env(
        environ,
        ["PATH", "my_api_key", "Db_Password"],
        SECRET_NAME_MARKERS,
        home=tmp_path / "h",
        tmp=tmp_path / "t",
        extra={"VIRTUAL_ENV": "/venv", "PIP_PASSWORD": "v" * 8, "private_thing": "v"},
    )
    assert env["VIRTUAL_ENV"] == "/venv"
    assert not {"my_api_key", "Db_Password", "PIP_PASSWORD", "private_thing"} & set(env)


def test_a_run_reports_exit_code_duration_and_merged_output(tmp_path: Path) -> None:
    result = run_process(
        py("import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"),
        cwd=tmp_path,
        timeout_s=30,
        env=env_for(tmp_path),
        tail_bytes=1000,
    )
    assert result.exit_code == 3 and not result.ok and not result.timed_out
    assert "out" in result.output_tail and "err" in result.output_tail
    assert result.duration_s > 0 and result.error is None


def test_a_command_that_cannot_start_is_data_not_an_exception(tmp_path: Path) -> None:
    result = run_process(["/nonexistent/binary"], cwd=tmp_path, timeout_s=5, env={}, tail_bytes=1000)
    assert result.exit_code is None and result.error and "FileNotFoundError" in result.error


def test_output_is_cut_head_and_tail(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('HEAD' + 'x' * 200000 + 'TAIL'); sys.stdout.flush()"
    result = run_process(py(code), cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=1000)
    assert result.exit_code == 0
    assert len(result.output_tail.encode()) <= 1000
    assert result.output_tail.startswith("HEAD") and result.output_tail.endswith("TAIL")
    assert "bytes cut" in result.output_tail


def test_short_output_is_kept_whole(tmp_path: Path) -> None:
    result = run_process(
        py("print('a' * 900)"), cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=1000
    )
    assert result.output_tail == "a" * 900 + "\n"


def test_timeout_kills_the_process_group_including_a_double_forked_daemon(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    code = DAEMON.format(escape="pass", leader_sleep=60)
    result = run_process(
        [PY, "-c", code, str(pidfile)],
        cwd=tmp_path,
        timeout_s=3.0,
        env=env_for(tmp_path),
        tail_bytes=1000,
        grace_s=0.5,
    )
    assert result.timed_out and result.exit_code is None and "timed out" in (result.error or "")
    assert gone(wait_for_pid(pidfile))


def test_a_daemon_left_behind_by_a_finished_command_is_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    code = DAEMON.format(escape="pass", leader_sleep=0.5)
    result = run_process(
        [PY, "-c", code, str(pidfile)], cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=500
    )
    assert result.exit_code == 0 and not result.timed_out
    assert gone(wait_for_pid(pidfile))


def test_a_daemon_that_left_the_session_is_found_by_its_run_tag(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    code = DAEMON.format(escape="os.setsid()", leader_sleep=0.5)
    result = run_process(
        [PY, "-c", code, str(pidfile)], cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=500
    )
    assert result.exit_code == 0
    assert gone(wait_for_pid(pidfile))


@pytest.mark.parametrize("pidfd", [True, False], ids=["woken-by-the-exit", "polling"])
def test_a_command_that_closes_its_output_early_is_waited_for_to_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    """The pipe closes long before the leader exits: the wait goes on until the exit (its pidfd, or polls
    where there is none), and the exit code is the leader's."""
    if not pidfd:
        monkeypatch.setattr(verification, "exit_fd", lambda proc: None)
    code = (
        "import os, sys, time; "
        "print('said', flush=True); os.close(1); os.close(2); time.sleep(0.3); sys.exit(7)"
    )

    result = run_process(py(code), cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=500)
    assert (result.exit_code, result.timed_out, result.output_tail.strip()) == (7, False, "said")


def test_only_processes_born_since_the_leader_are_read_for_the_run_tag(tmp_path: Path) -> None:
    """The tag is new with the leader: an older process cannot carry it, so its environment is not read
    (the scan after every run stays cheap on a busy machine). One born later, in a session of its own, is
    found by it."""
    tag = "0123abcd"
    tagged = {**os.environ, RUN_TAG_VAR: tag}
    sleeper = py("import time; time.sleep(60)")
    older = subprocess.Popen(sleeper, env=tagged, start_new_session=True)
    time.sleep(0.05)  # a later clock tick (start times count ticks: 10 ms on Linux)
    leader = subprocess.Popen(sleeper, start_new_session=True)
    time.sleep(0.05)
    younger = subprocess.Popen(sleeper, env=tagged, start_new_session=True)
    try:
        assert verification._members(leader.pid, tag) == [younger.pid]
    finally:
        for proc in (older, leader, younger):
            proc.kill()
            proc.wait()


def no_thread_left(pid: int, within_s: float = 3.0) -> bool:
    """No thread of the process runs (a zombie whose other threads still run is not gone)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        states = []
        for task in Path(f"/proc/{pid}/task").glob("*") if Path(f"/proc/{pid}").exists() else []:
            try:
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
            except (OSError, IndexError):
                continue
        if all(state in ("Z", "X") for state in states):
            return True
        time.sleep(0.05)
    return False


# A daemon whose main thread exits alone while another of its threads runs: /proc shows the process as a
# zombie, with an empty environment; its threads are what runs.
HOLLOW_DAEMON = """
import ctypes, os, sys, threading, time
if os.fork() == 0:
    {escape}
    threading.Thread(target=time.sleep, args=(60,)).start()
    open(sys.argv[1], "w").write(str(os.getpid()))
    ctypes.CDLL(None).pthread_exit(None)
time.sleep(0.5)
"""


@pytest.mark.parametrize("escape", ["os.setsid()", "os.setpgid(0, 0)"], ids=["own-session", "own-group"])
def test_a_daemon_whose_main_thread_exited_while_its_threads_run_is_killed(
    tmp_path: Path, escape: str
) -> None:
    pidfile = tmp_path / "daemon.pid"
    code = HOLLOW_DAEMON.format(escape=escape)
    result = run_process(
        [PY, "-c", code, str(pidfile)], cwd=tmp_path, timeout_s=30, env=env_for(tmp_path), tail_bytes=500
    )
    assert result.exit_code == 0, result.output_tail
    assert no_thread_left(wait_for_pid(pidfile))


# The command's child ptrace-seizes the leader, which then exits: only the tracer could reap it, so waitid
# says "running" while the leader's pidfd says "exited". {escape} runs in the tracer first.
TRACED_LEADER = """
import ctypes, os, sys, time
leader = os.getpid()
said_r, said_w = os.pipe()
if os.fork() == 0:
    {escape}
    seized = ctypes.CDLL(None, use_errno=True).ptrace(0x4206, leader, 0, 0) == 0  # PTRACE_SEIZE
    open(sys.argv[1], "w").write(str(os.getpid()))
    os.write(said_w, b"y" if seized else b"n")
    env = {{k: v for k, v in os.environ.items() if k != "AGENTIC_CODEMOD_RUN"}}
    os.execve("/bin/sleep", ["sleep", "60"], env)  # never waits for its tracee
print("seized" if os.read(said_r, 1) == b"y" else "not seized", flush=True)
os._exit(5)
"""


@pytest.mark.parametrize(
    "escape", ["pass", "os.setsid()"], ids=["in-the-session", "left-the-session-and-tag"]
)
def test_a_leader_held_by_its_own_tracer_is_taken_back_with_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, escape: str
) -> None:
    """The wait ends at the leader's exit (its pidfd), not at the timeout, and without spinning on a
    descriptor that stays readable; the cleanup kills the tracer, even one that left the session and its
    run tag (it would otherwise hold the zombie, and the run, for as long as it lives)."""
    pidfile = tmp_path / "tracer.pid"
    waits: list[int] = []
    real = select.select

    def counted(*args: object) -> object:
        waits.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(select, "select", counted)
    outcome: list[ProcessResult] = []
    argv = [*py(TRACED_LEADER.format(escape=escape)), str(pidfile)]
    worker = threading.Thread(
        target=lambda: outcome.append(
            run_process(argv, cwd=tmp_path, timeout_s=60, env=env_for(tmp_path), tail_bytes=500)
        ),
        daemon=True,
    )
    worker.start()
    worker.join(120)
    if worker.is_alive():  # held: free it, so that the suite goes on
        os.kill(wait_for_pid(pidfile), signal.SIGKILL)
        worker.join(30)
        pytest.fail("run_process waited for the leader's tracer")
    monkeypatch.undo()
    result = outcome[0]
    if "not seized" in result.output_tail:
        pytest.skip("this system does not let a process trace its parent (ptrace_scope)")
    assert (result.exit_code, result.timed_out, result.output_tail.strip()) == (5, False, "seized")
    assert gone(wait_for_pid(pidfile))
    assert len(waits) < 100  # a few waits for output, and the drain's; spinning makes tens of thousands


def test_the_grace_period_lets_a_command_finish_on_sigterm(tmp_path: Path) -> None:
    code = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: (print('cleaned up', flush=True), sys.exit(0)))\n"
        "print('started', flush=True); time.sleep(60)\n"
    )
    result = run_process(
        py(code), cwd=tmp_path, timeout_s=3.0, env=env_for(tmp_path), tail_bytes=500, grace_s=3
    )
    assert result.timed_out and "cleaned up" in result.output_tail


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_a_cancel_during_the_wait_kills_the_group_and_is_reraised(tmp_path: Path, how: str) -> None:
    class Stop(Exception):
        pass

    def on_term(signum, frame):  # type: ignore[no-untyped-def]  # what the CLI does on SIGTERM
        raise Stop

    previous = signal.signal(signal.SIGTERM, on_term)
    pidfile = tmp_path / "daemon.pid"
    code = DAEMON.format(escape="pass", leader_sleep=60)
    sig = signal.SIGINT if how == "SIGINT" else signal.SIGTERM
    # the child must have written its pidfile and installed its handlers first, also on a loaded machine
    timer = threading.Timer(3.0, os.kill, (os.getpid(), sig))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt if how == "SIGINT" else Stop):
            run_process(
                [PY, "-c", code, str(pidfile)],
                cwd=tmp_path,
                timeout_s=30,
                env=env_for(tmp_path),
                tail_bytes=500,
            )
    finally:
        timer.cancel()
        signal.signal(signal.SIGTERM, previous)
    assert gone(wait_for_pid(pidfile))


def test_sandbox_runner_is_a_runner_and_traces_every_run(tmp_path: Path) -> None:
    trace = Trace(tmp_path / "trace.jsonl")
    runner: Runner = SandboxRunner(env=env_for(tmp_path), tail_bytes=1000, trace=trace)
    result = runner([PY, "-c", "print('hi')"], cwd=tmp_path, timeout_s=30)
    assert isinstance(result, ProcessResult) and result.ok
    (line,) = trace.lines()
    assert line["tool"] == "run_process" and line["decision"] == "allowed" and "hi" in line["result"]


def test_sandbox_runner_never_passes_a_secret_named_variable(tmp_path: Path) -> None:
    trace = Trace(tmp_path / "trace.jsonl")
    runner = SandboxRunner(env={**env_for(tmp_path), "LEAKED_TOKEN": "t" * 12}, tail_bytes=4000, trace=trace)
    result = runner(
        py("import os, json; print(json.dumps(dict(os.environ)))"),
        cwd=tmp_path,
        timeout_s=30,
        env={"VIRTUAL_ENV": "/v", "GITLAB_TOKEN": "g" * 12},
    )
    seen = json.loads(result.output_tail)
    assert "GITLAB_TOKEN" not in seen and "LEAKED_TOKEN" not in seen and seen["VIRTUAL_ENV"] == "/v"
    assert RUN_TAG_VAR in seen
    refused = {line["arguments"]["name"] for line in trace.refusals()}
    assert refused == {"GITLAB_TOKEN", "LEAKED_TOKEN"}


def test_sandbox_runner_redacts_what_the_command_prints(tmp_path: Path) -> None:
    """A test can still read secrets it finds on disk or in /proc; they do not reach the artifacts."""
    secret = "parent-secret-" + "9" * 8
    trace = Trace(tmp_path / "trace.jsonl", Redactor([secret]))
    runner = SandboxRunner(env=env_for(tmp_path), tail_bytes=4000, trace=trace)
    result = runner(py(f"print('found {secret}')"), cwd=tmp_path, timeout_s=30)
    assert secret not in result.output_tail and "found [REDACTED]" in result.output_tail
    assert secret not in (tmp_path / "trace.jsonl").read_text()


def test_a_timed_out_run_is_a_refused_trace_line(tmp_path: Path) -> None:
    trace = Trace(None)
    runner = SandboxRunner(env=env_for(tmp_path), tail_bytes=500, trace=trace, grace_s=0.2)
    result = runner(py("import time; time.sleep(30)"), cwd=tmp_path, timeout_s=0.5)
    assert result.timed_out
    (line,) = trace.refusals()
    assert "timed out" in line["reason"]


def test_a_runner_keeping_more_gives_readers_the_middle_and_the_record_keeps_the_tail(tmp_path: Path) -> None:
    """A test run's output is kept whole up to budgets.test_output_bytes for its result readers (a failure
    printed in the middle of a long run is read), and cut to output_tail_bytes for the record."""
    script = "print('x' * 50_000); print('not ok 150 the middle failure'); print('y' * 50_000)"
    argv = [sys.executable, "-c", script]
    short = SandboxRunner(env=env_for(tmp_path), tail_bytes=6_000)
    assert "the middle failure" not in short(argv, cwd=tmp_path, timeout_s=30).output_tail
    whole = short.keeping(1_000_000)(argv, cwd=tmp_path, timeout_s=30).output_tail
    assert "not ok 150 the middle failure" in whole and "bytes cut" not in whole
    record = cut_to(whole, 6_000)
    assert len(record.encode()) <= 6_000 and "bytes cut" in record and record.endswith("y" * 100 + "\n")
