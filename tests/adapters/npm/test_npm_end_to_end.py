"""The npm fixture (fixtures/npm-app) through `agentic-codemod run --offline`, real npm and node in the
sandbox, the SDK from the local fixture registry: a plain bump inside 1.x is green; the breaking 2.0.0
without migration notes ends requires_human naming the failing tests."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from fixtures_support import ROOT, materialize, npm_registry

from agentic_codemod.tools import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]

TASKS = ROOT / "fixtures" / "npm-tasks"


@pytest.fixture
def npm_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "npm-app"
    materialize.materialize(ROOT / "fixtures" / "npm-app", dest)
    return dest


def test_plain_bump_is_green(npm_repo: Path, registry: str, run_codemod: Callable[..., object]) -> None:
    result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["status"] == "succeeded" and m["classification"] == "green"
    assert m["environments"]["baseline"] == {"acme-sdk": "1.0.0"}
    assert m["environments"]["after"] == {"acme-sdk": "1.1.0"}
    assert all(v["passed"] and v["tests"]["passed"] == 3 for v in m["verifications"])
    assert sorted(m["candidate"]["files"]) == ["package-lock.json", "package.json"]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '-    "acme-sdk": "^1.0.0"' in patch and '+    "acme-sdk": "^1.1.0"' in patch
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert "`package.json`: `acme-sdk^1.0.0` now admits 1.1.0" in mr, mr
    assert "`package-lock.json`: refreshed by its own tool (it locked acme-sdk 1.0.0)" in mr, mr


def test_a_refreshed_lockfile_larger_than_max_file_bytes_enters_the_candidate(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object], tmp_path: Path
) -> None:
    """Real lockfiles outgrow max_file_bytes (a 6-dependency package's is 270 kB): npm's refresh is tool
    output the manifest gate pins, charged to max_lockfile_bytes, never the budget of an edit."""
    lockfile = (npm_repo / "package-lock.json").stat().st_size
    limit = (npm_repo / "package.json").stat().st_size + 10
    assert limit < lockfile
    task = yaml.safe_load((TASKS / "acme-sdk-1.1-plain.yml").read_text())
    task["budgets"] = {"max_file_bytes": limit, "max_total_bytes": limit}
    path = tmp_path / "task.yml"
    path.write_text(yaml.safe_dump(task))
    result = run_codemod(npm_repo, path, packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert sorted(m["candidate"]["files"]) == ["package-lock.json", "package.json"]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '+      "version": "1.1.0",' in patch, patch


def test_the_refreshed_lockfile_locks_the_tested_target_not_the_newest_in_range(
    npm_repo: Path,
    run_codemod: Callable[..., object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`^1.1.0` admits a newer 1.2.0: npm alone would lock that, a version no test ran on."""
    packages = tmp_path / "packages"
    shutil.copytree(ROOT / "fixtures" / "npm-sdk" / "packages", packages)
    newer = packages / "acme-sdk" / "1.2.0"
    shutil.copytree(packages / "acme-sdk" / "1.1.0", newer)
    manifest = json.loads((newer / "package.json").read_text())
    (newer / "package.json").write_text(json.dumps({**manifest, "version": "1.2.0"}))
    with npm_registry(tmp_path, monkeypatch, packages):
        result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["environments"]["after"] == {"acme-sdk": "1.1.0"}
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '+      "version": "1.1.0",' in patch and "1.2.0" not in patch, patch
    assert '+        "acme-sdk": "^1.1.0"' in patch, patch


def test_breaking_bump_requires_a_human_naming_the_failing_tests(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    result = run_codemod(npm_repo, TASKS / "acme-sdk-2-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["status"] == "requires_human"
    assert "orders > loads an order by id" in m["reason"], m["reason"]
    assert m["verifications"][-1]["tests"]["failing"] == [
        "orders > loads an order by id",
        "reports > runs a named operation",
    ]
    assert m["verifications"][0]["passed"] and not m["verifications"][-1]["passed"]
    assert m["environments"]["after"] == {"acme-sdk": "2.0.0"}


def test_rules_task_is_green_when_rules_cover_every_usage(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    for rel in ("src/reports.js", "test/reports.test.js"):  # the usage only the coder can fix, gone
        subprocess.run(["git", "rm", "-q", rel], cwd=npm_repo, check=True)
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "no reports"],
        cwd=npm_repo,
        check=True,
    )
    result = run_codemod(npm_repo, TASKS / "acme-sdk-2.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert [e["rule"] for e in m["rule_edits"]] == ["ACMEJS001", "ACMEJS002"]
    assert sorted(m["candidate"]["files"]) == ["package-lock.json", "package.json", "src/orders.js"]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert "connect({ url: baseUrl })" in patch and ".get(`/orders/${id}`)" in patch
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    # a migration's MR names the refreshed lockfile as a plain bump's does (before: only its file name)
    assert "`package-lock.json`: refreshed by its own tool (it locked acme-sdk 1.0.0)" in mr, mr
    assert "changed by ACMEJS001 in 1 file: `src/orders.js`" in mr, mr


def test_the_usage_no_rule_can_fix_ends_honestly_offline(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    result = run_codemod(npm_repo, TASKS / "acme-sdk-2.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code in (1, 3), m["reason"]  # type: ignore[attr-defined]
    assert "ACMEJS900 src/reports.js:5" in m["reason"]
    assert m["verifications"][-1]["tests"]["failing"] == ["reports > runs a named operation"]


def test_no_test_script_requires_a_human_with_npm_advice(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    src = tmp_path / "no-script-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    manifest = src / "package.json"
    manifest.write_text(manifest.read_text().replace('"test": "node --test"', '"lint": "true"'))
    repo = tmp_path / "no-script"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "no test command found" in m["reason"]
    assert "npm adapter" in m["reason"] and "adapters/npm/README.md" in m["reason"]
    assert "pytest" not in m["reason"]


def test_a_test_script_naming_its_files_gets_the_canary_named_too(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """`node --test test/a.test.js test/b.test.js` collects only the files it names: the canary is planted
    beside one of them and its path added to the command, so an honest repository verifies (it ended
    'canary missing', requires_human, before)."""
    manifest = npm_repo / "package.json"
    named = "node --test test/orders.test.js test/version.test.js"
    manifest.write_text(manifest.read_text().replace('"test": "node --test"', f'"test": "{named}"'))
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "named test files"],
        cwd=npm_repo,
        check=True,
    )
    result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    for v in m["verifications"]:
        assert v["passed"] and v["canary"] == "failed" and v["sdk_resolution"] == "installed", v
        assert v["tests"]["passed"] == 2, v  # the two named files' tests; reports.test.js is not named
        assert v["command"][-1].startswith("test/c") and v["command"][-1].endswith(".test.js"), v["command"]


@pytest.mark.parametrize(
    ("pin", "code"), [("acme-sdk@1.0.0", 3), ('"acme-sdk@>=1 <2"', 0)], ids=["excludes", "admits"]
)
def test_a_pin_the_image_installs_off_the_target_requires_a_human(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object], pin: str, code: int
) -> None:
    """A Dockerfile installing the SDK by its own pin (`npm install -g acme-sdk@1.0.0`) was not read: the
    bump edited package.json and the run was green (exit 0), leaving an image on the old version. The tool
    does not edit Dockerfiles: a pin there that excludes the target stops the run before any edit."""
    src = tmp_path / "image-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    (src / "Dockerfile").write_text(f"FROM node:22\nRUN npm ci && npm install -g {pin}\n")
    repo = tmp_path / "image"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == code, m["reason"]  # type: ignore[attr-defined]
    if code == 3:
        assert "Dockerfile line 2 installs acme-sdk@1.0.0 in a container image" in m["reason"]
        assert not m["verifications"]
    else:
        assert m["status"] == "succeeded" and sorted(m["candidate"]["files"]) == [
            "package-lock.json",
            "package.json",
        ]


def test_a_test_script_chaining_two_test_runs_is_never_green_on_the_first_alone(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """`"test": "npm run test:unit && npm run test:integration"`: the tool ran test:unit only, and the
    integration test that fails on the target never ran (green, exit 0). A script making two test runs is
    one the tool cannot reproduce with its one command: requires_human, naming both, nothing verified."""
    src = tmp_path / "chained-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    (src / "test" / "integration").mkdir()
    (src / "test" / "integration" / "pinned.test.js").write_text(
        'const test = require("node:test");\nconst assert = require("node:assert");\n'
        'test("runs on the 1.0 line", () => assert.equal(require("acme-sdk").VERSION, "1.0.0"));\n'
    )
    manifest = json.loads((src / "package.json").read_text())
    manifest["scripts"] = {
        "test": "npm run test:unit && npm run test:integration",
        "test:unit": "node --test test/orders.test.js test/version.test.js",
        "test:integration": "node --test test/integration/",
    }
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    repo = tmp_path / "chained"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["status"] == "requires_human"
    assert "makes 2 test runs" in m["reason"], m["reason"]
    assert "scripts.test:unit: node --test test/orders.test.js" in m["reason"], m["reason"]
    assert "scripts.test:integration: node --test test/integration/" in m["reason"], m["reason"]
    assert not m["verifications"]


def test_an_alias_of_another_package_under_the_sdks_name_requires_a_human(
    tmp_path: Path, run_codemod: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`"acme-sdk": "npm:acme-sdk-fork@^1.0.0"` installs the fork as acme-sdk: the bump rewrote the alias
    range, the registry's real acme-sdk 1.1.0 was installed and tested, and the merged tree installs the
    fork (green, exit 0). The tool does not edit an alias of another package: the run stops before any
    edit, naming the line."""
    packages = tmp_path / "packages"
    shutil.copytree(ROOT / "fixtures" / "npm-sdk" / "packages", packages)
    for version in ("1.0.0", "1.1.0"):
        fork = packages / "acme-sdk-fork" / version
        shutil.copytree(packages / "acme-sdk" / version, fork)
        manifest = json.loads((fork / "package.json").read_text())
        (fork / "package.json").write_text(json.dumps({**manifest, "name": "acme-sdk-fork"}))
    src = tmp_path / "alias-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    (src / "package-lock.json").unlink()
    manifest_path = src / "package.json"
    manifest_path.write_text(manifest_path.read_text().replace('"^1.0.0"', '"npm:acme-sdk-fork@^1.0.0"'))
    repo = tmp_path / "alias"
    materialize.materialize(src, repo)
    with npm_registry(tmp_path, monkeypatch, packages):
        result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "package.json line 11: dependencies.acme-sdk is 'npm:acme-sdk-fork@^1.0.0'" in m["reason"]
    assert not m["verifications"]


def test_a_committed_copy_of_the_sdk_in_a_node_modules_folder_requires_a_human(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """src/node_modules/acme-sdk (1.0.0, committed) is what `require("acme-sdk")` in src/ loads: the run
    installed and recorded 1.1.0 at the root, the code ran 1.0.0 (green, exit 0). Now it stops before any
    edit, naming the folder."""
    src = tmp_path / "vendored-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    shutil.copytree(
        ROOT / "fixtures" / "npm-sdk" / "packages" / "acme-sdk" / "1.0.0",
        src / "src" / "node_modules" / "acme-sdk",
    )
    repo = tmp_path / "vendored"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "src/node_modules/acme-sdk is a copy of acme-sdk committed in the repository" in m["reason"]
    assert not m["verifications"]


def test_a_node_modules_folder_committed_at_the_root_requires_a_human_naming_it(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """A committed root node_modules (with the SDK's 1.0.0 in it) is what every install replaces: the run
    ended exit 3 at the baseline saying the tests wrote the repository's files. Now it stops before any
    install, naming the folder and how to take it out of the repository."""
    src = tmp_path / "committed-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    shutil.copytree(
        ROOT / "fixtures" / "npm-sdk" / "packages" / "acme-sdk" / "1.0.0", src / "node_modules" / "acme-sdk"
    )
    repo = tmp_path / "committed"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "node_modules is committed in the repository" in m["reason"], m["reason"]
    assert "git rm -r --cached node_modules" in m["reason"]
    assert not m["verifications"] and not m["environments"].get("baseline")


def test_a_suite_hook_failing_on_the_target_is_never_green(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """An `after` hook inside `describe` that fails on the target: node writes no failure into its JUnit
    report (the suite's tests passed), only its TAP says `not ok - pinned` (hookFailed). Read from the
    report alone, the run was green (exit 0)."""
    src = tmp_path / "hook-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    (src / "test" / "pinned.test.js").write_text(
        'const { describe, it, after } = require("node:test");\nconst assert = require("node:assert");\n'
        'describe("pinned", () => {\n'
        '  after(() => assert.equal(require("acme-sdk").VERSION, "1.0.0"));\n'
        '  it("loads", () => {});\n'
        "});\n"
    )
    repo = tmp_path / "hook"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["verifications"][0]["passed"], m["verifications"][0]
    assert m["verifications"][-1]["tests"]["failing"] == ["pinned"], m["verifications"][-1]


def test_a_package_below_the_root_that_is_no_workspace_keeps_no_old_range_silently(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """A lerna-style package (`packages/web/package.json`, no `workspaces` at the root) on acme-sdk
    1.0.0: the root was bumped and green, exit 0, the package left on the old version. Its declaration is
    read, uneditable: the run stops before any edit, naming it."""
    src = tmp_path / "lerna-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    (src / "lerna.json").write_text('{"packages": ["packages/*"]}\n')
    (src / "packages" / "web").mkdir(parents=True)
    (src / "packages" / "web" / "package.json").write_text(
        '{"name": "web", "version": "1.0.0", "dependencies": {"acme-sdk": "1.0.0"}}\n'
    )
    repo = tmp_path / "lerna"
    materialize.materialize(src, repo)
    result = run_codemod(repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]  # type: ignore[attr-defined]
    assert "packages/web/package.json line 1: dependencies.acme-sdk is '1.0.0'" in m["reason"]
    assert not m["verifications"]


WIDGETS = """"use strict";
// acme-widgets 1.0.0: built on acme-sdk 1.x's connect(url) and client.fetch(path).
const sdk = require("acme-sdk");
module.exports = { load: (path) => sdk.connect("https://api").fetch(path) };
"""
WIDGETS_TEST = """const test = require("node:test");
const assert = require("node:assert");
const widgets = require("acme-widgets");
test.it("loads a widget", () => {
  assert.equal(widgets.load("/w").url, "https://api/w");
});
"""


def test_an_sdk_another_package_installs_is_tested_on_both_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_codemod: Callable[..., object]
) -> None:
    """The app declares only acme-widgets, which requires acme-sdk (any version) and breaks on 2.0.0: before,
    "neither declares nor imports", `nothing_to_do` without an install or a test run, exit 0."""
    packages = tmp_path / "packages"
    shutil.copytree(ROOT / "fixtures" / "npm-sdk" / "packages", packages)
    widgets = packages / "acme-widgets" / "1.0.0"
    widgets.mkdir(parents=True)
    manifest = {
        "name": "acme-widgets",
        "version": "1.0.0",
        "main": "index.js",
        "dependencies": {"acme-sdk": "*"},
    }
    (widgets / "package.json").write_text(json.dumps(manifest))
    (widgets / "index.js").write_text(WIDGETS)
    source = tmp_path / "app-src"
    (source / "test").mkdir(parents=True)
    app = {"name": "app", "version": "1.0.0", "scripts": {"test": "node --test"}}
    (source / "package.json").write_text(json.dumps({**app, "dependencies": {"acme-widgets": "1.0.0"}}))
    (source / "test" / "widgets.test.js").write_text(WIDGETS_TEST)
    repo = tmp_path / "app"
    materialize.materialize(source, repo)
    with npm_registry(tmp_path, monkeypatch, packages):
        result = run_codemod(repo, TASKS / "acme-sdk-2-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]  # type: ignore[attr-defined]
    assert "tests fail on acme-sdk 2.0.0" in m["reason"] and "loads a widget" in m["reason"], m["reason"]
    assert m["plan"]["if_installed"] and m["environments"]["baseline"]["acme-sdk"].startswith("1.")
    assert m["environments"]["after"]["acme-sdk"] == "2.0.0"
    assert result.artifact("changes.patch").read_bytes() == b""  # type: ignore[attr-defined]
