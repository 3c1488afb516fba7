"""Deterministic migration: ast-grep rules shipped as data in the migration package, applied in order.

A rule file holds one ast-grep rule (`id`, `language`, `message`, `rule`, optional `fix`, `metadata`).
Rules run in file-name order (the ids are numbered so that order is explicit). A rule without `fix`
is detect-only: its matches become `requires_human` items of the plan. Where the rules match is found by
scan.py (bounded, cached per file content, fail-closed).

Every edit goes through the workspace (so deny globs, budgets and the trace apply) and is recorded with
the rule that made it (`RuleEdit`: rule id, file, count, and what the edit brings in, rule_risk.py). A
write the workspace refuses fails the run naming rule and path; any other error on one file is collected
and leaves that file to a human, without stopping the others.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import yaml

from agentic_codemod.errors import CandidateRejected, InputError
from agentic_codemod.models import HumanItem, RuleEdit, RuleMatch
from agentic_codemod.mr_text import code, prose
from agentic_codemod.workflow import rule_risk
from agentic_codemod.workflow.scan import Hit, Scanner, ast_grep_binary, source_files, source_suffixes
from agentic_codemod.yaml_input import safe_load

if TYPE_CHECKING:
    from agentic_codemod.adapters.types import Versioning
    from agentic_codemod.config import ScanSettings

__all__ = [
    "CodemodReport",
    "Rule",
    "Scanner",
    "apply_rules",
    "ast_grep_binary",
    "error_items",
    "find_matches",
    "human_items",
    "load_rules",
    "matches_in_sources",
    "provenance",
    "risk_items",
    "source_files",
    "source_suffixes",
]


@dataclass(frozen=True)
class Rule:
    id: str
    path: Path
    description: str
    message: str
    fixable: bool
    language: str
    breaks_in: str | None = None  # first SDK version where the matched usage breaks (metadata.breaks_in)
    text: str | None = None  # the rule file as read once at load: scans use it, not the file again

    def applies_to(self, target: str, versioning: Versioning) -> bool:
        """A detect-only rule about a break that comes after the target version does not block it
        (versions in the task's ecosystem's order; ValueError when one cannot be read)."""
        return self.breaks_in is None or versioning.compare(self.breaks_in, target) <= 0


@dataclass
class CodemodReport:
    edits: list[RuleEdit] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)  # {rule, file, error}

    @property
    def files(self) -> list[str]:
        return sorted({e.file for e in self.edits})

    def by_rule(self) -> dict[str, list[str]]:
        """Rule id -> the files it changed, in the order the rules ran."""
        out: dict[str, list[str]] = {}
        for e in self.edits:
            out.setdefault(e.rule, []).append(e.file)
        return out


class Writer(Protocol):
    def read(self, rel: str, actor: str) -> str: ...
    def write(self, rel: str, content: str, actor: str) -> None: ...


def load_rules(rules_dir: Path, disabled: list[str] | None = None) -> list[Rule]:
    """Every `*.yml` in rules_dir, in file-name order, minus disabled ids. Bad files are input errors."""
    rules: list[Rule] = []
    for path in sorted(rules_dir.glob("*.yml")):
        text = path.read_text(encoding="utf-8")
        try:
            doc = safe_load(text)
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
                text=text,
            )
        )
    ids = [r.id for r in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise InputError(f"{rules_dir}: duplicate rule id {duplicates[0]!r}")
    return [r for r in rules if r.id not in set(disabled or [])]


def find_matches(rules: list[Rule], root: Path, scanner: Scanner | None = None) -> list[RuleMatch]:
    """What the rules would touch, without touching anything (for the plan and the final gate): one scan
    with all the rules, matches in rule order."""
    scanner = scanner or Scanner(root)
    by_id = {r.id: r for r in rules}
    found = scanner.scan(rules)
    return [
        RuleMatch(
            rule_id=h.rule_id,
            file=h.file,
            line=h.line,
            message=by_id[h.rule_id].message,
            fixable=by_id[h.rule_id].fixable,
        )
        for rule in rules
        for h in found[rule.id]
    ]


def matches_in_sources(
    rules: list[Rule], sources: dict[str, tuple[str, str]], scratch: Path, settings: ScanSettings
) -> dict[str, list[Hit]]:
    """Where the rules match files given as another language's source ({name: (ast-grep language, text)}:
    a `.pyw` as Python, a notebook's code cells), by name: each is written under `scratch` (a new folder,
    removed afterwards) with its language's suffix and scanned as the repository's files are."""
    from agentic_codemod.tools import repo_copy
    from agentic_codemod.tools.snapshot import git

    repo_copy.remove(scratch)  # whatever an earlier run left there
    scratch.mkdir(parents=True)
    try:
        git(scratch, "init", "-q")
        named: dict[str, str] = {}
        for number, (name, (language, text)) in enumerate(sorted(sources.items())):
            suffixes = source_suffixes(language)
            if not suffixes:
                continue
            written = f"f{number}{suffixes[0]}"
            (scratch / written).write_text(text, encoding="utf-8", errors="surrogateescape")
            named[written] = name
        found = Scanner(scratch, settings).scan(rules)
        hits: dict[str, list[Hit]] = {}
        for rule in rules:
            for hit in found[rule.id]:
                hits.setdefault(named[hit.file], []).append(hit)
        return hits
    finally:
        repo_copy.remove(scratch)


def human_items(
    matches: list[RuleMatch], rules: list[Rule], target: str, versioning: Versioning
) -> list[HumanItem]:
    """Matches of detect-only rules that matter for this target version."""
    relevant = {r.id for r in rules if not r.fixable and r.applies_to(target, versioning)}
    return [
        HumanItem(reason=m.message, file=m.file, line=m.line, rule_id=m.rule_id)
        for m in matches
        if m.rule_id in relevant
    ]


def apply_rules(
    rules: list[Rule], root: Path, writer: Writer, scanner: Scanner | None = None
) -> CodemodReport:
    """Apply every fixable rule in order; each rule sees the result of the ones before it. One scan with
    all the fixable rules first; before each later rule, only the files an earlier rule edited are
    scanned again (with the rules still to come). What each edit brings in (rule_risk.assess: a parse of
    the file before and after) is judged by one worker thread while the rules go on: a rule's edits are
    handed to it once the rule's writes are done, so it parses while ast-grep re-scans (which leaves the
    interpreter free); every judgement is in, in edit order, before this returns, and a judge that raises
    fails the step as it did inline."""
    scanner = scanner or Scanner(root)
    report = CodemodReport()
    fixable = [r for r in rules if r.fixable]
    found = scanner.scan(fixable) if fixable else {}
    edited: set[str] = set()
    judged: list[tuple[Rule, str, int, Future[tuple[list[str], bool]]]] = []
    judge = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rule-risk")
    try:
        for index, rule in enumerate(fixable):
            if edited:
                found = scanner.scan(fixable[index:], files=sorted(edited))
                edited.clear()
            by_file: dict[str, list[Hit]] = {}
            for hit in found[rule.id]:
                if hit.replacement is not None:
                    by_file.setdefault(hit.file, []).append(hit)
            changes: list[tuple[str, int, tuple[str, str]]] = []
            for rel, hits in sorted(by_file.items()):
                change = _apply_one(rule, rel, hits, writer, report)
                if change is not None:
                    changes.append((rel, len(hits), change))
                    edited.add(rel)
            # Judged once the rule's writes are done: the parse holds the interpreter lock, so a judge
            # running beside the writes delays each of them; beside the next re-scan it delays nothing.
            for rel, count, change in changes:
                judged.append((rule, rel, count, judge.submit(rule_risk.assess, *change, rule.language)))
        for rule, rel, count, risk in judged:
            adds, human = risk.result()
            edit = RuleEdit(rule=rule.id, file=rel, count=count, adds=adds, requires_human=human)
            report.edits.append(edit)
    finally:  # every judgement is in by now, unless the step stops (an error, a cancel): then not waited for
        judge.shutdown(wait=False, cancel_futures=True)
    return report


def _apply_one(
    rule: Rule, rel: str, hits: list[Hit], writer: Writer, report: CodemodReport
) -> tuple[str, str] | None:
    """The file's text before and after the rule's edit, once written; None when nothing changed or the
    file could not be edited (collected in the report)."""
    actor = f"codemod:{rule.id}"
    try:
        original = writer.read(rel, actor=actor)
        updated = _splice(original, hits)
        if updated == original:
            return None
        writer.write(rel, updated, actor=actor)
    except PermissionError as exc:  # the workspace refused: the package's rule reaches where it may not
        reason = getattr(exc, "reason", None) or str(exc)
        raise CandidateRejected(
            f"rule {rule.id} tried to change {rel}, which the workspace refused: {reason}",
            hint="disable the rule (migration.disabled_rules) or fix the migration package",
        ) from exc
    except (OSError, ValueError) as exc:
        report.errors.append({"rule": rule.id, "file": rel, "error": str(exc)})
        return None
    return original, updated


def error_items(report: CodemodReport) -> list[HumanItem]:
    """A file a rule could not edit is a human's job (it still has the old API)."""
    return [
        HumanItem(reason=f"rule {e['rule']} could not edit the file: {e['error']}", file=e["file"])
        for e in report.errors
    ]


