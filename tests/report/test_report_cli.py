"""`agentic-codemod report`: clear errors for what is not a run, and the page's own guarantees."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from report_runs import Runs

from agentic_codemod.cli import main
from agentic_codemod.report.page import policy, sha256_source
from agentic_codemod.report.test_ids import _mark


def test_report_rewrites_the_page_from_the_artifacts(runs: Runs, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(runs.full, copy, ignore=shutil.ignore_patterns("env", "worktree", "sandbox"))
    (copy / "report.html").unlink()
    assert main(["report", "--run-dir", str(copy)]) == 0
    html = (copy / "report.html").read_text()
    assert "requires_human — exit 3" in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:|//)""", html)  # nothing external


def test_a_directory_without_run_json_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--run-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'run.json'}: no run.json" in err


def test_an_edited_run_json_is_bad_input_naming_the_file(
    runs: Runs, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = json.loads((runs.full / "run.json").read_text())
    manifest["status"] = "<b>shiny</b>"
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    assert main(["report", "--run-dir", str(tmp_path)]) == 2
    assert f"{tmp_path / 'run.json'}: not a readable run manifest" in capsys.readouterr().err
    assert not (tmp_path / "report.html").exists()


def test_a_missing_fleet_json_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--fleet", str(tmp_path / "fleet.json")]) == 2
    assert "no such fleet.json" in capsys.readouterr().err


def test_the_policy_forbids_every_load_and_allows_only_the_pages_own_code() -> None:
    csp = policy("body{}", "void 0;")
    assert csp.startswith("default-src 'none';")
    assert f"script-src {sha256_source('void 0;')};" in csp and f"style-src {sha256_source('body{}')};" in csp
    assert "unsafe" not in csp
    assert "script-src 'none'" in policy("body{}", None)


def test_marks_per_test_id() -> None:
    assert _mark("passed", "failed") == "introduced"
    assert _mark("absent", "failed") == "introduced"
    assert _mark("failed", "failed") == "pre-existing"
    assert _mark("failed", "passed") == "fixed"
    assert _mark("passed", "passed") == _mark("failed", "absent") == _mark("skipped", "passed") == ""
