"""The contract every ecosystem adapter implements (Renovate-style: same file names in each package).

An adapter package declares, in its `__init__.py`, only data and re-exports:

    NAME            ecosystem name used in task files ("python")
    FILE_PATTERNS   globs of dependency files it understands
    LOCKFILES       lockfile names it knows how to refresh (by the ecosystem's own tool)
    ADAPTER         an `Adapter` built from the functions below

and one module per concern:

    extract.py      extract_dependencies(root, files, sdk) -> list[Dependency]
    update.py       update_dependency(content, dependency, target) -> str      (pure: text in, text out)
                    update_lockfiles(root, dependency, target, runner) -> list[ArtifactNotice] | None
    test_command.py detect_test_command(root) -> TestCommand | None
    environment.py  prepare_environment(root, env_dir, settings, runner) -> VerificationEnv
                    install_dependencies(root, venv, settings, runner) -> ProcessResult

Writes never happen inside an adapter: the pipeline writes the returned text through the workspace,
so the trace and the deny globs cover the bump like any other edit. Tool failures come back as data.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentic_codemod.config import Settings
from agentic_codemod.models import Dependency


@dataclass(frozen=True)
class ProcessResult:
    """What one subprocess did. Never an exception: a failure to start is exit_code None + error."""

    argv: list[str]
    exit_code: int | None
    duration_s: float
    output_tail: str
    timed_out: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Runner(Protocol):
    """Runs one command (the sandboxed runner of tools/verification.py in production)."""

    def __call__(
        self, argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
    ) -> ProcessResult: ...


@dataclass(frozen=True)
class TestCommand:
    """The command that verifies the repository, fixed by the adapter. `{python}` is the env's interpreter,
    `{junit}` the path of a JUnit XML report (dropped from argv when the runner cannot write one)."""

    argv: list[str]
    source: str  # why this command: "pyproject.toml [tool.pytest.ini_options]", "tests/ folder", ...
    runner: str  # "pytest" | "unittest"


@dataclass(frozen=True)
class VerificationEnv:
    python: Path  # interpreter of the isolated environment
    root: Path  # the environment directory (inside the run dir)
    install_log: list[ProcessResult] = field(default_factory=list)


@dataclass(frozen=True)
class ArtifactNotice:
    """A lockfile refreshed, or why it could not be (stderr of the ecosystem's tool)."""

    file: str
    updated: bool
    message: str = ""


@dataclass(frozen=True)
class Adapter:
    name: str
    file_patterns: tuple[str, ...]
    lockfiles: tuple[str, ...]
    find_dependency_files: Callable[[Path], list[str]]
    extract_dependencies: Callable[[Path, list[str], str], list[Dependency]]
    update_dependency: Callable[[str, Dependency, str], str]
    update_lockfiles: Callable[[Path, Dependency, str, Runner], list[ArtifactNotice] | None]
    detect_test_command: Callable[[Path], TestCommand | None]
    prepare_environment: Callable[[Path, Path, Settings, Runner], VerificationEnv]
    install_dependencies: Callable[[Path, VerificationEnv, Settings, Runner], ProcessResult]
