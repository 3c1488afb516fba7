"""Intake of a BMAD story (bmad-method's create-story template) as a TaskSpec.

    load_story(path) -> TaskSpec                 reads the file; InputError (exit 2) names file and section
    story_to_task(text, path) -> TaskSpec        the same from text (the worktree gate reads it from git)

What is read, and from where:

    # Story 1.2: Migrate acme-sdk to 2.1              -> title (the text after "Story N.M:")
    ## Acceptance Criteria                            -> acceptance_criteria: the numbered items, each a
    1. Given ..., when ..., then ...                     Given/When/Then criterion (continuation lines and
                                                         "**AC1:**" labels kept as written)
    a YAML front matter (--- at the top) or ONE fenced -> everything else of the task: sdk, allowed_paths,
    block ```yaml agentic-codemod ... ```               and optionally id, migration, deny_globs, budgets,
                                                         verification, allow_all_paths

The task id is the block's `id`, else the file name's stem made into a task id. Title and criteria come
only from the story's own sections: a block that sets them is refused, so the story never says one thing
to its reader and another to the tool. Everything is then validated by TaskSpec, exactly like a task file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from agentic_codemod.config import first_error
from agentic_codemod.errors import InputError
from agentic_codemod.task import TaskSpec
from agentic_codemod.yaml_input import safe_load

_TITLE = re.compile(r"^#\s+(?:Story\s+[\w.-]+\s*:\s*)?(?P<title>.+?)\s*#*\s*$", re.MULTILINE)
_SECTION = re.compile(r"^##\s+(?P<name>.+?)\s*#*\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\s{0,3}(?P<num>\d+)[.)]\s+(?P<text>.*)$")
_FENCE = re.compile(
    r"^(?P<fence>```|~~~)[ \t]*(?:yaml|yml)[ \t]+agentic-codemod[ \t]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
_FRONT = re.compile(r"\A---[ \t]*\n(?P<body>.*?)^---[ \t]*$", re.MULTILINE | re.DOTALL)
_GWT = ("given", "when", "then")
FROM_STORY = ("title", "acceptance_criteria")
# The criteria section is named like this in bmad-method's template (case-insensitive).
CRITERIA_SECTION = "acceptance criteria"
MAX_STORY_BYTES = 1_000_000


def load_story(path: Path) -> TaskSpec:
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{path}: story file not found") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read story file: {exc.strerror or exc}") from exc
    if len(data) > MAX_STORY_BYTES:
        raise InputError(f"{path}: story file is larger than {MAX_STORY_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: story file is not UTF-8 text") from exc
    return story_to_task(text, path)


def story_to_task(text: str, path: Path) -> TaskSpec:
    text = text.replace("\r\n", "\n")
    block, body = _block(text, path)
    for key in FROM_STORY:
        if key in block:
            raise InputError(
                f"{path}: the agentic-codemod block sets {key!r}",
                hint="the title comes from the '# Story' heading, the criteria from '## Acceptance Criteria'",
            )
    raw: dict[str, Any] = {
        "id": block.pop("id", None) or _task_id(path),
        "title": _title(body, path),
        "acceptance_criteria": _criteria(body, path),
        **block,
    }
    try:
        return TaskSpec.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{path}: agentic-codemod block: {first_error(exc)}") from exc


def _block(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """The task fields from the front matter or the fenced block (exactly one), and the text without it."""
    front = _FRONT.match(text)
    fenced = list(_FENCE.finditer(text))
    sources = ([front] if front else []) + fenced
    if not sources:
        raise InputError(
            f"{path}: no agentic-codemod block: the story names no SDK bump and no allowed paths",
            hint="add a YAML front matter or a ```yaml agentic-codemod block with sdk and allowed_paths",
        )
    if len(sources) > 1:
        raise InputError(f"{path}: more than one agentic-codemod block (front matter or fenced): keep one")
    match = sources[0]
    where = "front matter" if front else "agentic-codemod block"
    try:
        raw = safe_load(match.group("body"))
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: {where}: not YAML: {exc}".splitlines()[0]) from exc
    if not isinstance(raw, dict):
        raise InputError(f"{path}: {where}: must be a YAML mapping (sdk:, allowed_paths: ...)")
    return raw, text[: match.start()] + text[match.end() :]


def _title(body: str, path: Path) -> str:
    match = _TITLE.search(_outside_fences(body))
    if not match or not match.group("title").strip():
        raise InputError(f"{path}: no '# Story N.M: title' heading", hint="the story's first heading")
    return match.group("title").strip()


def _criteria(body: str, path: Path) -> list[str]:
    section = _section(_outside_fences(body), CRITERIA_SECTION)
    if section is None:
        raise InputError(f"{path}: section '## Acceptance Criteria' is missing")
    items: list[list[str]] = []
    for line in section.splitlines():
        item = _ITEM.match(line)
        if item:
            items.append([item.group("text").strip()])
        elif items and line.strip():
            items[-1].append(line.strip())
    if not items:
        raise InputError(
            f"{path}: section '## Acceptance Criteria' has no numbered criteria",
            hint="write them as '1. Given ..., when ..., then ...'",
        )
    criteria = [" ".join(parts).strip() for parts in items]
    for number, criterion in enumerate(criteria, 1):
        words = set(re.findall(r"[a-z]+", criterion.lower()))
        missing = [w.capitalize() for w in _GWT if w not in words]
        if missing:
            raise InputError(
                f"{path}: section '## Acceptance Criteria', item {number}: no {'/'.join(missing)}",
                hint="bmad-method's criteria are Given/When/Then: 'Given ..., when ..., then ...'",
            )
    return criteria


def _section(text: str, name: str) -> str | None:
    heads = list(_SECTION.finditer(text))
    for i, head in enumerate(heads):
        if head.group("name").strip().lower() == name:
            end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
            return text[head.end() : end]
    return None


def _outside_fences(text: str) -> str:
    """The text with every fenced code block blanked: a heading inside an example is not a section."""
    return re.sub(r"^(```|~~~).*?^\1[ \t]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def _task_id(path: Path) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-._")
    return slug[:64] or "story"
