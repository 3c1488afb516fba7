"""tox.ini: find and rewrite one dependency in the `deps` of `[testenv]` and `[testenv:NAME]` sections;
tox's factor conditions, read as tox 4 reads them (tox/config/loader/ini/factor.py).

    split_condition(line) -> (condition, offset) | None   the `CONDITION:` a value line starts with
    FactorReading().holds(condition, factors)  whether it holds for an env (None: unreadable), on one
                                           budget per tox.ini (TooComplex past it)
    FactorReading().takes(condition, env)  whether the line is one of env's (EnvReading: an env the
                                           envlist does not name takes interpreter conditions only)
    condition_holds / condition_takes      the same for one condition
    generic_env(envlist) -> EnvReading     the env [testenv] is read for, and whether envlist has it
    env_factors(section) -> factors        the factors of the env a [testenv:NAME] is read for
    installed_with(key, lines) -> lines    what a testenv's setenv, constraints or install_command lines
                                           add to every install of the env (`-c FILE`, `-r FILE`, ...)
    outside_deps_lines(content) -> (line, text)   those lines of every section, for the file walk
    substituted(text) -> text              the substitutions the file itself fixes, made
    unread(key, line) -> bool              a line the install reads through a substitution left unmade

Lines are walked the way tox's ini reader sees them (a section header, `key = value` at column 0, indented
continuation lines, full-line `#`/`;` comments). A deps line may start with factor conditions
(`py311,py312: acme-sdk==1.4`, `!lint: ...`): the declaration's section is then `testenv[CONDITION]`
(roles.py reads whether the condition holds for the env the tests run in); option lines (`-r`, `-c`)
and substitutions (`{[testenv]deps}`) declare nothing here. Every byte outside a specifier stays.

tox's other two places for the same configuration are read here too:

    TOML (tox.toml, tox >= 4.21)     `[env_run_base] deps` as [testenv]'s, `[env.NAME] deps` as
                                     [testenv:NAME]'s (kind `tox.toml`): found and rewritten in place by
                                     pyproject.py's tomlkit edit, as hatch.toml is
    find_in_pyproject(text, name)    pyproject.toml's [tool.tox]: `env_run_base` / `env.NAME` deps as
                                     tox.toml's, and the `legacy_tox_ini` string read as a tox.ini; each
                                     uneditable (the bump edits what pyproject.py reads, never a string's
                                     inside), at its line in pyproject.toml (the key's where escapes
                                     move the string's lines)
"""

from __future__ import annotations

import itertools
import platform
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import tomlkit
from packaging.requirements import Requirement
from tomlkit.items import String
from tomlkit.toml_document import TOMLDocument

from agentic_codemod.adapters.python import install_commands, pep508, pyproject
from agentic_codemod.adapters.python.pep508 import Bump, Declaration
from agentic_codemod.config import TOX_FACTOR_MAX_CHECKS, TOX_FACTOR_MAX_VARIANTS

KIND = "tox.ini"
_DELIMITER = re.compile(r"[=:]")  # configparser: a key is set with the first = or :
_SEPARATORS = re.compile(r"([{},])")
_MARKER = re.compile(r":(?:\s|$)")  # what ends a factor condition (tox: a colon, then space or the end)
_CONDITION_TEXT = re.compile(r"[\w.!{},*?\[\]-]+")  # what a factor condition is written with (globs: tox
# reads them as factors no env has)
_FACTOR = re.compile(r"(?:!?[\w.]+)?")  # one factor of an env name (tox: split at "-"), maybe negated
_ALTERNATIVES = re.compile(r"((?:\{[^{}]+\})+)|,")  # brace groups kept whole, the commas between them
_BRACES = re.compile(r"\{([^{}]+)\}")
SECTION_REF = re.compile(r"\{\[([^\]]+)\]([\w-]+)\}")  # a value taken from another section: {[base]deps}
_CLOSED_RANGE = re.compile(r"(?<![\w.-])(\d{1,6})-(\d{1,6})([,}])")  # tox 4: py3{10-13} is py310,...,py313
_OPEN_RANGE = re.compile(r"(?<![\w.-])\d+-[,}]|(?<=[{,])-\d+[,}]")


