"""The npm adapter end to end with real npm and node, against the local fixture registry (no internet):
lockfile refresh, npm ci into the environment directory, the target installed on top, the tests run
with their reporter and read with ids."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentic_codemod.adapters import types
from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm import environment as npm_environment
from agentic_codemod.adapters.npm.environment import node_modules
from agentic_codemod.adapters.npm.test_results import read_results
from agentic_codemod.config import Settings
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.models import Tally

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def run_tests(
    env: types.VerificationEnv, command: types.TestCommand, runner: types.Runner, reports: Path
) -> tuple[types.ProcessResult, Tally | None, list[str]]:
    project = env.root / "project"
    junit = reports / "junit.xml"
    argv = [
        a.replace("{interpreter}", str(env.interpreter)).replace("{junit}", str(junit)) for a in command.argv
    ]
    result = runner(argv, cwd=project, timeout_s=120)
    return (result, *read_results(command.runner, junit, result.output_tail))


def test_lock_environment_bump_and_results(
    tmp_path: Path, registry: str, runner: types.Runner, app: Callable[[Path, str], Path]
) -> None:
    root = app(tmp_path / "repo", "^1.0.0")
    locked = runner(["npm", "install", "--package-lock-only", "--ignore-scripts"], cwd=root, timeout_s=120)
    assert locked.ok, locked.output_tail
    files = ADAPTER.find_dependency_files(root)
    assert files == ["package-lock.json", "package.json"]
    declared = ADAPTER.extract_dependencies(root, files, "acme-sdk")
    assert [(d.role, d.specifier) for d in declared] == [("lock", "1.1.0"), ("runtime", "^1.0.0")]

    # The baseline: npm ci from the lock, then the pin of the task's `from` (here narrower than the lock).
    settings = Settings()
    env = ADAPTER.prepare_environment(root, tmp_path / "env", settings, runner, ["acme-sdk>=1.0.0 <1.1.0"])
    assert [r.argv[:2] for r in env.install_log] == [["npm", "ci"], ["npm", "install"], ["npm", "rebuild"]]
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    assert ADAPTER.installed_versions(root, env, runner) == {"acme-sdk": "1.0.0"}
    assert not (root / "node_modules").exists()  # installs never touch the repository
    command = ADAPTER.detect_test_command(root, settings)
    assert command is not None and command.runner == "node-test"
    (tmp_path / "reports").mkdir()
    result, tally, ids = run_tests(env, command, runner, tmp_path / "reports")
    assert tally is not None
    assert result.ok, result.output_tail
    assert ids == ["client > fetches a resource", "client > knows its version"]
    assert tally.passed == 2 and not tally.failing

    # The bump: package.json by the strategy, the lock by npm, the target on top of the baseline.
    text = (root / "package.json").read_text()
    (root / "package.json").write_text(ADAPTER.update_dependency(text, declared[1], "2.0.0"))
    notices = ADAPTER.update_lockfiles(root, declared[1], "2.0.0", runner)
    assert notices is not None and len(notices) == 1 and notices[0].updated, notices
    lock = json.loads((root / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/acme-sdk"]["version"] == "2.0.0"
    assert lock["packages"][""]["dependencies"] == {"acme-sdk": "^2.0.0"}
    install = ADAPTER.install_dependencies(root, env, settings, runner, ["acme-sdk==2.0.0"])
    assert install.ok, install.output_tail
    assert ADAPTER.installed_versions(root, env, runner) == {"acme-sdk": "2.0.0"}
    assert ADAPTER.version_matches("2.0.0", "==2.0.0") and not ADAPTER.version_matches("2.0.0", "^1.0.0")
    result, tally, ids = run_tests(env, command, runner, tmp_path / "reports")
    assert tally is not None
    assert not result.ok
    assert tally.failing == ["client > fetches a resource"] and tally.passed == 1


def test_without_a_lockfile_nothing_to_refresh_and_npm_install_fills_the_environment(
    tmp_path: Path, registry: str, runner: types.Runner, app: Callable[[Path, str], Path]
) -> None:
    root = app(tmp_path / "repo", "~1.0.0")
    dep = ADAPTER.extract_dependencies(root, ["package.json"], "acme-sdk")[0]
    assert ADAPTER.update_lockfiles(root, dep, "2.0.0", runner) is None
    env = ADAPTER.prepare_environment(root, tmp_path / "env", Settings(), runner, ["acme-sdk~1.0.0"])
    assert env.install_log[0].argv[:3] == ["npm", "install", "--no-package-lock"]
    assert ADAPTER.installed_versions(root, env, runner) == {"acme-sdk": "1.0.0"}
    assert node_modules(env.root).is_dir()


def test_an_unreachable_package_is_a_failed_install_not_an_exception(
    tmp_path: Path, registry: str, runner: types.Runner, app: Callable[[Path, str], Path]
) -> None:
    root = app(tmp_path / "repo", "^7.0.0")  # no such version on the registry
    env = ADAPTER.prepare_environment(root, tmp_path / "env", Settings(), runner, ["acme-sdk^7.0.0"])
    assert not env.install_log[-1].ok
    assert "acme-sdk" in env.install_log[-1].output_tail


def test_an_unreachable_registry_pauses_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: types.Runner, app: Callable[[Path, str], Path]
) -> None:
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")  # the discard port: nothing listens
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = app(tmp_path / "repo", "^1.0.0")
    with pytest.raises(EnvironmentUnavailable, match=r"registry cannot be reached.*ECONNREFUSED"):
        ADAPTER.prepare_environment(root, tmp_path / "env", Settings(), runner, ["acme-sdk^1.0.0"])


def test_the_listing_names_nested_copies_by_path_and_never_follows_a_link_or_lists_a_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a lockfile keys them: `gear`, `@s/x`, `acme-sdk/node_modules/gear`; a package linked to a folder
    above it (a loop) is listed, not descended; past ENV_LISTED_MAX the listing is unreadable (None)."""
    env = types.VerificationEnv(interpreter=Path("node"), root=tmp_path)
    modules = node_modules(tmp_path)

    def package(folder: Path, version: str) -> None:
        folder.mkdir(parents=True)
        (folder / "package.json").write_text(json.dumps({"name": folder.name, "version": version}))

    package(modules / "gear", "1.0.0")
    package(modules / "@s" / "x", "2.0.0")
    package(modules / "acme-sdk", "2.0.0")
    package(modules / "acme-sdk" / "node_modules" / "gear", "1.1.0")
    (modules / "loop").symlink_to(tmp_path / "project")
    (tmp_path / "project" / "package.json").write_text(json.dumps({"name": "app", "version": "0.1.0"}))
    listing = {
        "@s/x": "2.0.0",
        "acme-sdk": "2.0.0",
        "acme-sdk/node_modules/gear": "1.1.0",
        "gear": "1.0.0",
        "loop": "0.1.0",
    }
    assert ADAPTER.installed_versions(tmp_path, env, None) == listing  # type: ignore[arg-type]
    monkeypatch.setattr(npm_environment, "ENV_LISTED_MAX", 4)
    assert ADAPTER.installed_versions(tmp_path, env, None) is None  # type: ignore[arg-type]


