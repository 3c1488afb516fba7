"""What npm installs under a name decides, not the name: `npm:` aliases both ways, lock entries whose
tarball is another version, workspace globs and links npm reads otherwise than Path.glob, and copies of
the SDK committed in a node_modules folder (red-team review: each ended exit 0 on a wrong change)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agentic_codemod.adapters.npm import ADAPTER, lockfile, package_json
from agentic_codemod.errors import InputError, RequiresHuman
from agentic_codemod.models import Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.declarations import doubts, pending, pending_declarations

REGISTRY = "https://registry.npmjs.org"


def npm_sdk(to: str = "1.1.0", from_: str = ">=1.0.0 <1.1.0") -> SdkSpec:
    return SdkSpec.model_validate({"name": "acme-sdk", "ecosystem": "npm", "from": from_, "to": to})


def write(root: Path, files: dict[str, Any]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
        (root / name).write_text(text, encoding="utf-8")
    return root


def declarations(root: Path) -> list[Dependency]:
    return ADAPTER.extract_dependencies(root, ADAPTER.find_dependency_files(root), "acme-sdk")


def plan(sdk: SdkSpec, found: list[Dependency]) -> list[Dependency]:
    """workflow/declarations.pending_declarations on these declarations (RequiresHuman where it stops)."""
    state = SimpleNamespace(task=SimpleNamespace(sdk=sdk), profile=SimpleNamespace(sdk_declarations=found))
    return pending_declarations(state)  # type: ignore[arg-type]


def lock(entries: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"lockfileVersion": 3, "packages": {"": {"name": "app"}, **entries}}


def tarball(name: str, version: str) -> str:
    return f"{REGISTRY}/{name}/-/{name.rpartition('/')[2]}-{version}.tgz"


# 1. `"acme-sdk": "npm:acme-sdk-fork@…"`: another package installed under the SDK's name


@pytest.mark.parametrize("range_", ["1.1.0", "^1.0.0"])
def test_an_alias_of_another_package_under_the_sdks_name_stops_the_run_naming_the_line(
    tmp_path: Path, range_: str
) -> None:
    """The repository never installs acme-sdk: `npm:acme-sdk-fork@1.1.0` ended nothing_to_do "(pinned)",
    `^1.0.0` was bumped, the real acme-sdk tested and the fork merged (exit 0)."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": f"npm:acme-sdk-fork@{range_}"}},
            "package-lock.json": lock(
                {
                    "node_modules/acme-sdk": {
                        "name": "acme-sdk-fork",
                        "version": "1.1.0",
                        "resolved": tarball("acme-sdk-fork", "1.1.0"),
                    }
                }
            ),
        },
    )
    found = declarations(tmp_path)
    assert [(d.file, d.role, d.line) for d in found] == [("package.json", "runtime", 4)]  # no lock of it
    assert "npm installs acme-sdk-fork under the name acme-sdk" in found[0].uneditable
    assert pending(npm_sdk(), found) == []
    with pytest.raises(
        RequiresHuman, match=r"package\.json line 4: dependencies\.acme-sdk is 'npm:acme-sdk-fork"
    ):
        plan(npm_sdk(), found)
    assert doubts(npm_sdk(), found)  # never a proof


def test_an_alias_of_another_package_is_never_rewritten() -> None:
    text = '{"dependencies": {"acme-sdk": "npm:acme-sdk-fork@^1.0.0"}}'
    dep = Dependency(
        name="acme-sdk",
        specifier="npm:acme-sdk-fork@^1.0.0",
        file="package.json",
        kind="package.json",
        line=1,
    )
    with pytest.raises(ValueError, match="npm alias that installs acme-sdk-fork"):
        ADAPTER.update_dependency(text, dep, "1.1.0")
    same = '{"dependencies": {"acme-sdk": "npm:acme-sdk@^1.0.0"}}'  # an alias of itself: its range is bumped
    assert package_json.rewrite(same, "acme-sdk", lambda d: "npm:acme-sdk@^1.1.0") == same.replace(
        "^1.0.0", "^1.1.0"
    )


# 2. `"acme": "npm:acme-sdk@…"`: the SDK installed under another name