def find(content: str, canonical: str) -> list[Declaration]:
    return pep508.find_on_lines(_requirements(content, canonical), KIND)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pep508.rewrite_on_lines(content, _requirements(content, canonical), KIND, bump)


TOML_KIND = "tox.toml"
LEGACY_KEY = "legacy_tox_ini"


class _TomlFormat:
    """tox.toml: the deps arrays of `[env_run_base]` (section `testenv`) and `[env.NAME]`
    (`testenv:NAME`), so roles.py gives them the roles of the tox.ini sections tox reads them as."""

    def find(self, content: str, canonical: str) -> list[Declaration]:
        return pyproject.find(content, canonical, _toml_slots)

    def rewrite(self, content: str, canonical: str, bump: Bump) -> str:
        return pyproject.rewrite(content, canonical, bump, _toml_slots)


TOML = _TomlFormat()


def _toml_slots(doc: TOMLDocument, canonical: str) -> list[pyproject._Slot]:
    return _env_slots(doc, canonical)


def _env_slots(table: Any, canonical: str) -> list[pyproject._Slot]:
    """The deps slots of a tox TOML configuration (`table`: tox.toml, or pyproject.toml's [tool.tox]);
    sections `testenv` and `testenv:NAME`, which roles.py reads as tox.ini's."""
    base = table.get("env_run_base") if isinstance(table, dict) else None
    envs = table.get("env") if isinstance(table, dict) else None
    arrays = [("testenv", base.get("deps") if isinstance(base, dict) else None)]
    if isinstance(envs, dict):
        arrays += [
            (f"testenv:{name}", env.get("deps"))
            for name, env in envs.items()
            if isinstance(env, dict) and not set(name) & set("[]")  # `]` would read as factor conditions
        ]
    return [
        slot
        for section, array in arrays
        for slot in pyproject.requirement_slots(array, canonical, TOML_KIND, section)
    ]


def _pyproject_slots(doc: TOMLDocument, canonical: str) -> list[pyproject._Slot]:
    tool = doc.get("tool")
    return _env_slots(tool.get("tox") if isinstance(tool, dict) else None, canonical)


def find_in_pyproject(content: str, canonical: str) -> list[Declaration]:
    """The deps declarations of pyproject.toml's [tool.tox]: its native tables (`[tool.tox.env_run_base]`,
    `[tool.tox.env.NAME]`) and its `legacy_tox_ini` string (read as tox.ini is). Each is uneditable (the
    bump edits what pyproject.py reads), at its line in pyproject.toml; one without a version admits every
    version and is left out (an uneditable one would read as a computed value). ValueError when the TOML
    or the ini cannot be read."""
    found = [
        Declaration(
            d.name,
            d.specifier,
            d.line,
            d.kind,
            d.style,
            d.section,
            f"line {d.line} ([tool.tox] {_shown(d.section)} deps): {d.name}{d.specifier} in tox's "
            "configuration in pyproject.toml, which the tool does not rewrite",
        )
        for d in pyproject.find(content, canonical, _pyproject_slots)
    ]
    found += _legacy(content, canonical)
    return sorted((d for d in found if d.specifier), key=lambda d: d.line)


def _shown(section: str) -> str:
    return "env_run_base" if section == "testenv" else f"env.{section.removeprefix('testenv:')}"


def _legacy(content: str, canonical: str) -> list[Declaration]:
    doc = pyproject.parse(content)
    tool = doc.get("tool")
    tox = tool.get("tox") if isinstance(tool, dict) else None
    value = tox.get(LEGACY_KEY) if isinstance(tox, dict) else None
    if not isinstance(value, str):
        return []
    first, exact = _legacy_start(doc, value)
    found = []
    for d in find(str(value), canonical):
        line = first + d.line - 1 if exact else first
        at = "" if exact else f", its line {d.line} (escapes move the string's lines)"
        why = (
            f"line {line} ([tool.tox] {LEGACY_KEY}{at}, [{d.section}] deps): {d.name}{d.specifier} in tox's "
            "configuration held in a string, which the tool does not rewrite"
        )
        found.append(Declaration(d.name, d.specifier, line, KIND, d.style, d.section, why))
    return found