def test_holding_finds_the_sdk_where_the_listing_cannot_read_it(tmp_path: Path) -> None:
    """helper-49: an install script removed node_modules/acme-sdk/package.json; node still loads the folder
    (index.js) and the listing left it out. holding names the folder at any depth, and what depends on it."""
    env = types.VerificationEnv(interpreter=Path("node"), root=tmp_path)
    modules = node_modules(tmp_path)
    (modules / "acme-sdk").mkdir(parents=True)
    (modules / "acme-sdk" / "index.js").write_text("module.exports = {};\n")  # no package.json
    widgets = {"name": "acme-widgets", "version": "1.0.0", "peerDependencies": {"acme-sdk": "^1.0.0"}}
    (modules / "acme-widgets" / "node_modules" / "acme-sdk").mkdir(parents=True)
    (modules / "acme-widgets" / "package.json").write_text(json.dumps(widgets))
    assert ADAPTER.installed_versions(tmp_path, env, None) == {"acme-widgets": "1.0.0"}  # type: ignore[arg-type]
    assert ADAPTER.holding is not None
    assert ADAPTER.holding(env, "acme-sdk", [], Settings()) == [
        "node_modules/acme-sdk",
        "node_modules/acme-widgets peerDependencies: acme-sdk ^1.0.0",
        "node_modules/acme-widgets/node_modules/acme-sdk",
    ]
    assert ADAPTER.holding(env, "gear", [], Settings()) == []


def test_holding_finds_an_alias_and_takes_no_optional_dependency_for_one(tmp_path: Path) -> None:
    """helper-50: `"acme": "npm:acme-sdk@>=1"` installs acme-sdk in node_modules/acme, which node loads and
    neither the listing nor the folder check named (a false nothing_to_do); an optional peer (typescript,
    react-dom) or an optionalDependency need not be installed, so they prove nothing (a false exit 3)."""
    env = types.VerificationEnv(interpreter=Path("node"), root=tmp_path)
    modules = node_modules(tmp_path)

    def package(folder: str, manifest: dict[str, object]) -> None:
        (modules / folder).mkdir(parents=True)
        (modules / folder / "package.json").write_text(json.dumps(manifest))

    package("helper", {"name": "helper", "version": "1.0.0", "optionalDependencies": {"acme-sdk": "^1.0.0"}})
    optional_peer = {
        "peerDependencies": {"acme-sdk": "*"},
        "peerDependenciesMeta": {"acme-sdk": {"optional": True}},
    }
    package("ts-helper", {"name": "ts-helper", "version": "1.0.0", **optional_peer})
    assert ADAPTER.holding is not None and ADAPTER.holding(env, "acme-sdk", [], Settings()) == []
    package("acme", {"name": "acme-sdk", "version": "1.4.0"})
    package(
        "acme-widgets",
        {"name": "acme-widgets", "version": "1.0.0", "dependencies": {"acme": "npm:acme-sdk@>=1"}},
    )
    assert ADAPTER.holding(env, "acme-sdk", [], Settings()) == [
        "node_modules/acme",
        "node_modules/acme-widgets dependencies: acme npm:acme-sdk@>=1",
    ]
