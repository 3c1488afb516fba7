"""APM primitives read from one package tree: frontmatter + Markdown body + file-name conventions.

    .apm/agents/<name>.agent.md                 AgentFile    (compiled into AgentSpec by compile.py)
    .apm/instructions/<name>.instructions.md    Instruction  (description, applyTo)
    .apm/context/<name>.context.md              ContextDoc
    .apm/skills/<name>/SKILL.md                 Skill        (name == folder; references/, rules/ travel)

Every primitive carries the package it came from and its source file. APM has no Python API, so this
parses the files the way `apm` documents them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

from agentic_codemod.apm.refusal import ContextRefused, Violation
from agentic_codemod.yaml_input import safe_load

APM_DIR = ".apm"
GLOBAL_APPLY_TO = frozenset({"", "*", "**", "**/*"})


class Primitive(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    package: str
    source: Path  # the file it was read from


class Instruction(Primitive):
    description: str
    apply_to: str  # glob of files it applies to; "**" (or absent) means every agent gets it
    body: str

    @property
    def is_global(self) -> bool:
        return self.apply_to.strip() in GLOBAL_APPLY_TO


class ContextDoc(Primitive):
    description: str
    body: str


class Skill(Primitive):
    description: str
    path: Path  # the skill folder in apm_modules (or in the project's .apm/skills)
    notes: str  # SKILL.md body
    rules_dir: Path | None
    references: list[Path]
    sdk: list[str]  # frontmatter metadata.sdk, normalised; empty when not declared

    @property
    def size_bytes(self) -> int:
        """What handing this skill to a run costs: notes plus references."""
        return len(self.notes.encode("utf-8")) + sum(p.stat().st_size for p in self.references)


class AgentFile(Primitive):
    meta: dict[str, Any]
    body: str


class PackagePrimitives(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    agents: list[AgentFile]
    instructions: list[Instruction]
    context: list[ContextDoc]
    skills: list[Skill]


def read_package(root: Path, *, package: str, display: str) -> PackagePrimitives:
    """All primitives of the package at `root`; `display` is its project-relative path for messages."""
    base = root / APM_DIR
    return PackagePrimitives(
        agents=[_agent(p, package, display, root) for p in _files(base / "agents", "*.agent.md")],
        instructions=[
            _instruction(p, package, display, root)
            for p in _files(base / "instructions", "*.instructions.md")
        ],
        context=[_context(p, package, display, root) for p in _files(base / "context", "*.context.md")],
        skills=[_skill(p, package, display, root) for p in _files(base / "skills", "*/SKILL.md")],
    )


def split_frontmatter(text: str, *, where: str, package: str) -> tuple[dict[str, Any], str]:
    """('---' YAML '---' body) -> (mapping, body). No frontmatter gives an empty mapping."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return {}, text
    head, sep, body = text[3:].partition("\n---")
    if not sep:
        raise _bad(where, package, "frontmatter has no closing '---'")
    try:
        meta = safe_load(head) or {}
    except yaml.YAMLError as exc:
        raise _bad(where, package, f"frontmatter is not YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise _bad(where, package, "frontmatter must be a mapping")
    return meta, body.split("\n", 1)[1] if "\n" in body else ""


def _read(path: Path, package: str, display: str, root: Path) -> tuple[str, dict[str, Any], str]:
    where = f"{display}/{path.relative_to(root).as_posix()}"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _bad(where, package, f"not UTF-8 text: {exc}") from exc
    meta, body = split_frontmatter(text, where=where, package=package)
    return where, meta, body.strip("\n") + "\n"


def _agent(path: Path, package: str, display: str, root: Path) -> AgentFile:
    where, meta, body = _read(path, package, display, root)
    name = _text(meta, "name", where, package, default=path.name.removesuffix(".agent.md"))
    return AgentFile(name=name, package=package, source=path, meta=meta, body=body)


def _instruction(path: Path, package: str, display: str, root: Path) -> Instruction:
    where, meta, body = _read(path, package, display, root)
    return Instruction(
        name=path.name.removesuffix(".instructions.md"),
        package=package,
        source=path,
        description=_text(meta, "description", where, package),
        apply_to=_text(meta, "applyTo", where, package, default="**"),
        body=body,
    )


def _context(path: Path, package: str, display: str, root: Path) -> ContextDoc:
    where, meta, body = _read(path, package, display, root)
    name = path.name.removesuffix(".context.md")
    description = _text(meta, "description", where, package, default=name)
    return ContextDoc(name=name, package=package, source=path, description=description, body=body)


def _skill(path: Path, package: str, display: str, root: Path) -> Skill:
    where, meta, body = _read(path, package, display, root)
    folder = path.parent
    name = _text(meta, "name", where, package)
    if name != folder.name:
        raise _bad(where, package, f"field 'name' is {name!r} but the skill folder is {folder.name!r}")
    rules = folder / "rules"
    refs = folder / "references"
    metadata = meta.get("metadata")
    sdk = (metadata.get("sdk") if isinstance(metadata, dict) else None) or []
    return Skill(
        name=name,
        package=package,
        source=path,
        description=_text(meta, "description", where, package),
        path=folder,
        notes=body,
        rules_dir=rules if rules.is_dir() else None,
        references=sorted(p for p in refs.rglob("*") if p.is_file()) if refs.is_dir() else [],
        sdk=[normalise_name(s) for s in ([sdk] if isinstance(sdk, str) else sdk)],
    )


def normalise_name(name: str) -> str:
    """Skill and SDK names as a skill is matched to a task, the same for every ecosystem: lower case, each
    run of '-', '_' and '.' one '-' ('Acme_SDK' -> 'acme-sdk'). Not a package-name rule: packages compare
    by their adapter's Versioning.canonical_name."""
    return re.sub(r"[-_.]+", "-", name.lower()).strip("-")


def _text(meta: dict[str, Any], field: str, where: str, package: str, default: str | None = None) -> str:
    value = meta.get(field, default)
    if not isinstance(value, str) or not value.strip():
        raise _bad(where, package, f"field '{field}' must be a non-empty string")
    return value.strip()


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern)) if folder.is_dir() else []


def _bad(where: str, package: str, detail: str) -> ContextRefused:
    return ContextRefused([Violation(where, package, "primitive-format", detail, "fix the primitive file")])
