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
    from agentic_codemod.workflow.baseline_run import BaselineRun
    from agentic_codemod.workflow.codemod import Rule
    from agentic_codemod.workflow.lock_changes import Changes
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
    def env_after(self) -> Path:
        """The baseline environment's copy that the bump installs into while the baseline's tests run."""
        return self.run_dir / "env-after"

    @property
    def run_marker(self) -> Path:
        """Written as a run starts: what it makes here (made_by_a_run) may go when the next run starts."""
        return self.run_dir / ".agentic-codemod-run"

    def made_by_a_run(self) -> list[Path]:
        """What a run makes in its run dir and reads back (not the worktree, which intake refuses to clone
        into when it is not empty, nor the artifacts, which every run writes anew)."""
        return [self.env_dir, self.env_after, self.home, self.tmp, self.run_dir / "sandbox"]

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
    def baseline_tree(self) -> Path:
        """The base tree as the baseline's tests beside the bump see it (the worktree moves on meanwhile)."""
        return self.run_dir / "sandbox" / "baseline-tree"

    @property
    def baseline_copy(self) -> Path:
        """The disposable copy those tests run on."""
        return self.run_dir / "sandbox" / "baseline-repo"

    @property
    def reports(self) -> Path:
        return self.run_dir / "reports"

    def artifact(self, name: str) -> Path:
        return self.run_dir / name


@dataclass(frozen=True)
class RunSetup:
    """What intake builds and no later step changes: the verified context, the ecosystem's adapter, the
    base commit of the private clone, the sandbox boxes, the runner that starts repository code in them
    and the rooted workspace every write goes through."""

    context: Any  # apm.Context
    adapter: Adapter
    base_commit: str
    policy: Policy  # the sandbox boxes of this run (installs, tests)
    runner: SandboxRunner
    workspace: Workspace


@dataclass
class RunState:
    """The run's inputs (task, settings, paths, trace), its setup (intake) and its results (every later
    step): recon's findings, the environment, verifications, the candidate, gates, verdict and draft."""

    task: TaskSpec
    settings: Settings
    repo: Path
    paths: RunPaths
    manifest: RunManifest
    context_root: Path
    trace: Trace
    setup: RunSetup | None = None  # built once by intake; None until intake ran
    skill: Any = None  # apm.Skill
    rules: list[Rule] = field(default_factory=list)
    scanner: Scanner | None = None  # the rules' scans of this run, cached per file content
    test_command: TestCommand | None = None
    env: VerificationEnv | None = None
    # what each refreshed lockfile changed besides the package, by file (lock_changes.py)
    lock_changes: dict[str, Changes] = field(default_factory=dict)
    profile: RepoProfile | None = None
    plan: ChangePlan | None = None
    baseline: VerificationResult | None = None
    baseline_run: BaselineRun | None = None  # the baseline's tests while they run beside the bump
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

    # What intake built, read through the setup (None or "" before intake ran); there are no setters.
    @property
    def context(self) -> Any:
        return self.setup.context if self.setup else None

    @property
    def adapter(self) -> Adapter | None:
        return self.setup.adapter if self.setup else None

    @property
    def base_commit(self) -> str:
        """Also before intake finished: the clone's commit is on the manifest as soon as it exists, so a
        run that pauses in intake after cloning (no sandbox: 75) still freezes and names its base."""
        return self.setup.base_commit if self.setup else (self.manifest.base_commit or "")

    @property
    def policy(self) -> Policy | None:
        return self.setup.policy if self.setup else None

    @property
    def runner(self) -> SandboxRunner | None:
        return self.setup.runner if self.setup else None

    @property
    def workspace(self) -> Workspace | None:
        return self.setup.workspace if self.setup else None

    @property
    def last_verification(self) -> VerificationResult | None:
        return self.verifications[-1] if self.verifications else None

    @property
    def verification_count(self) -> int:
        """Verifications so far, the baseline counted while its tests still run beside the bump."""
        return len(self.verifications) + (self.baseline_run is not None)


class Stop(Exception):
    """A step ends the workflow early without an error (e.g. nothing to do)."""


T = TypeVar("T")


def need(value: T | None) -> T:
    """The input a step requires; missing means a step ran before the one that prepares it."""
    if value is None:
        raise RuntimeError("internal: a step ran before the step that prepares its input")
    return value
