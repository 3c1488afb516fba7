"""Bumping a declaration: before/after strings; only the specifier changes, every other byte stays."""

from __future__ import annotations

import difflib

import pytest

from agentic_codemod.adapters.python.update import update_dependency
from agentic_codemod.models import Dependency


def dep(file: str, kind: str, name: str = "acme-sdk") -> Dependency:
    return Dependency(name=name, specifier="", file=file, kind=kind)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old, new) for each changed line; asserts the line count is unchanged."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


REQUIREMENTS = """\
# runtime dependencies
requests==2.32.0  # http
Acme_SDK[async] == 1.4.0 ; python_version >= "3.9"  # pinned
-r base.txt
acme-sdk-extras==1.4.0
"""


def test_requirements_exact_pin_keeps_extras_markers_comments_and_spacing() -> None:
    after = update_dependency(REQUIREMENTS, dep("requirements.txt", "requirements"), "2.0.0")
    assert changed_lines(REQUIREMENTS, after) == [
        (
            'Acme_SDK[async] == 1.4.0 ; python_version >= "3.9"  # pinned\n',
            'Acme_SDK[async] == 2.0.0 ; python_version >= "3.9"  # pinned\n',
        )
    ]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("acme-sdk>=1.2,<2\n", "acme-sdk>=2.0.0,<3\n"),
        ("acme-sdk~=1.4\n", "acme-sdk~=2.0\n"),
        ("acme-sdk==1.*\n", "acme-sdk==2.*\n"),
        ("acme-sdk>=1.2\n", "acme-sdk>=2.0.0\n"),  # open stays open: no cap is added
        ("acme-sdk (>=1.2, <2) ; os_name == 'posix'\n", "acme-sdk (>=2.0.0, <3) ; os_name == 'posix'\n"),
        ("acme-sdk===1.4.0\n", "acme-sdk===2.0.0\n"),
        ("acme-sdk==1.4.0\r\nrequests\r\n", "acme-sdk==2.0.0\r\nrequests\r\n"),
    ],
)
def test_requirements_policy(before: str, after: str) -> None:
    assert update_dependency(before, dep("requirements.txt", "requirements"), "2.0.0") == after


def test_every_declaration_is_bumped_and_a_second_bump_changes_nothing() -> None:
    before = 'acme-sdk==1.4.0 ; python_version < "3.10"\nacme-sdk>=1.5 ; python_version >= "3.10"\n'
    once = update_dependency(before, dep("requirements.txt", "requirements"), "2.0.0")
    expected = 'acme-sdk==2.0.0 ; python_version < "3.10"\n' + 'acme-sdk>=2.0.0 ; python_version >= "3.10"\n'
    assert once == expected
    assert update_dependency(once, dep("requirements.txt", "requirements"), "2.0.0") == once


PEP621 = """\
[project]
name = "app"
dependencies = [
    "requests>=2",  # http
    'Acme_SDK[async] == 1.4.0 ; python_version >= "3.9"',   # pinned
]

[project.optional-dependencies]
test = ["pytest", "acme.sdk>=1.2,<2"]  # ranges

[tool.ruff]
line-length = 100
"""


def test_pep621_keeps_quotes_extras_markers_and_comments() -> None:
    after = update_dependency(PEP621, dep("pyproject.toml", "pep621", "Acme_SDK"), "2.0.0")
    assert changed_lines(PEP621, after) == [
        (
            "    'Acme_SDK[async] == 1.4.0 ; python_version >= \"3.9\"',   # pinned\n",
            "    'Acme_SDK[async] == 2.0.0 ; python_version >= \"3.9\"',   # pinned\n",
        ),
        (
            'test = ["pytest", "acme.sdk>=1.2,<2"]  # ranges\n',
            'test = ["pytest", "acme.sdk>=2.0.0,<3"]  # ranges\n',
        ),
    ]


POETRY = """\
[tool.poetry.dependencies]
python = "^3.11"
acme-sdk = "^1.4"  # caret
other = "1.4.0"

[tool.poetry.group.test.dependencies]
Acme_SDK = { version = "~1.4", extras = ["mock"] }  # tilde

[tool.poetry.group.legacy.dependencies]
acme_sdk = [{ version = "1.4.0", python = "<3.10" }, { git = "https://git.invalid/a.git" }]

[tool.poetry.group.docs.dependencies.acme-sdk]
version = ">=1.2,<2.0"
optional = true
"""


