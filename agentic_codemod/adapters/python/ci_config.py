"""What the project's own test automation declares: tox testenvs and nox sessions (pure: reads files).

    test_env(root) -> CiTestEnv | None     the tox testenv, else the nox session, that runs the tests
    tox_deps_env(root) -> EnvReading | None   the env tox.ini's [testenv] factor lines are read for
    runner_of(tokens) -> (runner, args) | None    pytest / unittest / stestr in one command line

tox (tox.ini, or pyproject.toml [tool.tox] legacy_tox_ini): the effective `deps`, `extras`,
`commands_pre` and `commands` of an env, and what its `setenv` (PIP_CONSTRAINT, UV_CONSTRAINT),
`constraints` and `install_command` add to every install (tox_ini.installed_with) (a `testenv:NAME`
inherits what it does not set from `[testenv]`; the env [testenv] is read for, where it has a section of
its own, is read there), with the substitutions the file fixes made (tox_ini.substituted: {toxinidir} and
{tox_root} -> ".", {/} -> "/", {env:NAME:DEFAULT} -> a local DEFAULT), {posargs:DEFAULT} -> DEFAULT,
{[section]key} expanded, factor-conditional lines (`py{310,311}: dep`, `!cov: cmd`) taken where their
condition holds for the env (tox_ini.condition_holds; [testenv] is read for the env of the interpreter the
tests run on, py311 on CPython 3.11, as `tox -e py311` reads it) and lines with other substitutions left
out. The env chosen is
the first whose commands run a test runner: [testenv], then envs named py*/test*/unit*, then the rest.
Install commands among commands_pre and commands (pip install, pdm sync -G, uv sync, poetry install
--with) add what they name (install_commands.py); of several test commands, the one estimated to run
the most tests is chosen (chosen_command, test_scope.py).

nox (noxfile.py, read with `ast`, never executed): functions decorated with `nox.session` / `session`;
the string arguments of `session.install(...)` and `session.run(...)` that are known without running
the file: literals, and module-level names built from them (`ROOT = Path(__file__).parent`,
`ROOT / "test-requirements.txt"`, `REQUIREMENTS["tests"]` of a dict) with the noxfile's folder as ".";
posargs, f-strings and other expressions are left out, an option (`-r FILE`) whose value is one of
them with it (each value read within config.NOX_READ_MAX_VISITS nodes and NOX_ARG_MAX_CHARS, else
unknown). Each install() is read on its own; a run() that is an install command adds what it
names. The session chosen is the first whose run() calls a test runner, those named
test*/unit*/pytest* first.

tox and nox themselves are never run: they build their own environments and may reach the network.
"""

from __future__ import annotations

import ast
import configparser
import posixpath
import re
import shlex
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import tomlkit

from agentic_codemod.adapters.python import install_commands, test_scope, tox_ini
from agentic_codemod.config import (
    CI_CONFIG_MAX_BYTES,
    NOX_ARG_MAX_CHARS,
    NOX_READ_MAX_VISITS,
    TEST_COMMANDS_MAX_COMPARED,
    TOX_MAX_LINES,
)
from agentic_codemod.errors import UNPARSEABLE, RequiresHuman

TEST_ENV_NAMES = ("py", "test", "unit", "pytest")
# `python -m MODULE` test runners; testtools.run takes unittest's arguments and runs unittest test cases.
# Twisted's trial runs its own and unittest's test cases, named by package or module.
MODULE_RUNNERS = {
    "pytest": "pytest",
    "unittest": "unittest",
    "stestr": "stestr",
    "testtools.run": "unittest",
    "twisted.trial": "trial",
}
POSARGS = re.compile(r"\{posargs(?::([^}]*))?\}")


