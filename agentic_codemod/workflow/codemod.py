"""Deterministic migration: ast-grep rules shipped as data in the migration package, applied in order.

A rule file holds one ast-grep rule (`id`, `language`, `message`, `rule`, optional `fix`, `metadata`).
Rules run in file-name order (the ids are numbered so that order is explicit). A rule without `fix`
is detect-only: its matches become `requires_human` items of the plan. Every edit goes through the
workspace (so deny globs, budgets and the trace apply) and one bad file never stops the others.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from agentic_codemod.errors import EnvironmentUnavailable, InputError
from agentic_codemod.models import HumanItem, RuleMatch

SOURCE_SUFFIXES = {"python": (".py",)}


@dataclass(frozen=True)
class Rule:
    id: str
    path: Path
    description: str
    message: str
    fixable: bool
    language: str
    breaks_in: str | None = None  # first SDK version where the matched usage breaks (metadata.breaks_in)

    def applies_to(self, target: str) -> bool:
        """A detect-only rule about a break that comes after the target version does not block it."""
        from packaging.version import Version

        return self.breaks_in is None or Version(self.breaks_in) <= Version(target)


@dataclass
class CodemodReport:
    edits: list[dict[str, Any]] = field(default_factory=list)  # {rule, file, replacements}
    errors: list[dict[str, str]] = field(default_factory=list)  # {rule, file, error}

    @property
    def files(self) -> list[str]:
        return sorted({e["file"] for e in self.edits})


class Writer(Protocol):
    def read(self, rel: str, actor: str) -> str: ...
    def write(self, rel: str, content: str, actor: str) -> None: ...


def load_rules(rules_dir: Path, disabled: list[str] | None = None) -> list[Rule]:
    """Every `*.yml` in rules_dir, in file-name order, minus disabled ids. Bad files are input errors."""
    rules: list[Rule] = []
    for path in sorted(rules_dir.glob("*.yml")):
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise InputError(f"{path}: not valid YAML: {exc}".splitlines()[0]) from exc
        for key in ("id", "language", "message", "rule"):
            if not isinstance(doc, dict) or key not in doc:
                raise InputError(f"{path}: field '{key}' is missing", hint="see the ast-grep rule format")
        meta = doc.get("metadata") or {}
        rules.append(
            Rule(
                id=str(doc["id"]),
                path=path,
                description=str(meta.get("description", doc["message"])),
                message=str(doc["message"]),
                fixable="fix" in doc and not meta.get("requires_human", False),
                language=str(doc["language"]).lower(),
                breaks_in=str(meta["breaks_in"]) if meta.get("breaks_in") else None,
            )
        )
    ids = [r.id for r in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(f"{rules_dir}: duplicate rule id {duplicates[0]!r}")
    return [r for r in rules if r.id not in set(disabled or [])]


def ast_grep_binary() -> str:
    beside = Path(sys.executable).parent / "ast-grep"
    found = str(beside) if beside.exists() else shutil.which("ast-grep")
    if not found:
        raise EnvironmentUnavailable("ast-grep is not installed", hint="pip install ast-grep-cli")
    return found


def scan(rule: Rule, root: Path, files: list[str], timeout_s: float = 120.0) -> list[dict[str, Any]]:
    """All matches of one rule in the given repo-relative files (ast-grep JSON objects)."""
    if not files:
        return []
    proc = subprocess.run(
        [ast_grep_binary(), "scan", "--rule", str(rule.path), "--json=compact", *files],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    try:
        matches = json.loads(proc.stdout or "[]")
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"ast-grep failed on rule {rule.id}: {proc.stderr.strip()[:500]}") from exc
    return [m for m in matches if m.get("ruleId", rule.id) == rule.id]


def source_files(root: Path, language: str) -> list[str]:
    """Tracked and untracked (not ignored) source files, repo-relative, via git (so .gitignore applies)."""
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    suffixes = SOURCE_SUFFIXES.get(language, ())
    return sorted(p for p in out.split("\0") if p.endswith(suffixes) and (root / p).is_file())


def find_matches(rules: list[Rule], root: Path) -> list[RuleMatch]:
    """What the rules would touch, without touching anything (for the plan)."""
    found: list[RuleMatch] = []
    for rule in rules:
        for m in scan(rule, root, source_files(root, rule.language)):
            found.append(
                RuleMatch(
                    rule_id=rule.id,
                    file=m["file"],
                    line=m["range"]["start"]["line"] + 1,
                    message=rule.message,
                    fixable=rule.fixable,
                )
            )
    return found


def human_items(matches: list[RuleMatch], rules: list[Rule], target: str) -> list[HumanItem]:
    """Matches of detect-only rules that matter for this target version."""
    relevant = {r.id for r in rules if not r.fixable and r.applies_to(target)}
    return [
        HumanItem(reason=m.message, file=m.file, line=m.line, rule_id=m.rule_id)
        for m in matches
        if m.rule_id in relevant
    ]


def apply_rules(rules: list[Rule], root: Path, writer: Writer) -> CodemodReport:
    """Apply every fixable rule in order; each rule sees the result of the ones before it."""
    report = CodemodReport()
    for rule in (r for r in rules if r.fixable):
        by_file: dict[str, list[dict[str, Any]]] = {}
        for m in scan(rule, root, source_files(root, rule.language)):
            if "replacement" in m:
                by_file.setdefault(m["file"], []).append(m)
        for rel, matches in sorted(by_file.items()):
            try:
                original = writer.read(rel, actor=f"codemod:{rule.id}")
                updated = _splice(original, matches)
                if updated != original:
                    writer.write(rel, updated, actor=f"codemod:{rule.id}")
                    report.edits.append({"rule": rule.id, "file": rel, "replacements": len(matches)})
            except (PermissionError, OSError, ValueError) as exc:
                report.errors.append({"rule": rule.id, "file": rel, "error": str(exc)})
    return report


def _splice(text: str, matches: list[dict[str, Any]]) -> str:
    """Apply replacements by byte offset, last first, refusing overlapping edits."""
    data = text.encode("utf-8")
    spans = sorted(
        (
            (m["replacementOffsets"]["start"], m["replacementOffsets"]["end"], m["replacement"])
            for m in matches
        ),
        reverse=True,
    )
    limit = len(data) + 1
    for start, end, replacement in spans:
        if end > limit:
            raise ValueError(f"overlapping matches at byte {start}")
        data = data[:start] + replacement.encode("utf-8") + data[end:]
        limit = start
    return data.decode("utf-8")
