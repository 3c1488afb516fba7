"""The Cline runner's decisions and its wall-clock kill, with real subprocesses: a stand-in `cline` script
(bash) where the behaviour under test is the process handling, the real mock endpoint for the probe."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from mock_llm import free_port

from agentic_codemod.coders.cline import ClineConfig, judge, run_cline
from agentic_codemod.coders.cline_brain import _raise_for
from agentic_codemod.errors import BudgetExceeded, CandidateRejected, EnvironmentUnavailable

COMPLETED = '{"type":"run_result","finishReason":"completed","text":"done","usage":{"inputTokens":3}}'
# What cline 3.0.65 reported with its endpoint on a closed port (seen by hand, after ~60 s of its retries).
ERRORED = (
    '{"type":"run_result","finishReason":"error","text":"Cannot connect to API: Unable to connect. '
    'Is the computer able to access the url?"}'
)


@pytest.mark.parametrize(
    ("output", "code", "ok", "reason"),
    [
        (f'{{"type":"agent_event"}}\n{COMPLETED}\n', 0, True, "completed"),
        ("", 0, False, "cline exited 0 without a run_result"),  # SIGINT: exit 0 and no result
        (COMPLETED, 1, False, "cline exited 1 with finishReason 'completed'"),
        (COMPLETED.replace("completed", "max_iterations"), 0, False, "finishReason 'max_iterations'"),
        (f"{COMPLETED}\n{COMPLETED.replace('completed', 'aborted')}", 0, False, "finishReason 'aborted'"),
        ("not json\n{broken", 0, False, "without a run_result"),
        ('{"type":' + "[" * 100_000, 0, False, "without a run_result"),  # past json's depth: RecursionError
    ],
)
def test_success_is_exit_0_and_a_last_run_result_completed(
    output: str, code: int, ok: bool, reason: str
) -> None:
    result = judge(output, code, killed=False, budget_s=10)
    assert result.ok is ok
    assert reason in result.reason


def test_an_unreachable_endpoint_in_the_result_is_an_environment_fault() -> None:
    result = judge(ERRORED, 1, killed=False, budget_s=10)
    assert (result.ok, result.unreachable) == (False, True)
    with pytest.raises(EnvironmentUnavailable):
        _raise_for(result, _config(Path("/nonexistent"), "cline"))


def test_each_failure_maps_to_its_exit_code(tmp_path: Path) -> None:
    config = _config(tmp_path, "cline")
    with pytest.raises(BudgetExceeded):
        _raise_for(judge("", None, killed=True, budget_s=1), config)
    with pytest.raises(CandidateRejected, match="without a run_result"):
        _raise_for(judge("", 0, killed=False, budget_s=1), config)


def _config(
    tmp_path: Path, binary: str, base_url: str = "http://127.0.0.1:9/v1", budget_s: float = 30
) -> ClineConfig:
    return ClineConfig(
        binary,
        "mock-model",
        base_url,
        tmp_path / "cline-data",
        budget_s,
        api_key="sk-secret",
        isolation="process",
    )


def _fake_cline(tmp_path: Path, body: str) -> str:
    """A `cline` that answers `auth` like the real one (writes settings/providers.json with the key)."""
    script = tmp_path / "bin" / "cline"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "#!/bin/bash\n"
        'if [ "$1" = auth ]; then\n'
        '  for ((i=1; i<=$#; i++)); do [ "${!i}" = --data-dir ] && j=$((i+1)) && d="${!j}"; done\n'
        '  mkdir -p "$d/settings" && echo "{\\"apiKey\\": \\"${@: -1}\\"}" > "$d/settings/providers.json"\n'
        '  env > "$HOME/env.txt"; exit 0\n'
        "fi\n" + body
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_a_cline_that_ignores_sigterm_is_killed_with_its_children_on_the_budget(
    tmp_path: Path, mock_llm: Any
) -> None:
    body = (
        "trap '' TERM INT HUP\n"
        'sleep 300 & echo $! > "$HOME/child.pid"\n'
        'echo $$ > "$HOME/self.pid"\n'
        "while true; do wait; done\n"
    )
    config = _config(tmp_path, _fake_cline(tmp_path, body), mock_llm.url, budget_s=2)
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = run_cline(workdir, "migrate it", config)
    assert (result.ok, result.killed, result.exit_code) == (False, True, None)
    assert "wall-clock budget of 2 s" in result.reason
    home = config.data_dir / "home"
    for name in ("self.pid", "child.pid"):
        pid = int((home / name).read_text())
        assert not _alive(pid), f"{name} {pid} survived the kill"


def test_a_completed_run_is_a_success_and_the_stored_key_is_deleted(tmp_path: Path, mock_llm: Any) -> None:
    config = _config(tmp_path, _fake_cline(tmp_path, f"echo '{COMPLETED}'\nexit 0\n"), mock_llm.url)
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = run_cline(workdir, "migrate it", config)
    assert result.ok, result.reason
    assert result.usage == {"inputTokens": 3}
    assert not list((config.data_dir / "data").rglob("providers*.json"))  # the key is not an artifact
    seen = (config.data_dir / "home" / "env.txt").read_text()
    assert "sk-secret" not in seen and "CODEMOD_LLM" not in seen  # nothing of the caller's environment
    assert {line.split("=", 1)[0] for line in seen.splitlines()} <= {
        "PATH",
        "HOME",
        "LANG",
        "NO_COLOR",
        "CI",
        "PWD",
        "SHLVL",
        "_",
        "OLDPWD",
    }


def test_exit_0_without_a_result_is_a_failure(tmp_path: Path, mock_llm: Any) -> None:
    config = _config(tmp_path, _fake_cline(tmp_path, "exit 0\n"), mock_llm.url)
    (tmp_path / "work").mkdir()
    result = run_cline(tmp_path / "work", "migrate it", config)
    assert (result.ok, result.reason) == (False, "cline exited 0 without a run_result")


def test_an_endpoint_that_is_down_is_found_before_cline_starts(tmp_path: Path) -> None:
    binary = _fake_cline(tmp_path, 'touch "$HOME/started"; exit 0\n')
    config = _config(tmp_path, binary, f"http://127.0.0.1:{free_port()}/v1")
    (tmp_path / "work").mkdir()
    result = run_cline(tmp_path / "work", "migrate it", config)
    assert (result.ok, result.unreachable) == (False, True)
    assert "cannot be reached" in result.reason
    assert not (config.data_dir / "home" / "started").exists()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in ("Z", "X")  # a zombie waiting for a reaper has stopped running


def test_alive_sees_this_process() -> None:
    assert _alive(os.getpid())
