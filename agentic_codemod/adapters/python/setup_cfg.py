"""setup.cfg: find and rewrite one dependency in `[options] install_requires`, `tests_require`,
`setup_requires`, `[options.extras_require]` and pbr's `[extras]`.

Lines are walked the way configparser reads them (a section header, `key = value` or `key: value` at
column 0, indented continuation lines, full-line `#`/`;` comments), so each requirement keeps its line
number and its exact position; each requirement itself is parsed by `packaging`.
"""

from __future__ import annotations

import configparser
from collections.abc import Iterator

from packaging.requirements import Requirement

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration

KIND = "setup.cfg"


def read(content: str) -> configparser.ConfigParser:
    """The file as setuptools reads it, or ValueError naming what is wrong."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(content)
    except configparser.Error as exc:
        raise ValueError(f"not a valid setup.cfg: {exc}") from exc
    return parser


def declares_dependencies(content: str) -> bool:
    parser = read(content)
    return parser.has_option("options", "install_requires") or parser.has_section("options.extras_require")


def extras(content: str) -> list[str]:
    parser = read(content)
    return parser.options("options.extras_require") if parser.has_section("options.extras_require") else []


def find(content: str, canonical: str) -> list[Declaration]:
    return pep508.find_on_lines(_requirements(content, canonical), KIND)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pep508.rewrite_on_lines(content, _requirements(content, canonical), KIND, bump)


def _requirements(content: str, canonical: str) -> Iterator[tuple[int, int, str, Requirement, str]]:
    """(line index, offset of the value in the line, value text, requirement, section.key) per match."""
    for index, offset, text, section in _dependency_values(content):
        requirement = pep508.parse(text)
        if requirement is not None and pep508.matches(requirement, canonical):
            yield index, offset, text, requirement, section


def _dependency_values(content: str) -> Iterator[tuple[int, int, str, str]]:
    """Every value line of a dependency key: (line index, offset, text, "section.key")."""
    section, key = "", ""
    for index, line in enumerate(content.splitlines()):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0].isspace():
            offset = 0
        elif stripped.startswith("[") and stripped.endswith("]"):
            section, key = stripped[1:-1].strip(), ""
            continue
        else:
            positions = [p for p in (line.find("="), line.find(":")) if p >= 0]
            if not positions:
                key = ""
                continue
            offset = min(positions) + 1
            key = line[: offset - 1].strip().lower()
        if _holds_dependencies(section, key):
            yield index, offset, line[offset:], f"{section}.{key}"


def _holds_dependencies(section: str, key: str) -> bool:
    return bool(key) and (
        (section == "options" and key in ("install_requires", "tests_require", "setup_requires"))
        or section in ("options.extras_require", "extras")
    )
