"""What the project's own test automation declares: tox testenvs and nox sessions (pure: reads files).

    test_env(root) -> CiTestEnv | None     the tox testenv, else the nox session, that runs the tests
    runner_of(tokens) -> (runner, args) | None    pytest / unittest / stestr in one command line

tox (tox.ini, or pyproject.toml [tool.tox] legacy_tox_ini): the effective `deps`, `extras` and
`commands` of an env (a `testenv:NAME` inherits what it does not set from `[testenv]`), with
{toxinidir} -> ".", {posargs:DEFAULT} -> DEFAULT, {[section]key} expanded, factor-conditional lines
(`py38: dep`) and lines with other substitutions left out. The env chosen is the first whose
commands run a test runner: [testenv], then envs named py*/test*/unit*, then the rest.

nox (noxfile.py, read with `ast`, never executed): functions decorated with `nox.session` / `session`;
the literal string arguments of `session.install(...)` and `session.run(...)` (variables, posargs and
f-strings are left out). The session chosen is the first whose run() calls a test runner, those named
test*/unit*/pytest* first.

tox and nox themselves are never run: they build their own environments and may reach the network.
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tomlkit

TEST_ENV_NAMES = ("py", "test", "unit", "pytest")
# pip options a deps list or session.install() may carry that take a value.
VALUE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "-e", "--editable"})
FACTOR_LINE = re.compile(r"^[\w.,!{}-]+:\s")
SECTION_REF = re.compile(r"\{\[([^\]]+)\]([\w-]+)\}")
POSARGS = re.compile(r"\{posargs(?::([^}]*))?\}")


@dataclass(frozen=True)
class CiTestEnv:
    source: str  # "tox.ini [testenv]", "noxfile.py session tests"
    requirement_lines: list[str] = field(default_factory=list)  # requirements-file syntax, one a line
    extras: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)  # the command line that runs the tests
    runner: str = ""


def test_env(root: Path) -> CiTestEnv | None:
    return _tox(root) or _nox(root)


def runner_of(tokens: list[str]) -> tuple[str, list[str]] | None:
    """The runner a command line invokes and the arguments given to it."""
    for i, token in enumerate(tokens):
        name = PurePosixPath(token).name
        if name in ("pytest", "py.test"):
            return "pytest", tokens[i + 1 :]
        if name == "stestr":
            return "stestr", tokens[i + 1 :]
        if token == "-m" and i + 1 < len(tokens) and tokens[i + 1] in ("pytest", "unittest", "stestr"):
            return tokens[i + 1], tokens[i + 2 :]
    return None


def _tox(root: Path) -> CiTestEnv | None:
    parser, source = _tox_ini(root)
    if parser is None:
        return None
    envs = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")]
    ordered = sorted(
        envs, key=lambda s: (s != "testenv", not _named_for_tests(s.partition(":")[2]), envs.index(s))
    )
    for section in ordered:
        commands = _tox_lines(parser, section, "commands")
        for line in commands:
            try:
                tokens = shlex.split(line.lstrip("-").strip())
            except ValueError:
                continue
            found = runner_of(tokens)
            if found is not None:
                extras = [
                    e.strip() for line in _tox_lines(parser, section, "extras") for e in line.split(",")
                ]
                return CiTestEnv(
                    source=f"{source} [{section}]",
                    requirement_lines=_deps_lines(_tox_lines(parser, section, "deps")),
                    extras=[e for e in extras if e],
                    command=tokens,
                    runner=found[0],
                )
    return None


def _tox_ini(root: Path) -> tuple[configparser.ConfigParser | None, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        if (root / "tox.ini").is_file():
            parser.read_string((root / "tox.ini").read_text(encoding="utf-8"))
            return parser, "tox.ini"
        if (root / "pyproject.toml").is_file():
            tool = tomlkit.parse((root / "pyproject.toml").read_text(encoding="utf-8")).unwrap().get("tool")
            legacy = tool.get("tox", {}).get("legacy_tox_ini") if isinstance(tool, dict) else None
            if isinstance(legacy, str):
                parser.read_string(legacy)
                return parser, "pyproject.toml [tool.tox] legacy_tox_ini"
    except (OSError, ValueError, AttributeError, configparser.Error, tomlkit.exceptions.TOMLKitError):
        pass
    return None, ""


def _tox_lines(parser: configparser.ConfigParser, section: str, key: str, depth: int = 0) -> list[str]:
    """The substituted, unconditional lines of `key` in `section` (inherited from [testenv])."""
    if parser.has_option(section, key):
        raw = parser.get(section, key, raw=True)
    elif section != "testenv" and parser.has_option("testenv", key):
        raw = parser.get("testenv", key, raw=True)
    else:
        return []
    lines: list[str] = []
    for line in raw.splitlines():
        line = line.split(" #")[0].strip()
        if not line or line.startswith("#") or FACTOR_LINE.match(line):
            continue
        refs = SECTION_REF.fullmatch(line)
        if refs and depth < 5:
            lines += _tox_lines(parser, refs.group(1), refs.group(2), depth + 1)
            continue
        line = POSARGS.sub(lambda m: m.group(1) or "", line.replace("{toxinidir}", "."))
        if "{" not in line and line.rstrip("\\").strip():
            lines.append(line.rstrip("\\").strip())
    return lines


def _deps_lines(lines: list[str]) -> list[str]:
    """tox writes `-r{toxinidir}/x.txt` (no space); pip's requirements-file syntax reads that too."""
    return [re.sub(r"^(-[rce])(?=\S)", r"\1 ", line) for line in lines]


def _named_for_tests(name: str) -> bool:
    return name.lower().startswith(TEST_ENV_NAMES)


def _nox(root: Path) -> CiTestEnv | None:
    try:
        tree = ast.parse((root / "noxfile.py").read_text(encoding="utf-8"))
    except (OSError, ValueError, SyntaxError):
        return None
    sessions = [f for f in tree.body if isinstance(f, ast.FunctionDef) and _session_name(f)]
    sessions.sort(key=lambda f: not _named_for_tests(_session_name(f) or ""))
    for function in sessions:
        installs: list[str] = []
        command: list[str] | None = None
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            args = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if call.func.attr == "install":
                installs += args
            elif call.func.attr == "run" and command is None and runner_of(args):
                command = args
        if command is not None:
            found = runner_of(command)
            assert found is not None
            return CiTestEnv(
                source=f"noxfile.py session {_session_name(function)}",
                requirement_lines=_install_lines(installs),
                command=command,
                runner=found[0],
            )
    return None


def _session_name(function: ast.FunctionDef) -> str | None:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        dotted = ast.unparse(target)
        if dotted in ("nox.session", "session", "nox_session"):
            if isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                        return str(keyword.value.value)
            return function.name
    return None


def _install_lines(args: list[str]) -> list[str]:
    """session.install("-r", "x.txt", ".[test]", "pytest") as requirements-file lines; other pip flags
    (--upgrade, --pre ...) are left out."""
    lines: list[str] = []
    queue = list(args)
    while queue:
        arg = queue.pop(0)
        if arg in VALUE_OPTIONS and queue:
            lines.append(f"{arg} {queue.pop(0)}")
        elif re.match(r"^-[rce]\S", arg):
            lines.append(f"{arg[:2]} {arg[2:]}")
        elif not arg.startswith("-"):
            lines.append(arg)
    return lines
