"""package.json declarations: found with roles, rewritten byte for byte, refused where they lead out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.package_json import find, rewrite
from agentic_codemod.errors import InputError

MANIFEST = """{
  "name": "app",
  "version": "1.0.0",
  "scripts": {"test": "node --test"},
  "dependencies": {
    "acme-sdk": "^1.2.0",
    "left-pad": "1.3.0"
  },
  "devDependencies": {"acme-sdk": "~1.2.0", "@acme/tools": "1.x"},
  "peerDependencies": {"acme-sdk": ">=1 <2"},
  "optionalDependencies": {"acme-sdk": "1.2.0"},
  "overrides": {"acme-sdk": "1.2.0"},
  "config": {"acme-sdk": "^1.0.0"}
}
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def test_every_section_is_found_with_its_role_and_line(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": MANIFEST})
    found = ADAPTER.extract_dependencies(tmp_path, ADAPTER.find_dependency_files(tmp_path), "acme-sdk")
    assert [(d.section, d.role, d.line, d.specifier) for d in found] == [
        ("dependencies", "runtime", 6, "^1.2.0"),
        ("devDependencies", "dev", 9, "~1.2.0"),
        ("peerDependencies", "runtime", 10, ">=1 <2"),
        ("optionalDependencies", "extra", 11, "1.2.0"),
        ("overrides", "constraint", 12, "1.2.0"),
    ]
    assert {d.kind for d in found} == {"package.json"}


def test_the_bump_changes_one_string_and_nothing_else(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": MANIFEST})
    dep = ADAPTER.extract_dependencies(tmp_path, ["package.json"], "acme-sdk")[0]
    after = ADAPTER.update_dependency(MANIFEST, dep, "2.0.0")
    assert after == MANIFEST.replace('"acme-sdk": "^1.2.0"', '"acme-sdk": "^2.0.0"')
    every = ADAPTER.update_dependency(MANIFEST, dep.model_copy(update={"line": None}), "2.0.0")
    assert json.loads(every)["devDependencies"]["acme-sdk"] == "~2.0.0"
    assert json.loads(every)["config"]["acme-sdk"] == "^1.0.0"  # not a dependency section


def test_crlf_and_escapes_survive(tmp_path: Path) -> None:
    text = '{\r\n\t"dependencies": {"acme-sdk": "\\u005e1.0.0", "x": "caf\\u00e9"}\r\n}\r\n'
    found = find(text, "acme-sdk")
    assert found[0].specifier == "^1.0.0"
    assert rewrite(text, "acme-sdk", lambda d: "^2.0.0") == text.replace('"\\u005e1.0.0"', '"^2.0.0"')


def test_a_tag_or_path_cannot_be_bumped(tmp_path: Path) -> None:
    text = '{"dependencies": {"acme-sdk": "latest"}}'
    write(tmp_path, {"package.json": text})
    dep = ADAPTER.extract_dependencies(tmp_path, ["package.json"], "acme-sdk")[0]
    with pytest.raises(ValueError, match="without a version this tool can edit"):
        ADAPTER.update_dependency(text, dep, "2.0.0")


def test_broken_json_names_the_file(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": '{"dependencies": {"acme-sdk": "^1"'})
    with pytest.raises(InputError, match=r"package\.json: not valid JSON"):
        ADAPTER.extract_dependencies(tmp_path, ["package.json"], "acme-sdk")


def test_json_nested_past_the_parsers_depth_names_the_file_and_is_not_npm(tmp_path: Path) -> None:
    write(tmp_path, {"package.json": '{"x": ' + "[" * 100_000 + "]" * 100_000 + "}"})
    with pytest.raises(InputError, match=r"package\.json: not valid JSON: nested deeper"):
        ADAPTER.extract_dependencies(tmp_path, ["package.json"], "acme-sdk")
    assert not ADAPTER.detect(tmp_path)
    # Python 3.12+'s json.loads reads 3,000 deep; the declarations walk recursed past its limit there
    with pytest.raises(ValueError, match="nested deeper"):
        find('{"x": ' + "[" * 3_000 + "]" * 3_000 + "}", "acme-sdk")


def test_workspaces_and_lock_entries_are_read(tmp_path: Path) -> None:
    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "app"},
            "node_modules/acme-sdk": {"version": "1.2.0"},
            "packages/a/node_modules/acme-sdk": {"version": "1.1.0"},
            "node_modules/not-acme-sdk": {"version": "9.0.0"},
        },
    }
    write(
        tmp_path,
        {
            "package.json": '{"workspaces": ["packages/*"], "dependencies": {"acme-sdk": "^1.2.0"}}',
            "packages/a/package.json": '{"dependencies": {"acme-sdk": "~1.1.0"}}',
            "packages/b/package.json": '{"devDependencies": {"acme-sdk": "1.x"}}',
            "package-lock.json": json.dumps(lock, indent=2),
        },
    )
    files = ADAPTER.find_dependency_files(tmp_path)
    assert files == [
        "package-lock.json",
        "package.json",
        "packages/a/package.json",
        "packages/b/package.json",
    ]
    found = ADAPTER.extract_dependencies(tmp_path, files, "acme-sdk")
    assert [(d.file, d.role, d.specifier) for d in found] == [
        ("package-lock.json", "lock", "1.2.0"),
        ("package-lock.json", "lock", "1.1.0"),
        ("package.json", "runtime", "^1.2.0"),
        ("packages/a/package.json", "runtime", "~1.1.0"),
        ("packages/b/package.json", "dev", "1.x"),
    ]
    with pytest.raises(ValueError, match="lockfile"):
        ADAPTER.update_dependency((tmp_path / "package-lock.json").read_text(), found[0], "2.0.0")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"pnpm-lock.yaml": "lockfileVersion: 6"}, "pnpm lockfiles are not supported yet"),
        ({"yarn.lock": "# yarn"}, "yarn lockfiles are not supported yet"),
        (
            {"package.json": '{"dependencies": {"acme-sdk": "file:../../sdk"}}'},
            "leads outside the repository",
        ),
        ({"package.json": '{"devDependencies": {"x": "link:/opt/x"}}'}, "leads outside the repository"),
        ({"package.json": '{"workspaces": ["../*"]}'}, "leaves the repository"),
        ({".npmrc": "registry=https://r.example/\nscript-shell=/bin/evil\n"}, "line 2: `script-shell`"),
        ({".npmrc": "ignore-scripts=false\n"}, "install scripts"),
        ({".npmrc": "node-options=--require /x.js\n"}, "`node-options`"),
        ({".npmrc": "proxy=http://127.0.0.1:9/\n"}, "line 1: `proxy` may not be set"),
        ({".npmrc": "; corp\nhttps-proxy=http://proxy.example/\n"}, "line 2: `https-proxy`"),
        ({".npmrc": "strict-ssl=false\n"}, "`strict-ssl`"),
        ({".npmrc": "ca[]=-----BEGIN CERTIFICATE-----\n"}, "`ca\\[\\]`"),
        ({".npmrc": "noproxy=*\n"}, "`noproxy`"),
        # helper-39: keys npm's ini parser reads as `proxy` (quoted, cut at a comment, after a byte
        # order mark) or builds from a variable; a bare key is `true`
        ({".npmrc": '"proxy"=http://127.0.0.1:9/\n'}, "line 1: `proxy` may not be set"),
        ({".npmrc": "proxy;x=http://127.0.0.1:9/\n"}, "line 1: `proxy` may not be set"),
        ({".npmrc": "\ufeffproxy=http://127.0.0.1:9/\n"}, "line 1: `proxy` may not be set"),
        ({".npmrc": "pro${UNSET_X?}xy=http://127.0.0.1:9/\n"}, "builds from variables"),
        ({".npmrc": "'globalconfig'=/x\n"}, "`globalconfig`"),
        ({".npmrc": "'\"proxy\"'=http://127.0.0.1:9/\n"}, "`proxy` may not be set"),  # helper-40
        ({".npmrc": "registry=https://r/\r\nscript-shell\n"}, "line 2: `script-shell`"),
    ],
)
def test_refusals_name_the_file_and_stop_the_run(tmp_path: Path, files: dict[str, str], message: str) -> None:
    write(tmp_path, {"package.json": "{}", **files})
    with pytest.raises(InputError, match=message):
        ADAPTER.find_dependency_files(tmp_path)


