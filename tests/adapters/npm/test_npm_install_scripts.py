"""The SDK's pins in Dockerfiles, pre-commit hooks and CI jobs, read by the npm adapter
(adapters/npm/install_scripts.py; which files and lines: adapters/install_scripts.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import install_scripts
from agentic_codemod.adapters.npm.extract import extract_dependencies, find_dependency_files
from agentic_codemod.models import SCRIPT_KIND

DOCKERFILE = """\
FROM node:22
ARG SDK_VERSION=1.4.0
RUN npm ci && npm install -g acme-sdk@1.4.0 other@2  # acme-sdk@0.9 in a comment
RUN yarn global add \\
    "acme-sdk@>=1.4 <2"
RUN npx acme-sdk@${SDK_VERSION} --version && npx acme-sdk@$UNSET
LABEL description="acme-sdk@1 inside"
"""


def test_pins_in_an_image_a_hook_and_a_ci_job_with_their_roles(tmp_path: Path) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / "Dockerfile").write_text(DOCKERFILE)
    (tmp_path / ".pre-commit-config.yaml").write_text("      additional_dependencies: ['acme-sdk@^1.4']\n")
    (tmp_path / ".github/workflows/min.yml").write_text(
        "    - run: pnpm add @acme/sdk@1.4.0 acme-sdk@~1.4.0\n"
    )
    (tmp_path / "environment.yml").write_text("dependencies:\n  - acme-sdk=1.4\n")  # conda: no npm package
    found = install_scripts.found(tmp_path, "acme-sdk")
    assert [(d.file, d.line, d.role, d.specifier) for d in found] == [
        (".github/workflows/min.yml", 1, "constraint", "~1.4.0"),
        (".pre-commit-config.yaml", 1, "dev", "^1.4"),
        ("Dockerfile", 3, "dev", "1.4.0"),
        ("Dockerfile", 5, "dev", ">=1.4 <2"),
        ("Dockerfile", 6, "dev", "1.4.0"),  # ARG's default
        ("Dockerfile", 6, "dev", "$UNSET"),  # a version nobody can read
    ]
    assert all(d.kind == SCRIPT_KIND and d.uneditable for d in found)
    assert found[3].uneditable == (
        "Dockerfile line 5 installs acme-sdk@>=1.4 <2 in a container image, which the tool does not edit"
    )


@pytest.mark.parametrize(
    "line",
    [
        "RUN npm install acme-sdk",
        "RUN npm install acme-sdk@latest",  # a dist-tag
        "RUN npm install my-acme-sdk@1 acme-sdk-x@2",
        "RUN git clone git@github.com:acme/acme-sdk.git",
        "RUN echo maintainer@acme-sdk.dev",
    ],
)
def test_what_is_no_pin_of_the_sdk_is_not_read(tmp_path: Path, line: str) -> None:
    (tmp_path / "Dockerfile").write_text(line + "\n")
    assert install_scripts.found(tmp_path, "acme-sdk") == []


def test_recon_takes_them_beside_the_package_json_declarations(tmp_path: Path) -> None:
    from agentic_codemod.adapters.npm import ADAPTER

    (tmp_path / "package.json").write_text('{"name": "app", "dependencies": {"acme-sdk": "^1.4.0"}}\n')
    (tmp_path / "Dockerfile").write_text("RUN npm install -g acme-sdk@1.4.0\n")
    found = extract_dependencies(tmp_path, find_dependency_files(tmp_path), "acme-sdk")
    assert [(d.file, d.kind) for d in found] == [("package.json", "package.json")]
    assert ADAPTER.install_script_pins is install_scripts.found


def test_packages_below_the_root_that_are_no_workspace_are_read(tmp_path: Path) -> None:
    """A lerna-style repository (`lerna.json`, no `workspaces`): packages/web/package.json kept acme-sdk on
    ^1.0.0 while the root was bumped, green, exit 0. Such a package's declarations are uneditable pins
    with their fields' roles; a workspace's are the adapter's own declarations; test data is skipped."""
    files = {
        "package.json": json.dumps({"name": "root", "dependencies": {"acme-sdk": "^1.0.0"}}),
        "packages/web/package.json": json.dumps(
            {"name": "web", "dependencies": {"acme-sdk": "^1.0.0"}, "overrides": {"acme-sdk": "1.0.0"}}
        ),
        "examples/demo/package.json": json.dumps({"name": "demo", "devDependencies": {"acme-sdk": "~1.0.0"}}),
        "test/fixtures-app/package.json": json.dumps({"dependencies": {"acme-sdk": "0.1.0"}}),
        "docs/package.json": "{ not json acme-sdk",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    found = [(d.file, d.role, d.specifier) for d in install_scripts.found(tmp_path, "acme-sdk")]
    assert found == [
        ("examples/demo/package.json", "dev", "~1.0.0"),
        ("packages/web/package.json", "runtime", "^1.0.0"),
        ("packages/web/package.json", "constraint", "1.0.0"),
    ]
    (tmp_path / "package.json").write_text(json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    assert [d.file for d in install_scripts.found(tmp_path, "acme-sdk")] == ["examples/demo/package.json"]
