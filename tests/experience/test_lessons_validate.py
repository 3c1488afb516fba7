"""The validator rejects every kind of bad entry, naming file, line and field; a valid file passes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from lessons_support import PACKAGE_CONTEXT, RUN_ID, lesson_record, write_lines

from agentic_codemod.cli import dispatch
from agentic_codemod.experience import (
    PROPOSED,
    Lesson,
    LessonsUnreadable,
    add_lessons_parser,
    index_row,
    render_index,
    validate,
)


def proposal(run_dir: Path, *records: dict | str) -> Path:
    return write_lines(run_dir / PROPOSED, *records)


def published(tmp_path: Path, *records: dict, index: bool = True) -> Path:
    path = write_lines(tmp_path / "pkg" / "lessons.jsonl", *records)
    lessons = [Lesson.model_validate(r) for r in records]
    (path.parent / "experience.context.md").write_text(render_index(lessons) if index else "# none\n")
    return path


def test_a_valid_proposal_passes(run_dir: Path) -> None:
    assert validate(proposal(run_dir, lesson_record())) == []


def test_an_explicit_no_entry_passes(run_dir: Path) -> None:
    assert validate(proposal(run_dir, {"NO_ENTRY": "status succeeded: a clean success"})) == []


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([{"NO_ENTRY": ""}], "NO_ENTRY"),
        ([{"NO_ENTRY": "nothing"}, lesson_record()], "NO_ENTRY"),
        (["{not json"], "not JSON"),
        ([lesson_record(cue={"ecosystem": ""})], "cue.ecosystem"),
        ([lesson_record(cue={"sdk": " "})], "cue.sdk"),
        ([lesson_record(cue={"construct": ""})], "cue.construct"),
        ([lesson_record(lesson="")], ": lesson:"),
        ([lesson_record(evidence={"paths": []})], "evidence.paths"),
        ([lesson_record(evidence={"run_id": ""})], "evidence.run_id"),
        ([lesson_record(confidence_reason="")], "confidence_reason"),
        ([lesson_record(counter_example="")], "counter_example"),
        ([lesson_record(confidence="certain")], "confidence"),
        ([lesson_record(cue={"target": "two point one"})], "cue.target"),
        ([lesson_record(), lesson_record()], "appears twice"),
    ],
    ids=[
        "no-entry-without-reason",
        "no-entry-beside-lessons",
        "not-json",
        "empty-ecosystem",
        "blank-sdk",
        "empty-construct",
        "empty-lesson",
        "no-evidence-paths",
        "empty-evidence-run-id",
        "empty-confidence-reason",
        "empty-counter-example",
        "unknown-confidence",
        "bad-target-range",
        "duplicate-id",
    ],
)
def test_a_bad_entry_is_rejected_naming_the_field(run_dir: Path, records: list, expected: str) -> None:
    problems = validate(proposal(run_dir, *records))
    assert problems and any(expected in p for p in problems), problems
    assert all(p.startswith(f"{run_dir / PROPOSED}:") for p in problems)


def test_an_empty_file_is_rejected(run_dir: Path) -> None:
    (run_dir / PROPOSED).write_text("\n")
    assert "empty" in validate(run_dir / PROPOSED)[0]


def test_a_run_id_that_does_not_exist_is_rejected(run_dir: Path) -> None:
    other = "20240502T120000-ffffffff"
    problems = validate(proposal(run_dir, lesson_record(evidence={"run_id": other}, source_run=other)))
    assert any(f"evidence.run_id: run {other} not found" in p for p in problems)
    assert any(f"source_run: run {other} not found" in p for p in problems)


def test_a_malformed_run_id_is_rejected(run_dir: Path) -> None:
    problems = validate(proposal(run_dir, lesson_record(source_run="yesterday")))
    assert any("source_run: 'yesterday' is not a run id" in p for p in problems)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("review.json", "does not exist in run"),
        ("run.json#/verifications/7", "does not exist in run"),
        ("plan.json#/requires_human/0/nope", "does not exist in run"),
        ("../secrets.txt", "leaves the run dir"),
        ("/etc/passwd", "leaves the run dir"),
    ],
)
def test_an_evidence_path_that_does_not_exist_is_rejected(run_dir: Path, path: str, expected: str) -> None:
    problems = validate(proposal(run_dir, lesson_record(evidence={"paths": [path]})))
    assert any(expected in p and path in p for p in problems), problems


def test_json_pointers_into_artifacts_resolve(run_dir: Path) -> None:
    paths = ["run.json#/verifications/1/phase", "plan.json#/requires_human/0", "changes.patch"]
    assert validate(proposal(run_dir, lesson_record(evidence={"paths": paths}))) == []


def test_a_proposal_away_from_its_run_is_found_under_runs_root(run_dir: Path, tmp_path: Path) -> None:
    elsewhere = write_lines(tmp_path / "review" / PROPOSED, lesson_record())
    assert any("not found" in p for p in validate(elsewhere))
    assert validate(elsewhere, runs_root=run_dir.parent) == []


def test_an_unreadable_file_raises(tmp_path: Path) -> None:
    with pytest.raises(LessonsUnreadable, match="cannot read lessons"):
        validate(tmp_path / "missing.jsonl")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(LessonsUnreadable):
        validate(tmp_path / "binary.jsonl")


# --- published: the run dirs are gone --------------------------------------------------------------


def test_a_published_lesson_needs_no_run_dir(tmp_path: Path) -> None:
    assert validate(published(tmp_path, lesson_record())) == []


def test_a_published_lesson_must_come_from_an_earlier_run(tmp_path: Path) -> None:
    future = "29991231T235959-0123abcd"
    problems = validate(published(tmp_path, lesson_record(source_run=future, evidence={"run_id": future})))
    assert any("not an earlier run" in p for p in problems)


def test_a_published_lesson_cites_run_artifacts_only(tmp_path: Path) -> None:
    problems = validate(published(tmp_path, lesson_record(evidence={"paths": ["notes/my-memory.txt"]})))
    assert any("is not a run artifact" in p for p in problems)


def test_a_published_lesson_needs_its_row_in_the_index(tmp_path: Path) -> None:
    problems = validate(published(tmp_path, lesson_record(), index=False))
    assert any("no row for" in p and "experience.context.md" in p for p in problems)


def test_a_published_no_entry_is_rejected(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "pkg" / "lessons.jsonl", {"NO_ENTRY": "nothing"})
    assert any("NO_ENTRY" in p for p in validate(path))


def test_a_published_lesson_with_runs_root_is_checked_against_the_run(tmp_path: Path, run_dir: Path) -> None:
    path = published(tmp_path, lesson_record())
    assert validate(path, runs_root=run_dir.parent) == []
    (run_dir / "run.json").unlink()
    assert any("not found" in p for p in validate(path, runs_root=run_dir.parent))


def test_the_package_lessons_file_is_valid_and_indexed() -> None:
    path = PACKAGE_CONTEXT / "lessons.jsonl"
    assert validate(path) == []
    lessons = [Lesson.model_validate_json(line) for line in path.read_text().splitlines() if line.strip()]
    index = (PACKAGE_CONTEXT / "experience.context.md").read_text()
    assert index.startswith("---\ndescription: ")
    assert render_index(lessons) in index, "re-render the index of experience.context.md"
    assert all(index_row(x) in index for x in lessons)


# --- CLI -------------------------------------------------------------------------------------------


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="agentic-codemod")
    add_lessons_parser(parser.add_subparsers(dest="command", required=True))
    return dispatch(parser.parse_args(["lessons", "validate", *argv]))


def test_cli_exit_codes(run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(str(proposal(run_dir, lesson_record()))) == 0
    assert "valid" in capsys.readouterr().out
    assert cli(str(proposal(run_dir, lesson_record(lesson=""))), "--json") == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["valid"] is False and any("lesson" in p for p in printed["problems"])
    assert cli(str(proposal(run_dir, lesson_record(lesson="")))) == 1
    assert "lesson" in capsys.readouterr().err
    assert cli(str(tmp_path / "nope.jsonl")) == 2
    assert cli(str(PACKAGE_CONTEXT / "lessons.jsonl")) == 0
    moved = write_lines(tmp_path / "elsewhere" / PROPOSED, lesson_record())
    assert cli(str(moved)) == 1
    assert cli(str(moved), "--runs-root", str(run_dir.parent)) == 0
    assert RUN_ID in (run_dir / "run.json").read_text()


def test_a_lesson_quoting_a_line_separator_is_one_record(run_dir: Path) -> None:
    """Records are written raw (not ASCII-escaped, as Lesson.model_dump_json does): U+2028, U+0085 or
    \\x1c inside a string is part of its line, not a line break (JSON Lines split at "\\n" only)."""
    record = lesson_record(lesson="The output said: a\u2028b\x85c\x1cd (quoted from the failing test).")
    path = run_dir / PROPOSED
    path.write_text(Lesson.model_validate(record).model_dump_json() + "\n", encoding="utf-8")
    assert "\u2028" in path.read_text(encoding="utf-8")  # written raw
    assert validate(path) == []
