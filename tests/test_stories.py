"""BMAD stories as tasks: the acme fixture story gives the same TaskSpec as the task file, and a bad story
exits 2 naming the file and the section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from fixtures_support import FIXTURES

from agentic_codemod.cli import main
from agentic_codemod.errors import InputError
from agentic_codemod.stories import load_story, story_to_task
from agentic_codemod.task import load_task

STORY = FIXTURES / "stories" / "1-1-migrate-acme-sdk-2.md"
AC = "section '## Acceptance Criteria'"
BLOCK = """```yaml agentic-codemod
sdk: {name: acme-sdk, ecosystem: python, from: ">=1,<2", to: "2.1.0"}
allowed_paths: ["src/**"]
```
"""


def _story(criteria: str = "1. Given a pin, when bumped, then it reads 2.1.0", block: str = BLOCK) -> str:
    return (
        f"# Story 2.3: Bump acme\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n{criteria}\n\n{block}"
    )


def test_the_acme_story_builds_the_task_files_spec() -> None:
    story, task = load_story(STORY), load_task(FIXTURES / "tasks" / "acme-sdk-2.yml")
    assert story.title == task.title == "Migrate acme-sdk to 2.1"
    assert story.id == "acme-sdk-2-story"
    assert (story.sdk, story.migration, story.allowed_paths, story.budgets) == (
        task.sdk,
        task.migration,
        task.allowed_paths,
        task.budgets,
    )
    assert len(story.acceptance_criteria) == 4
    first = story.acceptance_criteria[0]
    assert first.startswith("**AC1: the pin** Given requirements.txt pins acme-sdk==1.4.0,")
    assert first.endswith("then it pins acme-sdk==2.1.0 and keeps its comments.")  # continuation lines joined


def test_front_matter_works_as_well_and_the_id_comes_from_the_file_name(tmp_path: Path) -> None:
    sdk = "sdk: {name: acme-sdk, ecosystem: python, from: '>=1,<2', to: '2.1.0'}"
    front = f"---\n{sdk}\nallowed_paths: [src/**]\n---\n"
    path = tmp_path / "2-3-Bump acme.md"
    path.write_text(front + _story(block=""))
    task = load_story(path)
    assert (task.id, task.title, task.allowed_paths) == ("2-3-bump-acme", "Bump acme", ["src/**"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_story(block=""), "no agentic-codemod block"),
        (_story(block=BLOCK + "\n" + BLOCK), "more than one agentic-codemod block"),
        (
            "## Acceptance Criteria\n\n1. Given a, when b, then c\n\n" + BLOCK,
            "no '# Story N.M: title' heading",
        ),
        (
            _story().replace("## Acceptance Criteria", "## Criteria"),
            "section '## Acceptance Criteria' is missing",
        ),
        (
            _story(criteria="- Given a, when b, then c"),
            "section '## Acceptance Criteria' has no numbered criteria",
        ),
        (
            _story(criteria="1. Given a, when b, then c\n2. [Add acceptance criteria from epics/PRD]"),
            "section '## Acceptance Criteria', item 2: no Given/When/Then",
        ),
        (_story(block=BLOCK.replace("allowed_paths", "title: x\nallowed_paths")), "block sets 'title'"),
        (_story(block=BLOCK.replace('["src/**"]', '["**"]')), "agentic-codemod block: field 'allowed_paths'"),
        (_story(block=BLOCK.replace("sdk: {", "sdk: [")), "agentic-codemod block: not YAML"),
        (_story(block=BLOCK.replace("to: ", "too: ")), "agentic-codemod block: field 'sdk"),
    ],
)
def test_a_bad_story_names_the_file_and_the_section(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        story_to_task(text, Path("stories/bad.md"))
    assert str(caught.value).startswith("stories/bad.md: ")
    assert message in str(caught.value)


def test_a_heading_inside_a_code_example_is_not_the_criteria_section() -> None:
    text = _story().replace(
        "## Acceptance Criteria", "```\n## Acceptance Criteria\n1. Given x when y then z\n```\n\n## Notes"
    )
    with pytest.raises(InputError, match="section '## Acceptance Criteria' is missing"):
        story_to_task(text, Path("s.md"))


def test_run_with_a_bad_story_exits_2_naming_the_section(
    tmp_path: Path, acme_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    story = tmp_path / "story.md"
    story.write_text(_story(criteria="1. the pin is bumped"))
    code = main(["run", "--repo", str(acme_repo), "--story", str(story), "--run-dir", str(tmp_path / "run")])
    assert code == 2
    err = capsys.readouterr().err
    assert f"{story}: section '## Acceptance Criteria', item 1: no Given/When/Then" in err
    assert not (tmp_path / "run").exists()  # nothing half-written


def test_run_takes_a_task_or_a_story_never_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--repo", ".", "--run-dir", str(tmp_path), "--task", "t.yml", "--story", str(STORY)]
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_fixture_story_block_is_plain_yaml() -> None:
    """The block a reader sees is the block the tool reads: one mapping, nothing hidden in tags."""
    body = STORY.read_text().split("```yaml agentic-codemod\n", 1)[1].split("```", 1)[0]
    assert set(yaml.safe_load(body)) == {"id", "sdk", "migration", "allowed_paths", "budgets"}


def test_run_with_the_acme_story_ends_like_the_task_file(
    acme_repo: Path, tmp_path: Path, wheels: Path, context_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The story reaches the pipeline as its TaskSpec: offline, the full acme task honestly needs a human."""
    run_dir = tmp_path / "run"
    argv = ["run", "--repo", str(acme_repo), "--story", str(STORY), "--run-dir", str(run_dir)]
    argv += [
        "--context",
        str(context_root),
        "--find-links",
        str(wheels),
        "--no-index",
        "--offline",
        "--quiet",
    ]
    code = main(argv)
    capsys.readouterr()
    manifest = json.loads((run_dir / "run.json").read_text())
    assert code == 3, manifest["reason"]
    assert manifest["status"] == "requires_human"
    assert manifest["task"]["id"] == "acme-sdk-2-story"
    assert manifest["task"]["acceptance_criteria"] == load_story(STORY).acceptance_criteria
