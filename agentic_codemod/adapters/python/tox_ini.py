"""tox.ini: find and rewrite one dependency in the `deps` of `[testenv]` and `[testenv:NAME]` sections;
whether a factor condition holds for an env.

    env_factors(section) -> factors        the factors of the env a section's values are read for
    condition_holds(condition, factors)    tox's reading of `CONDITION: value` (None: unreadable)

Lines are walked the way tox's ini reader sees them (a section header, `key = value` at column 0, indented
continuation lines, full-line `#`/`;` comments). A deps line may start with factor conditions
(`py311,py312: acme-sdk==1.4`, `!lint: ...`): the declaration's section is then `testenv[CONDITION]`
(roles.py reads whether the condition holds for the env the tests run in); option lines (`-r`, `-c`)
and substitutions (`{[testenv]deps}`) declare nothing here. Every byte outside a specifier stays.
"""

from __future__ import annotations

import itertools
import re
import sys
from collections.abc import Iterator

from packaging.requirements import Requirement

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration
from agentic_codemod.config import TOX_FACTOR_MAX_VARIANTS

KIND = "tox.ini"
FACTORS_RE = re.compile(r"\s*!?[A-Za-z0-9_.-]+(?:\s*,\s*!?[A-Za-z0-9_.-]+)*\s*:\s+")
COMMENT_RE = re.compile(r"\s+#.*$")
_FACTOR = re.compile(r"!?[\w.][\w.]*")  # one factor of an env name (tox: split at "-"), maybe negated
_ALTERNATIVES = re.compile(r"((?:\{[^{}]*\})+)|,")  # brace groups kept whole, the commas between them


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


def env_factors(section: str) -> frozenset[str]:
    """The factors of the env whose values `section` gives: `[testenv:py311-cov]` is read for the env
    py311-cov (factors py311, cov); the generic `[testenv]` for the env of the interpreter the tool's
    environments are made with (`tox -e py311` on CPython 3.11), the one the tests run on."""
    name = section.partition(":")[2].strip()
    if not name:
        implementation = "pypy" if sys.implementation.name == "pypy" else "py"
        name = f"{implementation}{sys.version_info.major}{sys.version_info.minor}"
    return frozenset(name.split("-"))


def condition_holds(condition: str, factors: frozenset[str]) -> bool | None:
    """Whether a factor condition (what precedes `: value`) holds for an env with these factors, as tox
    reads it: alternatives separated by commas, each brace group expanded (`py{310,311}-django` is
    py310-django or py311-django), each alternative's factors joined by "-", all of them present (or,
    negated with "!", absent). None when the condition is not one tox reads, or expands to more than
    config.TOX_FACTOR_MAX_VARIANTS env names: the caller does not take the line."""
    variants: list[str] = []
    for has_text, group in itertools.groupby(_ALTERNATIVES.split(condition), key=bool):
        if not has_text:
            continue
        text = "".join(g for g in group if g).strip()
        parts = [[p.strip() for p in part.split(",")] for part in re.split(r"\{([^{}]*)\}", text)]
        count = 1
        for part in parts:
            count *= len(part)
            if len(variants) + count > TOX_FACTOR_MAX_VARIANTS:
                return None
        variants += ["".join(v) for v in itertools.product(*parts)]
    if not variants:
        return None
    holds = False
    for variant in variants:
        names = variant.split("-")
        if not all(_FACTOR.fullmatch(n) for n in names):
            return None
        holds = holds or all((n[1:] not in factors) if n.startswith("!") else (n in factors) for n in names)
    return holds
