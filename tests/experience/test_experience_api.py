"""The public surface of agentic_codemod.experience is locked: the lead's wiring and the docs use it."""

from __future__ import annotations

from agentic_codemod import experience


def test_public_names_are_locked() -> None:
    assert set(experience.__all__) == {
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
    }
