"""The deterministic validator of a lessons file: proposed (its run dir exists) or published (it does not).

Every lesson needs a non-empty cue, lesson, evidence (run id and at least one path), confidence
reason and counter-example, and well-formed run ids. Then:

  proposed   the run dir of each run id exists (beside the file, or under --runs-root), and every
             evidence path exists in it; a `file.json#/json/pointer` path must resolve
  published  run dirs are ephemeral, so: the run ids are earlier than now, the paths name run
             artifacts, and each lesson has its row in experience.context.md; with --runs-root the
             runs must be found there and the paths checked as for a proposal
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentic_codemod.adapters import registry
from agentic_codemod.experience.records import (
    CONTEXT_DOC,
    NO_ENTRY,
    PROPOSED,
    Lesson,
    LessonsUnreadable,
    index_row,
    run_time,
)


def validate(path: Path, runs_root: Path | None = None, *, published: bool | None = None) -> list[str]:
    """Problems, each `file:line: field: what`; [] when valid. Raises LessonsUnreadable.
    `published` defaults to: the file is not named lessons.proposed.jsonl."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LessonsUnreadable(f"{path}: cannot read lessons: {exc}") from exc
    published = path.name != PROPOSED if published is None else published
    # JSON Lines: split at "\n" only (a record may quote U+2028 or \x1c raw, where splitlines() also splits)
    rows = [(n, line) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if not rows:
        return [f"{path}: empty: write lessons, or one NO_ENTRY line with a reason"]
    index = path.parent / f"{CONTEXT_DOC}.context.md"
    index_text = index.read_text(encoding="utf-8") if published and index.is_file() else ""
    problems: list[str] = []
    ids: set[str] = set()
    for n, line in rows:
        where = f"{path}:{n}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON: {exc.msg}")
            continue
        if isinstance(raw, dict) and NO_ENTRY in raw:
            reason = raw[NO_ENTRY]
            if published or len(rows) > 1 or len(raw) > 1 or not (isinstance(reason, str) and reason.strip()):
                problems.append(f"{where}: {NO_ENTRY}: must be a proposal's only line, with a reason")
            continue
        try:
            lesson = Lesson.model_validate(raw)
        except ValidationError as exc:
            problems += [f"{where}: {'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
            continue
        if lesson.id in ids:
            problems.append(f"{where}: id: {lesson.id!r} appears twice")
        ids.add(lesson.id)
        problems += [f"{where}: {p}" for p in _check(lesson, path.parent, runs_root, published)]
        if published and index_row(lesson) not in index_text:
            problems.append(f"{where}: id: no row for {lesson.id!r} in {index.name} (render_index)")
    return problems


def find_run(run_id: str, near: Path | None, runs_root: Path | None) -> Path | None:
    """The run dir whose run.json has this run_id: `near`, runs_root, runs_root/<id>, runs_root/*."""
    candidates = [near]
    if runs_root is not None and runs_root.is_dir():
        candidates += [runs_root, runs_root / run_id, *sorted(p for p in runs_root.iterdir() if p.is_dir())]
    for candidate in candidates:
        try:
            if candidate and json.loads((candidate / "run.json").read_text())["run_id"] == run_id:
                return candidate
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _check(lesson: Lesson, near: Path, runs_root: Path | None, published: bool) -> list[str]:
    from agentic_codemod.workflow.artifacts import ARTIFACTS

    problems = []
    adapter = registry().get(lesson.cue.ecosystem.lower())
    if adapter is None:
        problems.append(
            f"cue.ecosystem: {lesson.cue.ecosystem!r} is not one of {', '.join(sorted(registry()))}"
        )
    else:
        try:
            adapter.versioning.check(lesson.cue.target, "")
        except ValueError:
            problems.append(f"cue.target: {lesson.cue.target!r} is not a {adapter.name} version range")
    runs: dict[str, Path | None] = {}
    for field, run_id in (("evidence.run_id", lesson.evidence.run_id), ("source_run", lesson.source_run)):
        when = run_time(run_id)
        if when is None:
            problems.append(f"{field}: {run_id!r} is not a run id (YYYYMMDDTHHMMSS-xxxxxxxx)")
        elif published and when > datetime.now(UTC):
            problems.append(f"{field}: run {run_id} is not an earlier run")
        elif not published or runs_root is not None:
            runs[run_id] = find_run(run_id, None if published else near, runs_root)
            if runs[run_id] is None:
                problems.append(f"{field}: run {run_id} not found (no run.json with that run_id)")
    run_dir = runs.get(lesson.evidence.run_id)
    for rel in lesson.evidence.paths:
        file, _, pointer = rel.partition("#")
        if file.startswith("/") or ".." in Path(file).parts:
            problems.append(f"evidence.paths: {rel!r} leaves the run dir")
        elif published and file not in (*ARTIFACTS, PROPOSED) and not file.startswith("reports/"):
            problems.append(f"evidence.paths: {rel!r} is not a run artifact")
        elif run_dir is not None and not _resolves(run_dir / file, pointer):
            problems.append(f"evidence.paths: {rel!r} does not exist in run {lesson.evidence.run_id}")
    return problems


def _resolves(file: Path, pointer: str) -> bool:
    """The file exists and, for `#/a/0/b`, the JSON pointer resolves in it."""
    if not file.is_file():
        return False
    try:
        node: Any = json.loads(file.read_text(encoding="utf-8")) if pointer else None
        for part in pointer.strip("/").split("/") if pointer else []:
            key = part.replace("~1", "/").replace("~0", "~")
            node = node[int(key)] if isinstance(node, list) else node[key]
    except (ValueError, KeyError, IndexError, TypeError, OSError):
        return False
    return True
