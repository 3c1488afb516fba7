"""jest results rewritten before the tool reads them (helper-26's review case C): a `testResultsProcessor`
("known failures") turned each failed test into a pass, the --json report said 3 passed while jest printed
`Tests: 3 failed, 1 passed`, and the run ended green, exit 0. A custom reporter can do the same to the
aggregated results before the report is written. Now the option is dropped from the command, jest runs
with its default reporter only, a configured processor stops the run for a human, and the summary jest
printed can only add failures to what the report says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_command import JEST
from agentic_codemod.adapters.npm.test_results import read_results
from agentic_codemod.config import Settings, VerificationSettings
from agentic_codemod.errors import RequiresHuman

# jest 29's summary for helper-26's case C (its default reporter, stderr), with the report the processor
# wrote.
PRINTED = """PASS test/version.test.js
FAIL test/orders.test.js

Test Suites: 2 failed, 1 passed, 3 total
Tests:       2 failed, 1 passed, 3 total
Snapshots:   0 total
Ran all test suites.
"""
COLOURED = (
    "\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[31m2 failed\x1b[39m\x1b[22m, "
    "\x1b[1m\x1b[32m1 passed\x1b[39m\x1b[22m, 3 total\n"
)


def report(tmp_path: Path, statuses: list[str]) -> Path:
    path = tmp_path / "r.json"
    cases = [{"ancestorTitles": [], "title": f"t{i}", "status": s} for i, s in enumerate(statuses)]
    path.write_text(
        json.dumps({"testResults": [{"name": "/repo/test/a.test.js", "assertionResults": cases}]})
    )
    return path


def manifest(tmp_path: Path, script: str = "jest", **package: Any) -> Path:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}, **package}))
    return tmp_path


@pytest.mark.parametrize("output", [PRINTED, COLOURED])
def test_failures_jest_printed_but_the_report_lost_are_failures(tmp_path: Path, output: str) -> None:
    tally, _ = read_results("jest", report(tmp_path, ["passed"] * 3), output)
    assert tally is not None and tally.failed == 1 and tally.passed == 3
    assert "2 failure(s) jest printed that its report did not hold" in tally.failing[0]


@pytest.mark.parametrize(
    "output",
    [
        PRINTED,  # the report holds the two failures jest printed
        "Tests:       1 passed, 3 total\n",  # a test printing a summary with fewer: no failure becomes a pass
        "Tests:       0 failed, 3 total\n",
        "",  # no summary (cut output): the report as it is
    ],
)
def test_the_printed_summary_never_removes_a_failure(tmp_path: Path, output: str) -> None:
    tally, _ = read_results("jest", report(tmp_path, ["failed", "failed", "passed"]), output)
    assert tally is not None and (tally.passed, tally.failed) == (1, 2)
    assert tally.failing == ["/repo/test/a.test.js > t0", "/repo/test/a.test.js > t1"]


@pytest.mark.parametrize(
    "script",
    [
        "jest --testResultsProcessor ./support/known-failures.js",
        "jest --testResultsProcessor=./support/known-failures.js",
        "jest --reporters ./support/rewrite.js",
    ],
)
def test_a_command_line_processor_or_reporter_is_dropped_and_jest_reports_by_default(
    tmp_path: Path, script: str
) -> None:
    command = ADAPTER.detect_test_command(manifest(tmp_path, script))
    assert command is not None and command.argv == JEST
    assert "--reporters=default" in JEST  # on the command line it replaces the configured reporters


def test_the_test_paths_after_the_default_reporter_stay_test_paths(tmp_path: Path) -> None:
    """jest reads `--reporters` as a list: with the repository's `jest jest.test.js` after it, the test
    path was taken for a reporter module, and jest 30 stopped ("Could not resolve a module for a custom
    reporter", the corpus's process-warning: no test ran, exit 3). Another option follows it."""
    command = ADAPTER.detect_test_command(manifest(tmp_path, "jest jest.test.js"))
    assert command is not None and command.argv[-1] == "jest.test.js"
    after = command.argv[command.argv.index("--reporters=default") + 1]
    assert after.startswith("--"), command.argv


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"jest": {"testResultsProcessor": "./support/known-failures.js"}}, "package.json jest"),
        ({"jest.config.js": "module.exports = { testResultsProcessor: './x.js' };\n"}, "jest.config.js"),
        ({"jest.config.json": '{"testResultsProcessor": "./x.js"}'}, "jest.config.json"),
    ],
)
def test_a_configured_results_processor_requires_a_human(
    tmp_path: Path, files: dict[str, Any], named: str
) -> None:
    package = {k: v for k, v in files.items() if k == "jest"}
    manifest(tmp_path, **package)
    for name, text in files.items():
        if name != "jest":
            (tmp_path / name).write_text(text)
    with pytest.raises(RequiresHuman, match=rf"testResultsProcessor \({named}"):
        ADAPTER.detect_test_command(tmp_path)


def test_a_processor_in_the_config_file_the_command_names_requires_a_human(tmp_path: Path) -> None:
    manifest(tmp_path, "jest --config config/jest.config.js")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "jest.config.js").write_text(
        'module.exports = { rootDir: "..", testResultsProcessor: "./support/known-failures.js" };\n'
    )
    with pytest.raises(RequiresHuman, match=r"config/jest\.config\.js.*rewrites them"):
        ADAPTER.detect_test_command(tmp_path)
    settings = Settings(verification=VerificationSettings(command="jest -c config/jest.config.js"))
    with pytest.raises(RequiresHuman, match="testResultsProcessor"):
        ADAPTER.detect_test_command(tmp_path, settings)


def test_a_commented_processor_or_another_runner_stops_nothing(tmp_path: Path) -> None:
    manifest(tmp_path)
    (tmp_path / "jest.config.js").write_text("module.exports = {\n  // testResultsProcessor: './x.js',\n};\n")
    assert ADAPTER.detect_test_command(tmp_path) is not None
    (tmp_path / "m").mkdir()
    manifest(tmp_path / "m", "mocha")
    (tmp_path / "m" / "jest.config.js").write_text("module.exports = { testResultsProcessor: './x.js' };\n")
    assert ADAPTER.detect_test_command(tmp_path / "m") is not None
