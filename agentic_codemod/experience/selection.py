"""Later runs read published lessons: only from the installed package copy, only those whose cue matches
the task, only from earlier runs, within a size budget. They reach the plan as hypotheses to re-verify
(plan.lessons, and a citation on the human item of the lesson's construct) — never the gates: a lesson
cannot change allowed paths, acceptance criteria, permissions or a verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentic_codemod.adapters import get_adapter
from agentic_codemod.errors import InputError
from agentic_codemod.experience.records import CONTEXT_DOC, PUBLISHED, TASK_WIDE, Lesson, run_time
from agentic_codemod.models import ChangePlan

if TYPE_CHECKING:
    from agentic_codemod.task import TaskSpec
    from agentic_codemod.workflow.state import RunState

RANK = {"high": 3, "medium": 2, "low": 1}


def published_lessons(context: Any) -> list[Lesson]:
    """Every record of lessons.jsonl beside an `experience` context doc of the loaded context (the
    apm_modules copy, whose content hash load_context has checked). A bad record is an input error."""
    found: list[Lesson] = []
    for doc in getattr(context, "context_docs", None) or []:
        file = doc.source.parent / PUBLISHED
        if doc.name != CONTEXT_DOC or not file.is_file():
            continue
        for n, line in enumerate(file.read_text(encoding="utf-8").split("\n"), 1):  # JSON Lines: "\n" only
            try:
                found += [Lesson.model_validate_json(line)] if line.strip() else []
            except ValidationError as exc:
                hint = f"check the package with `agentic-codemod lessons validate {PUBLISHED}`"
                raise InputError(f"{file}:{n}: not a lesson: {exc.errors()[0]['msg']}", hint=hint) from exc
    return found


def select(
    context: Any,
    task: TaskSpec,
    budget_bytes: int,
    *,
    rule_ids: set[str] | None = None,
    before: str | None = None,
) -> list[Lesson]:
    """Lessons whose cue has the task's ecosystem and SDK, admits its target version and, when rule_ids
    is given, names one of them (gate and review lessons match any); from runs earlier than `before`
    (a run id). Highest confidence first, then newest; a lesson that does not fit the budget is left out."""
    sdk, now = task.sdk, run_time(before) if before else None
    if before and now is None:
        return []  # cannot tell earlier from later: read nothing
    versioning = get_adapter(sdk.ecosystem).versioning  # names and ranges in the task's ecosystem

    def matches(lesson: Lesson) -> bool:
        cue, when = lesson.cue, run_time(lesson.source_run)
        return (
            cue.ecosystem.lower() == sdk.ecosystem.lower()
            and versioning.canonical_name(cue.sdk) == versioning.canonical_name(sdk.name)
            and (not cue.target or versioning.matches(sdk.to, cue.target, ""))
            and (rule_ids is None or cue.construct_ in rule_ids or cue.construct_.startswith(TASK_WIDE))
            and when is not None
            and (now is None or when < now)
        )

    newest = sorted(filter(matches, published_lessons(context)), key=lambda x: x.source_run, reverse=True)
    chosen: list[Lesson] = []
    used = 0
    for lesson in sorted(newest, key=lambda x: RANK[x.confidence], reverse=True):
        size = len(lesson.as_hypothesis().encode("utf-8"))
        if used + size <= budget_bytes:
            chosen.append(lesson)
            used += size
    return chosen


def apply(plan: ChangePlan, lessons: list[Lesson]) -> None:
    """Each hypothesis goes to plan.lessons; the human item of the lesson's construct cites it.
    Idempotent. Nothing else of the plan changes: not allowed paths, criteria, rule matches or steps."""
    for lesson in lessons:
        if lesson.as_hypothesis() not in plan.lessons:
            plan.lessons.append(lesson.as_hypothesis())
        cite = f" [lesson {lesson.id}, a hypothesis to re-verify: {lesson.lesson}]"
        for item in plan.requires_human:
            if item.rule_id == lesson.cue.construct_ and cite not in item.reason:
                item.reason += cite


def use_lessons(state: RunState, plan: ChangePlan, budget_bytes: int) -> str:
    """The plan step's hook: select for the task and the plan's rule matches, apply, trace the read."""
    rule_ids = {m.rule_id for m in plan.rule_matches}
    lessons = select(state.context, state.task, budget_bytes, rule_ids=rule_ids, before=state.manifest.run_id)
    apply(plan, lessons)
    result = f"{len(lessons)} lesson(s): {', '.join(x.id for x in lessons) or 'none matched'}"
    arguments = {"constructs": sorted(rule_ids), "budget_bytes": budget_bytes}
    state.trace.record(actor="experience", tool="read_lessons", arguments=arguments, result=result)
    return result
