"""Shared fixtures: the wheelhouse, the installed APM context, materialized fixture repos, a CLI runner."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

os.environ["AGNO_TELEMETRY"] = "false"

from fixtures_support import ACME_APP, ROOT, materialize, wheelhouse

from agentic_codemod.cli import main

sys.path.insert(0, str(Path(__file__).parent / "llm"))
from mock_llm import MockLLM, start_mock  # tests/llm is not a package: put on sys.path above

_SESSION_CACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """The runs' shared cache (environment templates): one of this session's own, removed when it ends,
    never the caller's ~/.cache (the suite builds hundreds of distinct templates: 26 GB there within a
    day). A cache the caller names (CODEMOD_CACHE_DIR) is used as given and kept."""
    if "CODEMOD_CACHE_DIR" not in os.environ:
        _SESSION_CACHE.append(tempfile.mkdtemp(prefix="codemod-test-cache-"))
        os.environ["CODEMOD_CACHE_DIR"] = _SESSION_CACHE[0]
    # A suite started in the background by a non-interactive shell (`scripts/test.sh &`, nohup) inherits
    # SIGINT ignored, and so would every CLI it starts: the cancel tests send SIGINT and expect what a
    # terminal's Ctrl-C gives (tests/test_cancel.py, tests/tools/test_verification.py).
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_unconfigure(config: pytest.Config) -> None:
    for cache in _SESSION_CACHE:
        shutil.rmtree(cache, ignore_errors=True)


@dataclass
class RunResult:
    code: int
    run_dir: Path
    out: str
    err: str

    @property
    def manifest(self) -> dict[str, Any]:
        return json.loads((self.run_dir / "run.json").read_text())

    def artifact(self, name: str) -> Path:
        return self.run_dir / name

    def json(self, name: str) -> dict[str, Any]:
        return json.loads((self.run_dir / name).read_text())

    def trace(self) -> list[dict[str, Any]]:
        lines = (self.run_dir / "trace.jsonl").read_text().split("\n")  # JSON Lines: "\n" only
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def mock_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockLLM]:
    """The scripted mock endpoint on a free loopback port; runs in this test talk to it."""
    mock = start_mock()
    monkeypatch.setenv("CODEMOD_LLM_BASE_URL", mock.url)
    monkeypatch.delenv("CODEMOD_LLM_MODELS", raising=False)
    monkeypatch.delenv("CODEMOD_LLM_MODEL", raising=False)
    try:
        yield mock
    finally:
        mock.stop()


@pytest.fixture(scope="session")
def wheels() -> Path:
    return Path(wheelhouse.build_wheelhouse(ROOT / "fixtures" / ".wheelhouse"))


@pytest.fixture(scope="session")
def build_backend(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder with a setuptools wheel made from the copy beside the tests (pip builds setup.py projects
    with it; the fixture wheelhouse has none and these tests use no package index)."""
    dist = importlib.metadata.distribution("setuptools")
    folder = tmp_path_factory.mktemp("build-backend")
    wheel = folder / f"setuptools-{dist.version}-py3-none-any.whl"
    skip = ("INSTALLER", "REQUESTED", "direct_url.json")
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if "__pycache__" in file.parts or file.name in skip or not path.is_file():
                continue
            archive.write(path, file.as_posix())
    return str(folder)


@pytest.fixture(scope="session")
def context_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's own APM context, installed (as scripts/bootstrap.sh does) when it is not yet."""
    if not (ROOT / "apm_modules").is_dir():
        apm = shutil.which("apm", path=str(Path(sys.executable).parent)) or "apm"
        home = tmp_path_factory.mktemp("apm-home")
        subprocess.run(
            [apm, "install", "--frozen"],
            cwd=ROOT,
            env={**os.environ, "HOME": str(home)},
            check=True,
            capture_output=True,
        )
    return ROOT


@pytest.fixture
def acme_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "acme-app"
    materialize.materialize(ACME_APP, dest)
    return dest


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    """A copy of acme-app with some files replaced (path -> text, or None to delete), committed."""

    def make(name: str = "variant", files: dict[str, str | None] | None = None) -> Path:
        src = tmp_path / f"{name}-src"
        shutil.copytree(ACME_APP, src)
        for rel, text in (files or {}).items():
            target = src / rel
            if text is None:
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        dest = tmp_path / name
        materialize.materialize(src, dest)
        return dest

    return make


@pytest.fixture
def run_codemod(
    tmp_path: Path, wheels: Path, context_root: Path, capsys: pytest.CaptureFixture[str]
) -> Callable[..., RunResult]:
    counter = {"n": 0}

    def run(
        repo: Path,
        task: str | Path,
        *extra: str,
        offline: bool = True,
        context: Path | None = None,
        packages: bool = True,
    ) -> RunResult:
        counter["n"] += 1
        run_dir = tmp_path / f"run-{counter['n']}"
        task_path = task if isinstance(task, Path) else ROOT / "fixtures" / "tasks" / task
        argv = [
            "run",
            "--repo",
            str(repo),
            "--task",
            str(task_path),
            "--run-dir",
            str(run_dir),
            "--context",
            str(context or context_root),
            "--quiet",
        ]
        if packages:
            argv += ["--find-links", str(wheels), "--no-index"]
        if offline:
            argv.append("--offline")
        code = main([*argv, *extra])
        captured = capsys.readouterr()
        return RunResult(code=code, run_dir=run_dir, out=captured.out, err=captured.err)

    return run