def _legacy_start(doc: TOMLDocument, value: str) -> tuple[int, bool]:
    """The pyproject.toml line of the string's first line, and whether every line of the string is the
    file's line after it (no escape or other spelling in between); else the key's line."""
    raw = value.as_string() if isinstance(value, String) else ""
    delimiter = value.type.value if isinstance(value, String) else ""
    body = raw[len(delimiter) : len(raw) - len(delimiter)]
    trimmed = len(delimiter) == 3 and body.startswith(("\n", "\r\n"))  # TOML drops that first newline
    kept = body.removeprefix("\r\n" if body.startswith("\r\n") else "\n") if trimmed else body
    opened = _marked_line(doc)
    exact = bool(raw) and kept == str(value)
    return (opened + (1 if trimmed else 0) if exact else opened), exact


def _marked_line(doc: TOMLDocument) -> int:
    """The line `[tool.tox] legacy_tox_ini` starts on, found by writing a marker in its place."""
    copy = tomlkit.parse(tomlkit.dumps(doc))
    copy["tool"]["tox"][LEGACY_KEY] = pyproject.LINE_MARKER
    for number, line in enumerate(tomlkit.dumps(copy).splitlines(), start=1):
        if pyproject.LINE_MARKER in line:
            return number
    raise AssertionError("line marker vanished from the TOML output")


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
        text = uncommented(line[offset:])
        requirement = pep508.parse(text) if not text.lstrip().startswith(("-", "{")) else None
        if requirement is not None and pep508.matches(requirement, canonical):
            yield index, offset, text, requirement, f"{section}[{factors}]" if factors else section


# Keys of a testenv, besides deps and commands, that add to every install of the env (deps and the package);
# tox 4 reads set_env as setenv.
INSTALL_KEYS = ("setenv", "set_env", "constraints", "install_command")
# Environment variables whose value is constraints files every install in the env applies: pip's
# (PIP_<option>), and uv's where tox installs with uv (tox-uv; an override forces a version: read as a
# constraint, what the tests' install may take).
CONSTRAINT_VARIABLES = frozenset({"PIP_CONSTRAINT", "UV_CONSTRAINT", "UV_OVERRIDE"})
# install_command's own substitutions: what tox installs ({packages}) and its options ({opts}) come from
# deps and the package; what is left is the command's own arguments (`-c FILE`, a literal requirement).
_INSTALL_SUBSTITUTION = re.compile(r"\{opts\}|\{packages\}")
_NO_FILE = "/dev/null"  # `PIP_CONSTRAINT = /dev/null`: no constraints in this env (an empty file)


def installed_with(key: str, lines: list[str]) -> list[str]:
    """What the value lines of a testenv's `key` (an INSTALL_KEYS key: the lines that hold for the env, in
    order, already `substituted`) add to every install of the env, as requirements-file lines:
      setenv   the files PIP_CONSTRAINT / UV_CONSTRAINT name (whitespace-separated) as `-c FILE`, each
               variable as its last assignment sets it (`py38: PIP_CONSTRAINT = /dev/null` after the
               general one replaces it there); empty or /dev/null: none;
      constraints     each file as `-c FILE` (tox 4's own setting);
      install_command its own arguments (install_commands.parse: `-c FILE`, `-r FILE`, requirements).
    A value with a substitution left unmade is not read, as deps' are not (`{env:NAME}` without a local
    default: whatever the CI job sets; `unread` names it)."""
    if key in ("setenv", "set_env"):
        assigned: dict[str, str] = {}
        for line in lines:
            name, equals, value = line.partition("=")
            if equals and name.strip() in CONSTRAINT_VARIABLES:
                assigned[name.strip()] = value
        files = [f for value in assigned.values() if "{" not in value for f in value.split()]
        return [f"-c {file}" for file in files if file != _NO_FILE]
    found = []
    for line in lines:
        if key == "install_command":
            line = _INSTALL_SUBSTITUTION.sub("", line)
        if "{" in line:
            continue
        if key == "constraints":
            found += [f"-c {file}" for file in line.split()]
        elif key == "install_command":
            try:
                parsed = install_commands.parse(shlex.split(line))
            except ValueError:
                continue
            found += parsed.requirement_lines if parsed is not None else []
    return found