@dataclass(frozen=True)
class CiTestEnv:
    source: str  # "tox.ini [testenv]", "noxfile.py session tests"
    requirement_lines: list[str] = field(default_factory=list)  # requirements-file syntax, one a line
    extras: list[str] = field(default_factory=list)  # ":all": every extra (pdm -G :all, --all-extras)
    groups: list[str] = field(default_factory=list)  # named by an install command (pdm -G, --group, --with)
    all_groups: bool = False
    command: list[str] = field(default_factory=list)  # the command line that runs the tests
    runner: str = ""
    note: str = ""  # why this command, when the env declares several
    testenv_deps_env: tox_ini.EnvReading | None = None  # tox: the env [testenv]'s deps were read for
    # (line, requirement line) of each requirement an install command states (nox: session.install and
    # `pip install` in session.run, where the noxfile's text fixes it; tox: `pip install` in commands_pre
    # and commands, line 0: read through substitutions): none is a declaration the bump edits
    # (adapters/python/extract.py)
    installs_at: tuple[tuple[int, str], ...] = ()
    # tox: deps, setenv constraints and install_command lines whose substitutions the tool does not
    # resolve (OpenStack's `-c{env:TOX_CONSTRAINTS_FILE:https://...}`): the repository's install reads
    # them, the tests here do not (run.json installs.baseline.unread, the merge request)
    unread: tuple[str, ...] = ()
    # the variables the env sets for its tests (tox `setenv`, nox `env=` and `session.env`): the test run
    # here sets none of them (test_command.switched_variables)
    variables: tuple[tuple[str, str], ...] = ()  # (name, value as written; "" where not read: nox's)
    # the env's other command lines that run a test runner (chosen_command left them out): the ones whose
    # tests the chosen command does not run too stop the run (test_command.uncovered)
    others: tuple[tuple[str, ...], ...] = ()


def test_env(root: Path) -> CiTestEnv | None:
    return _tox(root) or _nox(root)


def tox_deps_env(root: Path) -> tox_ini.EnvReading | None:
    """The env the factor lines of tox.ini's [testenv] deps are read for: the env the tests run in
    where its deps take them (the [testenv] chosen, or a [testenv:NAME] that inherits them or names
    {[testenv]deps}: its own name), else the generic env (tox_ini.generic_env, listed or not). None:
    no tox.ini. RequiresHuman as test_env."""
    parser, source = _tox_ini(root)
    if parser is None:
        return None
    reading = _ToxReading(parser, source)
    chosen = _chosen_tox_env(root, parser, reading)
    if chosen is not None and chosen.testenv_deps_env is not None:
        return chosen.testenv_deps_env
    return reading.env_reading("testenv")


def runner_of(tokens: list[str]) -> tuple[str, list[str]] | None:
    """The runner a command line invokes and the arguments given to it."""
    for i, token in enumerate(tokens):
        name = PurePosixPath(token).name
        if name in ("pytest", "py.test"):
            return "pytest", tokens[i + 1 :]
        if name in ("stestr", "trial"):
            return name, tokens[i + 1 :]
        if token in ("-m", "--module") and i + 1 < len(tokens) and tokens[i + 1] in MODULE_RUNNERS:
            return MODULE_RUNNERS[tokens[i + 1]], tokens[i + 2 :]
    return None


def chosen_command(root: Path, lines: list[list[str]]) -> tuple[list[str], str] | None:
    """Of the command lines that run a test runner, the one estimated to run the most tests (the first
    on a tie), and a note naming the others when there are several (test_scope.py). `runnable` names
    them all (CiTestEnv.others)."""
    runnable = [(tokens, found) for tokens in lines if (found := runner_of(tokens)) is not None]
    if not runnable:
        return None
    cut = len(runnable) - TEST_COMMANDS_MAX_COMPARED
    runnable = runnable[:TEST_COMMANDS_MAX_COMPARED]  # each estimate walks the test folders
    counts = [test_scope.estimate(root, runner, args) for _tokens, (runner, args) in runnable]
    best = counts.index(max(counts))
    if len(runnable) == 1:
        return runnable[0][0], ""
    others = "; ".join(
        f"{shlex.join(t)} (~{n})"
        for i, ((t, _f), n) in enumerate(zip(runnable, counts, strict=True))
        if i != best
    )
    note = (
        f", the one of {len(runnable)} test commands with the most tests (~{counts[best]}); not run: {others}"
    )
    if cut > 0:
        note += f"; {cut} more not compared (config.TEST_COMMANDS_MAX_COMPARED)"
    return runnable[best][0], note


def _tox(root: Path) -> CiTestEnv | None:
    parser, source = _tox_ini(root)
    return None if parser is None else _chosen_tox_env(root, parser, _ToxReading(parser, source))


