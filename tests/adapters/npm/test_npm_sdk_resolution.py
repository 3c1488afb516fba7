"""The canary's tests of where the SDK resolves (oracle.py): run by real node, read through the adapter's
reader, and end to end through the CLI on a repository whose preload sends `acme-sdk` to a fake with every
name built at run time, which no reading of the repository's files catches (before: green, exit 0, on
tests that never loaded the installed SDK)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import ROOT, materialize

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.models import Tally
from agentic_codemod.tools import sandbox
from agentic_codemod.workflow import oracle, verify

FACTS = ADAPTER.test_facts
NODE = shutil.which("node")
SDK_PACKAGE = {"name": "acme-sdk", "version": "1.1.0", "main": "lib/index.js"}
# A preload that replaces acme-sdk with names no reader can see: the hook's and the SDK's both built.
HIDDEN_HOOK = """const M = require("mod" + "ule");
const path = require("path");
const key = ["_resolve", "File", "name"].join("");
const original = M[key];
const wanted = ["acme", "sdk"].join("-");
M[key] = function (request, ...rest) {
  if (request === wanted) return path.join(__dirname, "fake.cjs");
  return original.call(this, request, ...rest);
};
"""
FAKE_CLIENT = """class Client {
  constructor(url) { this.url = url; }
  fetch(path) { return { url: this.url + path, version: "1.0.0" }; }
}
module.exports = { Client, connect: (url) => new Client(url), VERSION: "1.0.0" };
"""


def node_project(root: Path, preload: str | None = None, module: bool = False) -> TestCommand:
    """A project with acme-sdk in node_modules and one test using it; its `node --test` command."""
    manifest: dict[str, object] = {"name": "app", "version": "1.0.0", "scripts": {"test": "node --test"}}
    if preload is not None:
        manifest["scripts"] = {"test": "node --require ./support/setup.cjs --test"}
        (root / "support").mkdir(parents=True)
        (root / "support" / "setup.cjs").write_text(preload)
        (root / "support" / "fake.cjs").write_text(FAKE_CLIENT)
    if module:
        manifest["type"] = "module"
    sdk = root / "node_modules" / "acme-sdk"
    (sdk / "lib").mkdir(parents=True)
    (sdk / "package.json").write_text(json.dumps(SDK_PACKAGE))
    (sdk / "lib" / "index.js").write_text('module.exports = { VERSION: "1.1.0" };\n')
    (root / "package.json").write_text(json.dumps(manifest))
    (root / "test").mkdir()
    use = 'import test from "node:test";\n' if module else 'const test = require("node:test");\n'
    (root / "test" / "a.test.js").write_text(use + 'test("uses the sdk", () => {});\n')
    command = ADAPTER.detect_test_command(root, None)
    assert command is not None and command.runner == "node-test"
    return command


def run(
    root: Path, command: TestCommand
) -> tuple[oracle.Canary, Tally | None, str, oracle.SdkResolution | None]:
    canary = oracle.plant(root, command, FACTS, "acme-sdk")
    assert canary is not None and canary.checks_sdk
    junit = root / "junit.xml"
    argv = verify.render(command, Path(str(NODE)), str(junit))
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)
    tally, ids = FACTS.read_results(
        command, root, junit if junit.exists() else None, done.stdout + done.stderr
    )
    state, resolution = canary.read(tally, ids)
    return canary, tally, state, resolution


pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def test_the_installed_sdk_reads_installed_and_leaves_the_repository_s_counts(tmp_path: Path) -> None:
    canary, tally, state, resolution = run(tmp_path, node_project(tmp_path))
    assert (state, resolution) == ("failed", "installed")
    assert tally is not None and (tally.passed, tally.failed, tally.errors, tally.skipped) == (1, 0, 0, 0)
    assert not any(canary.token in t for t in tally.failing)


def test_a_preload_that_resolves_the_sdk_elsewhere_reads_elsewhere(tmp_path: Path) -> None:
    _canary, tally, state, resolution = run(tmp_path, node_project(tmp_path, preload=HIDDEN_HOOK))
    assert (state, resolution) == ("failed", "elsewhere")
    assert tally is not None and (tally.passed, tally.failed, tally.errors, tally.skipped) == (1, 0, 0, 0)


def test_an_sdk_linked_into_node_modules_reads_installed(tmp_path: Path) -> None:
    """pnpm's layout and the tool's own test copies: node_modules/acme-sdk (or node_modules) a link."""
    command = node_project(tmp_path / "store")
    (tmp_path / "app").mkdir()
    for name in ("package.json", "test"):
        shutil.move(tmp_path / "store" / name, tmp_path / "app" / name)
    (tmp_path / "app" / "node_modules").symlink_to(tmp_path / "store" / "node_modules")
    _canary, _tally, state, resolution = run(tmp_path / "app", command)
    assert (state, resolution) == ("failed", "installed")


def test_a_copy_the_tests_put_nearer_than_the_roots_node_modules_reads_elsewhere(tmp_path: Path) -> None:
    """test/node_modules/acme-sdk (1.0.0, written by a setup test that ran before the canary loaded) is
    what node's own lookup from the canary's folder finds first, and what require.resolve gives: both
    agreed, and the answer was "installed" for a run whose tests all loaded 1.0.0. Only the copy's root
    node_modules (the environment's link) is the installed package."""
    command = node_project(tmp_path)
    planted = tmp_path / "test" / "node_modules" / "acme-sdk"
    planted.mkdir(parents=True)
    (planted / "package.json").write_text(json.dumps({**SDK_PACKAGE, "version": "1.0.0", "main": "old.js"}))
    (planted / "old.js").write_text(FAKE_CLIENT)
    _canary, _tally, state, resolution = run(tmp_path, command)
    assert (state, resolution) == ("failed", "elsewhere")


def test_a_canary_folders_below_the_root_reads_the_roots_package_installed(tmp_path: Path) -> None:
    command = node_project(tmp_path)
    (tmp_path / "test" / "unit" / "deep").mkdir(parents=True)
    shutil.move(tmp_path / "test" / "a.test.js", tmp_path / "test" / "unit" / "deep" / "a.test.js")
    canary, _tally, state, resolution = run(tmp_path, command)
    assert canary.file.startswith("test/unit/deep/") and (state, resolution) == ("failed", "installed")


def test_a_check_that_cannot_run_reads_unknown_never_installed(tmp_path: Path) -> None:
    """An ES module package: `require` is not defined in the canary's file, so no answer either way."""
    _canary, _tally, _state, resolution = run(tmp_path, node_project(tmp_path, module=True))
    assert resolution == "unknown"


def test_reading_the_answer_from_the_skipped_test_s_name() -> None:
    canary = oracle.Canary(file="test/c1.test.js", token="c1", checks_sdk=True)

    def read(answer: str | None, skipped: int = 1) -> tuple[str, str | None, Tally]:
        ids = ["test/c1.test.js > c1", "test/a.test.js > ok"] + (
            [f"test/c1.test.js > c1_sdk_{answer}"] if answer else []
        )
        tally = Tally(passed=1, failed=1, skipped=skipped, failing=["test/c1.test.js > c1"])
        state, resolution = canary.read(tally, ids)
        return state, resolution, tally

    for answer in ("installed", "elsewhere", "unknown"):
        state, resolution, tally = read(answer)
        assert (state, resolution) == ("failed", answer) and (tally.failed, tally.skipped) == (0, 0)
    assert read("forged")[1] == "unknown"  # no other word is an answer
    assert read(None, skipped=0)[1] == "unknown"  # a runner that hides it: never "installed"
    assert canary.read(None, []) == ("missing", "unknown")
    failed = Tally(passed=1, failed=2, failing=["c1", "c1_sdk_installed"])  # a skipped test failed: no answer
    assert (
        canary.read(failed, ["c1", "c1_sdk_installed", "ok"]) == ("failed", "unknown") and failed.failed == 0
    )
    unchecked = oracle.Canary(file="test/c1.test.js", token="c1")
    assert unchecked.read(Tally(passed=1, failed=1, failing=["c1"]), ["c1", "ok"]) == ("failed", None)


@pytest.mark.parametrize(
    ("runner", "sibling", "checked"),
    [
        ("node-test", "a.test.js", True),
        ("jest", "a.test.js", True),
        ("jest", "a.test.cjs", True),
        ("mocha", "a-test.js", True),
        ("tape", "a.test.js", True),
        ("jest", "a.test.ts", False),
        ("jest", "a.test.mjs", False),
        ("vitest", "a.test.js", False),
    ],
)
def test_the_check_is_planted_in_commonjs_canaries_of_runners_read_by_name(
    runner: str, sibling: str, checked: bool
) -> None:
    planted = FACTS.canary(TestCommand(["x"], "s", runner), sibling, "c0ffee", "@acme/sdk")
    assert planted.checks_sdk is checked
    assert ('"@acme/sdk"' in planted.text) is checked and ("c0ffee_sdk_" in planted.text) is checked
    assert not FACTS.canary(TestCommand(["x"], "s", runner), sibling, "c0ffee", None).checks_sdk
    # jest's require.resolve does not see a module factory or automock: the module itself is compared
    assert ("jest.requireActual" in planted.text) is (checked and runner == "jest")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
@pytest.mark.skipif(sandbox.probe() is not None, reason="bwrap cannot start here")
def test_a_hidden_preload_that_replaces_the_sdk_requires_a_human_end_to_end(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    src = tmp_path / "hidden-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    manifest = json.loads((src / "package.json").read_text())
    manifest["scripts"]["test"] = "node --require ./support/setup.cjs --test"
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (src / "support").mkdir()
    (src / "support" / "setup.cjs").write_text(HIDDEN_HOOK)
    (src / "support" / "fake.cjs").write_text(FAKE_CLIENT)
    repo = tmp_path / "hidden"
    materialize.materialize(src, repo)
    result = run_codemod(repo, ROOT / "fixtures" / "npm-tasks" / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "baseline: the tests' own module loader resolves 'acme-sdk' outside the installed" in m["reason"]
    assert [v["sdk_resolution"] for v in m["verifications"]] == ["elsewhere"]
    assert m["candidate"]["files"] == []  # stopped at the baseline, before any edit


def test_tape_s_answer_is_a_skipped_assertion_it_prints() -> None:
    """tape 5 prints nothing for `test.skip` (the corpus' object-inspect read "unknown"); a skipped
    assertion is printed `ok N name # SKIP`: the output of tape 5.9 running the planted canary."""
    assert (
        't.skip("c1_sdk_" + c1_where)'
        in FACTS.canary(TestCommand(["x"], "s", "tape"), "a.js", "c1", "tape").text
    )
    output = (
        "TAP version 13\n# c1\nnot ok 1 c1\n  ---\n    operator: equal\n  ...\n# c1_sdk_installed\n"
        "ok 2 c1_sdk_installed # SKIP\n# a test\nok 3 should be equal\n\n"
        "1..3\n# tests 3\n# pass  2\n# fail  1\n"
    )
    tally, ids = FACTS.read_results(TestCommand(["tape"], "s", "tape"), Path("."), None, output)
    canary = oracle.Canary(file="test/c1.js", token="c1", checks_sdk=True)
    assert canary.read(tally, ids) == ("failed", "installed")
    assert tally is not None and (tally.passed, tally.failed, tally.skipped) == (1, 0, 0)
