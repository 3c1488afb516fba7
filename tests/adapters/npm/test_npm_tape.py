"""tape: the runner of ljharb's packages (qs, object-inspect, side-channel …), read from its TAP.

tests/adapters/npm/recorded/tape_5.10.2.tap is a real run of tape 5.10.2 over one file: two tests with
the same name, a nested test, a failing assertion, a skipped test and a TODO assertion.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_command import TAPE
from agentic_codemod.adapters.npm.test_facts import TEST_FACTS
from agentic_codemod.adapters.npm.test_results import read_results
from agentic_codemod.workflow import oracle

RECORDED = (Path(__file__).parent / "recorded" / "tape_5.10.2.tap").read_text(encoding="utf-8")


def test_a_recorded_tape_run_is_read_with_one_id_per_test() -> None:
    tally, ids = read_results("tape", None, RECORDED)
    assert tally is not None
    assert ids == ["parse()", "nested arrays", "charset", "skipped one", "todo assertion", "parse() (2)"]
    assert (tally.passed, tally.failed, tally.skipped, tally.failing) == (4, 1, 1, ["charset"])


def test_a_failure_whose_message_says_todo_is_a_failure() -> None:
    # tape prints messages unescaped: code under test can end a failure's message with "# TODO"; tape
    # still counts it in `# fail`, and so the reader does
    forged = RECORDED.replace("not ok 4 decodes latin1", "not ok 4 unsupported input # TODO")
    assert forged != RECORDED
    tally, _ = read_results("tape", None, forged)
    assert tally is not None and tally.failed == 1, tally
    assert tally.failing[0].startswith("<1 failure(s) not read from the output, run "), tally.failing


def test_failures_cut_from_the_middle_of_the_output_are_never_read_as_passes() -> None:
    """The summary says `# fail M`; a failing assertion whose lines are not in the text read (the output
    was cut, or lines were hidden) adds a failing test with an id unique to the run."""
    lines = RECORDED.splitlines(keepends=True)
    cut = "".join(line for line in lines if not line.startswith("not ok 4 "))  # charset's failure, gone
    tally, _ = read_results("tape", None, cut)
    assert tally is not None and tally.failed >= 1
    unread = [i for i in tally.failing if i.startswith("<1 failure(s) not read from the output, run ")]
    assert len(unread) == 1, tally.failing
    again, _ = read_results("tape", None, cut)
    assert again is not None and unread[0] not in again.failing  # never matched as pre-existing


@pytest.mark.parametrize(
    "output",
    [
        RECORDED.split("\n1..7")[0],  # the run ended before its plan (a crash, a process.exit)
        RECORDED.replace("# tests 7", ""),  # no summary after the plan
        "",
    ],
)
def test_a_tape_run_that_did_not_finish_proves_nothing(output: str) -> None:
    assert read_results("tape", None, output) == (None, [])


def test_ljharb_scripts_run_tape_and_the_canary_is_a_tape_test(tmp_path: Path) -> None:
    scripts = {"test": "npm run --silent tests-only", "tests-only": "nyc tape 'test/**/*.js' | tap-spec"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "parse.js").write_text("require('tape')('x', (t) => t.end());\n")
    command = ADAPTER.detect_test_command(tmp_path, None)
    assert command is not None
    assert (command.runner, command.argv) == ("tape", [*TAPE, "test/**/*.js"])
    planted = oracle.plant(tmp_path, command, TEST_FACTS)
    assert planted is not None
    text = (tmp_path / planted.file).read_text()
    assert 'require("tape")' in text and f'test("{planted.token}"' in text
    # the canary's failure, as tape prints it, is read as that test failing
    output = f"TAP version 13\n# {planted.token}\nnot ok 1 {planted.token}\n\n1..1\n# tests 1\n# fail  1\n"
    tally, _ids = read_results("tape", None, output)
    assert tally is not None and tally.failing == [planted.token]
