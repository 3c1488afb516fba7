"""Fixtures: the real `apm` CLI, an isolated HOME, and an installed fixture project copied per test.

The installed template is built once per session; `apm install` runs again only where a test changes
what is installed. No network: every dependency is a local path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from apm_project import Installer, build_project

from agentic_codemod.apm.command import find_apm


@pytest.fixture(scope="session")
def apm_bin() -> str:
    found = find_apm(None)
    if found is None:
        if os.environ.get("CI") == "true":  # CI installs the extra: its absence is a broken set-up
            pytest.fail("the apm CLI is not installed in CI (scripts/bootstrap.sh installs '.[apm]')")
        pytest.skip("the apm CLI is not installed (pip install 'agentic-codemod[apm]')")
    return found


@pytest.fixture(scope="session")
def apm_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("apm-home")


@pytest.fixture(autouse=True)
def _isolated_home(apm_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """APM writes under $HOME (~/.apm, ~/.cache/apm): never the developer's. The records of the CLI's
    verdicts (apm/verified.py) are per test, so each test sees the CLI run as it expects."""
    monkeypatch.setenv("HOME", str(apm_home))
    monkeypatch.setenv("CODEMOD_APM_CACHE", str(tmp_path / "apm-verified"))
    monkeypatch.setenv("AGNO_TELEMETRY", "false")


@pytest.fixture(scope="session")
def install(apm_bin: str, apm_home: Path) -> Installer:
    def run(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(apm_home), "APM_NON_INTERACTIVE": "1", "NO_COLOR": "1"}
        done = subprocess.run(
            [apm_bin, "install", *args], cwd=project, env=env, capture_output=True, text=True, timeout=120
        )
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    return run


@pytest.fixture(scope="session")
def installed_template(tmp_path_factory: pytest.TempPathFactory, install: Installer) -> Path:
    root = build_project(tmp_path_factory.mktemp("template") / "project")
    install(root)
    return root


@pytest.fixture
def project(installed_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the installed fixture project."""
    target = tmp_path / "project"
    shutil.copytree(installed_template, target, symlinks=True)
    return target