def test_a_symlinked_manifest_is_refused_unread(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": 1}')
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "package.json")
    found = ADAPTER.read_dependency_files(repo)
    assert found.files == []
    assert [str(r) for r in found.refused] == [
        "package.json: is a symlink; dependency files must be regular files"
    ]


def test_a_registry_setting_in_the_repository_is_honoured_not_refused(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "package.json": "{}",
            ".npmrc": "registry=https://npm.example/\n@acme:registry=https://a/\nstrict-ssl=true ; npm's\n"
            "proxy=null\n"
            # GitLab's own npm registry docs: a registry's settings built from CI variables
            "//${CI_SERVER_HOST}/api/v4/projects/${CI_PROJECT_ID}/packages/npm/:_authToken=${CI_JOB_TOKEN}\n",
        },
    )
    assert ADAPTER.find_dependency_files(tmp_path) == [".npmrc", "package.json"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("package.json", True),
        ("a/b/package-lock.json", True),
        ("yarn.lock", True),
        (".npmrc", True),
        ("x/pnpm-lock.yaml", True),
        ("src/package.js", False),
        ("package.json5", False),
    ],
)
def test_is_dependency_file_by_name_at_any_depth(path: str, expected: bool) -> None:
    assert ADAPTER.is_dependency_file(path) is expected


def test_an_override_nested_under_another_package_is_a_kept_declaration(tmp_path: Path) -> None:
    """`"overrides": {"acme-plugin": {"acme-sdk": "1.0.0"}}` forces the old SDK under acme-plugin: before,
    it was never read (the merge request said nothing of it). Now it is a constraint declaration: kept
    unless the task names package.json in sdk.also_bump, and named in the merge request."""
    manifest = {
        "dependencies": {"acme-sdk": "^1.0.0", "acme-plugin": "1.0.0"},
        "overrides": {"acme-plugin": {".": "1.0.0", "acme-sdk": "1.0.0"}, "x": {"y": {"acme-sdk": "~1.0.0"}}},
    }
    write(tmp_path, {"package.json": json.dumps(manifest, indent=2)})
    found = ADAPTER.extract_dependencies(tmp_path, ["package.json"], "acme-sdk")
    assert [(d.role, d.section, d.specifier) for d in found] == [
        ("runtime", "dependencies", "^1.0.0"),
        ("constraint", "overrides", "1.0.0"),
        ("constraint", "overrides", "~1.0.0"),
    ]
    assert [d.specifier for d in find(json.dumps(manifest), "acme-plugin")] == ["1.0.0", "1.0.0"]
