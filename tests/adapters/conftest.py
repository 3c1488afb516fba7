"""A real runner for adapter tests: it runs the command (own session, timeout kills the group)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentic_codemod.adapters.types import ProcessResult, Runner

TAIL_CHARS = 20_000


def run(
    argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
) -> ProcessResult:
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**os.environ, **env} if env else None,  # like SandboxRunner: a per-call env adds
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessResult(list(argv), None, time.monotonic() - started, "", error=str(exc))
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        return ProcessResult(
            list(argv), None, time.monotonic() - started, output[-TAIL_CHARS:], timed_out=True
        )
    return ProcessResult(list(argv), process.returncode, time.monotonic() - started, output[-TAIL_CHARS:])


@pytest.fixture
def runner() -> Runner:
    return run
