"""Deterministic gates: what changed (from git), whether it is in scope, whether tests were tampered with."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import ADAPTER
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow import gates
from agentic_codemod.workflow.gates import Change, GateResult, changed_paths, scope_gate

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
TEST_FILE = """import unittest

import pytest

from src.app import main


def test_main():
    assert main() == 1
    assert main() != 2


class TestApp(unittest.TestCase):
    def test_value(self):
        self.assertEqual(main(), 1)
"""
FILES = {
    "src/app.py": "def main():\n    return 1\n",
    "tests/test_app.py": TEST_FILE,
    "tests/conftest.py": "import pytest\n",
    "pytest.ini": "[pytest]\naddopts = -q\n",
    "README.md": "# app\n",
    ".gitlab-ci.yml": "stages: [test]\n",
}


def sh(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=ENV, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sh(root, "init", "-q", "-b", "main")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "base")
    return root, sh(root, "rev-parse", "HEAD").strip()


def tree_hash(path: Path) -> str:
    digest = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        digest.update(str(item.relative_to(path)).encode())
        if item.is_file():
            digest.update(item.read_bytes())
    return digest.hexdigest()


def tamper(root: Path, base: str) -> GateResult:
    return gates.test_tamper_check(root, base, changed_paths(root, base), facts=ADAPTER.test_facts)


# -- changed_paths ---------------------------------------------------------------------------------------


def test_changed_paths_lists_modified_untracked_deleted_and_renamed(repo: tuple[Path, str]) -> None:
    root, base = repo
    git_before = tree_hash(root / ".git")
    (root / "src/app.py").write_text("def main():\n    return 2\n")
    (root / "src/new.py").write_text("NEW = 1\n")
    (root / "README.md").unlink()
    (root / "tests/conftest.py").rename(root / "tests/helpers_conftest.py")
    changes = {c.path: c for c in changed_paths(root, base)}
    assert changes["src/app.py"].status == "M"
    assert changes["src/new.py"].status == "A" and changes["src/new.py"].mode == "100644"
    assert changes["README.md"].status == "D" and changes["README.md"].mode == ""
    renamed = changes["tests/helpers_conftest.py"]
    assert renamed.status == "R" and renamed.old_path == "tests/conftest.py"
    assert tree_hash(root / ".git") == git_before  # no index write, no new objects


def test_changed_paths_is_empty_for_a_clean_tree(repo: tuple[Path, str]) -> None:
    root, base = repo
    assert changed_paths(root, base) == []


def test_changed_paths_sees_symlinks_and_odd_names(repo: tuple[Path, str]) -> None:
    root, base = repo
    os.symlink("/etc/passwd", root / "src/link.py")
    (root / "src/new\nline.py").write_text("x\n")
    changes = {c.path: c for c in changed_paths(root, base)}
    assert changes["src/link.py"].mode == gates.SYMLINK_MODE
    assert "src/new\nline.py" in changes


def test_changed_paths_ignores_gitignored_files(repo: tuple[Path, str]) -> None:
    """Documented limit: ignored files are not part of the candidate (see SECURITY.md)."""
    root, base = repo
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build/out.txt").write_text("x")
    assert [c.path for c in changed_paths(root, base)] == [".gitignore"]


# -- scope_gate ------------------------------------------------------------------------------------------


def test_scope_gate_passes_changes_inside_allowed_paths() -> None:
    result = scope_gate([Change("src/app.py", "M", None, "100644")], ["src/**"], DEFAULT_DENY_GLOBS)
    assert result.passed and result.findings == []
    assert result.to_dict() == {"name": "scope", "passed": True, "findings": []}


def test_scope_gate_names_every_offending_path() -> None:
    changes = [
        Change("src/app.py", "M", None, "100644"),
        Change("docs/x.md", "A", None, "100644"),
        Change(".gitlab-ci.yml", "M", None, "100644"),
        Change("src/Dockerfile", "A", None, "100644"),
        Change("src/moved.py", "R", "lib/orig.py", "100644"),
        Change("src/link.py", "A", None, gates.SYMLINK_MODE),
        Change("src/vendor", "A", None, gates.GITLINK_MODE),
        Change("src/evil.py.", "A", None, "100644"),
    ]
    result = scope_gate(changes, ["src/**"], DEFAULT_DENY_GLOBS)
    assert not result.passed
    named = [f.path for f in result.findings]
    for path in ("docs/x.md", ".gitlab-ci.yml", "src/Dockerfile", "lib/orig.py", "src/link.py", "src/vendor"):
        assert path in named
    assert "src/evil.py." in named
    assert "src/app.py" not in named
    assert {f.code for f in result.findings} == {"scope"}  # a finding without a kind carries its gate's name
    assert [f["code"] for f in result.to_dict()["findings"]] == ["scope"] * len(named)  # as run.json has it
    assert all(f.severity == "error" for f in result.findings)


def test_scope_gate_keeps_the_default_deny_globs_even_if_not_passed() -> None:
    result = scope_gate([Change(".gitlab-ci.yml", "M", None, "100644")], ["**"], [])
    assert not result.passed and "denied by" in result.findings[0].message


def test_scope_gate_with_no_allowed_paths_allows_nothing() -> None:
    assert not scope_gate([Change("src/app.py", "M", None, "100644")], [], []).passed


def test_a_failed_gate_is_a_refused_trace_line() -> None:
    trace = Trace(None)
    scope_gate([Change("docs/x.md", "A", None, "100644")], ["src/**"], [], trace=trace)
    scope_gate([Change("src/x.py", "A", None, "100644")], ["src/**"], [], trace=trace)
    failed, passed = trace.lines()
    assert failed["decision"] == "refused" and "docs/x.md" in failed["reason"] and failed["tool"] == "scope"
    assert passed["decision"] == "allowed"


# -- test_tamper_check -----------------------------------------------------------------------------------


def test_untouched_tests_and_added_asserts_pass(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "src/app.py").write_text("def main():\n    return 1  # same\n")
    (root / "tests/test_app.py").write_text(TEST_FILE + "\n\ndef test_more():\n    assert main()\n")
    result = tamper(root, base)
    assert result.passed, result.findings
    assert result.name == "test_tamper"


def test_deleted_test_file_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "tests/test_app.py").unlink()
    result = tamper(root, base)
    assert not result.passed and result.findings[0].path == "tests/test_app.py"
    assert "deleted" in result.findings[0].message


def test_a_deleted_file_the_commands_own_pattern_collects_fails(repo: tuple[Path, str]) -> None:
    """`unittest discover -p '*tests.py'` collects src/app_tests.py, which no default name says is a test:
    deleting it is tampering for this run (the gate knows it from the command), and for no other."""
    root, base = repo
    (root / "src/app_tests.py").write_text("import unittest\n")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "app tests")
    base = sh(root, "rev-parse", "HEAD").strip()
    (root / "src/app_tests.py").unlink()
    argv = ["{interpreter}", "-m", "unittest", "discover", "-v", "-p", "*tests.py", "src"]
    command = TestCommand(argv=argv, source="t", runner="unittest")
    changes = changed_paths(root, base)
    result = gates.test_tamper_check(root, base, changes, facts=ADAPTER.test_facts, command=command)
    assert not result.passed and result.findings[0].message == "test file deleted: src/app_tests.py"
    assert tamper(root, base).passed  # without the command: the default names only


@pytest.mark.parametrize("content", ["", "\n\n", "# nothing here\n"])
def test_emptied_test_file_fails(repo: tuple[Path, str], content: str) -> None:
    root, base = repo
    (root / "tests/test_app.py").write_text(content)
    result = tamper(root, base)
    assert not result.passed and any("emptied" in f.message for f in result.findings)


@pytest.mark.parametrize(
    "marker",
    [
        "@pytest.mark.skip(reason='later')\n",
        "@pytest.mark.skipif(True, reason='x')\n",
        "@pytest.mark.xfail\n",
        "@unittest.skip('x')\n",
        "@unittest.expectedFailure\n",
    ],
)
def test_added_skip_markers_fail(repo: tuple[Path, str], marker: str) -> None:
    root, base = repo
    (root / "tests/test_app.py").write_text(
        TEST_FILE.replace("def test_main():", marker + "def test_main():")
    )
    result = tamper(root, base)
    assert not result.passed and "skip/xfail marker added" in result.findings[0].message


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("    assert main() == 1\n", "    pytest.skip('flaky')\n    assert main() == 1\n"),
        ("import pytest\n", "import pytest as p\npytestmark = p.mark.skip\n"),
        ("import unittest\n", "import unittest\nfrom unittest import skip as later\n"),
        ("        self.assertEqual", "        self.skipTest('x')\n        self.assertEqual"),
    ],
)
def test_skips_are_found_however_they_are_spelled(repo: tuple[Path, str], old: str, new: str) -> None:
    root, base = repo
    (root / "tests/test_app.py").write_text(TEST_FILE.replace(old, new))
    assert not tamper(root, base).passed


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        ("    assert main() != 2\n", "", "fewer assertions"),
        ("        self.assertEqual(main(), 1)", "        main()", "fewer assertions"),
        ("def test_main():\n    assert main() == 1\n    assert main() != 2\n", "", "fewer test functions"),
    ],
)
def test_removed_asserts_or_tests_fail(repo: tuple[Path, str], old: str, new: str, what: str) -> None:
    root, base = repo
    (root / "tests/test_app.py").write_text(TEST_FILE.replace(old, new))
    result = tamper(root, base)
    assert not result.passed and any(what in f.message for f in result.findings), result.findings


def test_test_file_moved_out_of_discovery_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "tests/test_app.py").rename(root / "docs_app.txt")
    result = tamper(root, base)
    assert not result.passed and "moved out of test discovery" in result.findings[0].message


def test_renamed_test_file_is_compared_with_its_old_content(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "tests/test_app.py").rename(root / "tests/test_main.py")
    assert tamper(root, base).passed
    (root / "tests/test_main.py").write_text(TEST_FILE.replace("    assert main() != 2\n", ""))
    assert not tamper(root, base).passed


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("tests/conftest.py", "import pytest\ncollect_ignore = ['test_app.py']\n"),
        ("pytest.ini", "[pytest]\naddopts = -q --deselect tests/test_app.py::test_main\n"),
        ("pytest.ini", "[pytest]\naddopts = -q --ignore tests\n"),
    ],
)
def test_narrowed_test_selection_fails(repo: tuple[Path, str], path: str, text: str) -> None:
    root, base = repo
    (root / path).write_text(text)
    result = tamper(root, base)
    assert not result.passed and "test selection narrowed" in result.findings[0].message


def test_a_test_file_that_no_longer_parses_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "tests/test_app.py").write_text("def test_main(:\n")
    assert not tamper(root, base).passed


def test_a_test_file_replaced_by_a_symlink_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "tests/test_app.py").unlink()
    os.symlink("/dev/null", root / "tests/test_app.py")
    assert not tamper(root, base).passed


def test_tamper_check_is_not_collected_as_a_test() -> None:
    assert gates.test_tamper_check.__test__ is False  # type: ignore[attr-defined]
