"""SDK pins in the files that install packages outside the dependency files (adapters/install_scripts.py
finds the files and lines, adapters/python/install_scripts.py reads the pins): what is read as a pin, with
which role, what is not, and what cannot be read for sure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_codemod.adapters import install_scripts as scripts
from agentic_codemod.adapters.python import install_scripts
from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files
from agentic_codemod.config import CI_CONFIG_MAX_BYTES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND

DOCKERFILE = """\
FROM python:3.12-slim
ARG ACME_VERSION=1.4.2
# RUN pip install acme-sdk==0.9 (an old line, a comment)
RUN apt-get update && pip install --no-cache-dir -r requirements.txt \\
    "acme-sdk[async] >= 1.4, <2" my-acme-sdk==1.0 acme-sdk-extras==3
RUN pip install acme-sdk==${ACME_VERSION} acme-sdk  # acme-sdk==0.8 in a comment
RUN uv pip install --system acme-sdk==${OTHER_VERSION:-1.4.3} acme-sdk==$UNSET
LABEL description="needs acme-sdk<2, from requirements.txt"
RUN conda install -y acme-sdk=1.4.0=py_0
"""
CONDA = """\
name: app
dependencies:
  - python=3.12
  - conda-forge::acme-sdk=1.4
  - acme-sdk 1.4.*
  - acme-sdk >=1.4,<2 py_0
  - acme-sdk[version='>=1.4,<2']
  - acme-sdk=1.4.0=pyhd8ed1ab_0
  - acme-sdk
  - pip:
      - acme_sdk==1.4.0
      - -r requirements.txt  # pulls acme-sdk==1.4.0
"""
PRE_COMMIT = """\
repos:
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.8.0
    hooks:
      - id: mypy
        additional_dependencies: [Acme.SDK~=1.4, types-requests]  # acme-sdk<2 ships no stubs
"""
WORKFLOW = """\
env:
  ACME: "1.4.0"
jobs:
  minimum:
    name: tests on acme-sdk>=1.4 (the oldest)
    steps:
      - run: python -m pip install 'acme-sdk==${ACME}' pytest
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def pins(root: Path) -> list[tuple[str, int | None, str, str]]:
    return [(d.file, d.line, d.role, d.specifier) for d in install_scripts.found(root, "acme-sdk")]


def test_pins_in_images_environments_hooks_and_ci_jobs_with_their_roles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Dockerfile": DOCKERFILE,
            "services/api/docker/Dockerfile.prod": "RUN pip install acme-sdk==1.4.1\n",
            "ci/environment-py311.yml": CONDA,
            ".pre-commit-config.yaml": PRE_COMMIT,
            ".github/workflows/minimum.yml": WORKFLOW,
        },
    )
    assert pins(tmp_path) == [
        (".github/workflows/minimum.yml", 7, "constraint", "==1.4.0"),  # its own env: ACME
        (".pre-commit-config.yaml", 6, "dev", "~=1.4"),
        ("Dockerfile", 5, "dev", ">=1.4,<2"),  # the logical line names pip
        ("Dockerfile", 6, "dev", "==1.4.2"),  # ARG's default
        ("Dockerfile", 7, "dev", "==1.4.3"),  # the variable's own default
        ("Dockerfile", 7, "dev", "==$UNSET"),  # a version nobody can read
        ("Dockerfile", 9, "dev", "==1.4.0.*"),  # conda install, a build string after it
        ("ci/environment-py311.yml", 4, "dev", "==1.4.*"),  # conda's own match specs
        ("ci/environment-py311.yml", 5, "dev", "==1.4.*"),
        ("ci/environment-py311.yml", 6, "dev", ">=1.4,<2"),
        ("ci/environment-py311.yml", 7, "dev", ">=1.4,<2"),
        ("ci/environment-py311.yml", 8, "dev", "==1.4.0.*"),
        ("ci/environment-py311.yml", 11, "dev", "==1.4.0"),
        ("services/api/docker/Dockerfile.prod", 1, "dev", "==1.4.1"),
    ]
    first = install_scripts.found(tmp_path, "acme-sdk")[2]
    assert first.kind == SCRIPT_KIND and first.section == "a container image"
    assert first.uneditable == (
        "Dockerfile line 5 installs acme-sdk[async] >= 1.4, <2 in a container image, which the tool does not "
        "edit"
    )


