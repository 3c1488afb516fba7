"""Agent specs are compiled from .apm/ files: a context change changes them, with no Python change."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apm_project import agent_text, write

from agentic_codemod.apm import ContextRefused, load_context
from agentic_codemod.errors import InputError

pytestmark = pytest.mark.slow

AGENTS = Path(".apm") / "agents"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_changing_a_role_model_changes_the_compiled_spec(project: Path) -> None:
    before = load_context(project, use_cli=False).agent_for_step("implement")
    edit(project / AGENTS / "builder.agent.md", "model: coder-large", "model: coder-small")
    after = load_context(project, use_cli=False).agent_for_step("implement")
    assert (before.model_role, after.model_role) == ("coder-large", "coder-small")
    assert after.model_copy(update={"model_role": "coder-large"}) == before


def test_changing_an_instruction_changes_every_agent_prompt(project: Path) -> None:
    edit(
        project / ".apm" / "instructions" / "security.instructions.md", "Never touch CI files.", "Never push."
    )
    ctx = load_context(project, use_cli=True)  # the project's own .apm/ is not in the lockfile
    for step in ("implement", "review"):
        agent = ctx.agent_for_step(step)
        assert "Never push." in agent.instructions and "Never touch CI files." not in agent.instructions


def test_instructions_are_body_then_context_then_global_guardrails(project: Path) -> None:
    path = project / AGENTS / "judge.agent.md"
    path.write_text(
        agent_text("judge", "review", "ReviewVerdict", "reviewer", "[read, diff]", "context: [flow]\n")
    )
    agent = load_context(project, use_cli=False).agent_for_step("review")
    assert agent.instructions == "You are the judge.\n\nThe flow.\n\nNever touch CI files.\n"
    assert [p.name for p in agent.included] == ["flow.context.md", "security.instructions.md"]
    assert "type hints" not in agent.instructions  # applyTo "**/*.py" is file-scoped, not global
    assert agent.source == project / AGENTS / "judge.agent.md"


def test_renaming_an_agent_is_a_context_change(project: Path) -> None:
    old = project / AGENTS / "judge.agent.md"
    old.rename(project / AGENTS / "critic.agent.md")
    edit(project / AGENTS / "critic.agent.md", "name: judge", "name: critic")
    ctx = load_context(project, use_cli=False)
    assert ctx.agent_for_step("review").name == "critic"
    assert sorted(ctx.agents) == ["builder", "critic"]


def test_a_step_without_an_agent_is_an_input_error(project: Path) -> None:
    ctx = load_context(project, use_cli=False)
    with pytest.raises(InputError, match="no agent serves step 'scribe'"):
        ctx.agent_for_step("scribe")


def test_two_agents_for_one_step_are_refused(project: Path) -> None:
    write(
        project / AGENTS / "judge2.agent.md", agent_text("judge2", "review", "ReviewVerdict", "r", "[read]")
    )
    with pytest.raises(ContextRefused, match=r"step 'review' served by judge, judge2"):
        load_context(project, use_cli=False)


def test_no_agent_file_can_give_the_reviewer_an_edit_tool(project: Path) -> None:
    edit(project / AGENTS / "judge.agent.md", "tools: [read, diff]", "tools: [read, diff, edit]")
    with pytest.raises(ContextRefused) as caught:
        load_context(project, use_cli=False)
    violation = caught.value.violations[0]
    assert (violation.path, violation.rule) == (".apm/agents/judge.agent.md", "agent-definition")
    assert "['edit'] exceed what step 'review' may use" in violation.detail


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("tools: [read, diff]", "tools: [read, shell]", "unknown ['shell']"),
        ("step: review", "step: approve", "field 'step': 'approve'"),
        ("output: ReviewVerdict", "output: ChangePlan", "produces 'ReviewVerdict', not 'ChangePlan'"),
        ("model: reviewer\n", "", "field 'model' must be a non-empty string"),
    ],
)
def test_malformed_agent_files_are_refused_naming_the_field(
    project: Path, old: str, new: str, message: str
) -> None:
    edit(project / AGENTS / "judge.agent.md", old, new)
    with pytest.raises(ContextRefused, match=re.escape(message)):
        load_context(project, use_cli=False)


def test_comma_separated_tools_are_accepted(project: Path) -> None:
    edit(project / AGENTS / "judge.agent.md", "tools: [read, diff]", "tools: 'read, diff'")
    assert load_context(project, use_cli=False).agent_for_step("review").tools == ["read", "diff"]


def test_skill_name_must_match_its_folder(project: Path) -> None:
    skill = project / ".apm" / "skills" / "local-notes" / "SKILL.md"
    write(skill, "---\nname: other-name\ndescription: d\n---\nnotes\n")
    with pytest.raises(
        ContextRefused, match="field 'name' is 'other-name' but the skill folder is 'local-notes'"
    ):
        load_context(project, use_cli=False)


def test_audit_record_names_lockfile_packages_and_agents(project: Path) -> None:
    record = load_context(project, use_cli=False).audit_record()
    assert len(record["lock_sha256"]) == 64
    assert record["apm_cli_checked"] is False
    assert [(p["name"], p["version"]) for p in record["packages"]] == [
        ("acme-sdk-2-migration", "1.0.0"),
        ("widget-sdk-3-migration", "1.0.0"),
    ]
    assert record["packages"][0]["content_hash"].startswith("sha256:")
    assert record["agents"]["review"] == {"name": "judge", "model_role": "reviewer"}
