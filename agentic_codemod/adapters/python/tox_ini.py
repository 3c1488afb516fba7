"""tox.ini: find and rewrite one dependency in the `deps` of `[testenv]` and `[testenv:NAME]` sections;
tox's factor conditions, read as tox 4 reads them (tox/config/loader/ini/factor.py).

    split_condition(line) -> (condition, offset) | None   the `CONDITION:` a value line starts with
    FactorReading().holds(condition, factors)  whether it holds for an env (None: unreadable), on one
                                           budget per tox.ini (TooComplex past it)
    condition_holds(condition, factors)    the same for one condition
    generic_env(envlist) -> (env, listed)  the env [testenv] is read for, and whether envlist has it
    env_factors(section, generic) -> factors   the factors of the env a section's values are read for

Lines are walked the way tox's ini reader sees them (a section header, `key = value` at column 0, indented
continuation lines, full-line `#`/`;` comments). A deps line may start with factor conditions
(`py311,py312: acme-sdk==1.4`, `!lint: ...`): the declaration's section is then `testenv[CONDITION]`
(roles.py reads whether the condition holds for the env the tests run in); option lines (`-r`, `-c`)
and substitutions (`{[testenv]deps}`) declare nothing here. Every byte outside a specifier stays.
"""

from __future__ import annotations

import itertools
import platform
import re
import sys
from collections.abc import Iterator

from packaging.requirements import Requirement

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration
from agentic_codemod.config import TOX_FACTOR_MAX_CHECKS, TOX_FACTOR_MAX_VARIANTS

KIND = "tox.ini"
COMMENT_RE = re.compile(r"\s+#.*$")
_MARKER = re.compile(r":(?:\s|$)")  # what ends a factor condition (tox: a colon, then space or the end)
_CONDITION_TEXT = re.compile(r"[\w.!{},-]+")  # what a factor condition is written with
_FACTOR = re.compile(r"(?:!?[\w.]+)?")  # one factor of an env name (tox: split at "-"), maybe negated
_ALTERNATIVES = re.compile(r"((?:\{[^{}]+\})+)|,")  # brace groups kept whole, the commas between them
_BRACES = re.compile(r"\{([^{}]+)\}")
_CLOSED_RANGE = re.compile(r"(?<![\w.-])(\d+)-(\d+)([,}])")  # tox 4: py3{10-13} is py310,...,py313
_OPEN_RANGE = re.compile(r"(?<![\w.-])\d+-[,}]|(?<=[{,])-\d+[,}]")


def find(content: str, canonical: str) -> list[Declaration]:
    return pep508.find_on_lines(_requirements(content, canonical), KIND)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pep508.rewrite_on_lines(content, _requirements(content, canonical), KIND, bump)


def deps_lines(content: str) -> Iterator[tuple[int, str, str]]:
    """(1-based line, deps text without factor conditions, section) of every deps value line."""
    for index, offset, line, section, _factors in _deps_values(content):
        yield index + 1, line[offset:], section


def _requirements(content: str, canonical: str) -> Iterator[tuple[int, int, str, Requirement, str]]:
    """A deps line under factor conditions (`django42: Django>=4.2,<4.3`) has the section
    `testenv[django42]`: roles.py reads whether the condition holds for the env the tests run in (the
    env's own declaration, bumped) or not (a version matrix entry, a constraint kept unless the task
    names tox.ini in sdk.also_bump)."""
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
            while offset < len(line) and line[offset].isspace():
                offset += 1
            split = split_condition(line, offset)
            condition, offset = split if split is not None else ("", offset)
            yield index, offset, line, section, condition


def split_condition(line: str, start: int = 0) -> tuple[str, int] | None:
    """The factor condition a value line starts with (from `start`), as tox reads one: the text before
    the first ":" that is followed by whitespace or the line's end, when it reads as factor groups; and
    the offset of what follows it. None: no condition (tox keeps the whole line: `pytest --cov-report
    term: x`, a URL)."""
    marker = _MARKER.search(line, start)
    if marker is None:
        return None
    condition = line[start : marker.start()].strip()
    if not _CONDITION_TEXT.fullmatch(re.sub(r"\s*([{},])\s*", r"\1", condition)):
        return None  # tox strips the space around braces and commas, and reads no other
    offset = marker.end()
    while offset < len(line) and line[offset].isspace():
        offset += 1
    return condition, offset


class TooComplex(ValueError):
    """A tox.ini whose factor conditions take more than config.TOX_FACTOR_MAX_CHECKS to read."""


