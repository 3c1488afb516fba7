"""tox.ini: find and rewrite one dependency in the `deps` of `[testenv]` and `[testenv:NAME]` sections.

Lines are walked the way tox's ini reader sees them (a section header, `key = value` at column 0, indented
continuation lines, full-line `#`/`;` comments). A deps line may start with factor conditions
(`py311,py312: acme-sdk==1.4`, `!lint: ...`), which are skipped; option lines (`-r`, `-c`) and
substitutions (`{[testenv]deps}`) declare nothing here. Every byte outside a specifier stays.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.requirements import Requirement

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration

KIND = "tox.ini"
FACTORS_RE = re.compile(r"\s*!?[A-Za-z0-9_.-]+(?:\s*,\s*!?[A-Za-z0-9_.-]+)*\s*:\s+")
COMMENT_RE = re.compile(r"\s+#.*$")


def find(content: str, canonical: str) -> list[Declaration]:
    return pep508.find_on_lines(_requirements(content, canonical), KIND)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pep508.rewrite_on_lines(content, _requirements(content, canonical), KIND, bump)


def deps_lines(content: str) -> Iterator[tuple[int, str, str]]:
    """(1-based line, deps text without factor conditions, section) of every deps value line."""
    for index, offset, line, section, _factors in _deps_values(content):
        yield index + 1, line[offset:], section


def _requirements(content: str, canonical: str) -> Iterator[tuple[int, int, str, Requirement, str]]:
    """A deps line under factor conditions (`django42: Django>=4.2,<4.3`) is one entry of a version
    matrix: its section is `testenv[django42]` (roles.py: a constraint, kept unless the task names
    tox.ini in sdk.also_bump)."""
    for index, offset, line, section, factors in _deps_values(content):
        text = COMMENT_RE.sub("", line[offset:]).rstrip()
        requirement = pep508.parse(text) if not text.lstrip().startswith(("-", "{")) else None
        if requirement is not None and pep508.matches(requirement, canonical):
            yield index, offset, text, requirement, f"{section}[{factors}]" if factors else section


def _deps_values(content: str) -> Iterator[tuple[int, int, str, str, str]]:
    """(line index, offset of the requirement in the line, the line, section, factor conditions) of each
    deps value line."""
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
            equals = line.find("=")
            if equals < 0:
                key = ""
                continue
            key, offset = line[:equals].strip().lower(), equals + 1
        if key == "deps" and (section == "testenv" or section.startswith("testenv:")):
            factors = FACTORS_RE.match(line, offset)
            condition = factors.group().strip().rstrip(":").strip() if factors else ""
            offset = factors.end() if factors else offset
            while offset < len(line) and line[offset].isspace():
                offset += 1
            yield index, offset, line, section, condition
