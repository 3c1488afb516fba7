"""The bump plan: which declarations are bumped, by role and range strategy (pure: no repository)."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_codemod.models import Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.declarations import pending


def sdk(**extra: Any) -> SdkSpec:
    return SdkSpec.model_validate(
        {"name": "acme-sdk", "ecosystem": "python", "from": ">=1,<2", "to": "2.0.0", **extra}
    )


def dep(specifier: str, file: str = "setup.py", role: str = "runtime", **extra: Any) -> Dependency:
    return Dependency(
        name="acme-sdk", specifier=specifier, file=file, kind="setup.py", line=3, role=role, **extra
    )


def test_runtime_is_bumped_and_the_minimum_pin_file_stays_unless_the_task_names_it() -> None:
    runtime, minimum = dep(">=1.2"), dep("==1.2.0", "requirements/tests-min.txt", "constraint")
    assert [d.file for d in pending(sdk(), [runtime, minimum])] == ["setup.py"]
    named = sdk(also_bump=["./requirements/tests-min.txt"])
    assert [d.file for d in pending(named, [runtime, minimum])] == ["setup.py", "requirements/tests-min.txt"]


def test_lock_entries_and_computed_or_unversioned_declarations_are_never_edited() -> None:
    declarations = [
        dep("==1.4.0", "uv.lock", "lock"),
        dep("", uneditable="setup.py line 3: install_requires is computed (x)"),
        dep(""),
    ]
    assert pending(sdk(also_bump=["uv.lock"]), declarations) == []


@pytest.mark.parametrize(
    ("strategy", "specifier", "bumped"),
    [
        ("auto", ">=1.2", True),  # still admits from: the floor moves
        ("bump", ">=1.2,<3", True),
        ("replace", ">=1.2", False),  # admits to: left alone
        ("widen", ">=1.2,<2", True),
        ("widen", ">=1.2,<3", False),
        ("pin", ">=2.0.0", True),
        ("pin", "==2.0.0", False),
        ("auto", ">=2.0.0,<3", False),
    ],
)
def test_range_strategy_decides_what_is_pending(strategy: str, specifier: str, bumped: bool) -> None:
    found = pending(sdk(range_strategy=strategy), [dep(specifier)])
    assert bool(found) is bumped
    assert all(d.range_strategy == strategy for d in found)


def test_task_fields_are_checked() -> None:
    with pytest.raises(ValueError, match="range_strategy"):
        sdk(range_strategy="lockfile-only")
    with pytest.raises(ValueError, match="not a Python import name"):
        sdk(import_names=["acme-sdk"])
    with pytest.raises(ValueError, match="escapes"):
        sdk(also_bump=["../outside.txt"])


def test_stale_locks_are_the_repositorys_lock_entries_off_the_target(tmp_path) -> None:
    """Read from a real package-lock.json: the root's and a workspace's copy are the repository's; another
    package's nested copy is that package's range, never a stale lock of this bump."""
    import json

    from agentic_codemod.adapters.npm.extract import extract_dependencies
    from agentic_codemod.workflow.declarations import stale_locks

    lock = {
        "name": "app",
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app", "dependencies": {"acme-sdk": "^2.0.0"}},
            "node_modules/acme-sdk": {"version": "2.0.0"},
            "node_modules/old-lib/node_modules/acme-sdk": {"version": "1.4.0"},
            "packages/web/node_modules/acme-sdk": {"version": "2.1.0"},
        },
    }
    (tmp_path / "package-lock.json").write_text(json.dumps(lock, indent=2))
    found = extract_dependencies(tmp_path, ["package-lock.json"], "acme-sdk")
    assert len(found) == 3
    npm = sdk(ecosystem="npm", **{"from": "^1.0.0"})
    assert [d.section for d in stale_locks(npm, found)] == ["packages/web/node_modules/acme-sdk"]
    python = [dep("==2.0.0", "uv.lock", "lock"), dep("==1.4.0", "requirements/docs.txt", "lock"), dep(">=2")]
    assert [d.file for d in stale_locks(sdk(), python)] == ["requirements/docs.txt"]


def test_a_nested_copy_on_an_old_version_neither_blocks_nor_decides_when_the_root_is_on_the_target(
    tmp_path,
) -> None:
    """The repository already locks the target at its root; another package keeps its own older copy.
    The plan neither stops for a human nor counts that copy among the declarations that decide."""
    import json

    from agentic_codemod.adapters.npm.extract import extract_dependencies
    from agentic_codemod.workflow.declarations import deciding, doubts

    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app", "dependencies": {"acme-sdk": "2.0.0"}},
            "node_modules/acme-sdk": {"version": "2.0.0"},
            "node_modules/old-lib/node_modules/acme-sdk": {"version": "1.4.0"},
        },
    }
    (tmp_path / "package-lock.json").write_text(json.dumps(lock, indent=2))
    (tmp_path / "package.json").write_text(json.dumps({"name": "app", "dependencies": {"acme-sdk": "2.0.0"}}))
    found = extract_dependencies(tmp_path, ["package.json", "package-lock.json"], "acme-sdk")
    npm = sdk(ecosystem="npm", **{"from": "^1.0.0"})
    assert pending(npm, found) == []
    assert [d.section for d in deciding(npm, found) if d.role == "lock"] == ["node_modules/acme-sdk"]
    assert doubts(npm, found) == []


def test_a_lockfile_with_only_another_packages_copy_still_proves_nothing(tmp_path) -> None:
    """No copy of the repository's own at the root, only a nested one on 1.4.0: what the lock installs
    for the repository is unknown, so the run cannot end nothing_to_do on package.json's word alone."""
    import json

    from agentic_codemod.adapters.npm.extract import extract_dependencies
    from agentic_codemod.workflow.declarations import doubts, stale_locks

    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app", "dependencies": {"acme-sdk": "2.0.0"}},
            "node_modules/old-lib/node_modules/acme-sdk": {"version": "1.4.0"},
        },
    }
    (tmp_path / "package-lock.json").write_text(json.dumps(lock, indent=2))
    (tmp_path / "package.json").write_text(json.dumps({"name": "app", "dependencies": {"acme-sdk": "2.0.0"}}))
    found = extract_dependencies(tmp_path, ["package.json", "package-lock.json"], "acme-sdk")
    npm = sdk(ecosystem="npm", **{"from": "^1.0.0"})
    assert any("does not admit 2.0.0" in d for d in doubts(npm, found))
    assert [d.section for d in stale_locks(npm, found)] == ["node_modules/old-lib/node_modules/acme-sdk"]