def test_they_come_with_the_repositorys_declarations(tmp_path: Path) -> None:
    write(
        tmp_path, {"requirements.txt": "acme-sdk==1.4.0\n", "Dockerfile": "RUN pip install acme-sdk==1.4.0\n"}
    )
    found = extract_dependencies(tmp_path, find_dependency_files(tmp_path), "acme-sdk")
    assert [(d.file, d.kind, bool(d.uneditable)) for d in found] == [
        ("requirements.txt", "requirements", False),
        ("Dockerfile", SCRIPT_KIND, True),
    ]
    assert "Dockerfile" not in find_dependency_files(tmp_path)  # never a file the bump or pip reads


@pytest.mark.parametrize(
    "line",
    [
        "RUN pip install acme-sdk",  # no version: admits any
        "RUN pip install acme-sdk-extras==1.4 my-acme-sdk==1.4",  # other names
        "COPY vendor/acme-sdk==1.4 /x",  # no installer on the line
        "LABEL org.description='acme-sdk<2 inside'",
        "    # RUN pip install acme-sdk==1.4",  # a comment
        "RUN pip install -r requirements.txt # acme-sdk==1.4 comes from there",
        "ENV ACME_SDK=1.4",  # conda's spelling outside a conda command
        "RUN pip install acme-sdk==latest",  # no version
    ],
)
def test_what_is_no_pin_of_the_sdk_is_not_read(tmp_path: Path, line: str) -> None:
    assert pins(write(tmp_path, {"Dockerfile": line + "\n"})) == []


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("dockerfile", scripts.IMAGE),
        ("deploy/app.Dockerfile", scripts.IMAGE),
        ("docker/Containerfile.dev", scripts.IMAGE),
        ("src/dockerfile_utils.py", None),
        ("docs/Dockerfile.md", None),
        ("environment.dev.yml", scripts.CONDA),
        ("devtools/conda-envs/test_env.yaml", scripts.CONDA),
        ("envoy.yml", None),
        ("ci/build.gitlab-ci.yml", scripts.CI),
        (".gitlab/ci/test.yml", scripts.CI),
        (".github/workflows/env-check.yml", scripts.CI),
        ("sub/.github/workflows/ci.yml", None),  # GitHub reads the root's only
        ("sub/.pre-commit-config.yaml", None),
    ],
)
def test_which_files_install_packages(path: str, kind: str | None) -> None:
    assert scripts.kind_of(path) == kind


def test_a_link_inside_the_repository_is_read_at_its_target(tmp_path: Path) -> None:
    write(tmp_path, {"build/envs/prod.yml": "dependencies:\n  - acme-sdk=1.4\n"})
    os.symlink("build/envs/prod.yml", tmp_path / "environment.yml")
    assert pins(tmp_path) == [("environment.yml", 2, "dev", "==1.4.*")]


def _outside_link(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text("RUN pip install acme-sdk==1.4.0\n")
    os.symlink(outside / "Dockerfile", root / "Dockerfile")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_outside_link, "Dockerfile installs packages outside the dependency files, and is a link out of"),
        (
            lambda root: write(root, {"environment.yml": "#" * CI_CONFIG_MAX_BYTES + "\n- acme-sdk=1.4\n"}),
            f"environment.yml installs packages outside the dependency files, and is larger than "
            f"{CI_CONFIG_MAX_BYTES} bytes",
        ),
        (
            lambda root: (root / "Dockerfile").write_bytes(
                "RUN pip install acme-sdk==1.4\n".encode("utf-16")
            ),
            "Dockerfile installs packages outside the dependency files, and holds NUL bytes",
        ),
    ],
    ids=["link-out", "too-large", "utf-16"],
)
def test_what_cannot_be_read_for_sure_stops_the_run(tmp_path: Path, make, why: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    make(root)
    with pytest.raises(RequiresHuman, match=why):
        install_scripts.found(root, "acme-sdk")


def test_a_repository_too_large_to_look_through_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripts, "INSTALL_SCRIPTS_MAX_ENTRIES", 3)
    write(tmp_path, {f"src/m{i}.py": "" for i in range(3)})
    with pytest.raises(RequiresHuman, match=r"more than 3 files and folders"):
        install_scripts.found(tmp_path, "acme-sdk")
    write(tmp_path, {"node_modules/x/Dockerfile": "RUN pip install acme-sdk==1.4\n"})  # never entered
    monkeypatch.setattr(scripts, "INSTALL_SCRIPTS_MAX_ENTRIES", 10)
    assert pins(tmp_path) == []


def test_a_file_inside_the_budget_is_read_whatever_its_utf8(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_bytes(b"RUN echo \xff\xfe\nRUN pip install acme-sdk==1.4.0\n")
    assert pins(tmp_path) == [("Dockerfile", 2, "dev", "==1.4.0")]
