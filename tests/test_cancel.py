"""Stop means stopped: SIGTERM during verification ends the test process group, keeps the evidence."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).parent / "agentic-codemod")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def marked(marker: str) -> list[int]:
    """Live processes whose command line carries the marker (sandboxed ones too: this is their host)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                found.append(int(entry))
        except OSError:
            continue
    return [pid for pid in found if alive(pid)]


def wait_for(predicate, limit_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.parametrize("beside", [True, False], ids=["baseline-beside-bump", "one-after-the-other"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cancel_during_verification_kills_the_group_and_keeps_artifacts(
    make_repo, wheels: Path, context_root: Path, tmp_path: Path, sig: signal.Signals, beside: bool
) -> None:
    """Beside the bump (the default with the sandbox), the baseline's tests run in a thread of their own
    and the candidate's may start meanwhile: every test process of both runs dies with the cancel."""
    marker = f"codemod-cancel-{sig.name}-{os.getpid()}-{tmp_path.name}"  # the sandbox hides tmp_path
    slow_test = (
        "import subprocess, sys, time\n"
        "def test_slow():\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', {marker!r}])\n"
        "    time.sleep(600)\n"
    )
    repo = make_repo("slow", {"tests/test_zz_slow.py": slow_test})
    run_dir = tmp_path / "run"
    config = tmp_path / "settings.yml"
    config.write_text(f"concurrent_baseline: {'true' if beside else 'false'}\n")
    proc = subprocess.Popen(
        [
            CLI,
            "run",
            "--repo",
            str(repo),
            "--task",
            "fixtures/tasks/acme-sdk-2-rules.yml",
            "--offline",
            "--run-dir",
            str(run_dir),
            "--context",
            str(context_root),
            "--find-links",
            str(wheels),
            "--no-index",
            "--config",
            str(config),
            "--quiet",
        ],
        cwd=context_root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_for(lambda: bool(marked(marker)), 120), "the slow test never started"
        if beside:  # the baseline's slow test holds the baseline: the candidate's starts beside it
            assert wait_for(lambda: len(marked(marker)) == 2, 120), "the candidate's tests never started"
        daemons = marked(marker)
        assert daemons and all(alive(pid) for pid in daemons)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err.decode()[-2000:]
    assert wait_for(lambda: not any(alive(pid) for pid in daemons), 10), "a test's child survived the cancel"
    assert not marked(marker)
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "cancelled"
    assert (run_dir / "env-after").exists() == beside
    for name in (
        "plan.json",
        "profile.json",
        "review.json",
        "merge_request.md",
        "changes.patch",
        "trace.jsonl",
    ):
        assert (run_dir / name).exists(), name
