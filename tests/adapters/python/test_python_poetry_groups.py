"""Poetry dependency groups as PEP 508 requirement strings: each style, checked with packaging."""

from __future__ import annotations

import shlex
from typing import Any

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from agentic_codemod.adapters.python import install_commands, poetry_groups


@pytest.mark.parametrize(
    ("value", "expected", "admits", "excludes"),
    [
        ("^7.1.2", "pytest>=7.1.2,<8", "7.4.4", "8.0.0"),
        ("^0.2.3", "pytest>=0.2.3,<0.3", "0.2.9", "0.3.0"),
        ("~1.4", "pytest>=1.4,<1.5", "1.4.7", "1.5.0"),
        ("1.4.0", "pytest==1.4.0", "1.4.0", "1.4.1"),
        (">=2,<3", "pytest>=2,<3", "2.9", "3.0"),
        ("*", "pytest", "99.0", None),
        ("^1.0 || ^2.0", "pytest>=2.0,<3", "2.5", "1.5"),
        ({"version": "^8", "extras": ["toml"]}, "pytest[toml]>=8,<9", "8.3", "9.0"),
    ],
)
def test_version_styles(value: Any, expected: str, admits: str, excludes: str | None) -> None:
    text = poetry_groups.requirement("pytest", value)
    assert text == expected
    requirement = Requirement(text)
    assert admits in requirement.specifier
    assert excludes is None or excludes not in requirement.specifier


@pytest.mark.parametrize(
    ("python", "on_311"),
    [("^3.7", True), (">=3.5,<3.7", False), ("~2.7 || ^3.8", True), ("<3.8", False), ("*", True)],
)
def test_python_constraints_become_markers_that_packaging_evaluates(python: str, on_311: bool) -> None:
    text = poetry_groups.requirement(
        "pytest", {"version": "^7", "python": python, "markers": "os_name != 'x'"}
    )
    assert text is not None
    marker = Requirement(text).marker
    assert marker is not None
    environment = {key: str(value) for key, value in default_environment().items()}
    environment |= {"python_full_version": "3.11.4", "os_name": "posix"}
    assert marker.evaluate(environment) is on_311


@pytest.mark.parametrize(
    "value",
    [
        {"git": "https://example.invalid/x.git"},
        {"path": "../x"},
        {"url": "https://x/y.whl"},
        "not a range",
        3,
    ],
)
def test_what_pip_cannot_take_is_none_never_guessed(value: Any) -> None:
    assert poetry_groups.requirement("x", value) is None


def test_groups_read_the_legacy_dev_dependencies_and_every_group_without_python() -> None:
    project = {
        "tool": {
            "poetry": {
                "dependencies": {"python": "^3.8", "runtime": "^1"},
                "dev-dependencies": {"pytest": "^7"},
                "group": {"dev": {"dependencies": {"mock": "*"}}, "docs": {"dependencies": {"furo": "*"}}},
            }
        }
    }
    found = {
        name: [e.requirement for e in entries] for name, entries in poetry_groups.groups(project).items()
    }
    assert found == {"dev": ["pytest>=7,<8", "mock"], "docs": ["furo"]}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("pdm sync -G :all,test", install_commands.Installs(groups=["test"], extras=[":all"])),
        ("pdm install --group=test -G docs", install_commands.Installs(groups=["test", "docs"])),
        (
            "python -m pip install -U -r req.txt -cconstraints.txt pkg>=1",
            install_commands.Installs(requirement_lines=["-r req.txt", "-c constraints.txt", "pkg>=1"]),
        ),
        ("uv pip install -e .[test]", install_commands.Installs(requirement_lines=["-e .[test]"])),
        (
            "uv sync --extra a --all-groups --all-extras",
            install_commands.Installs(extras=["a", ":all"], all_groups=True),
        ),
        (
            'poetry install --with dev,test --extras "x y"',
            install_commands.Installs(groups=["dev", "test"], extras=["x", "y"]),
        ),
        ("python -m pytest tests", None),
        ("pdm run pytest", None),
        # helper-4's review: the values of options read as requirements (`eager`, `:all:`, `60`, an index
        # URL fetched as a direct requirement, `--src /tmp/src` refused as a path outside)
        (
            "python -I -m pip install --upgrade-strategy eager --timeout 60 --progress-bar off "
            "--no-binary :all: -i https://pypi.invalid/simple --extra-index-url https://x.invalid "
            "-f ./wheels --src /tmp/src --use-feature=truststore -c ci/c.txt pkg",
            install_commands.Installs(requirement_lines=["-c ci/c.txt", "pkg"]),
        ),
        # pip takes a long option by an unambiguous prefix; tox 4's default interpreter flags; python3.11
        (
            "python3.11 -m pip install --constr ci/c.txt --requirement=r.txt --edit ./p --group test",
            install_commands.Installs(
                requirement_lines=["--constraint ci/c.txt", "--requirement r.txt", "--editable ./p"],
                groups=["test"],
            ),
        ),
        (
            "python -m uv pip install -c a.txt y",
            install_commands.Installs(requirement_lines=["-c a.txt", "y"]),
        ),
        # helper-5's review: a flag that is also a prefix of a longer option is itself; uv's spellings
        (
            "pip install --no-build-isolation --no-deps a==1",
            install_commands.Installs(requirement_lines=["a==1"]),
        ),
        ("uv pip install --reinstall --no-build b==1", install_commands.Installs(requirement_lines=["b==1"])),
        (
            "uv pip install --override o.txt --overrides=p.txt --constraints c.txt",
            install_commands.Installs(
                requirement_lines=["--constraint o.txt", "--constraint p.txt", "--constraint c.txt"]
            ),
        ),
        # global options before the command, with their values (helper-5's review: not read, green)
        (
            "python -m pip -q --timeout 60 install acme==1",
            install_commands.Installs(requirement_lines=["acme==1"]),
        ),
        ("uv -q pip --python 3.11 install b==1", install_commands.Installs(requirement_lines=["b==1"])),
        ("pip --log install.txt list", None),
        ("python -c pass", None),
        ("python -m pipx install x", None),
    ],
)
def test_install_commands(line: str, expected: install_commands.Installs | None) -> None:
    assert install_commands.parse(shlex.split(line)) == expected