def unread(key: str, line: str) -> bool:
    """Whether a deps or INSTALL_KEYS line ({toxinidir} and the like already made) would add to the
    install through a substitution the tool does not resolve (`-c{env:TOX_CONSTRAINTS_FILE:https://...}`,
    `PIP_CONSTRAINT = {env:C}`): what it adds is unknown here."""
    if key in ("setenv", "set_env"):
        name, equals, value = line.partition("=")
        return bool(equals) and name.strip() in CONSTRAINT_VARIABLES and "{" in value
    if key == "install_command":
        line = _INSTALL_SUBSTITUTION.sub("", line)
    return key in ("deps", *INSTALL_KEYS) and "{" in line


def outside_deps_lines(content: str) -> Iterator[tuple[int, str]]:
    """(1-based line, requirements-file line) of what every section's setenv, constraints and
    install_command lines add to an install (installed_with), for the walk of the files pip reads: a
    constraints file named there is a dependency file, checked and found as one named by `-c` in deps."""
    for (_section, key), lines in _values(content).items():
        if key not in INSTALL_KEYS:
            continue
        first, parts = 0, list[str]()
        for index, offset, line, _condition in lines:  # a line ending in `\` goes on on the next
            value = uncommented(line[offset:]).strip()
            first = first if parts else index
            parts.append(value.removesuffix("\\"))
            if value.endswith("\\"):
                continue
            for text in installed_with(key, [substituted(" ".join(parts))]):
                yield first + 1, text
            parts = []
        if parts:
            for text in installed_with(key, [substituted(" ".join(parts))]):
                yield first + 1, text


# {env:NAME:DEFAULT}: what tox reads where NAME is not set (a CI job may set it)
_ENV_DEFAULT = re.compile(r"\{env:[^:{}]+:([^{}]*)\}")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def substituted(text: str) -> str:
    """A value with the substitutions the file itself fixes made: {toxinidir} and {tox_root} (tox.ini's
    folder, "."), {/} (the path separator), {envpython} ("python") and {envbindir}/ (the env's programs,
    run by name), and {env:NAME:DEFAULT} where DEFAULT is a local path (the file the tests' install reads
    unless the CI job sets NAME; a URL default stays a substitution, left out: the tool reads no file from
    the network). Other substitutions stay (a NAME the env's own setenv sets is not looked up there)."""
    text = text.replace("{toxinidir}", ".").replace("{tox_root}", ".").replace("{/}", "/")
    for name in ("{envpython}", "{env_python}"):  # the env's own interpreter, and the folder it is in
        text = text.replace(name, "python")
    for name in ("{envbindir}/", "{env_bin_dir}/"):
        text = text.replace(name, "")
    return _ENV_DEFAULT.sub(lambda m: m.group(0) if _URL.match(m.group(1)) else m.group(1), text)


# tox's own per-env values, as folders inside the repository's copy (where the tests run): what a command
# passes them to writes there (`--basetemp={envtmpdir}`, `--junitxml={envlogdir}/junit-{envname}.xml`).
ENV_PATHS = {
    "{envtmpdir}": ".tox/{name}/tmp",
    "{env_tmp_dir}": ".tox/{name}/tmp",
    "{envlogdir}": ".tox/{name}/log",
    "{env_log_dir}": ".tox/{name}/log",
    "{envdir}": ".tox/{name}",
    "{env_dir}": ".tox/{name}",
    "{toxworkdir}": ".tox",
    "{work_dir}": ".tox",
    "{envname}": "{name}",
    "{env_name}": "{name}",
}


