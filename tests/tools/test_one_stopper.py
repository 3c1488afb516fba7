"""Processes the package started are stopped in one place: tools/process_group.stop_group (one grace,
config.KILL_GRACE_S). A scan of the source fails on a signal sent anywhere else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "agentic_codemod"
STOPPER = PACKAGE / "tools" / "process_group.py"
SIGNALLING = frozenset({"killpg", "kill", "terminate", "send_signal", "pidfd_send_signal"})
# Not a process group: ast-grep runs as one process without a session of its own; Popen.kill ends it.
ALLOWED = {("workflow/scan.py", "kill")}


def signals_sent(source: str) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.func.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SIGNALLING
    ]


@pytest.mark.parametrize(
    "source",
    ["os.killpg(pid, signal.SIGKILL)", "os.kill(pid, 9)", "proc.terminate()", "p.send_signal(sig)"],
)
def test_the_scan_finds_a_signal(source: str) -> None:
    assert signals_sent(source)


def test_no_process_is_signalled_outside_the_stopper() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == STOPPER:
            continue
        rel = path.relative_to(PACKAGE).as_posix()
        for line, what in signals_sent(path.read_text(encoding="utf-8")):
            if (rel, what) not in ALLOWED:
                found.append(f"{rel}:{line} {what}()")
    assert found == [], "stop process groups with tools/process_group.stop_group:\n" + "\n".join(found)
    assert signals_sent(STOPPER.read_text(encoding="utf-8"))