def _chosen_tox_env(root: Path, parser: configparser.ConfigParser, reading: _ToxReading) -> CiTestEnv | None:
    envs = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")]
    ordered = sorted(
        envs, key=lambda s: (s != "testenv", not _named_for_tests(s.partition(":")[2]), envs.index(s))
    )
    # the env [testenv] is read for may have a section of its own (envlist = py311 and [testenv:py311]):
    # `tox -e py311` reads that one, falling back to [testenv] for what it does not set
    own = [s for s in envs if s != "testenv" and tox_ini.env_factors(s) == reading.generic.factors]
    if own and "testenv" in envs:
        ordered = [own[0], *(s for s in ordered if s not in ("testenv", own[0]))]
    for section in ordered:
        held: list[str] = []  # the factor conditions whose lines were taken
        lines = [_split(line.lstrip("-").strip()) for line in reading.lines(section, "commands", held)]
        chosen = chosen_command(root, [tokens for tokens in lines if tokens])
        if chosen is None:
            continue
        others = _others(lines, chosen[0]) + _listed_envs_commands(reading, envs, section)
        extras = [e.strip() for line in reading.lines(section, "extras", held) for e in line.split(",")]
        found = runner_of(chosen[0])
        assert found is not None
        pre = [_split(line.lstrip("-").strip()) for line in reading.lines(section, "commands_pre", held)]
        installs = _installs([*pre, *lines])
        # what setenv, constraints and install_command add to every install of the env (deps, the package)
        installed_with = [
            text for key in tox_ini.INSTALL_KEYS
            for text in tox_ini.installed_with(key, reading.lines(section, key, held))
        ]  # fmt: skip
        deps = _deps_lines(reading.lines(section, "deps", held))
        # which env the factor conditions were read for, where any held (the reading depends on it)
        env = f" as env {reading.env(section)}" if held else ""
        return CiTestEnv(
            source=f"{reading.source} [{section}]{env}",
            requirement_lines=deps + installed_with + installs.requirement_lines,
            extras=[e for e in extras if e] + installs.extras,
            groups=installs.groups,
            all_groups=installs.all_groups,
            command=chosen[0],
            runner=found[0],
            note=chosen[1],
            testenv_deps_env=reading.testenv_deps_env,
            installs_at=tuple((0, line) for line in [*installed_with, *installs.requirement_lines]),
            unread=tuple(dict.fromkeys(reading.unread)),
            others=others,
            variables=tuple(
                (name.strip(), value.strip())
                for key in ("setenv", "set_env")
                for line in reading.lines(section, key, held)
                for name, equals, value in [line.partition("=")]
                if name.strip().isidentifier() and equals
            ),
        )
    return None


def listed_test_commands(root: Path) -> tuple[tuple[str, ...], ...]:
    """The test commands of every env a bare `tox` runs (tox.ini's envlist, read per env; tox.toml's or
    pyproject.toml's [tool.tox] `env_list`, with `env_run_base`), for a command chosen otherwise (a
    pytest configuration) to be checked against: before, a tox env that ran tests only under a factor
    condition, or in tox.toml, was never read, and its tests ran in neither phase (helper-25's review).
    A tox.toml command the tool cannot read is named as it is written."""
    parser, _source = _tox_ini(root)
    found: list[tuple[str, ...]] = []
    if parser is not None:
        reading = _ToxReading(parser, _source)
        envs = [s for s in parser.sections() if s == "testenv" or s.startswith("testenv:")]
        found += _listed_envs_commands(reading, envs, "")
        if "testenv" in envs:
            for line in reading.lines_for("testenv", "commands", reading.generic):
                tokens = _split(line.lstrip("-").strip())
                if tokens and runner_of(tokens) is not None and tuple(tokens) not in found:
                    found.append(tuple(tokens))
        return tuple(found)
    return _tox_toml_commands(root)


