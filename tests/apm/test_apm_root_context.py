"""The pipeline's own context package (repository root) installs from its committed lockfile and
compiles into one agent per workflow step."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from apm_project import Installer

import agentic_codemod.apm as apm_api
from agentic_codemod.apm import STEPS, load_context
from agentic_codemod.apm.compile import STEP_TOOL_CEILING

REPO = Path(__file__).resolve().parents[2]
CONTEXT_FILES = ("apm.yml", "apm.lock.yaml", "apm-policy.yml", ".apm", "fixtures/packages")


@pytest.fixture(scope="module")
def root_copy(tmp_path_factory: pytest.TempPathFactory, install: Installer) -> Path:
    """The root's context files in a tmp dir, installed with `apm install --frozen` (the lockfile as
    committed must reproduce)."""
    target = tmp_path_factory.mktemp("root") / "repo"
    for rel in CONTEXT_FILES:
        source = REPO / rel
        if source.is_dir():
            shutil.copytree(source, target / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    install(target, "--frozen")
    return target


@pytest.mark.slow
def test_root_context_has_one_agent_per_step(root_copy: Path) -> None:
    ctx = load_context(root_copy, use_cli=True)
    for step in STEPS:
        agent = ctx.agent_for_step(step)
        assert agent.model_role and agent.description
        assert set(agent.tools) <= STEP_TOOL_CEILING[step]
        assert "## Guardrails" in agent.instructions, f"{agent.name} lacks the security instructions"
    assert ctx.agent_for_step("review").tools == ["read", "diff"]


@pytest.mark.slow
def test_root_context_carries_the_acme_migration_skills(root_copy: Path) -> None:
    ctx = load_context(root_copy, use_cli=False)
    assert [p.name for p in ctx.packages] == ["acme-sdk-2-migration", "acme-sdk-2-js-migration"]
    js = ctx.skill("acme-sdk-2-js-migration", "acme-sdk-2-js-migration")  # the npm fixture's
    assert (
        js is not None
        and js.rules_dir is not None
        and (js.rules_dir / "ACMEJS900-method-by-name.yml").is_file()
    )
    skill = ctx.skill("acme-sdk-2-migration", "acme-sdk-2-migration")
    assert skill is not None and skill.rules_dir is not None
    assert sorted(p.name for p in skill.rules_dir.glob("*.yml"))
    assert ctx.select_skills("acme-sdk") == [skill]


def test_guardrail_instructions_cover_the_architecture_list() -> None:
    text = (REPO / ".apm" / "instructions" / "security.instructions.md").read_text().lower()
    for topic in ("pipeline files", "secrets", "scope expansion", "tests stay", "no new dependencies"):
        assert topic in text


def test_public_api_names_are_locked() -> None:
    assert set(apm_api.__all__) == {
        "STEPS",
        "TOOLS",
        "AgentSpec",
        "Context",
        "ContextDoc",
        "ContextRefused",
        "Instruction",
        "PackageInfo",
        "Skill",
        "Violation",
        "content_hash",
        "load_context",
    }
