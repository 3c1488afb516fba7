"""Builders for small APM projects used by the tests in this folder (imported by name: no package)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

MIGRATION = "acme-sdk-2-migration"
OTHER = "widget-sdk-3-migration"
MIGRATION_DIR = f"apm_modules/_local/{MIGRATION}"
SKILL_MD = f"{MIGRATION_DIR}/.apm/skills/{MIGRATION}/SKILL.md"

APM_YML = """\
name: fixture-project
version: 0.1.0
targets: [agent-skills]
executables: {}
dependencies:
  apm:
    - ./packages/acme-sdk-2-migration
    - ./packages/widget-sdk-3-migration
"""

POLICY_YML = """\
name: fixture-policy
version: 1.0.0
enforcement: block
dependencies:
  allow: ["./packages/**"]
  require_pinned_constraint: true
security:
  integrity:
    require_hashes: true
"""

# Agent names deliberately differ from the root project's: the code must not know them.
AGENTS = {
    "builder": ("implement", "none", "coder-large", "[read, edit, run_verification]"),
    "judge": ("review", "ReviewVerdict", "reviewer", "[read, diff]"),
}

SECURITY = """\
---
description: Guardrails
applyTo: "**"
---
Never touch CI files.
"""

PYTHON_ONLY = """\
---
description: Python style
applyTo: "**/*.py"
---
Use type hints.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def agent_text(name: str, step: str, output: str, model: str, tools: str, extra: str = "") -> str:
    return (
        f"---\nname: {name}\ndescription: the {name}\nmodel: {model}\ntools: {tools}\n"
        f"step: {step}\noutput: {output}\n{extra}---\nYou are the {name}.\n"
    )


def skill_package(root: Path, name: str, notes: str, version: str = "1.0.0") -> Path:
    """A migration package: SKILL.md with notes, references/ and rules/ beside it."""
    write(root / "apm.yml", f"name: {name}\nversion: {version}\n")
    skill = root / ".apm" / "skills" / name
    write(skill / "SKILL.md", f"---\nname: {name}\ndescription: migrate {name}\n---\n{notes}\n")
    write(skill / "references" / "unusual-cases.md", "getattr(client, name) needs a human.\n")
    write(skill / "rules" / "R001-rename.yml", "id: R001\nlanguage: python\nrule: {pattern: a}\n")
    return root


def build_project(root: Path) -> Path:
    write(root / "apm.yml", APM_YML)
    write(root / "apm-policy.yml", POLICY_YML)
    for name, (step, output, model, tools) in AGENTS.items():
        write(root / ".apm" / "agents" / f"{name}.agent.md", agent_text(name, step, output, model, tools))
    write(root / ".apm" / "instructions" / "security.instructions.md", SECURITY)
    write(root / ".apm" / "instructions" / "python.instructions.md", PYTHON_ONLY)
    write(root / ".apm" / "context" / "flow.context.md", "---\ndescription: flow\n---\nThe flow.\n")
    skill_package(root / "packages" / MIGRATION, MIGRATION, "Use get instead of fetch.")
    skill_package(root / "packages" / OTHER, OTHER, "Widgets are now gadgets.")
    return root


Installer = Callable[..., subprocess.CompletedProcess[str]]
