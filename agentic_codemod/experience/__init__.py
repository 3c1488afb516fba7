"""Experience across runs (ARCHITECTURE.md §7): evidence-backed lessons, proposed by a run from its
own real failures, published only as a change to an APM package, read by later runs as hypotheses.

    records.py     Lesson (cue, lesson, evidence, confidence + reason, counter-example, source run),
                   NoEntry, the index of cues of experience.context.md
    proposals.py   propose(state) -> [Lesson] | NoEntry;  write_proposals(state) (never raises)
    validation.py  validate(path, runs_root) -> [problem]  (proposed and published files)
    selection.py   select(context, task, budget_bytes) -> [Lesson];  use_lessons(state, plan, budget)
    cli.py         `agentic-codemod lessons validate FILE [--runs-root DIR]`

A lesson reaches the planner and the coder only; it never changes permissions, criteria or gates.
See docs/experience.md.
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "add_lessons_parser": "cli",
    "propose": "proposals",
    "write_proposals": "proposals",
    **dict.fromkeys(
        [
            "PROPOSED",
            "PUBLISHED",
            "Cue",
            "Evidence",
            "Lesson",
            "LessonsUnreadable",
            "NoEntry",
            "index_row",
            "render_index",
        ],
        "records",
    ),
    **dict.fromkeys(["apply", "published_lessons", "select", "use_lessons"], "selection"),
    "validate": "validation",
}


def __getattr__(name: str) -> Any:  # lazy: the CLI parser must not pay for pydantic
    if name not in _HOMES:
        raise AttributeError(name)
    return getattr(import_module(f"agentic_codemod.experience.{_HOMES[name]}"), name)


__all__ = [
    "PROPOSED",
    "PUBLISHED",
    "Cue",
    "Evidence",
    "Lesson",
    "LessonsUnreadable",
    "NoEntry",
    "add_lessons_parser",
    "apply",
    "index_row",
    "propose",
    "published_lessons",
    "render_index",
    "select",
    "use_lessons",
    "validate",
    "write_proposals",
]
