"""What a refreshed lockfile changes besides the bumped package is what the after environment tests.

The end-to-end case: uv locks the project with its own `[tool.uv] constraint-dependencies` (which the
tool's install never reads), so the lock tool and the installer pick different versions of what the bump
pulls in. Before, the run tested gear 1.1.0 and shipped a uv.lock locking gear 1.0.0, exit 0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import materialize, wheel

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.npm.lockfile import locked_versions as npm_locked
from agentic_codemod.adapters.python.lockfile import locked_versions as python_locked
from agentic_codemod.tools import sandbox
from agentic_codemod.workflow.lock_changes import changed

UV = Path(sys.executable).parent / "uv"

UV_LOCK = """\
version = 1
requires-python = ">=3.11"

[[package]]
name = "Gear_Box"
version = "1.0.0"
source = { registry = "https://pypi.org/simple" }

[[package]]
name = "numpy"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.12'"]

[[package]]
name = "numpy"
version = "2.3.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]

[package.optional-dependencies]
version = "9.9.9"
"""


def test_python_lockfiles_lock_every_package_by_canonical_name_with_its_forks() -> None:
    assert python_locked(UV_LOCK) == {
        "gear-box": frozenset({"1.0.0"}),
        "numpy": frozenset({"1.26.4", "2.3.0"}),
    }
    pipfile = '{\n  "default": {\n    "Gear.Box": {\n      "version": "==2.0.0"\n    }\n  }\n}\n'
    assert python_locked(pipfile) == {"gear-box": frozenset({"2.0.0"})}
    assert python_locked("not a lockfile") == {}


def test_npm_lockfiles_lock_the_top_level_packages_only() -> None:
    v3 = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app", "version": "1.0.0"},
            "node_modules/ms": {"version": "2.1.3"},
            "node_modules/@scope/x": {"version": "1.0.0"},
            "node_modules/debug/node_modules/ms": {"version": "2.0.0"},
            "node_modules/local": {"resolved": "packages/local", "link": True},
            "packages/local": {"version": "0.0.1"},
        },
    }
    assert npm_locked(json.dumps(v3)) == {"ms": frozenset({"2.1.3"}), "@scope/x": frozenset({"1.0.0"})}
    v1 = {"lockfileVersion": 1, "dependencies": {"ms": {"version": "2.1.3"}}}
    assert npm_locked(json.dumps(v1)) == {"ms": frozenset({"2.1.3"})}
    assert npm_locked("[") == {} and npm_locked("[]") == {}


def test_changed_leaves_out_the_package_unchanged_entries_and_forks() -> None:
    adapter = get_adapter("python")
    before = UV_LOCK + '\n[[package]]\nname = "acme-sdk"\nversion = "1.4.0"\n'
    after = (
        UV_LOCK.replace('"1.0.0"', '"1.1.0"').replace('"2.3.0"', '"2.3.1"')
        + '\n[[package]]\nname = "Acme_SDK"\nversion = "2.0.0"\n'
        + '\n[[package]]\nname = "new-dep"\nversion = "0.3"\n'
    )
    assert changed(adapter, "acme-sdk", before, after) == ({"gear-box": "1.1.0", "new-dep": "0.3"}, [])
    assert changed(adapter, "acme-sdk", after, after) == ({}, [])


def test_a_changed_entry_no_installer_can_be_given_is_set_apart() -> None:
    """The refreshed lockfile is the repository's tool's output: a name or version that would be an option,
    a path or a URL on the install's command line never reaches it."""
    adapter = get_adapter("python")
    hostile = '[[package]]\nname = "--index-url=http://x.invalid/"\nversion = "1.0"\n'
    hostile += '[[package]]\nname = "gear"\nversion = "1.0 --pre"\n'
    hostile += '[[package]]\nname = "ok"\nversion = "2.0"\n'
    found, unreadable = changed(adapter, "acme-sdk", "", hostile)
    assert found == {"ok": "2.0"}
    assert sorted(unreadable) == ["-index-url=http://x-invalid/ 1.0", "gear 1.0 --pre"]  # names canonical
    npm = get_adapter("npm")
    lock = {"packages": {"node_modules/-x": {"version": "1.0.0"}, "node_modules/y": {"version": "file:../y"}}}
    assert changed(npm, "acme-sdk", "", json.dumps(lock)) == ({}, ["-x 1.0.0", "y file:../y"])


# --- end to end -------------------------------------------------------------------------------------


PYPROJECT = """\
[project]
name = "app"
version = "0.1"
requires-python = ">=3.11"
dependencies = ["widget>=1,<2"]

[project.optional-dependencies]
test = ["pytest"]

[tool.uv]
constraint-dependencies = ["gear<1.2"]
environments = ["sys_platform == 'linux'"]
find-links = ["{wheels}"]
no-index = true
"""
TEST = """\
import widget


def test_widget_loads():
    assert widget.__version__
"""
TASK = """\
id: widget-2
title: Bump widget to 2.0
sdk: {name: widget, ecosystem: python, from: ">=1,<2", to: "2.0.0"}
allowed_paths: ["pyproject.toml", "uv.lock"]
acceptance_criteria:
  - "the tests pass on widget 2.0.0"
"""


