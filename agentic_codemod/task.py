"""Intake: a task file (YAML) validated into a TaskSpec.

Every error is one line that names the file and the field, and the CLI exits 2 on it.

`allowed_paths` are repository-relative globs, stored in their normalised spelling ("./src/**" becomes
"src/**"): no absolute path, no `..`, no invisible character, and no pattern that allows every path
(`**`, `*`, `**/*`, `./**` ...) unless the task also says `allow_all_paths: true`. An entry without glob
characters names one exact path, which waives the nameable deny globs (setup.py, lockfiles, .github/**
..., config.NAMEABLE_DENY_GLOBS) for that path and lets the run create it if it is a conftest.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from agentic_codemod.adapters.types import Versioning
from agentic_codemod.config import VerificationSettings
from agentic_codemod.errors import InputError
from agentic_codemod.tools.paths import Refused, check_glob, matches_everything, normalise
from agentic_codemod.tools.safe_git import run_git
from agentic_codemod.yaml_input import load_yaml_model

TASK_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


class SdkSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1)
    ecosystem: str  # a registered adapter's name (adapters/__init__.py); it reads `from` and `to`
    from_range: str = Field(alias="from")
    to: str
    # How the bump rewrites a range (Renovate's rangeStrategy; adapters/<ecosystem>/ranges.py). auto = bump.
    range_strategy: Literal["auto", "bump", "widen", "replace", "pin"] = "auto"
    # Names the SDK is imported by, when the distribution's metadata (top_level.txt, RECORD) is not at hand.
    import_names: list[str] = Field(default_factory=list)
    # Constraint and minimum-pin files (requirements/tests-min.txt, constraints.txt) the bump edits too;
    # without them named here they stay as they are.
    also_bump: list[str] = Field(default_factory=list)

    @field_validator("import_names")
    @classmethod
    def _import_names(cls, value: list[str]) -> list[str]:
        for name in value:
            if not all(part.isidentifier() for part in name.split(".")):
                raise ValueError(f"not a Python import name: {name!r} (e.g. 'acme' or 'acme.client')")
        return value

    @field_validator("also_bump")
    @classmethod
    def _also_bump(cls, value: list[str]) -> list[str]:
        spelled = []
        for entry in value:
            try:
                spelled.append(normalise(entry))
            except Refused as exc:
                raise ValueError(f"{entry!r}: {exc.reason}") from exc
        return spelled

    @field_validator("ecosystem")
    @classmethod
    def _ecosystem(cls, value: str) -> str:
        from agentic_codemod.adapters import registry

        known = sorted(registry())
        if value not in known:
            raise ValueError(f"unknown ecosystem {value!r}; known: {', '.join(known)}")
        return value

    @field_validator("from_range")
    @classmethod
    def _range(cls, value: str, info: ValidationInfo) -> str:
        versioning = _versioning(info)
        if versioning is None:
            return value  # the ecosystem's own error names the field
        try:
            versioning.check(value, "")
        except ValueError as exc:
            raise ValueError(f"not a version range: {value!r} (e.g. '>=1,<2' or '^1.0.0')") from exc
        return value

    @field_validator("to")
    @classmethod
    def _version(cls, value: str, info: ValidationInfo) -> str:
        versioning = _versioning(info)
        if versioning is not None and not versioning.is_version(value):
            raise ValueError(f"not a version: {value!r} (e.g. '2.1.0')")
        return value


def _versioning(info: ValidationInfo) -> Versioning | None:
    """The versioning of the ecosystem validated before this field (None when that failed)."""
    from agentic_codemod.adapters import registry

    adapter = registry().get(str(info.data.get("ecosystem", "")))
    return adapter.versioning if adapter is not None else None


class MigrationRef(BaseModel):
    """Which APM package and skill carry the migration notes and rules."""

    model_config = ConfigDict(extra="forbid")

    package: str = Field(min_length=1)
    skill: str = Field(min_length=1)
    disabled_rules: list[str] = Field(default_factory=list)


class TaskSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["agentic-codemod/task@1"] = "agentic-codemod/task@1"
    id: str
    title: str = Field(min_length=1)
    sdk: SdkSpec
    # None: a plain bump (bump + verify); red then ends requires_human, never a migration from memory
    migration: MigrationRef | None = None
    allow_all_paths: bool = False  # declared before allowed_paths: its validator reads it
    allowed_paths: list[str] = Field(min_length=1)
    deny_globs: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(min_length=1)
    budgets: dict[str, int | float | dict[str, int]] = Field(default_factory=dict)
    # Overrides of the detected test command and test requirements (config.VerificationSettings).
    verification: VerificationSettings | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not TASK_ID.match(value):
            raise ValueError("use lowercase letters, digits, '.', '_' or '-' (at most 64)")
        return value

    @field_validator("allowed_paths")
    @classmethod
    def _allowed_paths(cls, value: list[str], info: ValidationInfo) -> list[str]:
        spelled: list[str] = []
        for i, entry in enumerate(value):
            try:
                norm = normalise(entry)
                check_glob(norm)
            except Refused as exc:
                raise ValueError(f"entry {i} {entry!r}: {exc.reason}") from exc
            if matches_everything(norm) and not info.data.get("allow_all_paths"):
                raise ValueError(
                    f"entry {i} {entry!r} allows every path of the repository; "
                    "name the directories the change needs, or set allow_all_paths: true"
                )
            spelled.append(norm or "**")
        return spelled

    @field_validator("deny_globs")
    @classmethod
    def _deny_globs(cls, value: list[str]) -> list[str]:
        for i, entry in enumerate(value):
            try:
                check_glob(entry)
            except Refused as exc:
                raise ValueError(f"entry {i} {entry!r}: {exc.reason}") from exc
        return value

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: dict[str, Any]) -> dict[str, Any]:
        from agentic_codemod.config import Budgets

        unknown = sorted(set(value) - set(Budgets.model_fields))
        if unknown:
            raise ValueError(
                f"unknown budget {unknown[0]!r}; known: {', '.join(sorted(Budgets.model_fields))}"
            )
        return value


def load_task(path: Path) -> TaskSpec:
    hint = "the fields and their types: schemas/task.schema.json"
    return load_yaml_model(path, TaskSpec, what="task file", hint=hint)


# What a run reads from --context; a run dir in there would write where the context is read from.
CONTEXT_READ_PATHS = ("apm.yml", "apm.lock.yaml", "apm-policy.yml", ".apm", "apm_modules")


def check_run_dir(run_dir: Path, repo: Path, context: Path) -> Path:
    """--run-dir (symlinks resolved) must not be --repo, nor lie inside it, nor contain it; nor be or contain
    --context, nor lie in its APM files. Elsewhere inside the context directory is allowed: in GitLab CI
    the context is the project directory, and artifacts can only be collected from inside it."""
    run = run_dir.resolve()
    for flag, given in (("--repo", repo), ("--context", context)):
        other = given.resolve()
        inside_context = any(run.is_relative_to(other / p) for p in CONTEXT_READ_PATHS)
        if run == other:
            relation = "is"
        elif other.is_relative_to(run):
            relation = "contains"
        elif run.is_relative_to(other) and (flag == "--repo" or inside_context):
            relation = "is inside"
        else:
            continue
        raise InputError(
            f"--run-dir {run_dir} ({run}) {relation} {flag} {given} ({other})",
            hint="the run writes its clone, environment and artifacts there: put --run-dir beside them",
        )
    return run


def check_repo(path: Path) -> Path:
    """The --repo argument must be the top of a git work tree with at least one commit."""
    repo = path.resolve()
    if not repo.is_dir():
        raise InputError(f"{path}: --repo is not a directory")
    try:  # the hardened git: none of the caller's environment or config
        probe = run_git(["-C", str(repo), "rev-parse", "--show-toplevel", "HEAD"], cwd=repo)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"{path}: cannot run git on --repo: {exc}") from exc
    if probe.returncode != 0:
        raise InputError(
            f"{path}: --repo is not a git repository with a commit (git init && git commit first)"
        )
    top = Path(os.fsdecode(probe.stdout.splitlines()[0])).resolve()
    if top != repo:
        raise InputError(f"{path}: --repo must be the top of the work tree ({top})")
    return repo
