"""The tool against a real OpenAI-compatible server (llama-cpp-python + SmolLM2-135M on CPU), through
scripts/real-llm-check.sh. The backend's build takes ~20 minutes, so it is not installed on the default
CI path: this test skips, with the reason, where `task llm:up BACKEND=llamacpp` has not installed it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.llm import llamacpp as llm_llamacpp

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.real_llm


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    if not llm_llamacpp.installed():
        pytest.skip(
            f"llama-cpp-python and {llm_llamacpp.GGUF} are not installed in {llm_llamacpp.home()}: "
            "`task llm:up BACKEND=llamacpp` installs them (~20 min build)"
        )


def test_runs_against_llama_cpp_python_end_in_bounded_time_and_never_pause_on_a_permanent_error(
    installed: None, tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "REAL_LLM_CHECK_DIR": str(tmp_path / "check"),
        "CODEMOD_LLAMACPP_HOME": str(llm_llamacpp.home()),
    }
    done = subprocess.run(
        ["bash", "scripts/real-llm-check.sh"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "real-llm-check: ok" in done.stdout
    assert "exit 75" not in done.stdout