def gear_wheels(dest: Path, wheels: Path, gears: tuple[str, ...], widget_1_needs: str = "") -> Path:
    """The fixture wheelhouse (pytest) plus widget 1.0.0, widget 2.0.0 (requires gear>=1.1) and `gears`."""
    shutil.copytree(wheels, dest, ignore=shutil.ignore_patterns("acme_sdk-*"))
    wheel(dest, "widget", "1.0.0", (widget_1_needs,) if widget_1_needs else ())
    wheel(dest, "widget", "2.0.0", ("gear>=1.1",))
    for version in gears:
        wheel(dest, "gear", version)
    return dest


def locked_app(tmp_path: Path, project_wheels: Path, inside: bool = False) -> Path:
    """The app, uv-locked against `project_wheels` (its own find-links, no index) under gear<1.2; `inside`:
    a copy of them in the repository (where the lock tool's box sees them without the tool's own)."""
    src = tmp_path / "app-src"
    (src / "tests").mkdir(parents=True)
    if inside:
        shutil.copytree(project_wheels, src / "wheels")
    where = "wheels" if inside else str(project_wheels)
    (src / "pyproject.toml").write_text(PYPROJECT.replace("{wheels}", where))
    (src / "tests" / "test_widget.py").write_text(TEST)
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([str(UV), "lock", "--quiet"], cwd=src, env=env, check=True)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(TASK)
    return repo


def installs(result: object) -> list[str]:
    trace = result.artifact("trace.jsonl").read_text().splitlines()  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in trace]
    return [" ".join(x["arguments"]["argv"]) for x in lines if x.get("tool") == "install_dependencies"]


needs_uv = pytest.mark.skipif(not UV.is_file(), reason="uv is not installed beside python")
needs_bwrap = pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start: {sandbox.probe()}")


@pytest.mark.slow
@needs_uv
@needs_bwrap
@pytest.mark.parametrize("in_baseline", [False, True], ids=["pulled-in", "held-by-the-baseline"])
def test_the_after_environment_tests_what_the_refreshed_lockfile_locks(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], in_baseline: bool
) -> None:
    """gear<1.2 is the project's own constraint: uv locks gear 1.1.0, the installer alone takes 1.2.0.
    A gear the baseline holds (1.0.0) is installed as locked with the package (one install); one the
    package pulls in is installed again as locked."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0", "1.1.0", "1.2.0"), "gear<1.1" * in_baseline)
    repo = locked_app(tmp_path, project)
    result = run_codemod(
        repo, tmp_path / "task.yml", "--find-links", str(project), "--no-index", packages=False
    )
    m = result.manifest  # type: ignore[attr-defined]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '+version = "1.1.0"' in patch and "1.2.0" not in patch, patch  # the project's constraint holds
    assert m["environments"]["after"]["gear"] == "1.1.0", m["environments"]  # and the tests ran on it
    assert m["locked"] == {"uv.lock": {"gear": {"locked": "1.1.0", "tested": "1.1.0"}}}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["classification"] == "green"
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    lock_line = "`uv.lock`: refreshed by its own tool (it locked widget ==1.0.0); "
    assert lock_line + "the tests ran on what else it now locks: gear 1.1.0" in mr, mr
    ran = installs(result)
    assert len(ran) == (1 if in_baseline else 2), ran
    assert all("gear==1.1.0" in argv for argv in ran[-1:]), ran


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_a_locked_version_the_environment_cannot_get_is_a_human_item_never_green(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The project's own wheels have gear 1.1.0 (locked); the tool's index has only 1.2.0 (installed, and
    the tests ran on it)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0", "1.2.0"))
    tools = tmp_path / "tool-wheels"
    shutil.copytree(project, tools, ignore=shutil.ignore_patterns("gear-1.1.0-*"))
    repo = locked_app(tmp_path, project, inside=True)
    result = run_codemod(
        repo, tmp_path / "task.yml", "--find-links", str(tools), "--no-index", packages=False
    )
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["environments"]["after"]["gear"] == "1.2.0"
    assert m["locked"] == {"uv.lock": {"gear": {"locked": "1.1.0", "tested": "1.2.0"}}}
    reasons = [h["reason"] for h in m["plan"]["requires_human"]]
    assert "uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0" in " ".join(reasons), reasons
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert "uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0" in mr


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_two_bumped_declarations_refresh_the_lockfile_once_and_stay_green(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """pyproject.toml and requirements.txt both declare widget: the bump edits both; uv.lock is refreshed
    by the first and left as it is by the second, which is no reason for a human."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0",))
    src = tmp_path / "extra-src"
    (src / "tests").mkdir(parents=True)
    (src / "pyproject.toml").write_text(PYPROJECT.replace("{wheels}", str(project)))
    (src / "requirements.txt").write_text("widget>=1,<2\n")
    (src / "tests" / "test_widget.py").write_text(TEST)
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([str(UV), "lock", "--quiet"], cwd=src, env=env, check=True)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(TASK.replace('"uv.lock"]', '"uv.lock", "requirements.txt"]'))
    result = run_codemod(
        repo, tmp_path / "task.yml", "--find-links", str(project), "--no-index", packages=False
    )
    m = result.manifest  # type: ignore[attr-defined]
    assert sorted(m["candidate"]["files"]) == ["pyproject.toml", "requirements.txt", "uv.lock"]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
