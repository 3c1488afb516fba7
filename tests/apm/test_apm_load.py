"""The real `apm install` on a fixture project, then load_context reading what it installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from apm_project import MIGRATION, MIGRATION_DIR, OTHER, Installer, skill_package, write

from agentic_codemod.apm import content_hash, load_context
from agentic_codemod.errors import BudgetExceeded, InputError

pytestmark = pytest.mark.slow


def test_installed_primitives_are_read_after_frozen_install_and_audit(project: Path) -> None:
    ctx = load_context(project, use_cli=True)

    assert [p.name for p in ctx.packages] == [MIGRATION, OTHER]
    assert (
        ctx.lock_sha256 == __import__("hashlib").sha256((project / "apm.lock.yaml").read_bytes()).hexdigest()
    )
    assert ctx.agent_for_step("implement").name == "builder"
    assert ctx.agent_for_step("review").tools == ["read", "diff"]
    skill = ctx.skill(MIGRATION, MIGRATION)
    assert skill is not None
    assert skill.path == project / MIGRATION_DIR / ".apm" / "skills" / MIGRATION
    assert skill.notes.strip() == "Use get instead of fetch."
    assert skill.rules_dir == skill.path / "rules"
    assert [p.name for p in skill.references] == ["unusual-cases.md"]


def test_the_same_context_loads_without_the_cli(project: Path) -> None:
    with_cli = load_context(project, use_cli=True)
    without = load_context(project, use_cli=False)
    assert (with_cli.cli_checked, without.cli_checked) == (True, False)
    assert without.model_copy(update={"cli_checked": True}) == with_cli


def test_skills_come_from_the_installed_copy_not_the_source(project: Path) -> None:
    write(project / "packages" / MIGRATION / ".apm" / "skills" / MIGRATION / "SKILL.md", "changed at source")
    ctx = load_context(project, use_cli=False)
    skill = ctx.skill(MIGRATION, MIGRATION)
    assert skill is not None and "apm_modules" in skill.path.parts
    assert skill.notes.strip() == "Use get instead of fetch."


def test_content_hash_matches_what_apm_records(tmp_path: Path, install: Installer) -> None:
    root = tmp_path / "p"
    write(
        root / "apm.yml", "name: p\nversion: 0.1.0\ntargets: [agent-skills]\ndependencies:\n  apm: [./pkg]\n"
    )
    pkg = skill_package(root / "pkg", "pkg-skill", "notes")
    (pkg / "assets").mkdir()
    (pkg / "assets" / "logo.bin").write_bytes(bytes(range(256)))
    write(pkg / "__pycache__" / "x.pyc", "ignored by apm")
    write(pkg / "deep" / "a" / "b" / "c.md", "crlf\r\nline\r\n")
    install(root)
    locked = yaml.safe_load((root / "apm.lock.yaml").read_text())["dependencies"][0]["content_hash"]
    assert content_hash(root / "apm_modules" / "_local" / "pkg") == locked
    assert content_hash(pkg) == locked  # same tree at the source: __pycache__ excluded on both


def test_select_skills_returns_only_the_task_sdk(project: Path) -> None:
    ctx = load_context(project, use_cli=False)
    assert [s.name for s in ctx.select_skills("acme-sdk")] == [MIGRATION]
    assert [s.name for s in ctx.select_skills("acme_sdk")] == [MIGRATION]
    assert [s.name for s in ctx.select_skills("widget-sdk")] == [OTHER]
    assert ctx.select_skills("acme") == []  # a prefix of a word is not a match
    assert ctx.select_skills("unknown-sdk") == []


def test_select_skills_refuses_to_cut_silently_over_budget(project: Path) -> None:
    ctx = load_context(project, use_cli=False, budget_bytes=10)
    with pytest.raises(BudgetExceeded, match="context_budget_bytes"):
        ctx.select_skills("acme-sdk")
    assert ctx.select_skills("acme-sdk", budget_bytes=64_000)


def test_metadata_sdk_in_skill_md_decides_the_match(tmp_path: Path, install: Installer) -> None:
    root = tmp_path / "p"
    write(
        root / "apm.yml", "name: p\nversion: 0.1.0\ntargets: [agent-skills]\ndependencies:\n  apm: [./pkg]\n"
    )
    write(root / "apm-policy.yml", "dependencies:\n  allow: ['./pkg']\n")
    skill = "---\nname: upgrade-notes\ndescription: d\nmetadata:\n  sdk: [Acme.SDK]\n---\nnotes\n"
    write(root / "pkg" / "apm.yml", "name: pkg\nversion: 1.0.0\n")
    write(root / "pkg" / ".apm" / "skills" / "upgrade-notes" / "SKILL.md", skill)
    install(root)
    ctx = load_context(root, use_cli=False)
    assert [s.name for s in ctx.select_skills("acme-sdk")] == ["upgrade-notes"]
    assert ctx.select_skills("upgrade") == []


def test_direct_dependencies_keep_apm_yml_order_then_transitive(tmp_path: Path, install: Installer) -> None:
    root = tmp_path / "p"
    deps = "  apm:\n    - ./packages/zeta\n    - ./packages/alpha\n"
    write(root / "apm.yml", f"name: p\nversion: 0.1.0\ntargets: [agent-skills]\ndependencies:\n{deps}")
    write(root / "apm-policy.yml", "dependencies:\n  allow: ['./packages/**']\n")
    skill_package(root / "packages" / "zeta", "zeta", "z")
    skill_package(root / "packages" / "alpha", "alpha", "a")
    write(
        root / "packages" / "alpha" / "apm.yml",
        "name: alpha\nversion: 1.0.0\ndependencies:\n  apm: [../beta]\n",
    )
    skill_package(root / "packages" / "beta", "beta", "b", version="2.0.0")
    install(root)
    ctx = load_context(root, use_cli=True)
    assert [(p.name, p.version) for p in ctx.packages] == [
        ("zeta", "1.0.0"),
        ("alpha", "1.0.0"),
        ("beta", "2.0.0"),
    ]
    assert [s.name for s in ctx.skills] == ["zeta", "alpha", "beta"]
    beta = ctx.skill("beta", "beta")
    assert beta is not None and beta.path.is_relative_to(root / "apm_modules" / "_local")


def test_a_missing_install_is_refused_without_the_cli(project: Path) -> None:
    shutil.rmtree(project / "apm_modules")
    with pytest.raises(InputError, match=r"package is not installed .*rule installed"):
        load_context(project, use_cli=False)


def test_a_missing_install_is_repaired_by_the_cli(project: Path) -> None:
    shutil.rmtree(project / "apm_modules")
    ctx = load_context(project, use_cli=True)
    assert (project / MIGRATION_DIR).is_dir()
    assert [p.name for p in ctx.packages] == [MIGRATION, OTHER]