def _tox_toml_commands(root: Path) -> tuple[tuple[str, ...], ...]:
    """The runner commands of tox.toml's (or pyproject.toml's [tool.tox]) `env_run_base` and of the envs
    its `env_list` names; a word given by a table tox substitutes: `{replace = "posargs", default = [...]}`
    takes its default, any other makes the whole command unreadable (kept with a `{...}` word, which no
    other command covers)."""
    table: object = None
    try:
        toml, pyproject = _small_text(root / "tox.toml"), _small_text(root / "pyproject.toml")
        if toml is not None:
            table = tomllib.loads(toml)
        elif pyproject is not None:
            tool = tomllib.loads(pyproject).get("tool", {})
            table = tool.get("tox") if isinstance(tool, dict) else None
    except (OSError, *UNPARSEABLE):  # a document nested past the parser's depth too
        return ()
    if not isinstance(table, dict):
        return ()
    envs = table.get("env", {}) if isinstance(table.get("env"), dict) else {}
    names = (
        [n for n in table.get("env_list", []) if isinstance(n, str)]
        if isinstance(table.get("env_list"), list)
        else []
    )
    sources = [table.get("env_run_base"), *(envs.get(n) for n in names)]
    found: list[tuple[str, ...]] = []
    for source in sources:
        commands = source.get("commands") if isinstance(source, dict) else None
        for command in commands if isinstance(commands, list) else []:
            tokens = _toml_words(command)
            if tokens and runner_of(list(tokens)) is not None and tokens not in found:
                found.append(tokens)
    return tuple(found)


def _toml_words(command: object) -> tuple[str, ...]:
    words: list[str] = []
    for word in command if isinstance(command, list) else []:
        if isinstance(word, str):
            words += [] if word.strip() == "{posargs}" else [word]
        elif isinstance(word, dict) and word.get("replace") == "posargs":
            default = word.get("default", [])
            words += [w for w in default if isinstance(w, str)] if isinstance(default, list) else []
        else:
            words.append("{...}")
    return tuple(words)


def _listed_envs_commands(reading: _ToxReading, envs: list[str], chosen: str) -> tuple[tuple[str, ...], ...]:
    """The test commands of the other envs a bare `tox` runs (its envlist): from a section of their own
    (`envlist = py3, contract` with `[testenv:contract] commands = pytest tests/contract`), else from
    [testenv] read for the env's factors (`integration: pytest integration`). Before, the first env's
    tests alone ran, and the others' in neither phase (helper-20's and helper-25's reviews: green)."""
    found: list[tuple[str, ...]] = []
    for factors in tox_ini.listed_envs(reading.envlist):
        own = [s for s in envs if s != "testenv" and tox_ini.env_factors(s) == factors]
        if (own and own[0] == chosen) or (
            not own and factors == reading.generic.factors and chosen == "testenv"
        ):
            continue
        if own:
            lines = reading.lines(own[0], "commands", [])
        else:
            lines = reading.lines_for("testenv", "commands", tox_ini.EnvReading(factors))
        for line in lines:
            tokens = _split(line.lstrip("-").strip())
            if tokens and runner_of(tokens) is not None and tuple(tokens) not in found:
                found.append(tuple(tokens))
    return tuple(found)


