"""Compile verified primitives into what the runtime uses: typed agent specs and a skill set.

No agent name appears in this code. An agent file says which workflow step it serves (`step`), which
model role it uses (`model`, a key of llm/models.yml), its tools and its output schema; the pipeline
asks `Context.agent_for_step("review")`. Renaming or re-tuning an agent is a context change.

What a context change cannot do is widen permissions: `STEP_TOOL_CEILING` is the most a step's agent
may be granted, so no package can give the reviewer an edit tool.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agentic_codemod.apm.primitives import AgentFile, ContextDoc, Instruction, Skill, normalise_name
from agentic_codemod.apm.refusal import ContextRefused, Violation
from agentic_codemod.errors import BudgetExceeded, InputError

STEPS = ("recon", "plan", "implement", "review", "scribe")
TOOLS = ("read", "search", "list", "edit", "diff", "run_verification")
STEP_OUTPUT = {
    "recon": "RepoProfile",
    "plan": "ChangePlan",
    "implement": "none",
    "review": "ReviewVerdict",
    "scribe": "MergeRequestDraft",
}
STEP_TOOL_CEILING: dict[str, frozenset[str]] = {
    "recon": frozenset({"read", "search", "list"}),
    "plan": frozenset({"read", "search", "list"}),
    "implement": frozenset(TOOLS),
    "review": frozenset({"read", "search", "list", "diff"}),  # read-only, whatever the file says
    "scribe": frozenset({"read", "diff"}),
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PackageInfo(_Frozen):
    name: str
    version: str | None
    source: str  # local path, or identity#tag@commit
    content_hash: str
    path: Path  # installed copy (apm_modules/...) or the project root


class AgentSpec(_Frozen):
    name: str
    description: str
    step: str
    model_role: str
    tools: list[str]
    output: str
    instructions: str  # body, then requested context docs, then every global instruction
    package: str
    source: Path  # the .agent.md file
    included: list[Path]  # context and instruction files merged into `instructions`, in order


class Context(_Frozen):
    project: PackageInfo
    lock_sha256: str
    packages: list[PackageInfo]  # installed dependencies: direct in apm.yml order, then transitive
    agents: dict[str, AgentSpec]
    instructions: list[Instruction]
    context_docs: list[ContextDoc]
    skills: list[Skill]
    budget_bytes: int
    cli_checked: bool  # whether `apm install --frozen` and `apm audit` ran (the other checks always do)
    cli_cached: bool = False  # their pass was a record for exactly these bytes (apm/verified.py)

    def agent_for_step(self, step: str) -> AgentSpec:
        found = [agent for agent in self.agents.values() if agent.step == step]
        if len(found) == 1:
            return found[0]
        if not found:
            raise InputError(
                f"no agent serves step {step!r} (agents: {sorted(self.agents)})",
                hint="add `step: " + step + "` to one .apm/agents/*.agent.md file",
            )
        files = ", ".join(str(agent.source) for agent in found)
        raise InputError(f"several agents serve step {step!r}: {files}", hint="keep one")

    def skill(self, package: str, name: str) -> Skill | None:
        return next((s for s in self.skills if s.package == package and s.name == name), None)

    def select_skills(self, sdk_name: str, budget_bytes: int | None = None) -> list[Skill]:
        """Skills for one SDK, in package order. Over budget is an error, never a silent cut."""
        budget = self.budget_bytes if budget_bytes is None else budget_bytes
        chosen = [skill for skill in self.skills if skill_matches(skill, sdk_name)]
        total = sum(skill.size_bytes for skill in chosen)
        if total > budget:
            raise BudgetExceeded("context_budget_bytes", budget, total)
        return chosen

    def audit_record(self) -> dict[str, Any]:
        """What run.json keeps about the context: lockfile hash and every package version."""
        return {
            "lock_sha256": self.lock_sha256,
            "apm_cli_checked": self.cli_checked,
            "apm_cli_cached": self.cli_cached,
            "project": {"name": self.project.name, "apm_dir_hash": self.project.content_hash},
            "packages": [p.model_dump(mode="json", exclude={"path"}) for p in self.packages],
            "agents": {a.step: {"name": a.name, "model_role": a.model_role} for a in self.agents.values()},
        }


def skill_matches(skill: Skill, sdk_name: str) -> bool:
    """`metadata.sdk` in SKILL.md decides when present; otherwise the skill name must be
    `<sdk>[-<major>][-migration]`: 'acme-sdk-2-migration' serves 'acme-sdk' and 'acme_sdk', not 'acme'."""
    sdk = normalise_name(sdk_name)
    if skill.sdk:
        return sdk in skill.sdk
    pattern = rf"{re.escape(sdk)}(-\d+)?(-migration)?"
    return re.fullmatch(pattern, normalise_name(skill.name)) is not None


def compile_agents(
    files: list[AgentFile], context_docs: list[ContextDoc], instructions: list[Instruction], *, root: Path
) -> dict[str, AgentSpec]:
    """AgentSpec per agent file; every problem found is reported, naming file and field."""
    agents: dict[str, AgentSpec] = {}
    problems: list[Violation] = []
    docs = {doc.name: doc for doc in context_docs}
    global_instructions = [inst for inst in instructions if inst.is_global]
    for file in files:
        try:
            spec = _compile_one(file, docs, global_instructions, root)
        except ContextRefused as refused:
            problems.extend(refused.violations)
            continue
        if spec.name in agents:
            detail = f"agent name {spec.name!r} also defined in {agents[spec.name].source}"
            problems.append(_violation(file, detail, root))
        agents[spec.name] = spec
    for step in STEPS:
        serving = [a for a in agents.values() if a.step == step]
        if len(serving) > 1:
            others = ", ".join(a.name for a in serving)
            clash = _file_of(serving[1], files)
            problems.append(_violation(clash, f"step {step!r} served by {others}", root))
    if problems:
        raise ContextRefused(problems)
    return agents


def _compile_one(
    file: AgentFile, docs: dict[str, ContextDoc], instructions: list[Instruction], root: Path
) -> AgentSpec:
    def refuse(detail: str) -> ContextRefused:
        return ContextRefused([_violation(file, detail, root)])

    meta = file.meta
    step = _field(file, "step", refuse)
    if step not in STEPS:
        raise refuse(f"field 'step': {step!r} is not one of {list(STEPS)}")
    output = _field(file, "output", refuse)
    if output != STEP_OUTPUT[step]:
        detail = f"field 'output': step {step!r} produces {STEP_OUTPUT[step]!r}, not {output!r}"
        raise refuse(detail)
    tools = _tools(meta.get("tools"), refuse)
    over = sorted(set(tools) - STEP_TOOL_CEILING[step])
    if over:
        allowed = sorted(STEP_TOOL_CEILING[step])
        detail = f"field 'tools': {over} exceed what step {step!r} may use ({allowed})"
        raise refuse(detail)
    wanted = meta.get("context") or []
    missing = [name for name in wanted if name not in docs]
    if not isinstance(wanted, list) or missing:
        raise refuse(f"field 'context': unknown context docs {missing or wanted}")
    parts = [(file.source, file.body), *[(docs[n].source, docs[n].body) for n in wanted]]
    parts += [(inst.source, inst.body) for inst in instructions]
    return AgentSpec(
        name=file.name,
        description=_field(file, "description", refuse),
        step=step,
        model_role=_field(file, "model", refuse),
        tools=tools,
        output=output,
        instructions="\n\n".join(body.strip() for _, body in parts) + "\n",
        package=file.package,
        source=file.source,
        included=[source for source, _ in parts[1:]],
    )


def _tools(raw: Any, refuse: Callable[[str], ContextRefused]) -> list[str]:
    items = [t.strip() for t in raw.split(",")] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not items or not all(isinstance(t, str) for t in items):
        raise refuse("field 'tools' must be a non-empty list")
    unknown = sorted(set(items) - set(TOOLS))
    if unknown:
        raise refuse(f"field 'tools': unknown {unknown}, known {list(TOOLS)}")
    return list(dict.fromkeys(items))


def _field(file: AgentFile, name: str, refuse: Callable[[str], ContextRefused]) -> str:
    value = file.meta.get(name)
    if not isinstance(value, str) or not value.strip():
        raise refuse(f"field '{name}' must be a non-empty string")
    return value.strip()


def _file_of(spec: AgentSpec, files: list[AgentFile]) -> AgentFile:
    return next(f for f in files if f.source == spec.source)


def _violation(file: AgentFile, detail: str, root: Path) -> Violation:
    path = file.source.relative_to(root) if file.source.is_relative_to(root) else file.source
    return Violation(path.as_posix(), file.package, "agent-definition", detail, "fix the agent file")