def risk_items(report: CodemodReport) -> list[HumanItem]:
    """A rule edit that brings in import-time code or a risky API waits for a human."""
    return [
        HumanItem(reason=f"rule {e.rule} edit adds {'; '.join(e.adds)}", file=e.file)
        for e in report.edits
        if e.requires_human
    ]


def provenance(edits: list[RuleEdit]) -> list[str]:
    """One line per rule that changed files, for the MR text: "changed by ACME003 in 4 files: ..."."""
    by_rule: dict[str, list[str]] = {}
    for e in edits:
        by_rule.setdefault(e.rule, []).append(e.file)
    return [  # file names are data: each stays on its line, inside its code span (mr_text.code)
        f"changed by {prose(rule)} in {len(files)} file{'s' if len(files) != 1 else ''}: "
        + ", ".join(code(f) for f in files)
        for rule, files in by_rule.items()
    ]


def _splice(text: str, hits: list[Hit]) -> str:
    """Apply replacements by byte offset, last first, refusing overlapping edits."""
    data = text.encode("utf-8")
    spans = sorted(((h.start, h.end, h.replacement or "") for h in hits), reverse=True)
    limit = len(data) + 1
    for start, end, replacement in spans:
        if end > limit:
            raise ValueError(f"overlapping matches at byte {start}")
        data = data[:start] + replacement.encode("utf-8") + data[end:]
        limit = start
    return data.decode("utf-8")
