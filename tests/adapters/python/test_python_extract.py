"""Extraction: which files declare dependencies, and where one named dependency is declared."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files
from agentic_codemod.errors import InputError
from agentic_codemod.models import Dependency

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "app"
dependencies = [
    "requests>=2",
    'Acme_SDK[async] == 1.4.0 ; python_version >= "3.9"',  # pinned for the audit
]

[project.optional-dependencies]
test = ["pytest", "acme.sdk>=1.2,<2"]

[dependency-groups]
dev = ["acme-sdk~=1.4"]
"""

POETRY = """\
[tool.poetry]
name = "app"

[tool.poetry.dependencies]
python = "^3.11"
acme-sdk = "^1.4"  # caret

[tool.poetry.group.test.dependencies]
Acme_SDK = { version = "~1.4", extras = ["mock"] }

[tool.poetry.dev-dependencies]
acme_sdk = [{ version = "1.4.0", python = "<3.10" }, { git = "https://example.invalid/acme.git" }]
"""

SETUP_CFG = """\
[metadata]
name = app

[options]
install_requires =
    requests
    acme-sdk==1.4.0

[options.extras_require]
async =
    ACME_SDK[async] >=1.2 ; python_version>"3.8"
"""

REQUIREMENTS = """\
# runtime
requests==2.32.0  # http
acme_sdk[async]==1.4.0 ; python_version >= "3.9" --hash=sha256:abc \\
    --hash=sha256:def
-r base.txt
-e ./vendored/acme-sdk
acme-sdk-extras==9.9  # a different package
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def extract(root: Path, sdk: str = "acme-sdk") -> list[Dependency]:
    return extract_dependencies(root, find_dependency_files(root), sdk)


def test_pep621_dependencies_extras_and_groups(tmp_path: Path) -> None:
    deps = extract(write(tmp_path, {"pyproject.toml": PYPROJECT}))
    assert [(d.name, d.specifier, d.kind, d.line) for d in deps] == [
        ("Acme_SDK", "== 1.4.0", "pep621", 9),
        ("acme.sdk", ">=1.2,<2", "pep621", 13),
        ("acme-sdk", "~=1.4", "pep735", 16),
    ]
    assert {d.file for d in deps} == {"pyproject.toml"}


def test_poetry_main_group_and_dev_tables(tmp_path: Path) -> None:
    deps = extract(write(tmp_path, {"pyproject.toml": POETRY}))
    assert [(d.name, d.specifier, d.kind, d.line) for d in deps] == [
        ("acme-sdk", "^1.4", "poetry", 6),
        ("Acme_SDK", "~1.4", "poetry", 9),
        ("acme_sdk", "1.4.0", "poetry", 12),
        ("acme_sdk", "", "poetry", 12),  # the git entry: declared, no version
    ]


def test_setup_cfg_install_requires_and_extras(tmp_path: Path) -> None:
    deps = extract(write(tmp_path, {"setup.cfg": SETUP_CFG}))
    assert [(d.name, d.specifier, d.kind, d.line) for d in deps] == [
        ("acme-sdk", "==1.4.0", "setup.cfg", 7),
        ("ACME_SDK", ">=1.2", "setup.cfg", 11),
    ]


def test_requirements_skips_options_editables_and_lookalike_names(tmp_path: Path) -> None:
    deps = extract(write(tmp_path, {"requirements.txt": REQUIREMENTS}))
    assert [d.model_copy(update={"uneditable": ""}) for d in deps] == [
        Dependency(name="acme_sdk", specifier="==1.4.0", file="requirements.txt", kind="requirements", line=3)
    ]
    # its --hash options hold 1.4.0's hashes: never bumped beside them (test_python_hashed_requirements.py)
    assert deps[0].uneditable.startswith("requirements.txt line 3: acme_sdk==1.4.0 carries --hash options")


@pytest.mark.parametrize("spelling", ["acme-sdk", "Acme_SDK", "ACME.sdk", "acme__sdk"])
def test_names_compare_pep503_normalised(tmp_path: Path, spelling: str) -> None:
    write(tmp_path, {"requirements.txt": "Acme_SDK==1.4.0\n"})
    assert [d.name for d in extract(tmp_path, spelling)] == ["Acme_SDK"]


def test_dependency_files_are_every_file_the_adapter_reads_at_the_root(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "requirements.txt": "acme-sdk==1.4.0\n-c constraints.txt\n",
            "requirements-dev.txt": "-r deps/common.in\npytest\n",
            "deps/common.in": "requests\n",  # reached through -r: pip reads it
            "requirements/test.txt": "pytest\n",
            "constraints.txt": "urllib3<3\n",
            "test-requirements.txt": "pytest-cov\n",
            "setup.cfg": "[flake8]\nmax-line-length = 100\n",  # read by pip when it installs the project
            "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
            "setup.py": "from setuptools import setup\nsetup()\n",
            "Pipfile": "[packages]\n",
            "poetry.lock": "# lock\n",
            "docs/requirements.txt": "sphinx\n",  # subprojects are not looked at
            "src/app.py": "print(1)\n",
        },
    )
    assert find_dependency_files(tmp_path) == [
        "Pipfile",
        "constraints.txt",
        "deps/common.in",
        "poetry.lock",
        "pyproject.toml",
        "requirements-dev.txt",
        "requirements.txt",
        "requirements/test.txt",
        "setup.cfg",
        "setup.py",
        "test-requirements.txt",
    ]


def test_not_declared_gives_empty_list(tmp_path: Path) -> None:
    assert (
        extract(write(tmp_path, {"requirements.txt": "requests\n", "pyproject.toml": PYPROJECT}), "other")
        == []
    )


def test_broken_pyproject_stops_extraction_naming_the_file(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "[project\ndependencies = ['acme-sdk']\n"})
    assert find_dependency_files(tmp_path) == ["pyproject.toml"]
    with pytest.raises(InputError, match=r"pyproject\.toml: not valid TOML"):
        extract(tmp_path)
