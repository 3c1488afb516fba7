"""The lesson record (modelled on Harness²'s experience records) and the files that hold it.

lessons.proposed.jsonl   in a run dir: one Lesson per line, or one {"NO_ENTRY": reason} line
lessons.jsonl            in an APM package, beside .apm/context/experience.context.md (its index)
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agentic_codemod.errors import InputError

FORMAT = "agentic-codemod/lesson@1"
PROPOSED = "lessons.proposed.jsonl"
PUBLISHED = "lessons.jsonl"
CONTEXT_DOC = "experience"  # .apm/context/experience.context.md
NO_ENTRY = "NO_ENTRY"
RUN_ID = re.compile(r"^(\d{8}T\d{6})-[0-9a-f]{8}$")  # run.py: %Y%m%dT%H%M%S-<8 hex>
TASK_WIDE = ("gate:", "review")  # constructs that are not rule ids: they match whatever the plan matched

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_by_name=True, serialize_by_alias=True)


class Cue(_Record):
    """The shape of situation a lesson applies to."""

    ecosystem: Text  # python
    sdk: Text  # acme-sdk
    # a rule id (ACME900), `gate:<name>` or `review`; `construct` in JSON (the name is taken in BaseModel)
    construct_: Text = Field(alias="construct")
    target: str = ""  # version range the task's target version must be in, e.g. ">=2.1.0"; empty: any


class Evidence(_Record):
    run_id: Text
    paths: list[Text] = Field(min_length=1)  # run-dir relative, optionally `file.json#/json/pointer`
    results: list[str] = Field(default_factory=list)  # gate and verification results quoted from them


class Lesson(_Record):
    format: Literal["agentic-codemod/lesson@1"] = "agentic-codemod/lesson@1"
    id: Text
    cue: Cue
    lesson: Text  # one actionable sentence
    evidence: Evidence
    confidence: Literal["low", "medium", "high"]
    confidence_reason: Text
    counter_example: Text  # when it does not apply
    source_run: Text  # the run that proposed it

    def as_hypothesis(self) -> str:
        """How a later run's plan carries it: a claim to re-verify, never an instruction."""
        return f"hypothesis: {self.lesson} (from run {self.source_run}; re-verify)"


class NoEntry(_Record):
    """A run that had nothing to learn says so explicitly."""

    reason: Text


class LessonsUnreadable(InputError):
    """The lessons file cannot be read at all (exit 2)."""


def run_time(run_id: str) -> datetime | None:
    """The start time encoded in a run id, or None when it is not one."""
    found = RUN_ID.match(run_id)
    try:
        return datetime.strptime(found.group(1), "%Y%m%dT%H%M%S").replace(tzinfo=UTC) if found else None
    except ValueError:  # well-shaped, but not a date (month 13, ...)
        return None


def write_lessons(path: Path, result: list[Lesson] | NoEntry) -> None:
    if isinstance(result, NoEntry):
        lines = [json.dumps({NO_ENTRY: result.reason})]
    else:
        lines = [lesson.model_dump_json() for lesson in result]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def index_row(lesson: Lesson) -> str:
    """The lesson's row in the index of cues of experience.context.md (checked by the validator)."""
    c = lesson.cue
    cells = [f"`{lesson.id}`", c.ecosystem, c.sdk, c.construct_, c.target or "any", lesson.confidence]
    return "| " + " | ".join([*cells, f"`{lesson.source_run}`"]) + " |"


def render_index(lessons: list[Lesson]) -> str:
    """The index of cues and one section per lesson, for the package's experience.context.md."""
    head = "| lesson | ecosystem | sdk | construct | target | confidence | from run |\n" + "|---" * 7 + "|"
    parts = ["## Index of cues\n", head, *(index_row(x) for x in lessons), ""]
    for x in lessons:
        results = "".join(f"\n  - {r}" for r in x.evidence.results)
        paths = ", ".join(f"`{p}`" for p in x.evidence.paths)
        parts += [
            f"## {x.id}\n",
            f"- **Lesson**: {x.lesson}",
            f"- **Evidence**: run `{x.evidence.run_id}`: {paths}{results}",
            f"- **Confidence**: {x.confidence}: {x.confidence_reason}",
            f"- **Does not apply**: {x.counter_example}",
            "",
        ]
    return "\n".join(parts)
