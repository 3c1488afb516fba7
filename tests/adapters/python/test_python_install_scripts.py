"""SDK pins in the files that install packages outside the dependency files (install_scripts.py): what is
read as a pin, with which role, and what is not."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import install_scripts
from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files
from agentic_codemod.config import CI_CONFIG_MAX_BYTES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND

DOCKERFILE = """\
FROM python:3.12-slim
# RUN pip install acme-sdk==0.9 (an old line, a comment)
RUN pip install --no-cache-dir -r requirements.txt \\
    "acme-sdk[async] >= 1.4, <2" my-acme-sdk==1.0 acme-sdk-extras==3
RUN pip install acme-sdk==${ACME_VERSION} acme-sdk
"""
CONDA = """\
name: app
dependencies:
  - python=3.12
  - acme-sdk=1.4
  - pip:
      - acme_sdk==1.4.0
"""
PRE_COMMIT = """\
repos:
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.8.0
    hooks:
      - id: mypy
        additional_dependencies: [Acme.SDK~=1.4, types-requests]
"""
WORKFLOW = """\
jobs:
  minimum:
    steps:
      - run: python -m pip install 'acme-sdk==1.4.0' pytest
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
            "docker/Dockerfile.prod": "RUN pip install acme-sdk==1.4.1\n",
            "environment.yml": CONDA,
            ".pre-commit-config.yaml": PRE_COMMIT,
            ".github/workflows/minimum.yml": WORKFLOW,
        },
    )
    assert pins(tmp_path) == [
        ("Dockerfile", 4, "dev", ">=1.4,<2"),
        ("docker/Dockerfile.prod", 1, "dev", "==1.4.1"),
        ("environment.yml", 4, "dev", "==1.4.*"),  # conda's own match spec
        ("environment.yml", 6, "dev", "==1.4.0"),
        (".pre-commit-config.yaml", 6, "dev", "~=1.4"),
        (".github/workflows/minimum.yml", 4, "constraint", "==1.4.0"),
    ]
    [first, *_] = install_scripts.found(tmp_path, "acme-sdk")
    assert first.kind == SCRIPT_KIND and first.section == "a container image"
    assert first.uneditable == (
        "Dockerfile line 4 installs acme-sdk[async] >= 1.4, <2 in a container image, which the tool does not "
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
        "RUN pip install acme-sdk==$ACME_VERSION",  # from a variable
        "RUN pip install acme-sdk==1.${MINOR}",
        "RUN pip install acme-sdk-extras==1.4 my-acme-sdk==1.4",  # other names
        "COPY vendor/acme-sdk==1.4 /x",  # part of a path
        "    # RUN pip install acme-sdk==1.4",  # a comment
        "ENV ACME_SDK=1.4",  # conda's spelling outside a conda file
    ],
)
def test_what_is_no_literal_pin_of_the_sdk_is_not_read(tmp_path: Path, line: str) -> None:
    assert pins(write(tmp_path, {"Dockerfile": line + "\n"})) == []


def test_a_link_is_never_followed_and_a_file_past_the_budget_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text("RUN pip install acme-sdk==1.4.0\n")
    repo = tmp_path / "repo"
    (repo / ".github").mkdir(parents=True)
    os.symlink(outside / "Dockerfile", repo / "Dockerfile")
    os.symlink(outside, repo / ".github" / "workflows")  # a folder on the way that is a link
    (outside / "ci.yml").write_text("run: pip install acme-sdk==1.4.0\n")
    padding = "#" * CI_CONFIG_MAX_BYTES
    write(repo, {"environment.yml": f"{padding}\n  - acme-sdk==1.4.0\n"})
    assert pins(repo) == []


def test_a_file_inside_the_budget_is_read_whatever_its_bytes(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_bytes(b"RUN echo \xff\xfe\nRUN pip install acme-sdk==1.4.0\n")
    assert pins(tmp_path) == [("Dockerfile", 2, "dev", "==1.4.0")]


def test_more_files_than_the_tool_reads_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(install_scripts, "INSTALL_SCRIPTS_MAX_FILES", 3)
    write(tmp_path, {f".github/workflows/job{i}.yml": "run: pytest\n" for i in range(4)})
    with pytest.raises(RequiresHuman, match=r"4 files install packages outside the dependency files"):
        install_scripts.found(tmp_path, "acme-sdk")
    (tmp_path / ".github/workflows/job0.yml").unlink()
    assert pins(tmp_path) == []