def test_an_alias_of_the_sdk_under_another_name_is_an_uneditable_declaration(tmp_path: Path) -> None:
    """`require("acme")` ran 1.x while the bump edited only the `acme-sdk` key: green, exit 0."""
    write(
        tmp_path,
        {
            "package.json": {
                "name": "app",
                "dependencies": {"acme": "npm:acme-sdk@^1.0.0", "acme-sdk": "^1.0.0"},
            },
            "package-lock.json": lock(
                {
                    "node_modules/acme": {
                        "name": "acme-sdk",
                        "version": "1.0.0",
                        "resolved": tarball("acme-sdk", "1.0.0"),
                    },
                    "node_modules/acme-sdk": {"version": "1.0.0", "resolved": tarball("acme-sdk", "1.0.0")},
                }
            ),
        },
    )
    found = declarations(tmp_path)
    assert [(d.file, d.section, d.line, d.specifier, bool(d.uneditable)) for d in found] == [
        ("package-lock.json", "node_modules/acme", 7, "1.0.0", False),
        ("package-lock.json", "node_modules/acme-sdk", 12, "1.0.0", False),
        ("package.json", "dependencies", 4, "npm:acme-sdk@^1.0.0", True),
        ("package.json", "dependencies", 5, "^1.0.0", False),
    ]
    assert "dependencies.acme is 'npm:acme-sdk@^1.0.0', an npm alias of acme-sdk" in found[2].uneditable
    assert [d.line for d in pending(npm_sdk("2.0.0", "^1.0.0"), found)] == [5]  # the alias is never edited
    with pytest.raises(RequiresHuman, match=r"package\.json line 4: dependencies\.acme is"):
        plan(npm_sdk("2.0.0", "^1.0.0"), found)
    # one that admits the target changes nothing
    assert [d.line for d in plan(npm_sdk("1.1.0"), found)] == [5]


def test_the_lock_entry_of_an_alias_of_the_sdk_is_no_proof_while_off_the_target(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": {
                "name": "app",
                "dependencies": {"acme": "npm:acme-sdk@^1.0.0", "acme-sdk": "1.1.0"},
            },
            "package-lock.json": lock(
                {
                    "node_modules/acme": {
                        "name": "acme-sdk",
                        "version": "1.0.0",
                        "resolved": tarball("acme-sdk", "1.0.0"),
                    },
                    "node_modules/acme-sdk": {"version": "1.1.0", "resolved": tarball("acme-sdk", "1.1.0")},
                }
            ),
        },
    )
    found = declarations(tmp_path)
    with pytest.raises(RequiresHuman, match=r"package-lock\.json line 7 locks 1\.0\.0"):
        plan(npm_sdk(), found)


def test_package_json_finds_aliases_by_value() -> None:
    text = '{"dependencies": {"a": "npm:acme-sdk@^1", "b": "npm:@x/acme-sdk@1", "acme-sdk": "npm:fork@1"}}'
    assert [(d.name, d.specifier) for d in package_json.aliases(text, "acme-sdk")] == [
        ("a", "npm:acme-sdk@^1")
    ]
    assert [d.specifier for d in package_json.find(text, "acme-sdk")] == ["npm:fork@1"]
    assert [d.name for d in package_json.aliases('{"overrides": {"x": "npm:@s/sdk@2"}}', "@s/sdk")] == ["x"]


# 6. a lock entry whose tarball is another version than it says


