"""Schemas of everything a run decides or records. Every artifact carries a `format` string."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_codemod.status import Status

Verdict = Literal["approve", "reject", "unsure"]


class Artifact(BaseModel):
    model_config = ConfigDict(extra="forbid")


# Dependency.kind of a pin in a file that installs packages outside the dependency files (a Dockerfile, a
# CI job: adapters/install_scripts.py and each adapter's install_scripts.py): literal, and never edited.
SCRIPT_KIND = "install-script"


class Dependency(Artifact):
    """One declaration of a dependency in one file."""

    name: str
    specifier: str  # as written, e.g. "==1.4.0" or ">=1.2,<2"
    file: str  # repository-relative path
    kind: str  # requirements | pep621 | pep735 | poetry | setup.cfg | setup.py | tox.ini | lockfile
    line: int | None = None
    # What the declaration is for (adapters/python/roles.py): the bump edits runtime, extra, test, dev and
    # build declarations; constraint (minimum pins, constraints files) and lock stay unless the task
    # names them (sdk.also_bump).
    role: Literal["runtime", "extra", "test", "dev", "constraint", "lock", "build"] = "runtime"
    section: str = ""  # where in the file: "project.optional-dependencies.test", "testenv:lint" ...
    # Why the tool cannot edit it, e.g. a setup.py install_requires computed at run time; "" when it can.
    uneditable: str = ""
    # How the bump rewrites its range (adapters/python/ranges.py); set by the bump plan from the task.
    range_strategy: Literal["auto", "bump", "widen", "replace", "pin"] = "auto"


class RepoProfile(Artifact):
    format: Literal["agentic-codemod/profile@1"] = "agentic-codemod/profile@1"
    ecosystem: str
    dependency_files: list[str] = Field(default_factory=list)
    sdk_declarations: list[Dependency] = Field(default_factory=list)
    test_command: list[str] | None = None
    test_command_source: str = ""
    source_files: int = 0
    notes: list[str] = Field(default_factory=list)


class RuleMatch(Artifact):
    rule_id: str
    file: str
    line: int
    message: str
    fixable: bool


class RuleEdit(Artifact):
    """One file a codemod rule changed: its provenance, and what the edit brings in (rule_risk.py)."""

    rule: str
    file: str
    count: int  # matches of the rule replaced in the file
    adds: list[str] = Field(default_factory=list)  # imports, import-time calls, risky APIs it added
    requires_human: bool = False


class HumanItem(Artifact):
    """Something the rules cannot do; an agent or a human must."""

    reason: str
    file: str | None = None
    line: int | None = None
    rule_id: str | None = None


class ChangePlan(Artifact):
    format: Literal["agentic-codemod/plan@1"] = "agentic-codemod/plan@1"
    task_id: str
    sdk: str
    target_version: str
    nothing_to_do: bool = False
    # Nothing to edit, but nothing proves the repository works on the target either (a declaration that
    # admits both `from` and `to`, e.g. a bare name): the run edits nothing and tests both versions. Green
    # ends `nothing_to_do` (verified), red requires a human; it never yields a candidate to publish.
    verify_only: bool = False
    # With verify_only: the repository neither declares nor imports the SDK, so only its install can tell
    # whether another package brings it in (Flask 1.x's MarkupSafe, through Jinja2), which the tests load all
    # the same. The baseline installs the repository's dependencies alone first: the SDK absent ends the run
    # `nothing_to_do`; present, it is put on `from` and both versions are tested.
    if_installed: bool = False
    reason: str = ""
    steps: list[str] = Field(default_factory=list)
    allowed_paths: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(default_factory=list)
    rule_matches: list[RuleMatch] = Field(default_factory=list)
    requires_human: list[HumanItem] = Field(default_factory=list)
    lessons: list[str] = Field(default_factory=list)


class Tally(Artifact):
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    failing: list[str] = Field(default_factory=list)  # test ids, when known


class VerificationResult(Artifact):
    phase: str  # "baseline", "iteration-1", ...
    command: list[str]
    exit_code: int | None  # None: did not finish (timeout, cancelled, could not start)
    duration_s: float
    passed: bool
    timed_out: bool = False
    output_tail: str = ""
    tests: Tally | None = None
    candidate_sha256: str | None = None
    isolation: str | None = None  # "sandbox" (bubblewrap) or "process" (explicitly accepted)
    canary: Literal["failed", "passed", "missing"] | None = None  # the tool's must-fail test
    # Where the test code's own loader resolved the SDK, asked by the canary's file (oracle.py); None where
    # the adapter cannot ask (ES modules, TypeScript, vitest). "elsewhere" stops the run; "unknown" is
    # said in the merge request and the report.
    sdk_resolution: Literal["installed", "elsewhere", "unknown"] | None = None
    tampered: list[str] = Field(default_factory=list)  # candidate files the test run wrote
    rewritten: list[str] = Field(default_factory=list)  # data files it rewrote with their own bytes


class Finding(Artifact):
    severity: Literal["info", "warning", "error"]
    message: str  # for people; code is for programs, which never match on the message text
    path: str | None = None
    # What was found, stable across wording: "<gate>" or "<gate>.<kind>" ("patch_text.binary_hunk",
    # "review.candidate_empty"); a gate's finding without a kind of its own carries the gate's name.
    # "" only for a model reviewer's own findings.
    code: str = ""


class ReviewVerdict(Artifact):
    format: Literal["agentic-codemod/review@1"] = "agentic-codemod/review@1"
    verdict: Verdict
    reviewer: str
    candidate_sha256: str | None = None
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)


class MergeRequestDraft(Artifact):
    title: str
    description: str
    ready: bool = False


class Candidate(Artifact):
    base_commit: str
    sha256: str
    files: list[str] = Field(default_factory=list)
    bytes: int = 0


class RunManifest(Artifact):
    format: Literal["agentic-codemod/run@1"] = "agentic-codemod/run@1"
    run_id: str
    tool_version: str
    mode: Literal["offline", "llm"]
    started_at: str
    finished_at: str | None = None
    status: Status = Status.FAILED
    exit_code: int = int(Status.FAILED.exit_code)  # always status.exit_code: set both with end()
    reason: str = ""
    task: dict[str, Any] | None = None
    repo: str | None = None
    base_commit: str | None = None
    profile: RepoProfile | None = None
    plan: ChangePlan | None = None
    verifications: list[VerificationResult] = Field(default_factory=list)
    classification: Literal["green", "introduced", "pre-existing", "unknown"] | None = None
    verdict: ReviewVerdict | None = None
    candidate: Candidate | None = None
    gates: list[dict[str, Any]] = Field(default_factory=list)
    models: dict[str, str] = Field(default_factory=dict)
    apm: dict[str, Any] = Field(default_factory=dict)
    tokens: dict[str, Any] | None = None  # None: unknown (offline, or the endpoint reported no usage)
    # LLM mode: the probe's finding for the endpoint ({"probe": ...} or null) and per role the structured
    # output, tool_choice and context tokens in use.
    llm: dict[str, Any] | None = None
    rule_edits: list[RuleEdit] = Field(default_factory=list)
    steps: list[dict[str, Any]] = Field(default_factory=list)
    isolation: str | None = None  # how repository code ran: "sandbox" (bubblewrap) or "process"
    # What each verification environment held ("baseline", "after"): {package: version}; None unreadable.
    environments: dict[str, dict[str, str] | None] = Field(default_factory=dict)
    # How each environment was installed: {"baseline": {"installer": "uv", "template": key}, "after": ...};
    # python: "extras_asked", the extras the repository's own install asks of each package, which decide
    # whether an installed package's cap on the SDK in an extra counts ("acme-widgets[sdk]; .[test]")
    installs: dict[str, dict[str, str]] = Field(default_factory=dict)
    # What each refreshed lockfile changed besides the bumped package (and each entry it left unchanged that
    # the after install took at another version), and the version the after environment held of each:
    # {file: {package: {"locked": [versions; none: no longer locked], "tested": version or null}}}
    locked: dict[str, dict[str, dict[str, list[str] | str | None]]] = Field(default_factory=dict)
    # Each refreshed lockfile its tool rewrote in another format than the base commit's, as the file says
    # (not the tool's own version): {file: {"before": "lock-version 2.0", "after": "lock-version 2.1"}}
    lock_formats: dict[str, dict[str, str]] = Field(default_factory=dict)
    error: str | None = None

    def end(self, status: Status, reason: str) -> None:
        """How the run ended: the status, its exit code (status.py) and why."""
        self.status, self.exit_code, self.reason = status, int(status.exit_code), reason