class _ToxReading:
    """One reading of a tox.ini's values: each (section, key) substituted once for the env it is read
    for, factor conditions on one tox_ini.FactorReading budget, at most config.TOX_MAX_LINES lines in
    all ({[a]x} lines that each name {[b]x} ... multiply). Past either budget RequiresHuman, naming the
    file: a reading cut short could take the wrong env's lines."""

    def __init__(self, parser: configparser.ConfigParser, source: str) -> None:
        self.parser, self.source = parser, source
        self.conditions = tox_ini.FactorReading()
        self.count = 0
        self.testenv_deps_env: tox_ini.EnvReading | None = None  # where [testenv]'s deps were read
        self.unread: list[str] = []  # "[section] key: line" the install would read through a substitution
        self._memo: dict[tuple[str, str, tox_ini.EnvReading], tuple[list[str], list[str]]] = {}
        envlist = next(
            (parser.get("tox", k, raw=True) for k in ("envlist", "env_list") if parser.has_option("tox", k)),
            None,
        )
        self.envlist = envlist
        try:
            self.generic = tox_ini.generic_env(envlist)
        except tox_ini.TooComplex as exc:
            raise self._too_complex(str(exc)) from exc

    def env(self, section: str) -> str:
        return section.partition(":")[2].strip() or "-".join(sorted(self.generic.factors))

    def env_reading(self, section: str) -> tox_ini.EnvReading:
        return tox_ini.EnvReading(tox_ini.env_factors(section)) if section != "testenv" else self.generic

    def lines_for(self, section: str, key: str, env: tox_ini.EnvReading) -> list[str]:
        """The substituted lines of `key` in `section` as tox reads them for `env` (another env of the
        envlist than the one [testenv] is read for)."""
        try:
            return self._lines(section, key, 0, env)[0]
        except tox_ini.TooComplex as exc:
            raise self._too_complex(str(exc)) from exc

    def lines(self, section: str, key: str, held: list[str]) -> list[str]:
        try:
            lines, conditions = self._lines(section, key, 0, self.env_reading(section))
        except tox_ini.TooComplex as exc:
            raise self._too_complex(str(exc)) from exc
        held += conditions
        return lines

    def _too_complex(self, what: str) -> RequiresHuman:
        return RequiresHuman(
            f"{self.source}: {what}; the tool does not guess which of its lines the tests' env takes",
            hint="set verification.command and verification.requirements in the task, or simplify the file",
        )

    def _lines(
        self, section: str, key: str, depth: int, env: tox_ini.EnvReading
    ) -> tuple[list[str], list[str]]:
        """The substituted lines of `key` in `section` (inherited from [testenv]) for `env`, and the
        conditions that held: a line continued with `\\` joined to the next, a factor-conditional line
        where env takes it (a value taken from another section by {[section]key} is read for the same
        env, as tox does). Every line read counts against TOX_MAX_LINES, taken or not."""
        memo = (section, key, env)
        if memo in self._memo:
            found = self._memo[memo]
            self._count(len(found[0]))
            return found
        parser = self.parser
        if parser.has_option(section, key):
            raw, source = parser.get(section, key, raw=True), section
        elif section != "testenv" and parser.has_option("testenv", key):
            raw, source = parser.get("testenv", key, raw=True), "testenv"
        else:
            return [], []
        if key == "deps" and source == "testenv":
            self.testenv_deps_env = env
        lines: list[str] = []
        held: list[str] = []
        physical = raw.splitlines()
        self._count(len(physical))
        for line in _continued(physical):
            conditional = tox_ini.split_condition(line)
            if conditional:
                condition, offset = conditional
                if not self.conditions.takes(condition, env):
                    continue
                held.append(condition)
                line = line[offset:].strip()
            if not line or line.startswith("#"):
                continue
            refs = tox_ini.SECTION_REF.fullmatch(line)
            if refs and depth < 5:
                more, also = self._lines(refs.group(1), refs.group(2), depth + 1, env)
                lines += more
                held += also
                continue
            line = POSARGS.sub(lambda m: m.group(1) or "", tox_ini.substituted(line))
            if key not in tox_ini.INSTALL_KEYS:
                line = tox_ini.env_substituted(line, section.partition(":")[2] or "py")
            if tox_ini.unread(key, line):
                self.unread.append(f"[{source}] {key}: {line}")
            if "{" not in line or key in tox_ini.INSTALL_KEYS:  # tox_ini.installed_with reads its own
                lines.append(line)
        self._memo[memo] = (lines, held)
        return lines, held

    def _count(self, lines: int) -> None:
        self.count += lines
        if self.count > TOX_MAX_LINES:
            raise self._too_complex(
                f"its values expand to more than {TOX_MAX_LINES} lines (config.TOX_MAX_LINES)"
            )


def _installs(lines: list[list[str]]) -> install_commands.Installs:
    """What the install commands among these command lines ask for, merged in order."""
    merged = install_commands.Installs()
    for tokens in lines:
        found = install_commands.parse(tokens) if tokens else None
        if found is not None:
            merged.requirement_lines += found.requirement_lines
            merged.groups += [g for g in found.groups if g not in merged.groups]
            merged.extras += [e for e in found.extras if e not in merged.extras]
            merged.all_groups = merged.all_groups or found.all_groups
    return merged


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError:
        return []


