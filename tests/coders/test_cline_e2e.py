"""The real Cline CLI (npm cline 3.0.x, installed into .cache/cline by scripts/test.sh) as the coder of
a full run against the mock endpoint (the acme task ends green), and run alone against it: a hang is
killed on the wall clock, an edit outside the allowed paths is refused and nothing of it is applied.
Without Cline these tests skip with the reason; on CI (CI=true) they fail instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ROOT, TASKS

from agentic_codemod.coders.cline import ClineConfig, find_cline, run_cline
from agentic_codemod.coders.cline_brain import apply_changes
from agentic_codemod.errors import CandidateRejected
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Workspace

pytestmark = pytest.mark.slow
TASK = "acme-sdk-2.yml"
CLINE = find_cline(os.environ, [ROOT])


@pytest.fixture(autouse=True)
def cline_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if CLINE is None:
        if os.environ.get("CI") == "true":
            pytest.fail("cline is not installed on CI: scripts/test.sh installs it into .cache/cline")
        pytest.skip("cline CLI not installed (scripts/test.sh installs cline@3.0 into .cache/cline)")
    monkeypatch.setenv("CODEMOD_LLM_PROBE", str(tmp_path / "probe.json"))


def _cline_run(run_codemod: Any, repo: Path, *extra: str) -> Any:
    return run_codemod(repo, TASK, "--coder", "cline", *extra, offline=False)


def test_cline_finishes_the_acme_task_against_the_mock(
    mock_llm: Any, acme_repo: Path, run_codemod: Any
) -> None:
    result = _cline_run(run_codemod, acme_repo)
    m = result.manifest
    assert result.code == 0, m["reason"]
    assert (m["status"], m["classification"]) == ("succeeded", "green")
    cline = [(t["tool"], t["decision"]) for t in result.trace() if t["actor"] == "cline"]
    assert ("implement", "allowed") in cline and ("write", "allowed") in cline
    assert '+    "load": "get",' in result.artifact("changes.patch").read_text()
    assert any(e["agent"] == "cline" for e in mock_llm.log())  # it really asked the endpoint
    events = list((result.run_dir / "cline").glob("iteration-*/cline.jsonl"))
    assert events and '"finishReason":"completed"' in events[0].read_text()
    assert not list((result.run_dir / "cline").rglob("providers*.json"))


def _config(tmp_path: Path, url: str, budget_s: float) -> ClineConfig:
    assert CLINE is not None
    return ClineConfig(CLINE, "mock-model", url, tmp_path / "cline", budget_s)


def test_an_edit_outside_the_allowed_paths_is_refused(mock_llm: Any, acme_repo: Path, tmp_path: Path) -> None:
    """Cline's own run completes (it edited .gitlab-ci.yml and then the real fix in its scratch copy);
    none of it enters the worktree: every path is checked before anything is written."""
    mock_llm.fault("hostile", agent="cline")
    task = load_task(TASKS / TASK)
    trace = Trace(tmp_path / "trace.jsonl")
    ws = Workspace(acme_repo, task.deny_globs, task.allowed_paths, trace=trace)
    scratch = tmp_path / "scratch"
    shutil.copytree(acme_repo, scratch, symlinks=True)
    result = run_cline(scratch, "Migrate acme-sdk to 2.1 in src/", _config(tmp_path, mock_llm.url, 300))
    assert result.ok, result.reason
    assert (scratch / ".gitlab-ci.yml").exists()
    with pytest.raises(CandidateRejected, match=r"\.gitlab-ci\.yml: deny glob") as caught:
        apply_changes(ws, trace, "HEAD", scratch)
    assert "nothing of it was applied" in str(caught.value)
    assert not (acme_repo / ".gitlab-ci.yml").exists()
    assert '"load": "fetch"' in (acme_repo / "src" / "acme_app" / "reports.py").read_text()
    assert '"decision": "refused"' in (tmp_path / "trace.jsonl").read_text()


def test_a_hanging_cline_is_killed_on_the_wall_clock(mock_llm: Any, acme_repo: Path, tmp_path: Path) -> None:
    mock_llm.fault("slow", agent="cline", delay_s=600)
    config = _config(tmp_path, mock_llm.url, 45)
    result = run_cline(acme_repo, "Migrate acme-sdk to 2.1 in src/", config)
    assert (result.ok, result.killed, result.exit_code) == (False, True, None)
    assert any(e["agent"] == "cline" for e in mock_llm.log())  # it hung on the endpoint, not before
    marker = str(config.data_dir).encode()
    survivors = [p.name for p in Path("/proc").glob("[0-9]*") if marker in _cmdline(p)]
    assert not survivors, f"processes of the killed cline run are still there: {survivors}"


def _cmdline(proc: Path) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""