def test_a_lock_entry_whose_tarball_is_another_version_proves_nothing_and_stops_the_run(
    tmp_path: Path,
) -> None:
    """`"version": "1.1.0"` over acme-sdk-1.0.0.tgz: nothing_to_do "(pinned)"; `npm ci` installed 1.0.0."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": "1.1.0"}},
            "package-lock.json": lock(
                {"node_modules/acme-sdk": {"version": "1.1.0", "resolved": tarball("acme-sdk", "1.0.0")}}
            ),
        },
    )
    found = declarations(tmp_path)
    assert [d.specifier for d in found if d.role == "lock"] == [
        "1.1.0 (but its resolved tarball is acme-sdk-1.0.0.tgz)"
    ]
    assert doubts(npm_sdk(), found)
    with pytest.raises(
        RequiresHuman, match=r"locks 1\.1\.0 \(but its resolved tarball is acme-sdk-1\.0\.0\.tgz\)"
    ):
        plan(npm_sdk(), found)
    assert not lockfile.locked_versions((tmp_path / "package-lock.json").read_text())["acme-sdk"].indexed


@pytest.mark.parametrize(
    ("resolved", "proves"),
    [
        (tarball("acme-sdk", "1.1.0"), True),
        (None, True),
        ("git+ssh://git@example.com/acme/acme-sdk.git#abc123", False),  # another layout: no mismatch claimed
        ("https://npm.pkg.github.com/download/acme-sdk/1.1.0/abc", False),
    ],
)
def test_a_lock_entry_from_another_source_stops_nothing_and_proves_nothing(
    tmp_path: Path, resolved: str | None, proves: bool
) -> None:
    entry = {"version": "1.1.0", **({"resolved": resolved} if resolved else {})}
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": "1.1.0"}},
            "package-lock.json": lock({"node_modules/acme-sdk": entry}),
        },
    )
    found = declarations(tmp_path)
    assert plan(npm_sdk(), found) == []
    assert (doubts(npm_sdk(), found) == []) is proves


def test_tarball_versions_are_read_for_scoped_names_and_standard_layouts_only() -> None:
    assert (
        lockfile.tarball_version("@acme/sdk", "https://r.example/npm/@acme/sdk/-/sdk-1.0.0-rc.1.tgz")
        == "1.0.0-rc.1"
    )
    assert (
        lockfile.tarball_version("acme-sdk", "http://127.0.0.1:4873/acme-sdk/-/acme-sdk-1.0.0.tgz?x#y")
        == "1.0.0"
    )
    assert lockfile.tarball_version("acme-sdk", "https://r.example/acme-sdk/-/other-1.0.0.tgz") is None
    assert lockfile.tarball_version("@acme/sdk", "https://r.example/sdk/-/sdk-1.0.0.tgz") is None
    assert lockfile.tarball_version("acme-sdk", "file:../acme-sdk-1.0.0.tgz") is None


# 3, 4. workspace globs npm reads otherwise, and workspace folders that are links


@pytest.mark.parametrize("glob", ["packages/{web,api}", "packages/+(web|api)", "packages/[wa]*"])
def test_a_workspace_glob_in_syntax_path_glob_reads_otherwise_is_refused(tmp_path: Path, glob: str) -> None:
    """Path.glob has no braces: packages/web/package.json (acme-sdk ^1.0.0) went unread, exit 0."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "workspaces": [glob], "dependencies": {"acme-sdk": "^1.0.0"}},
            "packages/web/package.json": {"name": "web", "dependencies": {"acme-sdk": "^1.0.0"}},
        },
    )
    with pytest.raises(
        InputError, match=r"package\.json: workspace .* uses glob syntax this tool does not read"
    ):
        ADAPTER.find_dependency_files(tmp_path)


def test_a_workspace_folder_that_is_a_link_is_refused_not_skipped(tmp_path: Path) -> None:
    """`packages/web -> ../apps/web`: npm reads it; it was dropped without a word."""
    write(
        tmp_path,
        {
            "package.json": {
                "name": "app",
                "workspaces": ["packages/*"],
                "dependencies": {"acme-sdk": "^1.0.0"},
            },
            "apps/web/package.json": {"name": "web", "dependencies": {"acme-sdk": "^1.0.0"}},
        },
    )
    (tmp_path / "packages").mkdir()
    os.symlink("../apps/web", tmp_path / "packages" / "web")
    with pytest.raises(InputError, match=r"workspace 'packages/\*': packages/web is a symlink"):
        ADAPTER.find_dependency_files(tmp_path)


def test_a_workspace_reached_through_a_linked_folder_is_refused(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "workspaces": ["packages/*"]},
            "apps/web/package.json": {"name": "web", "dependencies": {"acme-sdk": "^1.0.0"}},
        },
    )
    os.symlink("apps", tmp_path / "packages")
    with pytest.raises(InputError, match=r"packages is a symlink"):
        ADAPTER.find_dependency_files(tmp_path)


# 5. a copy of the SDK committed in a node_modules folder


