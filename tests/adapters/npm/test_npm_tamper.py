"""The tamper gate's npm facts: what a candidate adds to JS/TS tests and runner configuration."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.python import ADAPTER as PYTHON
from agentic_codemod.workflow import gates

TEST = """const test = require("node:test");
const assert = require("node:assert");
test("a", () => { assert.equal(1, 1); });
test("b", () => { assert.equal(2, 2); });
"""


def tamper(path: str, before: str | None, after: str | None, *, new_here: bool = False) -> list[str]:
    facts = ADAPTER.test_facts
    is_test = facts.is_test_file(path) or facts.is_test_support(path)
    return facts.tamper(path, before, after, is_test, new_here or before is None)


@pytest.mark.parametrize(
    ("after", "finding"),
    [
        (TEST.replace('test("b"', 'test.skip("b"'), "skip marker added"),
        (TEST.replace('test("b"', 'test.only("b"'), "focused test (.only) added"),
        (TEST.replace('test("b", () => { assert.equal(2, 2); });\n', ""), "fewer tests"),
        (TEST.replace("assert.equal(2, 2);", ""), "fewer assertions"),
        (TEST + "process.exit(0);\n", "process.exit( introduced in test file"),
        (TEST + "delete require.cache[x];\n", "require.cache introduced"),
    ],
)
def test_what_a_candidate_adds_to_a_test_file_is_found(after: str, finding: str) -> None:
    found = tamper("test/a.test.js", TEST, after)
    assert any(finding in message and "test/a.test.js" in message for message in found), found


TAPE_TEST = """const test = require("tape");
test("a", (t) => { t.equal(1, 1); t.deepEqual([1], [1]); t.end(); });
test("b", (t) => { t.ok(true); t.end(); });
"""


@pytest.mark.parametrize(
    ("before", "after", "finding"),
    [
        (TAPE_TEST, TAPE_TEST.replace(" t.deepEqual([1], [1]);", ""), "fewer assertions"),
        (TAPE_TEST, TAPE_TEST.replace('test("b", (t)', 'test("b", { skip: true }, (t)'), "skip marker added"),
        (
            TAPE_TEST,
            TAPE_TEST.replace('test("b", (t)', 'test("b", { todo: "later" }, (t)'),
            "skip marker added",
        ),
        (TEST, TEST.replace('test("b", ()', 'test("b", { skip: true }, ()'), "skip marker added"),
    ],
)
def test_tape_assertions_and_skip_or_todo_options_are_counted(before: str, after: str, finding: str) -> None:
    found = tamper("test/a.test.js", before, after)
    assert any(finding in message for message in found), found
    assert tamper("test/a.test.js", before, before.replace("{ skip: true }", "{ skip: false }")) == []


@pytest.mark.parametrize(
    ("path", "before", "after", "key"),
    [
        (".mocharc.yml", "spec: test\n", "spec: test\nrequire: ./test/hook.js\n", "require"),
        (
            ".mocharc.json",
            '{"spec": "test"}',
            '{"spec": "test", "node-option": ["require=./h.js"]}',
            "node-option",
        ),
        (".mocharc.yml", "spec: test\n", "spec: test\ngrep: only-this\n", "grep"),
        (
            "jest.config.js",
            "module.exports = {};\n",
            'module.exports = { testNamePattern: "x" };\n',
            "testNamePattern",
        ),
    ],
)
def test_a_setting_that_loads_code_or_narrows_the_run_added_to_an_existing_configuration(
    path: str, before: str, after: str, key: str
) -> None:
    found = tamper(path, before, after)
    assert f"runner setting {key} introduced in {path}" in found, found
    assert tamper(path, before, before) == []


def test_an_unchanged_or_growing_test_file_is_clean_and_a_commented_skip_is_no_skip() -> None:
    assert tamper("test/a.test.js", TEST, TEST) == []
    assert tamper("test/a.test.js", TEST, TEST + 'test("c", () => { assert.ok(1); });\n') == []
    assert tamper("test/a.test.js", TEST, TEST + "// test.skip('later')\n") == []


@pytest.mark.parametrize(
    ("path", "before", "after", "finding"),
    [
        ("jest.config.js", None, "module.exports = {};\n", "new test-runner configuration: jest.config.js"),
        (
            "jest.config.js",
            "module.exports = {};\n",
            'module.exports = { reporters: ["./r.js"] };\n',
            "reporters",
        ),
        (
            "package.json",
            '{"scripts": {"test": "node --test"}}',
            '{"scripts": {"test": "node --require ./h.js --test"}}',
            "--require",
        ),
        ("src/setup.js", "", "const Module = require('module'); Module._load = () => {};\n", "Module._load"),
        (".mocharc.yml", None, "spec: test\n", "new test-runner configuration"),
    ],
)
def test_runner_configuration_and_result_hooks_are_found(
    path: str, before: str | None, after: str, finding: str
) -> None:
    assert any(finding in message for message in tamper(path, before, after)), tamper(path, before, after)


def test_a_source_file_that_only_changes_code_is_clean() -> None:
    before = "const { connect } = require('acme-sdk');\nmodule.exports = connect('u').fetch('/x');\n"
    assert tamper("src/app.js", before, before.replace("fetch", "get")) == []


def test_the_gate_with_npm_facts_fails_a_deleted_or_skipped_js_test(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text(TEST)
    (tmp_path / "test" / "b.test.js").write_text(TEST)
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    base = git("rev-parse", "HEAD")
    (tmp_path / "test" / "a.test.js").unlink()
    (tmp_path / "test" / "b.test.js").write_text(TEST.replace('test("b"', 'test.skip("b"'))
    changes = gates.changed_paths(tmp_path, base)
    without = gates.test_tamper_check(tmp_path, base, changes, facts=PYTHON.test_facts)
    assert without.passed  # Python's facts see no test file here: the gate's view is the ecosystem's
    result = gates.test_tamper_check(tmp_path, base, changes, facts=ADAPTER.test_facts)
    messages = [f.message for f in result.findings]
    assert not result.passed
    assert "test file deleted: test/a.test.js" in messages
    assert any(m.startswith("skip marker added in test/b.test.js") for m in messages)


def test_rules_of_each_js_language_scan_their_own_files(tmp_path: Path) -> None:
    from agentic_codemod.workflow.scan import source_files, source_suffixes

    for name in ("a.js", "b.mjs", "c.ts", "d.tsx", "e.py", "node.d.json"):
        (tmp_path / name).write_text("x\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert source_files(tmp_path, "javascript") == ["a.js", "b.mjs"]
    assert source_files(tmp_path, "typescript") == ["c.ts"]
    assert source_files(tmp_path, "tsx") == ["d.tsx"]
    assert source_files(tmp_path, "npm") == ["a.js", "b.mjs", "c.ts", "d.tsx"]  # an ecosystem: all of them
    assert source_files(tmp_path, "python") == ["e.py"]
    assert source_suffixes("cobol") == ()


def test_a_new_module_mock_or_a_moved_runner_configuration_is_found() -> None:
    mock = "module.exports = { connect: () => ({ get: async () => ({ ok: true }) }) };\n"
    assert tamper("__mocks__/acme-sdk.js", None, mock) == ["new module mock: __mocks__/acme-sdk.js"]
    assert tamper("__mocks__/acme-sdk.js", mock, mock + "// more\n") == []  # editing an existing mock
    moved = tamper("jest.config.js", "module.exports = {};\n", "module.exports = {};\n", new_here=True)
    assert moved == ["new test-runner configuration: jest.config.js"]
    facts = ADAPTER.test_facts
    assert facts.is_test_support("src/__mocks__/fs.js") and not facts.is_test_support("src/mocks/fs.js")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_test_file_that_cannot_load_a_package_names_it_and_a_missing_own_file_does_not(
    tmp_path: Path,
) -> None:
    """Real `node --test` output: a missing package is a missing test dependency (the baseline proves
    nothing); a missing file of the repository's own is its bug, not the environment's."""
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "a.test.js").write_text('require("acme-sdk-not-installed");\n')
    done = subprocess.run(["node", "--test"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    facts = ADAPTER.test_facts
    assert done.returncode == 1
    assert (
        facts.missing_dependency(done.stdout + done.stderr) == "Cannot find module 'acme-sdk-not-installed'"
    )
    (tmp_path / "test" / "a.test.js").write_text('require("../src/gone");\n')
    done = subprocess.run(["node", "--test"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert "Cannot find module" in done.stdout + done.stderr
    assert facts.missing_dependency(done.stdout + done.stderr) is None


def test_suspects_name_result_hooks_in_runner_configuration_and_module_mocks(tmp_path: Path) -> None:
    (tmp_path / "jest.config.js").write_text('module.exports = { setupFilesAfterEnv: ["./s.js"] };\n')
    (tmp_path / "__mocks__").mkdir()
    (tmp_path / "__mocks__" / "acme-sdk.js").write_text("module.exports = {};\n")
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node --test"}}\n')
    (tmp_path / "node_modules" / "x").mkdir(parents=True)  # installed packages are not the repository's
    (tmp_path / "node_modules" / "x" / "jest.config.js").write_text("module.exports = { reporters: [] };\n")
    assert ADAPTER.test_facts.suspects(tmp_path) == [
        "jest.config.js: setupFilesAfterEnv",
        "__mocks__: module mocks",
    ]