def test_poetry_caret_tilde_exact_and_range() -> None:
    after = update_dependency(POETRY, dep("pyproject.toml", "poetry"), "2.0.0")
    assert changed_lines(POETRY, after) == [
        ('acme-sdk = "^1.4"  # caret\n', 'acme-sdk = "^2.0.0"  # caret\n'),
        (
            'Acme_SDK = { version = "~1.4", extras = ["mock"] }  # tilde\n',
            'Acme_SDK = { version = "~2.0.0", extras = ["mock"] }  # tilde\n',
        ),
        (
            'acme_sdk = [{ version = "1.4.0", python = "<3.10" }, { git = "https://git.invalid/a.git" }]\n',
            'acme_sdk = [{ version = "2.0.0", python = "<3.10" }, { git = "https://git.invalid/a.git" }]\n',
        ),
        ('version = ">=1.2,<2.0"\n', 'version = ">=2.0.0,<3.0"\n'),
    ]


@pytest.mark.parametrize(
    ("constraint", "bumped"),
    [
        ("^1.4", "^2.1"),
        ("~1.4", "~2.1"),
        ("1.4.0", "2.1"),
        ("==1.4.0", "==2.1"),
        ("1.4.*", "2.1.*"),
        (">=1.2 <2", ">=2.1 <3"),
    ],
)
def test_poetry_constraint_policy(constraint: str, bumped: str) -> None:
    before = f'[tool.poetry.dependencies]\nacme-sdk = "{constraint}"\n'
    after = update_dependency(before, dep("pyproject.toml", "poetry"), "2.1")
    assert after == f'[tool.poetry.dependencies]\nacme-sdk = "{bumped}"\n'


SETUP_CFG = """\
[metadata]
name = app

[options]
# the SDK is pinned
install_requires =
    requests>=2
    acme-sdk==1.4.0
python_requires = >=3.9

[options.extras_require]
async = ACME_SDK[async] >=1.2 ; python_version>"3.8"
"""


def test_setup_cfg_install_requires_and_single_line_extra() -> None:
    after = update_dependency(SETUP_CFG, dep("setup.cfg", "setup.cfg"), "2.0.0")
    assert changed_lines(SETUP_CFG, after) == [
        ("    acme-sdk==1.4.0\n", "    acme-sdk==2.0.0\n"),
        (
            'async = ACME_SDK[async] >=1.2 ; python_version>"3.8"\n',
            'async = ACME_SDK[async] >=2.0.0 ; python_version>"3.8"\n',
        ),
    ]


@pytest.mark.parametrize(
    ("file", "kind", "content"),
    [
        ("requirements.txt", "requirements", "requests\n# acme-sdk==1.4.0\n"),
        ("pyproject.toml", "pep621", PEP621.replace("Acme_SDK", "other").replace("acme.sdk", "other")),
        ("setup.cfg", "setup.cfg", "[options]\ninstall_requires =\n    requests\n"),
    ],
)
def test_undeclared_dependency_is_a_clear_value_error(file: str, kind: str, content: str) -> None:
    with pytest.raises(ValueError, match=rf"'acme-sdk' is not declared in {file}"):
        update_dependency(content, dep(file, kind), "2.0.0")


@pytest.mark.parametrize(
    ("file", "kind", "content"),
    [
        ("requirements.txt", "requirements", "acme-sdk  # any version\n"),
        ("requirements.txt", "requirements", "acme-sdk @ https://example.invalid/acme_sdk-1.4.0.tar.gz\n"),
        ("pyproject.toml", "poetry", '[tool.poetry.dependencies]\nacme-sdk = { path = "../acme" }\n'),
        ("pyproject.toml", "poetry", '[tool.poetry.dependencies]\nacme-sdk = "*"\n'),
    ],
)
def test_declaration_without_a_version_is_refused(file: str, kind: str, content: str) -> None:
    with pytest.raises(ValueError, match="without a version this tool can edit"):
        update_dependency(content, dep(file, kind), "2.0.0")


def test_invalid_target_is_refused() -> None:
    with pytest.raises(ValueError, match="not a PEP 440 version"):
        update_dependency("acme-sdk==1.4.0\n", dep("requirements.txt", "requirements"), "two")


def test_unrelated_text_is_byte_identical() -> None:
    before = PEP621 + "\n# trailing comment with acme-sdk==1.4.0 in it\n"
    after = update_dependency(before, dep("pyproject.toml", "pep621"), "2.0.0")
    diff = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    assert len(diff) == 4
    assert after.endswith("\n# trailing comment with acme-sdk==1.4.0 in it\n")


def test_pep621_escapes_and_crlf_are_kept() -> None:
    before = (
        '[project]\r\ndependencies = [\r\n  "acme-sdk==1.4.0 ; sys_platform == \\"linux\\"",  # x\r\n]\r\n'
    )
    after = update_dependency(before, dep("pyproject.toml", "pep621"), "2.0.0")
    assert after == before.replace("1.4.0", "2.0.0")