class FactorReading:
    """The factor conditions of one tox.ini, read for any number of envs: each condition expanded once,
    each (condition, env) answered once, and at most `max_checks` factor groups compared in all (a
    hostile tox.ini of 40 conditions of 1,024 groups each and 200 envs took 27 s per reading, read
    several times a run): past that TooComplex."""

    def __init__(self, max_checks: int = TOX_FACTOR_MAX_CHECKS) -> None:
        self.max_checks = max_checks
        self.checks = 0
        self._groups: dict[str, tuple[tuple[frozenset[str], frozenset[str]], ...] | None] = {}
        self._held: dict[tuple[str, frozenset[str]], bool | None] = {}

    def holds(self, condition: str, factors: frozenset[str]) -> bool | None:
        """Whether `condition` holds for an env with these factors (the platform's are added, as tox
        adds them); None: not a condition tox reads, or one past config.TOX_FACTOR_MAX_VARIANTS."""
        key = (condition, factors)
        if key not in self._held:
            if condition not in self._groups:
                self._groups[condition] = _groups(condition)
            groups = self._groups[condition]
            if groups is not None:
                self.checks += len(groups)
                if self.checks > self.max_checks:
                    raise TooComplex(
                        f"its factor conditions take more than {self.max_checks} comparisons to read "
                        "(config.TOX_FACTOR_MAX_CHECKS)"
                    )
            current = factors | _PLATFORM_FACTORS
            self._held[key] = (
                None
                if groups is None
                else any(positive <= current and not negative & current for positive, negative in groups)
            )
        return self._held[key]


def condition_holds(condition: str, factors: frozenset[str]) -> bool | None:
    """One condition for one env (FactorReading.holds, on its own budget)."""
    return FactorReading().holds(condition, factors)


def generic_env(envlist: str | None) -> tuple[str, bool]:
    """The env the generic [testenv] is read for: the first env of `envlist` ([tox] envlist / env_list)
    named only by factors of the interpreter the tests run on (`py311`, `py3`, `py`, `python`, `py3.11`),
    else `py311` (`tox -e py311` on CPython 3.11); and whether the project lists it (no envlist lists
    every env). An envlist of `py311-sdk{1,2}` lists no bare py311: a factor line there is another
    env's, a matrix entry (roles.py)."""
    here = _interpreter_factors()
    default = f"{_implementation()}{sys.version_info.major}{sys.version_info.minor}"
    if envlist is None or not envlist.strip():
        return default, True
    for entry in envlist.splitlines():
        groups = _groups(entry.strip()) if entry.strip() else None
        for positive, negative in groups or ():
            if positive and not negative and positive <= here:
                return "-".join(sorted(positive)), True
    return default, False


def env_factors(section: str, generic: str = "") -> frozenset[str]:
    """The factors of the env whose values `section` gives: `[testenv:py311-cov]` is read for the env
    py311-cov (factors py311, cov); the generic `[testenv]` for `generic` (generic_env), by default the
    env of the interpreter the tool's environments are made with (`tox -e py311` on CPython 3.11)."""
    name = section.partition(":")[2].strip() or generic
    if not name:
        name = f"{_implementation()}{sys.version_info.major}{sys.version_info.minor}"
    return frozenset(name.split("-"))


def _groups(condition: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...] | None:
    """tox's factor groups of a condition, each (factors that must be present, factors that must be
    absent): alternatives separated by commas, each brace group expanded in place (`py{310,311}-django`
    is py310-django or py311-django, `py3{10-12}` py310, py311 or py312), each alternative's factors
    joined by "-". None: not a condition tox reads, an open range (`{10-}`), or more than
    config.TOX_FACTOR_MAX_VARIANTS alternatives (counted before expanding)."""
    if _OPEN_RANGE.search(condition):
        return None
    try:
        condition = _CLOSED_RANGE.sub(_expanded_range, condition)
    except OverflowError:
        return None
    variants: list[str] = []
    for has_text, group in itertools.groupby(_ALTERNATIVES.split(condition), key=bool):
        if not has_text:
            continue
        text = "".join(g for g in group if g).strip()
        parts = [[p.strip() for p in part.split(",")] for part in _BRACES.split(text)]
        count = 1
        for part in parts:
            count *= len(part)
            if len(variants) + count > TOX_FACTOR_MAX_VARIANTS:
                return None
        variants += ["".join(v) for v in itertools.product(*parts)]
    groups: dict[tuple[frozenset[str], frozenset[str]], None] = {}
    for variant in variants:
        names = variant.split("-")
        if not all(_FACTOR.fullmatch(n) for n in names):
            return None
        positive = frozenset(n for n in names if not n.startswith("!"))
        groups[(positive, frozenset(n[1:] for n in names if n.startswith("!")))] = None
    return tuple(groups) or None


def _expanded_range(match: re.Match[str]) -> str:
    start, end = int(match.group(1)), int(match.group(2))
    if abs(end - start) >= TOX_FACTOR_MAX_VARIANTS:
        raise OverflowError(match.group())
    step = 1 if start <= end else -1
    return ",".join(str(n) for n in range(start, end + step, step)) + match.group(3)


def _implementation() -> str:
    return "pypy" if sys.implementation.name == "pypy" else "py"


def _interpreter_factors() -> frozenset[str]:
    """The env-name factors tox runs on this interpreter: py, py3, py311, py3.11, python, python3.11..."""
    major, minor = sys.version_info.major, sys.version_info.minor
    names = {"py", "python", _implementation()}
    for prefix in {"py", "python", _implementation(), sys.implementation.name}:
        names |= {f"{prefix}{major}", f"{prefix}{major}{minor}", f"{prefix}{major}.{minor}"}
    return frozenset(names)


def _platform_factors() -> frozenset[str]:
    """tox adds the platform (`linux`) and the machine's instruction set (`x86_64`) to every env's
    factors."""
    machine = platform.machine().lower()
    return frozenset({sys.platform, {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)})


_PLATFORM_FACTORS = _platform_factors()