@pytest.mark.parametrize("sdk_name", ["acme-sdk", "@acme/sdk"])
def test_a_committed_copy_of_the_sdk_in_a_node_modules_folder_stops_the_run_naming_it(
    tmp_path: Path, sdk_name: str
) -> None:
    """src/node_modules/acme-sdk (the old version, committed) is what `require("acme-sdk")` in src/ loads,
    whatever the run installs at the root: green, exit 0."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {sdk_name: "^1.0.0"}},
            f"src/node_modules/{sdk_name}/package.json": {"name": sdk_name, "version": "1.0.0"},
            f"lib/node_modules/other/node_modules/{sdk_name}/package.json": {
                "name": sdk_name
            },  # other's copy
        },
    )
    stops_naming_the_copy(tmp_path, sdk_name, f"src/node_modules/{sdk_name}")


@pytest.mark.parametrize(
    ("link", "named"),
    [
        ("src/node_modules", "src/node_modules"),
        ("src/node_modules/other", "src/node_modules/other"),
        ("src/node_modules/@scope/other", "src/node_modules/@scope/other"),
    ],
)
def test_a_link_committed_where_node_looks_packages_up_stops_the_run_naming_it(
    tmp_path: Path, link: str, named: str
) -> None:
    """helper-39: a committed link leads wherever it was pointed (/tmp in the box, a folder the tests
    write): no copy of the SDK is there when the plan reads the tree, one is when the tests run."""
    write(tmp_path, {"package.json": {"name": "app", "dependencies": {"acme-sdk": "^1.0.0"}}})
    (tmp_path / link).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / link).symlink_to("/tmp", target_is_directory=True)
    with pytest.raises(RequiresHuman, match=rf"{re.escape(named)} is a link committed in the repository"):
        ADAPTER.extract_dependencies(tmp_path, ADAPTER.find_dependency_files(tmp_path), "acme-sdk")


def stops_naming_the_copy(root: Path, sdk_name: str, copy: str) -> None:
    """The copy is the one committed copy read, and the plan stops before any edit naming it."""
    found = ADAPTER.extract_dependencies(root, ADAPTER.find_dependency_files(root), sdk_name)
    assert [d.file for d in found if d.section == "node_modules"] == [copy]
    sdk = SdkSpec.model_validate({"name": sdk_name, "ecosystem": "npm", "from": "^1.0.0", "to": "2.0.0"})
    with pytest.raises(RequiresHuman, match=rf"{re.escape(copy)} is a copy of {sdk_name} committed"):
        plan(sdk, found)


def test_a_node_modules_folder_committed_at_the_root_stops_the_run_naming_it(tmp_path: Path) -> None:
    """The trees read are clones and exports: a root node_modules there is committed, and the install
    replaces it (the test run read as writing the repository's files). With the SDK in it or not."""
    for holds in ("acme-sdk", "left-pad"):
        root = tmp_path / holds
        write(
            root,
            {
                "package.json": {"name": "app", "dependencies": {"acme-sdk": "^1.0.0"}},
                f"node_modules/{holds}/package.json": {"name": holds, "version": "1.0.0"},
            },
        )
        files = ADAPTER.find_dependency_files(root)
        with pytest.raises(RequiresHuman, match=r"node_modules is committed in the repository") as caught:
            ADAPTER.extract_dependencies(root, files, "acme-sdk")
        assert "git rm -r --cached node_modules" in str(caught.value)
        (root / "node_modules" / holds / "package.json").unlink()
        (root / "node_modules" / holds).rmdir()
        (root / "node_modules").rmdir()
        assert ADAPTER.extract_dependencies(root, files, "acme-sdk")  # the package.json range alone


# 5b. a copy of the SDK committed as a FILE in a node_modules folder (red-team review, second round)


@pytest.mark.parametrize(
    ("sdk_name", "suffix"),
    [
        ("acme-sdk", ".js"),
        ("acme-sdk", ".json"),
        ("acme-sdk", ".node"),
        ("acme-sdk", ".cjs"),
        ("@acme/sdk", ".js"),
    ],
)
def test_a_committed_file_copy_of_the_sdk_in_a_node_modules_folder_stops_the_run_naming_it(
    tmp_path: Path, sdk_name: str, suffix: str
) -> None:
    """src/node_modules/acme-sdk.js: require("acme-sdk") from src/ tries node_modules/acme-sdk as a file
    (X, X.js, X.json, X.node) before the folder, and jest with its own extensions: the old client ran
    under a green bump (exit 0)."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {sdk_name: "^1.0.0"}},
            f"src/node_modules/{sdk_name}{suffix}": "module.exports = { VERSION: '1.0.0' };\n",
            f"src/node_modules/{sdk_name}-extra.js": "module.exports = {};\n",  # another package
            "lib/node_modules/other.js": "module.exports = {};\n",
        },
    )
    stops_naming_the_copy(tmp_path, sdk_name, f"src/node_modules/{sdk_name}{suffix}")


def test_a_folder_copy_and_a_file_copy_side_by_side_are_both_named(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": "^1.0.0"}},
            "src/node_modules/acme-sdk.js": "module.exports = {};\n",
            "src/node_modules/acme-sdk/package.json": {"name": "acme-sdk", "version": "1.0.0"},
        },
    )
    assert [d.file for d in declarations(tmp_path) if d.section == "node_modules"] == [
        "src/node_modules/acme-sdk",
        "src/node_modules/acme-sdk.js",
    ]


# 7. a package.json named like the SDK: node resolves the package's own name to it (self-reference)


def test_a_package_below_the_root_named_like_the_sdk_with_exports_stops_the_run_naming_it(
    tmp_path: Path,
) -> None:
    """src/package.json {"name": "acme-sdk", "exports": "./legacy-client.js"}: require("acme-sdk") in src/
    is the package itself (node's LOAD_PACKAGE_SELF), before any node_modules: green on any version."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": "^1.0.0"}},
            "src/package.json": {"name": "acme-sdk", "exports": "./legacy-client.js"},
            "src/legacy-client.js": "module.exports = { VERSION: '1.0.0' };\n",
        },
    )
    found = declarations(tmp_path)
    assert [(d.file, d.section, d.role) for d in found if d.section == "name"] == [
        ("src/package.json", "name", "runtime")
    ]
    with pytest.raises(
        RequiresHuman, match=r"src/package\.json names its package acme-sdk and sets `exports`"
    ):
        plan(npm_sdk("2.0.0", "^1.0.0"), found)