def env_substituted(text: str, name: str) -> str:
    """A command line with tox's per-env values made for env `name` (ENV_PATHS): a line holding one was
    left out, and with it the env's whole command, deps and variables (helper-45: pytest-localserver's
    `--junitxml=junit-{envname}.xml`)."""
    for key, value in ENV_PATHS.items():
        text = text.replace(key, value.replace("{name}", name))
    return text


def uncommented(text: str) -> str:
    """A value line without its ` # comment`, as pip reads one (pep508.strip_comment)."""
    return pep508.strip_comment(text).rstrip()


def _deps_values(content: str) -> Iterator[tuple[int, int, str, str, str]]:
    """(line index, offset of the requirement in the line, the line, section, factor conditions) of each
    deps value line, in file order: those of `[testenv]` and `[testenv:NAME]`, and the lines their deps
    take from another section by `{[SECTION]KEY}` (`deps = {[base]deps}`: tox installs `[base]`'s lines
    for that env, so they are its declarations, in its section, under the conditions of every line on the
    way; ci_config reads them the same way for the tests' install)."""
    values = _values(content)
    found: dict[int, tuple[int, int, str, str, str]] = {}
    for (section, key), lines in values.items():
        if _own_deps(section, key):
            for index, offset, line, condition in lines:
                found[index] = (index, offset, line, section, condition)
    reached: dict[int, list[tuple[int, int, str, str, str]]] = {}
    for (section, key), lines in values.items():
        if _own_deps(section, key):
            _through(values, section, "", lines, 0, reached, set())
    for index, readings in reached.items():
        if index not in found:
            found[index] = _reading(readings)
    return iter(sorted(found.values()))


def _reading(readings: list[tuple[int, int, str, str, str]]) -> tuple[int, int, str, str, str]:
    """One line reached through several references: as [testenv]'s where [testenv] reaches it (the env
    the tests run in, unless the project names another), else as the first env's; under the conditions
    of every path of that env joined (any one taking it installs it)."""
    sections = [r[3] for r in readings]
    section = "testenv" if "testenv" in sections else sections[0]
    conditions = [r[4] for r in readings if r[3] == section]
    condition = "" if "" in conditions else ",".join(dict.fromkeys(conditions))
    index, offset, line = readings[0][:3]
    return index, offset, line, section, condition


def _own_deps(section: str, key: str) -> bool:
    return key == "deps" and (section == "testenv" or section.startswith("testenv:"))


_Value = tuple[int, int, str, str]  # (line index, offset of the value in the line, the line, condition)


def _values(content: str) -> dict[tuple[str, str], list[_Value]]:
    """Every (section, key)'s value lines, as tox's ini reader sees them. A section header may carry a
    comment after its `]` and a key may be set with `:`, as configparser reads them (keys lowercased);
    a line continued from one ending in `\\` has that line's condition (tox skips the continuation of a
    line it skips), up to a blank or comment line."""
    values: dict[tuple[str, str], list[_Value]] = {}
    section, key, continued = "", "", None
    for index, line in enumerate(content.splitlines()):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continued = None  # a blank or comment line ends a continuation (ci_config._continued)
            continue
        if line[0].isspace():
            offset = 0
        elif stripped.startswith("[") and "]" in stripped:
            section, key, continued = stripped[1 : stripped.rindex("]")].strip(), "", None
            continue
        else:
            delimiter = _DELIMITER.search(line)
            if delimiter is None:
                key, continued = "", None
                continue
            key, offset, continued = line[: delimiter.start()].strip().lower(), delimiter.end(), None
        if not key:
            continue
        while offset < len(line) and line[offset].isspace():
            offset += 1
        split = split_condition(line, offset) if continued is None else None
        condition, offset = split if split is not None else (continued or "", offset)
        continued = condition if uncommented(line).endswith("\\") else None
        values.setdefault((section, key), []).append((index, offset, line, condition))
    return values


