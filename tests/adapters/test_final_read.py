"""helper-28's read of the evening's changes: inputs of the repository's, or output of its tests, that
crashed a reader, hung it, or let a narrowing option pass unseen. Each now reads to an answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import sdk_substitutes
from agentic_codemod.adapters.npm import test_results as npm_results
from agentic_codemod.adapters.python import test_results as python_results
from agentic_codemod.adapters.python.test_command import detect_test_command
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import Tally

PYTEST_FUNCTIONS = "def test_a():\n    pass\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_nested_documents_read_as_nothing(tmp_path: Path) -> None:
    """A `.mocharc.yml` or tox.toml nested 20,000 deep raised RecursionError out of recon."""
    mocha = write(tmp_path / "m", {"package.json": '{"name": "app"}', ".mocharc.yml": "[" * 50_000})
    assert sdk_substitutes.found(mocha, ["package.json"], "acme-sdk", []) == []
    toml = write(tmp_path / "t", {"tests/test_a.py": PYTEST_FUNCTIONS, "tox.toml": "a = " + "[" * 20_000})
    assert detect_test_command(toml) is not None


@pytest.mark.parametrize(
    ("commands", "stops"),
    [
        ("pytest -knot_contract tests\n    pytest tests/contract", True),  # `-k` with its value attached
        ("pytest tests\n    python -m unittest discover -s tests -p ''", True),  # an empty pattern
    ],
)
def test_options_written_close_and_empty_patterns(tmp_path: Path, commands: str, stops: bool) -> None:
    files = {f"tests/{d}/test_{d}.py": PYTEST_FUNCTIONS for d in ("unit", "contract")}
    repo = write(tmp_path, {"tox.ini": f"[testenv]\ncommands =\n    {commands}\n", **files})
    with pytest.raises(RequiresHuman, match="would run in neither phase"):
        detect_test_command(repo)


def test_a_jest_report_of_odd_shapes_and_huge_counts_is_read_without_a_crash(tmp_path: Path) -> None:
    report = tmp_path / "jest.json"
    report.write_text(
        json.dumps({"testResults": [{"name": "/r/a.test.js", "status": "passed", "assertionResults": 5}]})
    )
    npm_results.read_results("jest", report, "")
    npm_results.case_report("jest", report, "", "T")
    tally = Tally()
    npm_results._checked_against_jest_summary(
        "Tests: " + "9" * 5000 + " failed", tally
    )  # past int()'s digits
    assert tally.failed == 0
    assert python_results.counts_from_output("Ran " + "9" * 5000 + " tests\n\nOK\n") is None


def test_readers_of_repository_text_are_bounded() -> None:
    """Blank lines before a `Tests:` summary, a mapper key written to backtrack, and values that never
    close (before: minutes to hours of one reader). The bounds, not a time: the summary's pattern never
    crosses a line, a risky key is read by the name written in it, at most MAX_VALUES values are read,
    each scan stops MAX_VALUE_CHARS after its start."""
    assert npm_results.JEST_SUMMARY_FAIL.search("\n" * 200_000 + "Tests:   2 failed") is not None
    assert npm_results.JEST_SUMMARY_FAIL.search("\nTests:\n\n3 failed") is None
    risky = "(.|.|.|.|.|.|.|.|.|.|.|.)*!"
    assert sdk_substitutes.RISKY_PATTERN.search(risky) and sdk_substitutes._maps(risky, "acme-sdk") is False
    assert sdk_substitutes._maps("^acme-(sdk|client)$", "acme-sdk") is True  # an ordinary key: compiled
    values = list(sdk_substitutes._values("alias:{" * 20_000, "alias"))
    assert len(values) == sdk_substitutes.MAX_VALUES
    assert all(len(text) <= sdk_substitutes.MAX_VALUE_CHARS for _offset, text, _source in values)