def _tox_ini(root: Path) -> tuple[configparser.ConfigParser | None, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        tox_ini = _small_text(root / "tox.ini")
        if tox_ini is not None:
            parser.read_string(tox_ini)
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


def _continued(physical: list[str]) -> list[str]:
    """A value's lines: comments cut (`  # ...`, pip's reading; tox cuts an unescaped `#` anywhere), a
    line ending in `\\` joined to the next (`pytest \\` then `tests/unit` is one command; a factor
    condition on the first covers both, where tox reads one on each physical line), up to a blank or
    comment line; blanks dropped."""
    joined: list[str] = []
    pending = ""
    for line in physical:
        line = tox_ini.uncommented(line).strip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        line = (pending + line).strip()
        pending = ""
        if line:
            joined.append(line)
    if pending.strip():
        joined.append(pending.strip())
    return joined


def _deps_lines(lines: list[str]) -> list[str]:
    """tox writes `-r{toxinidir}/x.txt` (no space); pip's requirements-file syntax reads that too."""
    return [re.sub(r"^(-[rce])(?=\S)", r"\1 ", line) for line in lines]


def _named_for_tests(name: str) -> bool:
    return name.lower().startswith(TEST_ENV_NAMES)


def _nox(root: Path) -> CiTestEnv | None:
    text = _small_text(root / "noxfile.py")
    try:
        return None if text is None else _nox_sessions(root, ast.parse(text))
    except UNPARSEABLE:  # too deep for the parser, or for ast.unparse of a decorator
        return None


def _small_text(path: Path) -> str | None:
    """A configuration file of the repository's as text: a regular file (no link, FIFO or device) of at
    most CI_CONFIG_MAX_BYTES; None otherwise."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > CI_CONFIG_MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _nox_sessions(root: Path, tree: ast.Module) -> CiTestEnv | None:
    visits = _Visits()  # one budget for the whole file, whatever the number of sessions
    sessions = [f for f in tree.body if isinstance(f, ast.FunctionDef) and _session_name(f)]
    sessions.sort(key=lambda f: not _named_for_tests(_session_name(f) or ""))
    module_names = _module_names(tree)
    for function in sessions:
        local = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        install_lines: list[str] = []
        runs: list[list[str]] = []
        at: list[tuple[int, str]] = []
        variables = _session_variables(function, tree, module_names)
        static = _Static(module_names, local, visits)  # the module's names, less those the session binds
        for call in ast.walk(function):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
                continue
            args = [w for a in call.args for w in _words(a, static, module_names)]
            if call.func.attr == "install":
                lines = install_commands.pip_lines(_known_args(args)).requirement_lines
                install_lines += lines
            elif call.func.attr == "run":
                runs.append([a for a in args if a is not None])
                if runner_of(runs[-1]) is not None and _unread_starred(call, module_names, function):
                    raise RequiresHuman(
                        f"noxfile.py line {call.lineno}: session {_session_name(function)} runs "
                        f"{shlex.join(runs[-1])} with arguments spread from a value the tool cannot read "
                        "without running the noxfile: which tests it runs is unknown",
                        hint="set verification.command in the task to the command the session runs",
                    )
                lines = _installs(runs[-1:]).requirement_lines
            else:
                continue
            at += [(call.lineno, line) for line in lines]
        chosen = chosen_command(root, runs)
        if chosen is not None:
            found = runner_of(chosen[0])
            assert found is not None
            commanded = _installs(runs)
            return CiTestEnv(
                source=f"noxfile.py session {_session_name(function)}",
                requirement_lines=install_lines + commanded.requirement_lines,
                extras=commanded.extras,
                groups=commanded.groups,
                all_groups=commanded.all_groups,
                command=chosen[0],
                runner=found[0],
                note=chosen[1],
                installs_at=tuple(sorted(at)),
                variables=tuple((name, "") for name in variables),
                others=_others(runs, chosen[0]),
            )
    return None


def _words(arg: ast.expr, static: _Static, module_names: dict[str, ast.expr]) -> list[str | None]:
    """An argument's words: a `*NAME` of a module-level list or tuple of strings spread (`*ARGS`), any
    other one as `static` reads it (None: unknown)."""
    if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
        bound = module_names.get(arg.value.id)
        if isinstance(bound, ast.List | ast.Tuple) and arg.value.id not in static.local:
            return [static.value(e) for e in bound.elts]
    return [static.value(arg)]


def _unread_starred(call: ast.Call, module_names: dict[str, ast.expr], function: ast.FunctionDef) -> bool:
    """A `*value` among the call's arguments that is neither `session.posargs` (empty when nox is run
    without arguments, as a CI job runs it; also a local name made from it, towncrier's `posargs =
    list(session.posargs) or [...]`, which the trial reading resolves) nor a module-level list or tuple
    of strings: its words were dropped, and with them maybe the test paths (helper-25's review:
    `session.run("pytest", *ARGS)` read as a bare `pytest`)."""
    from_posargs = {
        t.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign)
        and any(isinstance(n, ast.Attribute) and n.attr == "posargs" for n in ast.walk(node.value))
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for arg in call.args:
        if not isinstance(arg, ast.Starred):
            continue
        value = arg.value
        if (isinstance(value, ast.Attribute) and value.attr == "posargs") or (
            isinstance(value, ast.Name) and value.id in from_posargs
        ):
            continue
        bound = module_names.get(value.id) if isinstance(value, ast.Name) else value
        if isinstance(bound, ast.List | ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in bound.elts
        ):
            continue
        return True
    return False


def _others(lines: list[list[str]], chosen: list[str]) -> tuple[tuple[str, ...], ...]:
    """The command lines besides `chosen` that run a test runner."""
    return tuple(
        tuple(tokens) for tokens in lines if tokens and tokens != chosen and runner_of(tokens) is not None
    )


UNREAD_VARIABLES = "<variables nobody can read>"  # a mapping given by a name or a call: fail closed


def _session_variables(
    function: ast.FunctionDef, tree: ast.Module, module_names: dict[str, ast.expr]
) -> tuple[str, ...]:
    """The variables a nox session sets for what it runs: the keys of `env=` in its calls (a dict or
    `dict(...)` written there, or a module-level one it names), `session.env[...] = ...`,
    `session.env.update(...)`, and `os.environ` written in the session or at the noxfile's top level;
    UNREAD_VARIABLES where a mapping's keys cannot be read without running the noxfile."""
    names: list[str] = []

    def keys(mapping: ast.expr, depth: int = 0) -> list[str]:
        if isinstance(mapping, ast.Dict):
            if any(
                k is None or not (isinstance(k, ast.Constant) and isinstance(k.value, str))
                for k in mapping.keys
            ):
                return [UNREAD_VARIABLES]  # `**other`, a computed key
            return [k.value for k in mapping.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if isinstance(mapping, ast.Call) and isinstance(mapping.func, ast.Name) and mapping.func.id == "dict":
            return [k.arg if k.arg else UNREAD_VARIABLES for k in mapping.keywords] + (
                [UNREAD_VARIABLES] if mapping.args else []
            )
        if isinstance(mapping, ast.Name) and mapping.id in module_names and depth < 5:
            return keys(module_names[mapping.id], depth + 1)
        if isinstance(mapping, ast.Constant) and mapping.value is None:
            return []
        return [UNREAD_VARIABLES]

    for node in [
        *ast.walk(function),
        *(
            n
            for statement in tree.body
            if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            for n in ast.walk(statement)
        ),
    ]:
        if isinstance(node, ast.Call):
            names += [n for k in node.keywords if k.arg == "env" for n in keys(k.value)]
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("update", "setdefault")
                and _is_env(func.value)
            ):
                names += [
                    n for a in node.args[:1] for n in (keys(a) if func.attr == "update" else [_literal(a)])
                ]
                names += [k.arg or UNREAD_VARIABLES for k in node.keywords]
            if isinstance(func, ast.Attribute) and func.attr == "putenv":
                names += [_literal(a) for a in node.args[:1]]
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [_literal(t.slice) for t in targets if isinstance(t, ast.Subscript) and _is_env(t.value)]
    return tuple(dict.fromkeys(names))


def _literal(node: ast.expr) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else UNREAD_VARIABLES


def _is_env(node: ast.expr) -> bool:
    """`<anything>.env` (`session.env`, as a nox session names its environment) or `os.environ`."""
    return isinstance(node, ast.Attribute) and node.attr in ("env", "environ")


# How a noxfile names its own folder (nox runs a session there): "." for the reading below.
NOXFILE_DIR = frozenset(
    f"{path}(__file__){step}.parent"
    for path in ("Path", "pathlib.Path")
    for step in ("", ".resolve()", ".absolute()")
) | frozenset(
    f"os.path.dirname({inner})"
    for inner in ("__file__", "os.path.abspath(__file__)", "os.path.realpath(__file__)")
)


def _module_names(tree: ast.Module) -> dict[str, ast.expr]:
    """The noxfile's module-level `NAME = value` bindings, the last one winning."""
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            names.update({t.id: node.value for t in node.targets if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            names[node.target.id] = node.value
    return names


@dataclass
class _Visits:
    count: int = 0


class _Static:
    """Session arguments where the noxfile's text fixes them (see `value`). The noxfile is the
    repository's: each node's value is worked out once (a chain of names that fans out stays linear),
    the whole reading of a session is held to NOX_READ_MAX_VISITS nodes and each value to
    NOX_ARG_MAX_CHARS, and a reading past either, or too deep, knows nothing (None)."""

    def __init__(self, names: dict[str, ast.expr], local: set[str], visits: _Visits) -> None:
        self.module_names, self.local = names, local
        self.visits = visits
        self.known: dict[int, str | None] = {}

    def name(self, name: str) -> ast.expr | None:
        """The module-level value bound to `name`, unless the session binds it itself."""
        return None if name in self.local else self.module_names.get(name)

    def value(self, node: ast.expr) -> str | None:
        try:
            return self._value(node, 0)
        except UNPARSEABLE:
            return None

    def _value(self, node: ast.expr, depth: int) -> str | None:
        if id(node) not in self.known:
            self.visits.count += 1
            found = None if depth > 20 or self.visits.count > NOX_READ_MAX_VISITS else self._read(node, depth)
            self.known[id(node)] = found if found is None or len(found) <= NOX_ARG_MAX_CHARS else None
        return self.known[id(node)]

    def _read(self, node: ast.expr, depth: int) -> str | None:
        """A path relative to the noxfile's folder; None where running it would be needed to know
        (posargs, other calls, f-strings)."""
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Name):
            bound = self.name(node.id)
            return None if bound is None else self._value(bound, depth + 1)
        if isinstance(node, ast.Attribute | ast.Call) and ast.unparse(node) in NOXFILE_DIR:
            return "."
        parts: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [node.left, node.right]
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "os.path.join" and not node.keywords:
            parts = list(node.args)
        elif isinstance(node, ast.Call) and ast.unparse(node.func) == "str" and len(node.args) == 1:
            return self._value(node.args[0], depth + 1)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            return self._value(self._entry(self.name(node.value.id), node.slice, depth), depth + 1)
        values = [self._value(part, depth + 1) for part in parts]
        if not values or None in values:
            return None
        # a path leading out stays as it is, for the check that refuses it (test_requirements.py)
        return posixpath.normpath(posixpath.join(*(v for v in values if v is not None)))

    def _entry(self, table: ast.expr | None, key_node: ast.expr, depth: int) -> ast.expr:
        """The value under a literal key of a module-level dict (`{...}` or `dict(k=...)`); else a None."""
        key = self._value(key_node, depth + 1)
        if isinstance(table, ast.Dict):
            for k, v in zip(table.keys, table.values, strict=True):
                if k is not None and key is not None and self._value(k, depth + 1) == key:
                    return v
        if isinstance(table, ast.Call) and ast.unparse(table.func) == "dict" and not table.args:
            for keyword in table.keywords:
                if keyword.arg is not None and keyword.arg == key:
                    return keyword.value
        return _NONE


_NONE = ast.Constant(value=None)


def _known_args(args: list[str | None]) -> list[str]:
    """An install() call's known arguments; a pip option whose value is unknown is left out with it,
    so that it cannot take the next argument, or another call's, as its value."""
    known: list[str] = []
    for i, arg in enumerate(args):
        if arg is None:
            continue
        if install_commands.takes_value(arg) and (i + 1 == len(args) or args[i + 1] is None):
            continue
        known.append(arg)
    return known


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