def _through(
    values: dict[tuple[str, str], list[_Value]],
    section: str,
    held: str,
    lines: list[_Value],
    depth: int,
    reached: dict[int, list[tuple[int, int, str, str, str]]],
    walked: set[tuple[str, str, str, str]],
) -> None:
    """The lines `section`'s deps take through `{[SECTION]KEY}` lines among `lines` (read under the
    condition `held`), at most five references deep as ci_config reads them; every path to a line kept."""
    for index, offset, line, condition in lines:
        both = _both(held, condition)
        reference = SECTION_REF.fullmatch(uncommented(line[offset:]).strip())
        if reference is None:
            if depth:
                reached.setdefault(index, []).append((index, offset, line, section, both))
            continue
        target = (reference.group(1), reference.group(2).lower())
        if target not in values and target[0] != "testenv":  # tox: a key the section lacks is [testenv]'s
            target = ("testenv", target[1])
        if depth >= 5 or _own_deps(*target) or (section, *target, both) in walked:
            continue  # an env's own deps are found as its own
        walked.add((section, *target, both))
        _through(values, section, both, values.get(target, []), depth + 1, reached, walked)


def _both(first: str, second: str) -> str:
    """One factor condition that holds where both hold (`a,b` and `c`: `a-c,b-c`); TooComplex past
    config.TOX_FACTOR_MAX_VARIANTS alternatives."""
    if not first or not second:
        return first or second
    ones, others = _alternatives(first), _alternatives(second)
    if len(ones) * len(others) > TOX_FACTOR_MAX_VARIANTS:  # each reference deeper multiplies them
        raise TooComplex(
            f"factor conditions joined across {{[SECTION]KEY}} references take more than "
            f"{TOX_FACTOR_MAX_VARIANTS} alternatives (config.TOX_FACTOR_MAX_VARIANTS)"
        )
    return ",".join(f"{a}-{b}" for a in ones for b in others)


def _alternatives(condition: str) -> list[str]:
    """A condition's comma-separated alternatives, brace groups kept whole."""
    return [
        "".join(g for g in group if g).strip()
        for has_text, group in itertools.groupby(_ALTERNATIVES.split(condition), key=bool)
        if has_text
    ]


def split_condition(line: str, start: int = 0) -> tuple[str, int] | None:
    """The factor condition a value line starts with (from `start`), as tox reads one: the text before
    the first ":" that is followed by whitespace or the line's end, when it reads as factor groups; and
    the offset of what follows it. None: no condition (tox keeps the whole line: `pytest --cov-report
    term: x`, a URL)."""
    marker = _MARKER.search(line, start)
    if marker is None:
        return None
    condition = line[start : marker.start()].strip()
    if not _CONDITION_TEXT.fullmatch("".join(part.strip() for part in _SEPARATORS.split(condition))):
        return None  # tox strips the space around braces and commas, and reads no other
    offset = marker.end()
    while offset < len(line) and line[offset].isspace():
        offset += 1
    return condition, offset


@dataclass(frozen=True)
class EnvReading:
    """The env a section's factor lines are read for: its factors, and whether the project lists it.
    An env the envlist does not name (the generic [testenv] read as py311 beside `envlist =
    py311-sdk{1,2}`) takes a line only where it also holds for every listed env of this interpreter
    (`also`: py311-sdk1 and py311-sdk2), or, with none, where its condition names interpreter and
    platform factors alone (`py{310,311}:`): which matrix entry the env would be is unknown, so
    `!sdk2: acme-sdk<2` is the sdk1 env's, while `!cov: coverage` is every py311 env's."""

    factors: frozenset[str]
    listed: bool = True
    also: tuple[frozenset[str], ...] = ()


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
        self._taken: dict[tuple[str, EnvReading], bool] = {}

    def takes(self, condition: str, env: EnvReading) -> bool:
        """Whether a line under `condition` is one of `env`'s (see EnvReading); answered once per
        (condition, env), each env of `also` counted as holds counts it."""
        key = (condition, env)
        if key not in self._taken:
            self._taken[key] = self._takes(condition, env)
        return self._taken[key]

    def _takes(self, condition: str, env: EnvReading) -> bool:
        if not self.holds(condition, env.factors):
            return False
        if env.listed:
            return True
        if env.also:
            return all(self.holds(condition, factors) for factors in env.also)
        return all(
            _MATRIX_FREE.fullmatch(name) or name in _PLATFORM_FACTORS
            for positive, negative in self._groups[condition] or ()
            for name in positive | negative
        )

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