def test_a_workspace_named_like_the_sdk_stops_the_run_naming_it(tmp_path: Path) -> None:
    """npm links node_modules/acme-sdk to a workspace of that name, with or without `exports`."""
    write(
        tmp_path,
        {
            "package.json": {
                "name": "app",
                "workspaces": ["packages/*"],
                "dependencies": {"acme-sdk": "^1.0.0"},
            },
            "packages/sdk/package.json": {"name": "acme-sdk", "version": "1.0.0"},
        },
    )
    found = declarations(tmp_path)
    with pytest.raises(RequiresHuman, match=r"packages/sdk/package\.json is a workspace named acme-sdk"):
        plan(npm_sdk("2.0.0", "^1.0.0"), found)


def test_the_sdks_own_repository_requires_a_human(tmp_path: Path) -> None:
    """The root package.json named acme-sdk: the repository is the SDK; bumping it onto itself is no
    migration this tool can verify (with `exports`, require("acme-sdk") in it is its own code)."""
    write(tmp_path, {"package.json": {"name": "acme-sdk", "exports": "./index.js", "version": "1.0.0"}})
    found = declarations(tmp_path)
    assert [d.file for d in found] == ["package.json"]
    with pytest.raises(RequiresHuman, match=r"package\.json names the repository's own package acme-sdk"):
        plan(npm_sdk("2.0.0", "^1.0.0"), found)


def test_packages_named_like_the_sdk_that_node_never_resolves_to_are_no_declaration(tmp_path: Path) -> None:
    """No `exports` and no workspace (an example's copy), or test data (fixtures of the repository's own
    tests): node never resolves require("acme-sdk") to them."""
    write(
        tmp_path,
        {
            "package.json": {"name": "app", "dependencies": {"acme-sdk": "^1.0.0"}},
            "examples/legacy/package.json": {"name": "acme-sdk", "main": "index.js"},
            "test/fixtures/sdk/package.json": {"name": "acme-sdk", "exports": "./index.js"},
            "fixtures/sdk/package.json": {"name": "acme-sdk", "exports": "./index.js"},
            "spec/sdk/package.json": {"name": "acme-sdk", "exports": "./index.js"},
            "docs/package.json": "{ not json",
        },
    )
    assert [d.file for d in declarations(tmp_path)] == ["package.json"]
