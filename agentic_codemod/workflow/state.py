"""The state of one run: what every step reads and writes. It lives only as long as the CI job;
what must outlive it goes to the artifacts (artifacts.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from agentic_codemod.config import Settings
from agentic_codemod.models import (
    Candidate,
    ChangePlan,
    MergeRequestDraft,
    RepoProfile,
    ReviewVerdict,
    RunManifest,
    VerificationResult,
)
from agentic_codemod.task import TaskSpec

if TYPE_CHECKING:
    from agentic_codemod.adapters.types import Adapter, TestCommand, VerificationEnv
    from agentic_codemod.tools.sandbox import Policy
    from agentic_codemod.tools.trace import Trace
    from agentic_codemod.tools.verification import SandboxRunner
    from agentic_codemod.tools.workspace import Workspace
    from agentic_codemod.workflow.codemod import Rule
    from agentic_codemod.workflow.scan import Scanner


@dataclass
class RunPaths:
    run_dir: Path

    @property
    def worktree(self) -> Path:
        return self.run_dir / "worktree"

    @property
    def env_dir(self) -> Path:
        return self.run_dir / "env"

    @property
    def home(self) -> Path:
        return self.run_dir / "home"

    @property
    def tmp(self) -> Path:
        return self.run_dir / "tmp"

    @property
    def copy(self) -> Path:
        """The disposable copy of the candidate that installs and tests run on (tools/repo_copy.py)."""
        return self.run_dir / "sandbox" / "repo"

    @property
    def reports(self) -> Path:
        return self.run_dir / "reports"

    def artifact(self, name: str) -> Path:
        return self.run_dir / name


@dataclass
class RunState:
    task: TaskSpec
    settings: Settings
    repo: Path
    paths: RunPaths
    manifest: RunManifest
    context_root: Path
    trace: Trace
    workspace: Workspace | None = None
    adapter: Adapter | None = None
    runner: SandboxRunner | None = None
    policy: Policy | None = None  # the sandbox boxes of this run (installs, tests)
    base_commit: str = ""
    context: Any = None  # apm.Context
    skill: Any = None  # apm.Skill
    rules: list[Rule] = field(default_factory=list)
    scanner: Scanner | None = None  # the rules' scans of this run, cached per file content
    test_command: TestCommand | None = None
    env: VerificationEnv | None = None
    profile: RepoProfile | None = None
    plan: ChangePlan | None = None
    baseline: VerificationResult | None = None
    verifications: list[VerificationResult] = field(default_factory=list)
    verification_s: float = 0.0  # wall time of every verification so far (the pipeline's and the coder's)
    brain_done: bool = False  # the brain has nothing more to try in the implement loop
    addresses_human_items: bool = False  # the brain works on what the rules cannot (agents do, rules don't)
    candidate: Candidate | None = None
    gates: list[dict[str, Any]] = field(default_factory=list)
    verdict: ReviewVerdict | None = None
    draft: MergeRequestDraft | None = None
    notes: list[str] = field(default_factory=list)
    stopped: str | None = None  # why the workflow ended early without an error (e.g. nothing to do)
    error: BaseException | None = None  # what ended the workflow early with an error

    @property
    def last_verification(self) -> VerificationResult | None:
        return self.verifications[-1] if self.verifications else None


T = TypeVar("T")


def need(value: T | None) -> T:
    """The input a step requires; missing means a step ran before the one that prepares it."""
    if value is None:
        raise RuntimeError("internal: a step ran before the step that prepares its input")
    return value