def condition_takes(condition: str, env: EnvReading) -> bool:
    """One condition for one env (FactorReading.takes, on its own budget)."""
    return FactorReading().takes(condition, env)


def generic_env(envlist: str | None) -> EnvReading:
    """The env the generic [testenv] is read for: the first env of `envlist` ([tox] envlist / env_list)
    named only by factors of the interpreter the tests run on (`py311`, `py3`, `py`, `python`, `py3.11`),
    listed; else `py311` (`tox -e py311` on CPython 3.11), not listed, beside the listed envs of this
    interpreter (`py311-wrapt1.14`) its lines must also hold for. No envlist lists every env.
    TooComplex past config.TOX_FACTOR_MAX_CHECKS env names in all."""
    here = _interpreter_factors()
    default = frozenset({f"{_implementation()}{sys.version_info.major}{sys.version_info.minor}"})
    if envlist is None or not envlist.strip():
        return EnvReading(default)
    others: list[frozenset[str]] = []
    names = 0
    for entry in envlist.splitlines():
        groups = _groups(entry.strip()) if entry.strip() else None
        names += len(groups or ())
        if names > TOX_FACTOR_MAX_CHECKS:
            raise TooComplex(
                f"its envlist names more than {TOX_FACTOR_MAX_CHECKS} envs (config.TOX_FACTOR_MAX_CHECKS)"
            )
        for positive, negative in groups or ():
            if positive and not negative and positive <= here:
                return EnvReading(positive)
            if not negative and positive & here:
                others.append(positive)
    return EnvReading(default, listed=False, also=tuple(others))


def listed_envs(envlist: str | None) -> list[frozenset[str]]:
    """The factors of each env `envlist` names (what a bare `tox` runs), as far as they can be read (a
    condition tox reads otherwise names none); at most config.TOX_FACTOR_MAX_CHECKS."""
    found: list[frozenset[str]] = []
    for entry in (envlist or "").splitlines():
        for positive, negative in (_groups(entry.strip()) or ()) if entry.strip() else ():
            if positive and not negative and positive not in found:
                found.append(positive)
    return found[:TOX_FACTOR_MAX_CHECKS]


def env_factors(section: str) -> frozenset[str]:
    """The factors of the env whose values `section` gives: `[testenv:py311-cov]` is read for the env
    py311-cov (factors py311, cov); the generic `[testenv]`, without an envlist (generic_env), for the
    env of the interpreter the tool's environments are made with (`tox -e py311` on CPython 3.11)."""
    name = (
        section.partition(":")[2].strip()
        or f"{_implementation()}{sys.version_info.major}{sys.version_info.minor}"
    )
    return frozenset(name.split("-"))


def _groups(condition: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...] | None:
    """tox's factor groups of a condition, each (factors that must be present, factors that must be
    absent): alternatives separated by commas, each brace group expanded in place (`py{310,311}-django`
    is py310-django or py311-django, `py3{10-12}` py310, py311 or py312), each alternative's factors
    joined by "-". None: not a condition tox reads, an open range (`{10-}`), or more than
    config.TOX_FACTOR_MAX_VARIANTS alternatives (counted before expanding)."""
    if _OPEN_RANGE.search(condition):
        return None
    ranges = [int(m.group(2)) - int(m.group(1)) for m in _CLOSED_RANGE.finditer(condition)]
    if sum(abs(n) + 1 for n in ranges) > TOX_FACTOR_MAX_VARIANTS:
        return None  # counted before a number is written out
    condition = _CLOSED_RANGE.sub(_expanded_range, condition)
    variants: list[str] = []
    for text in _alternatives(condition):
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
_MATRIX_FREE = re.compile(r"(?:c?py(?:thon)?|pypy|jython)(?:\d+(?:\.\d+)?)?|linux|win32|darwin|cygwin")
