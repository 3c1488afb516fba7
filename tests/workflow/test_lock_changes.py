"""What a refreshed lockfile changes besides the bumped package is what the after environment tests.

The end-to-end case: uv locks the project with its own `[tool.uv] constraint-dependencies` (which the
tool's install never reads), so the lock tool and the installer pick different versions of what the bump
pulls in. Before, the run tested gear 1.1.0 and shipped a uv.lock locking gear 1.0.0, exit 0."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import (
    POETRY,
    POETRY_MISSING,
    materialize,
    npm_registry,
    poetry_source,
    simple_index,
    wheel,
)

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.npm.lockfile import locked_versions as npm_locked
from agentic_codemod.adapters.python.lockfile import constraints as lock_constraints
from agentic_codemod.adapters.python.lockfile import locked_versions as python_locked
from agentic_codemod.adapters.types import Locked
from agentic_codemod.tools import sandbox
from agentic_codemod.workflow import environments
from agentic_codemod.workflow.lock_changes import Changes, Mismatch, changed, elsewhere
from agentic_codemod.workflow.state import RunState

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


def test_python_lockfiles_lock_every_package_by_canonical_name_with_its_forks_and_sources() -> None:
    lock = (
        UV_LOCK + '\n[[package]]\nname = "cog"\nversion = "0.1"\nsource = { git = "https://x.invalid/cog" }\n'
    )
    assert python_locked(lock) == {
        "cog": Locked(frozenset({"0.1"}), pinnable=False, indexed=False),
        "gear-box": Locked(frozenset({"1.0.0"})),
        "numpy": Locked(frozenset({"1.26.4"})),  # the fork for this interpreter (3.11; the tool needs >=3.11)
    }
    unreadable = UV_LOCK.replace("python_full_version >= '3.12'", "not a marker")  # kept: never dropped
    assert python_locked(unreadable)["numpy"] == Locked(frozenset({"1.26.4", "2.3.0"}))
    poetry = '[[package]]\nname = "a"\nversion = "1"\n[package.source]\ntype = "git"\nurl = "x"\n'
    poetry += '[[package]]\nname = "b"\nversion = "2"\n[package.source]\ntype = "legacy"\nurl = "x"\n'
    poetry += '[[package]]\nname = "c"\nversion = "3"\n'
    assert python_locked(poetry) == {
        "a": Locked(frozenset({"1"}), pinnable=False, indexed=False),
        "b": Locked(frozenset({"2"})),
        "c": Locked(frozenset({"3"})),
    }
    # Poetry locks one package at two versions by marker (a string, or one per group); pdm and pylock
    # write `marker`: only the entry for this interpreter (3.11) counts, as for a uv.lock fork.
    forks = '[[package]]\nname = "np"\nversion = "1.26.4"\nmarkers = "python_version < \'3.12\'"\n'
    forks += '[[package]]\nname = "np"\nversion = "2.3.0"\nmarkers = "python_version >= \'3.12\'"\n'
    forks += '[[package]]\nname = "w"\nversion = "306"\nmarkers = {main = "sys_platform == \'win32\'"}\n'
    forks += '[[package]]\nname = "t"\nversion = "2.2"\nmarker = "python_version < \'3.11\'"\n'
    forks += '[[package]]\nname = "g"\nversion = "1"\nmarkers = {main = "os_name == \'nt\'", dev = "True"}\n'
    forks += '[[package]]\nname = "x"\nversion = "3"\nmarkers = "extra == \\"test\\""\n'  # a project extra
    forks += '[[package]]\nname = "y"\nversion = "4"\n'
    forks += 'markers = {main = "extra == \\"a\\" and os_name == \'nt\'"}\n'
    assert python_locked(forks) == {  # an extra's entry is kept: the tests may install that extra
        "g": Locked(frozenset({"1"})),  # "True" is no marker: kept, never dropped
        "np": Locked(frozenset({"1.26.4"})),
        "x": Locked(frozenset({"3"})),
        "y": Locked(frozenset({"4"})),
    }
    pipfile = {"default": {"Gear.Box": {"version": "==2.0.0"}}, "develop": {"d": {"git": "x", "ref": "y"}}}
    assert python_locked(json.dumps(pipfile)) == {"gear-box": Locked(frozenset({"2.0.0"}))}  # d: no version
    project = '[[package]]\nname = "app"\nsource = { editable = "." }\n'  # a dynamic version: none locked
    assert python_locked(project) == {}
    compiled = "# uv pip compile\nattrs==25.4.0 \\\n    --hash=sha256:00\n"
    compiled += "rpds-py==0.22.3 ; python_version >= '3.9'\n"
    compiled += "pywin32==306 ; sys_platform == 'win32'\n"  # another platform's line: not here
    assert python_locked(compiled) == {
        "attrs": Locked(frozenset({"25.4.0"})),
        "rpds-py": Locked(frozenset({"0.22.3"})),
    }
    assert python_locked("not a lockfile") == {}


def test_lock_constraints_are_one_version_per_index_package_and_never_an_option(tmp_path: Path) -> None:
    """What the baseline installs under: the lockfiles at the root, forks for this interpreter, one version
    per name; a git entry, a name two lockfiles lock differently, a name or version that would be an option
    or a URL in a constraints file, and a lockfile behind a link are left out."""
    (tmp_path / "uv.lock").write_text(
        UV_LOCK
        + '[[package]]\nname = "cog"\nversion = "0.1"\nsource = { git = "https://x.invalid/cog" }\n'
        + '[[package]]\nname = "--index-url=https://evil.invalid"\nversion = "1"\n'
        + '[[package]]\nname = "bolt"\nversion = "1 --hash=x"\n'
        + '[[package]]\nname = "nut"\nversion = "2.0"\n'
    )
    (tmp_path / "pdm.lock").write_text('[[package]]\nname = "nut"\nversion = "2.1"\n')
    secret = tmp_path / "secret.lock"
    secret.write_text('[[package]]\nname = "secret"\nversion = "9"\n')
    (tmp_path / "poetry.lock").symlink_to(secret)
    pipfile = {  # Pipfile.lock markers hold entries to this interpreter too (the review's reproduction)
        "default": {
            "tomli": {"version": "==1.2.0", "markers": "python_version < '3.11'"},
            "pywin32": {"version": "==306", "markers": "sys_platform == 'win32'"},
        },
        "develop": {"pytest": {"version": "==7.0.0"}},
    }
    (tmp_path / "Pipfile.lock").write_text(json.dumps(pipfile))
    names = ("poetry.lock", "uv.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")
    (tmp_path / "pylock.toml").write_bytes(b'[[packages]]\nname = "caf\xe9"\n')
    lines, read, unread = lock_constraints(tmp_path, names, 10**6)
    assert lines == ["gear-box==1.0.0", "numpy==1.26.4", "pytest==7.0.0"]
    assert read == ["uv.lock", "pdm.lock", "Pipfile.lock"]
    assert unread == ["poetry.lock (symlink in path)", "pylock.toml (not UTF-8)"]  # run.json names them
    too_large = ["uv.lock (file larger than max_file_bytes (100))"]
    assert lock_constraints(tmp_path, ("uv.lock",), 100)[2] == too_large


def test_npm_lockfiles_lock_every_path_and_pin_only_top_level_registry_packages() -> None:
    registry = "https://registry.npmjs.org"
    v3 = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app", "version": "1.0.0"},
            "node_modules/ms": {"version": "2.1.3", "resolved": f"{registry}/ms/-/ms-2.1.3.tgz"},
            "node_modules/@scope/x": {"version": "1.0.0", "resolved": f"{registry}/@scope/x/-/x-1.0.0.tgz"},
            "node_modules/debug/node_modules/ms": {"version": "2.0.0"},
            "node_modules/gearx": {"name": "gear", "version": "1.1.0"},
            "node_modules/sw-cjs": {
                "name": "string-width",
                "version": "4.2.3",
                "resolved": f"{registry}/string-width/-/string-width-4.2.3.tgz",
            },
            "node_modules/g": {"version": "1.0.0", "resolved": "git+ssh://git@x.invalid/g.git#abc"},
            "node_modules/local": {"resolved": "packages/local", "link": True},
            "packages/local": {"version": "0.0.1"},
            "packages/local/node_modules/y": {"version": "0.0.2"},
        },
    }
    assert npm_locked(json.dumps(v3)) == {
        "@scope/x": Locked(frozenset({"1.0.0"})),
        "debug/node_modules/ms": Locked(frozenset({"2.0.0"}), pinnable=False),
        "g": Locked(frozenset({"1.0.0"}), pinnable=False, indexed=False),
        "gearx": Locked(frozenset({"1.1.0"}), pinnable=False),
        "ms": Locked(frozenset({"2.1.3"})),
        "sw-cjs": Locked(frozenset({"4.2.3"}), pinnable=False),  # an alias from the registry: compared
    }
    v1 = {
        "lockfileVersion": 1,
        "dependencies": {"ms": {"version": "2.1.3", "dependencies": {"a": {"version": "1"}}}},
    }
    assert npm_locked(json.dumps(v1)) == {
        "ms": Locked(frozenset({"2.1.3"})),
        "ms/node_modules/a": Locked(frozenset({"1"}), pinnable=False),
    }
    assert npm_locked("[") == {} and npm_locked("[]") == {}


@pytest.mark.parametrize(
    ("ecosystem", "text", "expected"),
    [
        ("python", UV_LOCK, "version 1"),
        ("python", 'version = 1\nrevision = 3\nrequires-python = ">=3.11"\n', "version 1"),  # uv reads any
        (
            "python",
            "# This file is automatically @generated by Poetry 1.8.3 and should not be changed by hand.\n\n"
            '[metadata]\nlock-version = "2.0"\npython-versions = "^3.11"\n',
            "lock-version 2.0",  # the format, not the Poetry that wrote it
        ),
        ("python", "[metadata]\nlock-version = 2.1\n", "lock-version 2.1"),
        ("python", '# @generated by PDM.\n[metadata]\nlock_version = "4.5.0"\n', "lock_version 4.5.0"),
        ("python", 'lock-version = "1.0"\ncreated-by = "uv"\n[[packages]]\nname = "a"\n', "lock-version 1.0"),
        ("python", json.dumps({"_meta": {"pipfile-spec": 6}, "default": {}}), "pipfile-spec 6"),
        ("python", "gear==1.1.0\n    # via widget\n", None),  # a compiled requirements file says none
        ("python", '# no header\n[metadata]\ncontent-hash = "x"\n', None),
        ("npm", json.dumps({"lockfileVersion": 3, "packages": {}}), "lockfileVersion 3"),
        ("npm", json.dumps({"lockfileVersion": 1, "dependencies": {}}), "lockfileVersion 1"),
        ("npm", "[", None),
        # The repository's text: a shape no lock tool writes is no format (never shown as given).
        ("python", '[metadata]\nlock-version = "' + "A" * 3_000 + '"\n', None),
        ("python", '[metadata]\nlock-version = "2.1`\\n/assign @all"\n', None),
        ("python", "[metadata]\nlock-version = {a = 1}\n", None),
        ("python", "version = true\n", None),
        ("python", "version = 1979-05-27T07:32:00Z\n", None),
        ("python", "version = " + "9" * 5_000 + "\n", None),  # past int's digit limit: a ValueError
        ("python", "[" * 100_000, None),  # deeper than the parsers recurse
        ("npm", json.dumps({"lockfileVersion": "3"}), None),
        ("npm", json.dumps({"lockfileVersion": True}), None),
        ("npm", json.dumps({"lockfileVersion": {"a": 1}}), None),
    ],
)
def test_a_lockfile_names_the_format_it_is_written_in(ecosystem: str, text: str, expected: object) -> None:
    assert get_adapter(ecosystem).lock_format(text) == expected


def test_changed_leaves_out_the_package_and_unchanged_entries_and_names_what_was_removed() -> None:
    adapter = get_adapter("python")
    before = UV_LOCK + '\n[[package]]\nname = "acme-sdk"\nversion = "1.4.0"\n'
    before += '\n[[package]]\nname = "six"\nversion = "1.16.0"\n'
    after = (
        UV_LOCK.replace('"1.0.0"', '"1.1.0"').replace('"2.3.0"', '"2.3.1"')
        + '\n[[package]]\nname = "Acme_SDK"\nversion = "2.0.0"\n'
        + '\n[[package]]\nname = "new-dep"\nversion = "0.3"\n'
    )
    changes = changed(adapter, "acme-sdk", before, after)
    assert changes.entries == {
        "gear-box": Locked(frozenset({"1.1.0"})),
        "new-dep": Locked(frozenset({"0.3"})),
    }  # numpy: only the fork for another interpreter moved
    assert changes.removed == ["six"] and changes.unreadable == []
    nothing = changed(adapter, "acme-sdk", after, after)
    assert (nothing.entries, nothing.removed, nothing.unreadable) == ({}, [], [])


def test_a_mismatch_names_the_other_lockfiles_that_lock_the_name_otherwise() -> None:
    """uv.lock holds typing-extensions 4.12.2 while the recompiled test-requirements.txt locks 4.16.0 (the
    referencing corpus case): no one environment holds both, and the reason names both files."""
    canonical = get_adapter("python").versioning.canonical_name
    lock_changes = {
        "uv.lock": Changes(held={"typing-extensions": Locked(frozenset({"4.12.2"}))}),
        "test-requirements.txt": Changes(entries={"Typing_Extensions": Locked(frozenset({"4.16.0"}))}),
        "docs.txt": Changes(entries={"typing-extensions": Locked(frozenset({"4.12.2"}))}),  # agrees
    }
    mismatch = Mismatch("uv.lock", "typing-extensions", ("4.12.2",), "4.16.0")
    named = elsewhere(lock_changes, canonical, mismatch)
    assert named.reason == (
        "uv.lock locks typing-extensions 4.12.2, but the tests ran with typing-extensions 4.16.0: the "
        "lockfile would ship a version no test ran (test-requirements.txt locks 4.16.0: no one environment "
        "holds both)"
    )
    alone = Mismatch("uv.lock", "gear", ("1.0.0",), "1.1.0")
    assert elsewhere(lock_changes, canonical, alone) == alone
    undecidable = Mismatch("uv.lock", "typing-extensions", ("4.12.2",), "4.16.0", "from a git source")
    assert elsewhere(lock_changes, canonical, undecidable) == undecidable


def test_a_changed_entry_no_installer_can_be_given_is_set_apart() -> None:
    """The lockfiles are the repository's (and its tool's) text: a name or version that would be an
    option, a path or a URL on the install's or uninstall's command line never reaches it."""
    adapter = get_adapter("python")
    hostile = '[[package]]\nname = "--index-url=http://x.invalid/"\nversion = "1.0"\n'
    hostile += '[[package]]\nname = "gear"\nversion = "1.0 --pre"\n'
    hostile += '[[package]]\nname = "ok"\nversion = "2.0"\n'
    changes = changed(adapter, "acme-sdk", "", hostile)
    assert changes.entries == {"ok": Locked(frozenset({"2.0"}))}
    assert sorted(changes.unreadable) == ["-index-url=http://x-invalid/ 1.0", "gear 1.0 --pre"]  # canonical
    removed = changed(adapter, "acme-sdk", '[[package]]\nname = "-e ."\nversion = "1"\n', "")
    assert removed.removed == [] and removed.unreadable == ["-e - (no longer locked)"]
    npm = get_adapter("npm")
    lock = {"packages": {"node_modules/-x": {"version": "1.0.0"}, "node_modules/y": {"version": "file:../y"}}}
    assert changed(npm, "acme-sdk", "", json.dumps(lock)).unreadable == ["-x 1.0.0", "y file:../y"]


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


def locked_app(
    tmp_path: Path,
    project_wheels: Path,
    inside: bool = False,
    constraints: str = '["gear<1.2"]',
    imports: str = "import widget",
) -> Path:
    """The app, uv-locked against `project_wheels` (its own find-links, no index) under `constraints`;
    `inside`: a copy of them in the repository (where the lock tool's box sees them without the tool's
    own); `imports`: what its test imports."""
    src = tmp_path / "app-src"
    (src / "tests").mkdir(parents=True)
    if inside:
        shutil.copytree(project_wheels, src / "wheels")
    where = "wheels" if inside else str(project_wheels)
    pyproject = PYPROJECT.replace("{wheels}", where).replace('["gear<1.2"]', constraints)
    (src / "pyproject.toml").write_text(pyproject)
    (src / "tests" / "test_widget.py").write_text(TEST.replace("import widget", imports))
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


def offline(run_codemod: Callable[..., object], repo: Path, tmp_path: Path, wheels: Path) -> Any:
    """The task in tmp_path run on `repo` with `wheels` as the tool's only package source."""
    return run_codemod(repo, tmp_path / "task.yml", "--find-links", str(wheels), "--no-index", packages=False)


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
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '+version = "1.1.0"' in patch and "1.2.0" not in patch, patch  # the project's constraint holds
    assert m["environments"]["after"]["gear"] == "1.1.0", m["environments"]  # and the tests ran on it
    assert m["locked"] == {"uv.lock": {"gear": {"locked": ["1.1.0"], "tested": "1.1.0"}}}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["classification"] == "green"
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    lock_line = "`uv.lock`: refreshed by its own tool (it locked widget ==1.0.0); "
    assert lock_line + "the tests ran on what else it now locks: `gear 1.1.0`" in mr, mr
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
    result = offline(run_codemod, repo, tmp_path, tools)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["environments"]["after"]["gear"] == "1.2.0"
    assert m["locked"] == {"uv.lock": {"gear": {"locked": ["1.1.0"], "tested": "1.2.0"}}}
    reasons = [h["reason"] for h in m["plan"]["requires_human"]]
    assert "uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0" in " ".join(reasons), reasons
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert "uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0" in mr


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_a_locked_pin_the_installer_cannot_get_falls_back_to_the_package_alone_and_is_named(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The baseline holds gear 1.0.0 as locked; the refresh locks gear 1.1.0 from the repository's own
    wheels, which the tool's index lacks (it has 1.0.0 and 1.2.0). The install of widget 2.0.0 with gear
    1.1.0 fails, widget 2.0.0 alone takes gear 1.2.0, and the second try cannot get 1.1.0 either: exit 3
    naming it, never green with the tests on 1.2.0."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0",), widget_1_needs="gear")
    repo = locked_app(tmp_path, project, inside=True)
    wheel(repo / "wheels", "gear", "1.1.0")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "gear 1.1.0"], cwd=repo, check=True)
    tools = tmp_path / "tool-wheels"
    shutil.copytree(project, tools)
    wheel(tools, "gear", "1.2.0")
    result = offline(run_codemod, repo, tmp_path, tools)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["baseline"]["gear"] == "1.0.0", m["environments"]
    asked = [a.partition(" -- ")[2] for a in installs(result)]  # the first try, the fallback, the second
    assert asked == ["widget==2.0.0 gear==1.1.0", "widget==2.0.0", "widget==2.0.0 gear==1.1.0"], asked
    assert m["environments"]["after"]["gear"] == "1.2.0"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    reasons = " ".join(h["reason"] for h in m["plan"]["requires_human"])
    assert "uv.lock locks gear 1.1.0, but the tests ran with gear 1.2.0" in reasons, reasons


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
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert sorted(m["candidate"]["files"]) == ["pyproject.toml", "requirements.txt", "uv.lock"]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_a_forked_entry_is_held_to_the_fork_for_this_interpreter(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """uv.lock forks gear by Python version: 1.1.0 below 3.12 (this interpreter is 3.11), 1.1.5 from 3.12.
    The installer takes 1.1.5; the tests must run 1.1.0 (the reviews' reproductions: first nothing
    compared a fork, then any fork's version passed; both exit 0 with 1.1.5)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0", "1.1.0", "1.1.5"))
    forked = "[\"gear<1.1.5; python_version < '3.12'\", \"gear>=1.1.5; python_version >= '3.12'\"]"
    repo = locked_app(tmp_path, project, constraints=forked)
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    patch = result.artifact("changes.patch").read_text()  # type: ignore[attr-defined]
    assert '+version = "1.1.0"' in patch and '+version = "1.1.5"' in patch, patch  # both forks locked
    assert m["locked"] == {"uv.lock": {"gear": {"locked": ["1.1.0"], "tested": "1.1.0"}}}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert installs(result)[-1].endswith("gear==1.1.0"), installs(result)


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_what_the_lockfile_no_longer_locks_is_uninstalled_before_the_tests(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """widget 1.0.0 requires cog, widget 2.0.0 does not, and the app imports cog without declaring it: the
    shipped uv.lock has no cog, so the tests must not have it either (before: they did, exit 0)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0",))
    (project / "widget-1.0.0-py3-none-any.whl").unlink()
    wheel(project, "widget", "1.0.0", ("cog",))
    wheel(project, "cog", "1.0.0")
    repo = locked_app(tmp_path, project, imports="import cog\nimport widget")
    assert 'name = "cog"' in (repo / "uv.lock").read_text()
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["baseline"]["cog"] == "1.0.0" and "cog" not in m["environments"]["after"]
    assert m["locked"]["uv.lock"]["cog"] == {"locked": [], "tested": None}
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "tests fail after the bump" in m["reason"], m["reason"]  # ModuleNotFoundError: cog


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_a_local_build_is_not_the_locked_public_version(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The tool's index has gear 1.1.0+cu999, not the locked 1.1.0: PEP 440 lets `==1.1.0` take the local
    build, the lock check does not (the review's reproduction: before, exit 0)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0", "1.2.0"))
    tools = tmp_path / "tool-wheels"
    shutil.copytree(project, tools, ignore=shutil.ignore_patterns("gear-1.1.0-*"))
    wheel(tools, "gear", "1.1.0+cu999")
    repo = locked_app(tmp_path, project, inside=True)
    result = offline(run_codemod, repo, tmp_path, tools)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["after"]["gear"] == "1.1.0+cu999"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert "the tests ran on what else" not in mr


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_the_baseline_installs_what_the_lockfile_locks_not_the_newest_release(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """uv.lock was written when gear 1.0.0 was the newest; gear 1.1.0 came out since. The repository ships
    gear 1.0.0, so its baseline tests that (before: the install took 1.1.0, newest its ranges admit, and
    every version the lock check did not touch was tested other than shipped)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0",), widget_1_needs="gear")
    repo = locked_app(tmp_path, project)
    wheel(project, "gear", "1.1.0")  # released after the lock
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["baseline"]["gear"] == "1.0.0", m["environments"]
    assert m["installs"]["baseline"]["locked"].startswith("uv.lock: "), m["installs"]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["locked"] == {"uv.lock": {"gear": {"locked": ["1.1.0"], "tested": "1.1.0"}}}


def custom_app(
    tmp_path: Path,
    project_wheels: Path,
    pyproject: str = PYPROJECT,
    extra: dict[str, str] | None = None,
    after_lock: Callable[[Path], None] | None = None,
    task: str = TASK,
    inside: bool = False,
) -> Path:
    """locked_app with its own pyproject.toml, extra files and a hook run after `uv lock`; `inside` as
    there (the wheels in the repository, where the lock tool's box sees them)."""
    src = tmp_path / "app-src"
    (src / "tests").mkdir(parents=True)
    if inside:
        shutil.copytree(project_wheels, src / "wheels")
    where = "wheels" if inside else str(project_wheels)
    (src / "pyproject.toml").write_text(pyproject.replace("{wheels}", where))
    (src / "tests" / "test_widget.py").write_text(TEST)
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([str(UV), "lock", "--quiet"], cwd=src, env=env, check=True)
    for rel, content in (extra or {}).items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(content)
    if after_lock:
        after_lock(src)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(task)
    return repo


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_an_unchanged_entry_the_bump_pulls_in_is_tested_as_the_lockfile_ships_it(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """uv.lock locks gear 1.0.0 for the docs extra (the tests do not install it); gear 1.1.0 is released
    after the lock; widget 2.0.0 requires gear. The refresh keeps gear 1.0.0 (unchanged), the install takes
    1.1.0; the lock check holds it to 1.0.0 (the review's reproduction: exit 0 with the tests on gear
    1.1.0, and nothing in the MR or run.json said so)."""
    project = tmp_path / "wheels"
    shutil.copytree(wheels, project, ignore=shutil.ignore_patterns("acme_sdk-*"))
    wheel(project, "widget", "1.0.0")
    wheel(project, "widget", "2.0.0", ("gear",))
    wheel(project, "gear", "1.0.0")
    pyproject = PYPROJECT.replace('test = ["pytest"]', 'test = ["pytest"]\ndocs = ["gear"]')
    repo = custom_app(tmp_path, project, pyproject)
    wheel(project, "gear", "1.1.0")  # released after the lock
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert "gear" not in m["environments"]["baseline"]
    assert m["environments"]["after"]["gear"] == "1.0.0", m["environments"]
    assert m["locked"] == {"uv.lock": {"gear": {"locked": ["1.0.0"], "tested": "1.0.0"}}}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_an_entry_an_override_holds_below_what_the_package_needs_is_a_human_item(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """[tool.uv] override-dependencies = ["gear==1.0.0"]: uv.lock keeps gear 1.0.0 through the refresh,
    though widget 2.0.0 requires gear>=1.1, which the installer (no project config) honours. No install
    has both: exit 3 naming it (the review's reproduction: exit 0, the tests on gear 1.1.0)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0", "1.1.0"), widget_1_needs="gear")
    overridden = PYPROJECT.replace(
        'constraint-dependencies = ["gear<1.2"]', 'override-dependencies = ["gear==1.0.0"]'
    )
    repo = custom_app(tmp_path, project, overridden)
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["baseline"]["gear"] == "1.0.0"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    reasons = " ".join(h["reason"] for h in m["plan"]["requires_human"])
    assert "uv.lock locks gear 1.0.0, but the tests ran with gear 1.1.0" in reasons, reasons


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_a_folder_named_like_the_constraints_file_is_replaced_in_the_copy(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """The repository has a folder `.agentic-codemod-locked.txt/` (the review's reproduction: exit 1,
    IsADirectoryError)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0",))
    repo = custom_app(tmp_path, project, extra={".agentic-codemod-locked.txt/keep": "x\n"})
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert (repo / ".agentic-codemod-locked.txt" / "keep").read_text() == "x\n"  # the clone untouched
    assert "locked" not in m["installs"]["after"], m["installs"]  # the after install takes no -c
    assert m["installs"]["baseline"]["locked"].startswith("uv.lock: ")


@pytest.mark.slow
@needs_uv
@needs_bwrap
@pytest.mark.parametrize("how", ["gone-from-index", "no-wheel-for-this-python", "from-above-lock"])
def test_a_lock_the_baseline_cannot_install_is_named_in_the_reason(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], how: str
) -> None:
    """uv.lock locks gear 1.0.0. gone-from-index: the index has only gear 1.1.0 now; no-wheel-for-this-
    python: gear 1.0.0 only for CPython 3.8 (numpy locked by Poetry for python ^3.8, the tool on 3.12);
    from-above-lock: the task's from is >=1.5,<2, the repository ships widget 1.0.0. Exit 3 naming the
    lockfile (the review's reproduction: the resolver's text alone, as if widget required gear==1.0.0)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0",), widget_1_needs="gear")
    task = TASK.replace('from: ">=1,<2"', 'from: ">=1.5,<2"') if how == "from-above-lock" else TASK
    repo = custom_app(tmp_path, project, task=task)
    if how != "from-above-lock":
        (project / "gear-1.0.0-py3-none-any.whl").unlink()
        wheel(project, "gear", "1.1.0")
    if how == "no-wheel-for-this-python":
        wheel(project, "gear", "1.0.0")
        (project / "gear-1.0.0-py3-none-any.whl").rename(
            project / "gear-1.0.0-cp38-cp38-manylinux1_x86_64.whl"
        )
    if how == "from-above-lock":
        wheel(project, "widget", "1.5.0", ("gear",))
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    reason = m["reason"]
    assert reason.startswith("cannot install the repository's dependencies with widget>=1"), reason
    assert ", under the versions locked by uv.lock for verification (uv.lock may lock a version" in reason
    assert m["installs"]["baseline"]["locked"].startswith("uv.lock: "), m["installs"]


COMPILED_TASK = TASK.replace('"uv.lock"]', '"uv.lock", "test-requirements.txt", "docs-requirements.txt"]')


@pytest.mark.slow
@needs_uv
@needs_bwrap
@pytest.mark.parametrize("files", [("test", "docs"), ("docs",)], ids=["test-and-docs", "docs-only"])
def test_unchanged_pins_of_a_file_the_environment_is_not_installed_from_are_left_alone(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], files: tuple[str, ...]
) -> None:
    """docs-requirements.txt (compiled, never installed) pins gear 1.0.0; test-requirements.txt (the test
    source) gear 1.1.0; the recompile after the bump leaves both pins. Only lockfiles the baseline was
    installed under hold unchanged entries (the review's reproductions: exit 3 on the two files' gear, or,
    with docs alone, exit 0 with the after environment moved to gear 1.0.0 without a word)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.0.0", "1.1.0"), widget_1_needs="gear")
    (project / "widget-2.0.0-py3-none-any.whl").unlink()
    wheel(project, "widget", "2.0.0", ("gear",))
    pins = {"test": "widget==1.0.0\npytest\n", "docs": "widget==1.0.0\ngear==1.0.0\n"}
    inputs = {"test": "widget\npytest\n", "docs": "widget\ngear\n"}

    def compile_files(src: Path) -> None:
        env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
        for stem in files:
            (src / f"{stem}-requirements.in").write_text(pins[stem])
            header = f"uv pip compile --output-file {stem}-requirements.txt {stem}-requirements.in"
            out = [
                "-o",
                f"{stem}-requirements.txt",
                f"{stem}-requirements.in",
                "--custom-compile-command",
                header,
            ]
            argv = [str(UV), "pip", "compile", "-q", "--no-index", "--find-links", str(project), *out]
            subprocess.run(argv, cwd=src, env=env, check=True)
            (src / f"{stem}-requirements.in").write_text(inputs[stem])

    repo = custom_app(tmp_path, project, after_lock=compile_files, task=COMPILED_TASK)
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    envs = m["environments"]
    assert envs["after"]["gear"] == envs["baseline"]["gear"] == "1.1.0", envs
    assert "docs-requirements.txt" not in m["locked"], m["locked"]


@pytest.mark.slow
@needs_uv
@needs_bwrap
@pytest.mark.parametrize("on_index", [True, False], ids=["on-the-index", "not-on-the-index"])
def test_an_entry_the_baseline_holds_at_another_version_than_locked_is_left_as_the_baseline_has_it(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], on_index: bool
) -> None:
    """uv.lock locks setuptools 99.0.0 for a docs extra the tests do not install; both environments hold
    the venv seed's setuptools, which the bump does not touch (the review's reproductions: the after
    environment alone moved to 99.0.0, exit 0; or, without it on the index, exit 3 blaming the bump)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0",))
    wheel(project, "setuptools", "99.0.0")
    pyproject = PYPROJECT.replace('test = ["pytest"]', 'test = ["pytest"]\ndocs = ["setuptools"]')
    repo = custom_app(tmp_path, project, pyproject, inside=True)
    assert 'name = "setuptools"\nversion = "99.0.0"' in (repo / "uv.lock").read_text()
    index = tmp_path / "index-wheels"
    shutil.copytree(project, index, ignore=None if on_index else shutil.ignore_patterns("setuptools-*"))
    result = offline(run_codemod, repo, tmp_path, index)
    m = result.manifest  # type: ignore[attr-defined]
    envs = m["environments"]
    seeded = envs["baseline"]["setuptools"]
    assert seeded != "99.0.0" and envs["after"]["setuptools"] == seeded, envs
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]


needs_poetry = pytest.mark.skipif(POETRY_MISSING, reason="poetry is not beside python (the lock extra)")
POETRY_DEPENDENCIES = PYPROJECT.split("[tool.uv]")[0]  # widget in dependencies, pytest in the test extra
POETRY_EXTRA = POETRY_DEPENDENCIES.replace('["widget>=1,<2"]', "[]").replace(
    'test = ["pytest"]', 'test = ["pytest", "widget>=1,<2"]'
)


def poetry_app(
    tmp_path: Path, pyproject: str, url: str, lock_version: str = "", generated_by: str = ""
) -> Path:
    """The app, Poetry-locked against the loopback index `url`; `lock_version` "2.0": its poetry.lock
    rewritten as Poetry 1.8.3 wrote it (its header, no per-package groups or markers); `generated_by`:
    the Poetry version its header names."""
    src = tmp_path / "app-src"
    (src / "tests").mkdir(parents=True)
    (src / "pyproject.toml").write_text(pyproject + poetry_source(url))
    (src / "tests" / "test_widget.py").write_text(TEST)
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    env["POETRY_CACHE_DIR"] = str(tmp_path / "poetry-cache")
    done = subprocess.run([str(POETRY), "lock"], cwd=src, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    lock = (src / "poetry.lock").read_text()
    assert python_locked(lock)["widget"].versions == {"1.0.0"}
    if lock_version:
        lines = [line for line in lock.splitlines() if not line.startswith(("groups = ", "markers = "))]
        old = "\n".join(lines).replace('lock-version = "2.1"', f'lock-version = "{lock_version}"')
        old = re.sub(r"@generated by Poetry \S+", "@generated by Poetry 1.8.3", old, count=1)
        (src / "poetry.lock").write_text(old + "\n")
    if generated_by:
        lock = (src / "poetry.lock").read_text()
        (src / "poetry.lock").write_text(re.sub(r"(@generated by Poetry )\S+", rf"\g<1>{generated_by}", lock))
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(TASK.replace('"uv.lock"', '"poetry.lock"'))
    return repo


def poetry_wheels(dest: Path, wheels: Path) -> Path:
    """widget 1.0.0, 2.0.0 and 2.1.0 (both require gear>=1.1), gear 1.1.0 and 1.2.0, which requires Python
    <3.13: Poetry locks for the project's whole requires-python range (>=3.11), so it locks gear 1.1.0,
    while an installer on this interpreter (3.11) takes 1.2.0."""
    project = gear_wheels(dest, wheels, ("1.1.0",))
    wheel(project, "gear", "1.2.0", requires_python="<3.13")
    wheel(project, "widget", "2.1.0", ("gear>=1.1",))
    wheel(project, "colorama", "0.4.6")  # Poetry locks for every platform: pytest needs it on Windows
    return project


@pytest.mark.slow
@needs_bwrap
@needs_poetry
@pytest.mark.parametrize("pyproject", [POETRY_DEPENDENCIES, POETRY_EXTRA], ids=["dependencies", "test-extra"])
def test_a_real_poetry_lock_is_refreshed_to_exactly_the_target_and_tested_as_locked(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object], pyproject: str
) -> None:
    """A Poetry project's poetry.lock, refreshed by the real Poetry in the sandbox against the project's
    own index (HTTP on loopback): the bumped range `>=2.0.0,<3` admits widget 2.1.0, which Poetry alone
    would lock; the candidate locks the target 2.0.0 (before: 2.1.0, and the run ended 3 on a stale lock),
    and the gear Poetry locked with it (1.1.0, not the installer's 1.2.0) is what the tests ran. With
    widget in the test extra, Poetry marks the entries `extra == "test"`: they are still the lock's (the
    review's reproduction: dropped, and the run ended 0 having tested gear 1.2.0)."""
    with simple_index(poetry_wheels(tmp_path / "wheels", wheels), tmp_path / "index") as url:
        repo = poetry_app(tmp_path, pyproject, url, generated_by="2.1.3")
        result = run_codemod(repo, tmp_path / "task.yml", "--index-url", url, packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert sorted(m["candidate"]["files"]) == ["poetry.lock", "pyproject.toml"]
    patch = result.artifact("changes.patch")  # type: ignore[attr-defined]
    subprocess.run(["git", "apply", str(patch)], cwd=repo, check=True)
    shipped = python_locked((repo / "poetry.lock").read_text())
    assert shipped["widget"].versions == {"2.0.0"} and shipped["gear"].versions == {"1.1.0"}
    assert '"widget>=2.0.0,<3"' in (repo / "pyproject.toml").read_text()
    assert m["environments"]["after"]["widget"] == "2.0.0"
    assert m["locked"] == {"poetry.lock": {"gear": {"locked": ["1.1.0"], "tested": "1.1.0"}}}
    assert m["lock_formats"] == {}  # Poetry 2.1.3 wrote it, 2.5 rewrote it in the same format: nothing to say


@pytest.mark.slow
@needs_bwrap
@needs_poetry
def test_a_poetry_1_lockfile_rewritten_by_poetry_2_keeps_what_both_lock(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """A poetry.lock Poetry 1 wrote (lock-version 2.0: no per-package markers) comes back from Poetry 2
    with `extra == "test"` on pytest and its dependencies: both lock them (the review's reproduction:
    read as no longer locked, uninstalled before the tests, exit 3 blaming the repository)."""
    with simple_index(poetry_wheels(tmp_path / "wheels", wheels), tmp_path / "index") as url:
        repo = poetry_app(tmp_path, POETRY_DEPENDENCIES, url, lock_version="2.0")
        result = run_codemod(repo, tmp_path / "task.yml", "--index-url", url, packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert "pytest" in m["environments"]["after"], m["environments"]["after"]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    # A team still on Poetry 1 may see warnings: run.json and the MR say what format it is in now.
    assert m["lock_formats"] == {"poetry.lock": {"before": "lock-version 2.0", "after": "lock-version 2.1"}}
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert (
        "`poetry.lock`: rewritten by its lock tool in `lock-version 2.1` (was `lock-version 2.0`); older "
        "versions of that tool may warn about it or not read it fully" in mr
    ), mr


# --- npm ------------------------------------------------------------------------------------------------

NPM_TEST = """const test = require("node:test");
const assert = require("node:assert");
const sdk = require("acme-sdk");
test.it("knows its version", () => { assert.match(sdk.VERSION, /^[12]\\./); });
"""
NPM_TASK = """\
id: npm-2
title: Bump acme-sdk to 2.0.0
sdk: {name: acme-sdk, ecosystem: npm, from: "^1.0.0", to: "2.0.0"}
allowed_paths: ["package.json", "package-lock.json"]
acceptance_criteria:
  - "the tests pass on acme-sdk 2.0.0"
"""
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def npm_package(packages: Path, name: str, version: str, deps: dict[str, str] | None = None) -> None:
    """A package of the fixture registry (fixtures/npm-registry/serve.py)."""
    folder = packages / name / version
    folder.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, object] = {"name": name, "version": version, "main": "index.js", "license": "MIT"}
    if deps:
        manifest["dependencies"] = deps
    (folder / "package.json").write_text(json.dumps(manifest))
    (folder / "index.js").write_text(f'module.exports = {{ VERSION: "{version}" }};\n')


@pytest.fixture
def registry_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fixture registry serving tmp_path/packages (empty at first), for npm here and in the sandbox."""
    packages = tmp_path / "packages"
    packages.mkdir()
    with npm_registry(tmp_path, monkeypatch, packages):
        yield packages


def npm_app(tmp_path: Path, deps: dict[str, str]) -> Path:
    src = tmp_path / "app-src"
    (src / "test").mkdir(parents=True)
    manifest = {"name": "app", "version": "1.0.0", "scripts": {"test": "node --test"}, "dependencies": deps}
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (src / "test" / "v.test.js").write_text(NPM_TEST)
    subprocess.run(["npm", "install", "--package-lock-only", "--ignore-scripts", "-q"], cwd=src, check=True)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(NPM_TASK)
    return repo


def published_before_the_install(
    monkeypatch: pytest.MonkeyPatch, packages: Path, cache: Path, *versions: tuple[str, str]
) -> None:
    """Publish `versions` between the lockfile's refresh and the after environment's install (the
    registry moves on, and neither the caller's npm cache nor the run's install cache, which the bump's
    install reads first, still holds the documents the refresh read): the installer then picks newer
    versions than the lock tool did."""
    real = environments.install_target

    def later(state: RunState) -> object:
        for name, version in versions:
            npm_package(packages, name, version)
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(sandbox.install_cache_of(state.paths.run_dir / "env"), ignore_errors=True)
        return real(state)

    monkeypatch.setattr(environments, "install_target", later)


@pytest.mark.slow
@needs_npm
@needs_bwrap
def test_npm_a_nested_copy_is_tested_as_the_refresh_locked_it_whatever_the_registry_published_since(
    tmp_path: Path,
    registry_packages: Path,
    run_codemod: Callable[..., object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """acme-sdk 2.0.0 needs gear ^1.1.0 while the app pins gear 1.0.0: the refresh nests gear 1.1.0 under
    acme-sdk; gear 1.2.0 is out by the install. The bump's install reads the candidate's refreshed
    lockfile (ENV/project's), so npm installs the nested copy it locks, and the comparison says so (the
    review's reproduction, before: nested copies were never compared, exit 0 on gear 1.2.0; then, with
    the baseline's lockfile in ENV/project, gear 1.2.0 was installed and a human item)."""
    for version in ("1.0.0", "1.1.0"):
        npm_package(registry_packages, "acme-sdk", version)
        npm_package(registry_packages, "gear", version)
    npm_package(registry_packages, "acme-sdk", "2.0.0", {"gear": "^1.1.0"})
    repo = npm_app(tmp_path, {"acme-sdk": "^1.0.0", "gear": "1.0.0"})
    published_before_the_install(monkeypatch, registry_packages, tmp_path / "npm-cache", ("gear", "1.2.0"))
    result = run_codemod(repo, tmp_path / "task.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    nested = "acme-sdk/node_modules/gear"
    assert m["environments"]["after"][nested] == "1.1.0" and m["environments"]["after"]["gear"] == "1.0.0"
    assert m["locked"]["package-lock.json"][nested] == {"locked": ["1.1.0"], "tested": "1.1.0"}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert not any("gear@" in argv for argv in installs(result))  # a nested copy is never pinned


@pytest.mark.slow
@needs_npm
@needs_bwrap
def test_npm_an_alias_is_never_pinned_as_the_registry_package_of_its_folders_name(
    tmp_path: Path,
    registry_packages: Path,
    run_codemod: Callable[..., object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """acme-sdk 2.0.0 depends on gearx = npm:gear@^1.1.0, and the registry also has an unrelated `gearx`
    (the review's reproduction: before, `gearx@1.1.0` was installed, the impostor, exit 0). gear 1.2.0 is
    out by the install: npm installs the alias as the refreshed lockfile locks it, gear 1.1.0."""
    for version in ("1.0.0", "1.1.0"):
        npm_package(registry_packages, "acme-sdk", version)
        npm_package(registry_packages, "gear", version)
    npm_package(registry_packages, "acme-sdk", "2.0.0", {"gearx": "npm:gear@^1.1.0"})
    npm_package(registry_packages, "gearx", "1.1.0")  # someone else's package
    repo = npm_app(tmp_path, {"acme-sdk": "^1.0.0"})
    published_before_the_install(monkeypatch, registry_packages, tmp_path / "npm-cache", ("gear", "1.2.0"))
    result = run_codemod(repo, tmp_path / "task.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert not any("gearx@" in argv for argv in installs(result)), installs(result)
    assert m["locked"]["package-lock.json"]["gearx"] == {"locked": ["1.1.0"], "tested": "1.1.0"}
    after = result.run_dir / "env-after"  # type: ignore[attr-defined]
    installed = (after if after.is_dir() else result.run_dir / "env") / "project/node_modules/gearx"  # type: ignore[attr-defined]
    assert json.loads((installed / "package.json").read_text())["name"] == "gear"  # not the impostor
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]


@pytest.mark.slow
@needs_npm
@needs_bwrap
def test_npm_what_the_bump_pulls_in_is_installed_as_the_refresh_locked_it(
    tmp_path: Path,
    registry_packages: Path,
    run_codemod: Callable[..., object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """acme-sdk 2.0.0 needs gear ^1.1.0 (the refresh moves gear 1.0.0 to 1.1.0, pinned) and brings in cog,
    locked at 1.0.0 by the refresh; cog 1.1.0 is out by the install. Before, with the baseline's lockfile
    in ENV/project, npm took cog 1.1.0 and a second install pinned it back (repeating the first's pins,
    which npm forgets after a `--no-save` install). Now the bump's install reads the candidate's refreshed
    lockfile: one install, cog as locked."""
    for version in ("1.0.0", "1.1.0"):
        npm_package(registry_packages, "acme-sdk", version)
    npm_package(registry_packages, "gear", "1.0.0")
    repo = npm_app(tmp_path, {"acme-sdk": "^1.0.0", "gear": "^1.0.0"})  # locks gear 1.0.0
    npm_package(registry_packages, "gear", "1.1.0")
    npm_package(registry_packages, "cog", "1.0.0")
    npm_package(registry_packages, "acme-sdk", "2.0.0", {"gear": "^1.1.0", "cog": "^1.0.0"})
    shutil.rmtree(tmp_path / "npm-cache", ignore_errors=True)
    published_before_the_install(monkeypatch, registry_packages, tmp_path / "npm-cache", ("cog", "1.1.0"))
    result = run_codemod(repo, tmp_path / "task.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    [bump] = installs(result)
    assert "acme-sdk@2.0.0" in bump and "gear@1.1.0" in bump, bump
    assert m["environments"]["after"]["gear"] == "1.1.0" and m["environments"]["after"]["cog"] == "1.0.0"
    assert m["locked"]["package-lock.json"]["cog"] == {"locked": ["1.0.0"], "tested": "1.0.0"}
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]


@pytest.mark.slow
@needs_npm
@needs_bwrap
def test_npm_what_the_refresh_no_longer_locks_is_gone_and_the_target_stays(
    tmp_path: Path, registry_packages: Path, run_codemod: Callable[..., object]
) -> None:
    """acme-sdk 1.0.0 needs left-pad; 2.0.0 does not, so the refreshed lockfile drops it: the after
    environment holds the target alone (npm prunes what nothing needs any more), and the comparison says
    left-pad is neither locked nor tested."""
    npm_package(registry_packages, "left-pad", "1.0.0")
    npm_package(registry_packages, "acme-sdk", "1.0.0", {"left-pad": "^1.0.0"})
    npm_package(registry_packages, "acme-sdk", "2.0.0")
    repo = npm_app(tmp_path, {"acme-sdk": "^1.0.0"})
    result = run_codemod(repo, tmp_path / "task.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    assert m["environments"]["baseline"] == {"acme-sdk": "1.0.0", "left-pad": "1.0.0"}
    assert m["environments"]["after"] == {"acme-sdk": "2.0.0"}
    assert m["locked"]["package-lock.json"]["left-pad"] == {"locked": [], "tested": None}


@pytest.mark.slow
@needs_npm
@needs_bwrap
def test_npm_scoped_names_reach_the_mr_inside_code_spans(
    tmp_path: Path, registry_packages: Path, run_codemod: Callable[..., object]
) -> None:
    """`@all/cog` written bare in the MR would notify every member of the project on GitLab."""
    for version in ("1.0.0", "1.1.0"):
        npm_package(registry_packages, "acme-sdk", version)
    npm_package(registry_packages, "acme-sdk", "2.0.0", {"@all/cog": "^1.0.0"})
    npm_package(registry_packages, "@all/cog", "1.0.0")
    repo = npm_app(tmp_path, {"acme-sdk": "^1.0.0"})
    result = run_codemod(repo, tmp_path / "task.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 0, m["reason"]  # type: ignore[attr-defined]
    mr = result.artifact("merge_request.md").read_text()  # type: ignore[attr-defined]
    assert "the tests ran on what else it now locks: `@all/cog 1.0.0`" in mr, mr
    assert "@all" not in re.sub(r"`[^`]*`", "", mr)


@pytest.mark.slow
@needs_uv
@needs_bwrap
def test_an_entry_from_a_path_source_is_a_human_whatever_its_version(
    tmp_path: Path, wheels: Path, run_codemod: Callable[..., object]
) -> None:
    """uv.lock locks gear 1.1.0 from a wheel in the repository ([tool.uv.sources]), another gear 1.1.0 than
    the index's the tests ran (the review's reproduction: compared by version only, exit 0)."""
    project = gear_wheels(tmp_path / "wheels", wheels, ("1.1.0",))
    vendored = tmp_path / "vendored"
    vendored.mkdir()
    wheel(vendored, "gear", "1.1.0", ("cog",))  # not the index's gear 1.1.0
    wheel(project, "cog", "1.0.0")
    src = tmp_path / "app-src"
    (src / "tests").mkdir(parents=True)
    (src / "vendor").mkdir()
    shutil.copy(vendored / "gear-1.1.0-py3-none-any.whl", src / "vendor")
    sources = '\n[tool.uv.sources]\ngear = { path = "vendor/gear-1.1.0-py3-none-any.whl" }\n'
    (src / "pyproject.toml").write_text(PYPROJECT.replace("{wheels}", str(project)) + sources)
    (src / "tests" / "test_widget.py").write_text(TEST)
    env = {**os.environ, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    subprocess.run([str(UV), "lock", "--quiet"], cwd=src, env=env, check=True)
    repo = tmp_path / "app"
    materialize.materialize(src, repo)
    (tmp_path / "task.yml").write_text(TASK)
    result = offline(run_codemod, repo, tmp_path, project)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["environments"]["after"]["gear"] == "1.1.0"
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    reasons = " ".join(h["reason"] for h in m["plan"]["requires_human"])
    assert "uv.lock locks gear 1.1.0 from a git, path or URL source" in reasons, reasons
