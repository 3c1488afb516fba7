"""Every test here reads and writes the probe's result in its own folder, never the tree's .cache/."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def own_probe_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "probe.json"
    monkeypatch.setenv("CODEMOD_LLM_PROBE", str(path))
    return path
