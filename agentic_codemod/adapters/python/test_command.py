"""The command that verifies a Python repository, decided from its files, first match wins:

    0. settings.verification.command (the task's, else the config's)                -> as given
    1. the tox testenv / nox session whose commands run a test runner (ci_config.py) -> that runner
    2. .stestr.conf                                                                  -> stestr run
    3. pytest configuration: pytest.ini / .pytest.ini, pyproject.toml [tool.pytest.ini_options] or
       [tool.pytest], setup.cfg [tool:pytest], tox.ini [pytest]              -> pytest
    4. a tests/ or test/ folder holding test_*.py or *_test.py               -> pytest tests/ (pytest,
       from the root, where test files lie outside it too: what plain `pytest` collects)
    5. any test*.py file elsewhere in the tree                               -> unittest discover -v
    none of these: None (without a test suite a change cannot be verified).

A declared command runs directly in the venv: its runner and the arguments given to the runner are
kept, what wraps them (coverage run, tox/nox themselves, {posargs}) is not; `python -m testtools.run`
runs as `python -m unittest`. Of several test commands in one testenv or session, the one estimated to
run the most tests is run, and the source names the others (ci_config.chosen_command); where it does not
run their tests too, nor those of the other envs a bare `tox` runs, the run requires a human (uncovered):
they would run in neither phase. Every runner
reports test ids: pytest through --junitxml, unittest through -v (result lines and report headers),
stestr through the subunit record of the run (.stestr/, read by workflow/verify.py), Twisted's trial
(a declared `python -m twisted.trial` or `trial`) through its bwverbose result lines.
tox and nox are never run: they build their own environments and may reach the network. The variables
the chosen env sets for its tests (tox `setenv`, nox `env=`) are not set here: where the repository's
code names one, it may switch tests on or off, and the run requires a human (switched_variables).
"""

from __future__ import annotations

import configparser
import os
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import tomlkit

from agentic_codemod.adapters.python import ci_config, shadowing
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.config import VARIABLE_READERS_MAX_FILES, Settings
from agentic_codemod.errors import InputError, RequiresHuman

PYTEST = ["{interpreter}", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml={junit}"]
# Last on every pytest command line, so that it wins over `-x`, `--exitfirst` or `--maxfail=N` in the
# repository's addopts or its own command: the canary fails in every run, and a run that stops at the first
# failure would stop there, leaving every test after it unrun in both phases (before: green, exit 0, with
# 3 of 19 tests run; the third review's reproduction).
NEVER_STOP = ["--maxfail=1000000000"]
UNITTEST = ["{interpreter}", "-m", "unittest", "discover", "-v"]
STESTR = ["{interpreter}", "-m", "stestr"]
TRIAL = ["{interpreter}", "-m", "twisted.trial", "--reporter=bwverbose"]  # one result line per test id
# Arguments of a declared pytest command that would take the report away from the tool.
PYTEST_DROPPED = ("--junitxml", "--junit-xml", "--junit-prefix", "-p", "--pastebin", "--resultlog")
PYTEST_VALUE_OPTIONS = ("--junitxml", "--junit-xml", "--junit-prefix", "-p", "--pastebin", "--resultlog")

TEST_FOLDERS = ("tests", "test")
TEST_FILE_GLOBS = ("test_*.py", "*_test.py")
# Directories never searched for test files: environments, caches, build output, vendored code.
SKIPPED_DIRS = frozenset(
    {"node_modules", "site-packages", "__pycache__", "venv", "env", "build", "dist", "apm_modules"}
)


def detect_test_command(root: Path, settings: Settings | None = None) -> TestCommand | None:
    override = settings.verification.command if settings is not None else None
    if override:
        tokens = override if isinstance(override, list) else shlex.split(override)
        command = declared_command(root, tokens, "verification.command")
        if command is None:
            raise InputError(
                f"verification.command {override!r} runs no test runner this tool can read",
                hint="name pytest, python -m unittest, stestr or python -m twisted.trial "
                "(e.g. 'python -m pytest tests/unit')",
            )
        return command
    ci = ci_config.test_env(root)
    if ci is not None:
        command = declared_command(root, ci.command, f"{ci.source} commands{ci.note}")
        if command is not None:
            left = uncovered(root, command, ci.others)
            if left:
                raise RequiresHuman(
                    f"{ci.source}: of the test commands it runs (and the other envs a bare `tox` runs), "
                    f"the one the tool runs ({shlex.join(ci.command)}) does not run the tests of "
                    f"{'; '.join(left)}: those would run in neither phase here",
                    hint="set verification.command in the task to one command that runs them all (or to the "
                    "one that matters, if the others do not test the SDK); else migrate by hand",
                )
            read = switched_variables(root, ci.variables)
            if read:
                raise RequiresHuman(
                    f"{ci.source} sets {', '.join(read)} for its tests, which the repository's code reads "
                    f"({', '.join(dict.fromkeys(read.values()))}): the test run here sets no variable, so "
                    "tests they switch on or off would not run as the repository runs them",
                    hint="if the tests run the same without them, set verification.command in the task to "
                    f"the command to run ({shlex.join(ci.command)}); else migrate by hand",
                )
            return command
    chosen = _by_configuration(root)
    if chosen is not None:
        left = uncovered(root, chosen, ci_config.listed_test_commands(root))
        if left:
            raise RequiresHuman(
                f"the tox envs run tests the tool's command ({shlex.join(chosen.argv)}, from "
                f"{chosen.source}) does not run: {'; '.join(left)}; those would run in neither phase here",
                hint="set verification.command in the task to one command that runs them all; else "
                "migrate by hand",
            )
    return chosen


def _by_configuration(root: Path) -> TestCommand | None:
    """The command where no tox env or nox session names one (rules 2 to 5 of the module docstring)."""
    stestr = _stestr_conf(root)
    if stestr is not None:
        return TestCommand(argv=[*STESTR, *stestr, "run"], source=".stestr.conf", runner="stestr")
    source = pytest_config(root)
    if source:
        return TestCommand(argv=[*PYTEST, *NEVER_STOP], source=source, runner="pytest")
    for folder in TEST_FOLDERS:
        if (root / folder).is_dir() and _has_test_files(root / folder):
            elsewhere = _test_files_outside(root, folder)
            if elsewhere:  # plain `pytest` collects them too: run it as the repository would
                return TestCommand(
                    argv=[*PYTEST, *NEVER_STOP],
                    source=f"{folder}/ folder and test files elsewhere ({', '.join(elsewhere[:3])})",
                    runner="pytest",
                )
            return TestCommand(
                argv=[*PYTEST, folder, *NEVER_STOP], source=f"{folder}/ folder", runner="pytest"
            )
    if any(path.name.startswith("test") for path in _python_files(root)):
        return TestCommand(
            argv=list(UNITTEST), source="test*.py files (unittest fallback)", runner="unittest"
        )
    return None


def _test_files_outside(root: Path, folder: str) -> list[str]:
    """The test files (TEST_FILE_GLOBS) that plain `pytest` at the root collects outside `folder`
    (helper-20's review: `pytest tests` left `integration_tests/` unrun in both phases, green)."""
    return sorted(
        path.relative_to(root).as_posix()
        for path in _python_files(root)
        if path.relative_to(root).parts[0] != folder and any(path.match(g) for g in TEST_FILE_GLOBS)
    )


# pytest options a PYTEST_ADDOPTS may hold that change only how results are shown or how fast they come
# (`--color=yes`, `-n auto`), never which tests run or what a result is.
QUIET_PYTEST_OPTIONS = re.compile(
    r"(?:--color=\w+|--colour=\w+|-p\s*no:cacheprovider|-n\s*\w+|--numprocesses[= ]\w+|-v+|-q+|-r\w*|"
    r"--tb[= ]\w+|--durations[= ]\d+|--strict-markers|--strict-config|-s|--capture[= ]\w+)"
)


def switched_variables(root: Path, variables: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Of the variables a test env sets, those a Python file of the repository names as a string
    (`os.environ["ACME_CONTRACT_TESTS"]`, `os.getenv('CI')`), each with the first file that does: a
    variable that switches tests on or off (helper-20's review: `setenv = ACME_CONTRACT_TESTS = 1` and
    a `skipif` on it, skipped in both phases here, green). pytest reads `PYTEST_ADDOPTS` and its kin
    itself (`--run-contract` switching a conftest's option: helper-25's review), and a noxfile's mapping
    no reading resolves may hold anything: both always count. Past VARIABLE_READERS_MAX_FILES files
    every variable counts as read (fail closed)."""
    names = tuple(name for name, _ in variables)
    if not names:
        return {}
    found: dict[str, str] = {
        n: "pytest itself"
        for n, value in variables
        if n.startswith("PYTEST_") and not (n == "PYTEST_ADDOPTS" and _quiet(value))
    }
    found |= {
        n: "the noxfile, as a mapping no reading resolves" for n in names if n == ci_config.UNREAD_VARIABLES
    }
    pattern = re.compile(rb"""["'](%s)["']""" % b"|".join(re.escape(n.encode()) for n in names))
    for count, path in enumerate(p for p in _python_files(root) if p != root / "noxfile.py"):  # the setter
        if count >= VARIABLE_READERS_MAX_FILES:
            return {
                n: f"more than {VARIABLE_READERS_MAX_FILES} Python files, not all searched" for n in names
            }
        try:
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        except OSError:
            continue
        for match in pattern.finditer(data):
            found.setdefault(match.group(1).decode(), path.relative_to(root).as_posix())
    return {n: found[n] for n in names if n in found}


def _quiet(addopts: str) -> bool:
    """Whether a PYTEST_ADDOPTS value (as written) holds only QUIET_PYTEST_OPTIONS."""
    return bool(addopts) and all(QUIET_PYTEST_OPTIONS.fullmatch(w) for w in _option_words(addopts))


def _option_words(text: str) -> list[str]:
    """`-n auto` and `--tb short` as one word each, the rest split at spaces."""
    words, out = text.split(), list[str]()
    for word in words:
        if out and out[-1] in ("-n", "--numprocesses", "--tb", "--durations", "--capture", "-p"):
            out[-1] += " " + word
        else:
            out.append(word)
    return out


def _configured(command: TestCommand, addopts: list[str], testpaths: list[str]) -> TestCommand:
    """`command` as pytest runs it with the repository's configuration: the `addopts` first (a `-m`,
    `-k` or `--ignore` there narrows it as on the command line: helper-25's review), and with no test
    path given, the `testpaths`: a bare `pytest` runs those, not the whole tree (`-o`, which could set
    them otherwise, makes a command comparable to none: PYTEST_ELSEWHERE)."""
    if command.runner != "pytest":
        return command
    args = command.argv[len(PYTEST) : len(command.argv) - len(NEVER_STOP)]
    if _test_paths(command, whole=False) == ["."]:
        args = [*args, *testpaths]
    return TestCommand([*PYTEST, *addopts, *args, *NEVER_STOP], command.source, "pytest")


def uncovered(root: Path, chosen: TestCommand, others: tuple[tuple[str, ...], ...]) -> list[str]:
    """The other test commands of an env (as written) whose tests `chosen` does not run too (helper-20's
    review: `pytest --ignore=tests/contract tests` then `pytest tests/contract`, the second never run:
    green). Covered: the same command once its wrappers are gone (`coverage run -m pytest X` and
    `pytest X`), or test paths inside the chosen one's, where the chosen runner collects the other's tests
    (pytest collects unittest's where each file unittest discovers is one pytest collects: `tests.py`,
    `base_tests.py` are not; never the reverse) and narrows by no name, mark or ignore."""
    addopts, testpaths = (
        shadowing.pytest_settings(root, "addopts"),
        shadowing.pytest_settings(root, "testpaths"),
    )
    mine = _test_paths(_configured(chosen, addopts, testpaths), whole=True)
    left = []
    for tokens in others:
        other = declared_command(root, list(tokens), "")
        if other is None or other.argv == chosen.argv:
            continue
        theirs = _test_paths(_configured(other, addopts, testpaths), whole=False)
        collects = chosen.runner == other.runner or (
            (chosen.runner, other.runner) == ("pytest", "unittest") and _pytest_collects(root, other)
        )
        if mine is None or theirs is None or not collects or not all(_inside(t, mine) for t in theirs):
            left.append(shlex.join(tokens))
    return left


def _pytest_collects(root: Path, unittest: TestCommand) -> bool:
    """Whether every file a unittest command discovers (its `-p` pattern, `test*.py` by default) is one
    pytest collects by default (TEST_FILE_GLOBS)."""
    argv = unittest.argv
    flags = [i for i, a in enumerate(argv) if a in ("-p", "--pattern")]
    pattern = argv[flags[-1] + 1] if flags and flags[-1] + 1 < len(argv) else "test*.py"
    if "discover" not in argv:
        return True  # named modules: the paths decide
    if not pattern.strip():
        return False  # a pattern Path.match refuses: nothing is known of what unittest discovers
    return all(
        any(path.match(g) for g in TEST_FILE_GLOBS) for path in _python_files(root) if path.match(pattern)
    )


# pytest options that take the next word as their value (not a test path), and those that narrow which of
# the collected tests run: a command with one covers no other.
PYTEST_VALUED = frozenset(
    {"-k", "-m", "-c", "-o", "-W", "-n", "-r", "--deselect", "--ignore", "--ignore-glob", "--rootdir"}
    | {"--override-ini", "--confcutdir", "--basetemp", "--import-mode", "--tb", "--durations", "--dist"}
    | {"--cov", "--cov-report", "--cov-config", "--cov-fail-under", "--log-level", "--timeout"}
    | {"-p", "--junitxml", "--junit-xml", "--maxfail", "--reruns", "--html", "--log-file"}
)
PYTEST_NARROWING = ("-k", "-m", "--deselect", "--ignore", "--ignore-glob", "--lf", "--last-failed", "--sw")
# Options by which a command reads another configuration than the chosen one: covered only if identical.
PYTEST_ELSEWHERE = ("-c", "--config-file", "-o", "--override-ini", "--rootdir", "--pyargs", "--confcutdir")


def _test_paths(command: TestCommand, whole: bool) -> list[str] | None:
    """The folders, files and modules (as paths) a pytest or unittest command runs the tests of; None for
    another runner (only the same command covers those), and (`whole`: every test there must run) where it
    narrows them by name, mark, pattern or ignore."""
    argv = command.argv
    if command.runner == "pytest":
        args = argv[len(PYTEST) : len(argv) - len(NEVER_STOP)]
        paths, skip = [], False
        for arg in args:
            if skip:
                skip = False
            elif _option(arg) in PYTEST_ELSEWHERE or (_option(arg) in PYTEST_NARROWING and whole):
                return None
            elif arg.startswith("-"):
                skip = arg in PYTEST_VALUED
            else:
                paths.append(arg.split("::", 1)[0])
        return [_normal(p) for p in paths] or ["."]
    if command.runner == "unittest":
        args = argv[argv.index("unittest") + 1 :]
        if args[:1] == ["discover"]:
            rest = [a for a in args[1:] if a != "-v"]
            if any(a in ("-p", "--pattern", "-k") for a in rest) and whole:
                return None
            start = [rest[i + 1] for i, a in enumerate(rest[:-1]) if a in ("-s", "--start-directory")]
            positional = [a for a in rest if not a.startswith("-")]
            return [_normal((start or positional or ["."])[0])]
        if "-k" in args and whole:
            return None
        names = [a for a in args if not a.startswith("-")]
        return [_normal(n.replace(".", "/")) for n in names] or ["."]
    return None


def _option(arg: str) -> str:
    """An option's name, its value joined or attached (`--ignore=x`, `-knot_slow`, `-mslow`, `-cX`)."""
    short = arg[:2] in ("-k", "-m", "-c", "-o") and not arg.startswith("--")
    return arg[:2] if short else arg.split("=", 1)[0]


def _normal(path: str) -> str:
    return os.path.normpath(path.removesuffix(".py")).removeprefix("./") or "."


def _inside(path: str, within: list[str]) -> bool:
    return any(w == "." or path == w or path.startswith(w + "/") for w in within)


def _stops_early(arg: str, short: str, long: tuple[str, ...]) -> bool:
    """Whether an argument tells unittest (`-f`, `--failfast`) or trial (`-x`, `--exitfirst`) to stop at
    the first failure: the canary's, in every run (NEVER_STOP says why). Left out of the command."""
    return arg in long or (
        arg.startswith("-") and not arg.startswith("--") and short in arg[1:] and arg[1:].isalpha()
    )


def declared_command(root: Path, tokens: list[str], source: str) -> TestCommand | None:
    """The runner of a declared command line, run directly in the venv with its own arguments."""
    found = ci_config.runner_of(tokens)
    if found is None:
        return None
    runner, args = found
    if runner == "unittest" and "testtools.run" in tokens:
        source += " (python -m testtools.run, run by unittest: the same arguments and test cases)"
    if runner == "pytest":
        return TestCommand(argv=[*PYTEST, *_pytest_args(args), *NEVER_STOP], source=source, runner="pytest")
    if runner == "unittest":
        args = [a for a in args if not _stops_early(a, "f", ("--failfast",))]  # see NEVER_STOP
        args = ["discover", "-v", *args[1:]] if args[:1] == ["discover"] else ["-v", *args]
        if args == ["-v"]:
            args = ["discover", "-v"]
        return TestCommand(argv=["{interpreter}", "-m", "unittest", *args], source=source, runner="unittest")
    if runner == "trial":
        args = [
            a for a in args if not a.startswith("--reporter") and not _stops_early(a, "x", ("--exitfirst",))
        ]
        if not [a for a in args if not a.startswith("-")]:  # names given at run time ({posargs}, *args)
            packages = _test_packages(root)
            if not packages:
                return None
            args += packages
            source += f" (trial names no test package: the project's {', '.join(packages)})"
        return TestCommand(argv=[*TRIAL, *args], source=source, runner="trial")
    conf = _stestr_conf(root) or []
    return TestCommand(argv=[*STESTR, *conf, *args], source=source, runner="stestr")


def _pytest_args(args: list[str]) -> list[str]:
    """The declared arguments without those that would move, rename or switch off the tool's report
    (--junitxml, -p no:junitxml ...): a report the tool cannot read proves nothing."""
    kept: list[str] = []
    queue = list(args)
    while queue:
        arg = queue.pop(0)
        name = arg.split("=", 1)[0]
        if name in PYTEST_DROPPED or arg.startswith("-p"):
            if "=" not in arg and arg in PYTEST_VALUE_OPTIONS and queue:
                queue.pop(0)
            continue
        kept.append(arg)
    return kept


def _test_packages(root: Path) -> list[str]:
    """The top-level packages (at the root or under src/) that hold test files, by import name."""
    found: list[str] = []
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for package in sorted(p for p in base.iterdir() if (p / "__init__.py").is_file()):
            if package.name not in SKIPPED_DIRS and _has_test_files(package):
                found.append(package.name)
    return found


def _stestr_conf(root: Path) -> list[str] | None:
    """--test-path / --top-dir from .stestr.conf (given on the command line, so the canary is planted
    where stestr looks), or None without a .stestr.conf."""
    parser = _ini(root / ".stestr.conf")
    if not (root / ".stestr.conf").is_file():
        return None
    found: list[str] = []
    for key, option in (("test_path", "--test-path"), ("top_dir", "--top-dir")):
        value = parser.get("DEFAULT", key, fallback="").strip()
        if value and "{" not in value:
            found += [option, value]
    return found


def pytest_config(root: Path) -> str | None:
    """Where pytest's configuration is declared, as a source label, or None."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (root / name).is_file():
            return name
    tool = _toml_table(root / "pyproject.toml", "tool")
    pytest = tool.get("pytest")
    if isinstance(pytest, dict):
        return (
            "pyproject.toml [tool.pytest.ini_options]"
            if "ini_options" in pytest
            else "pyproject.toml [tool.pytest]"
        )
    if _ini(root / "setup.cfg").has_section("tool:pytest"):
        return "setup.cfg [tool:pytest]"
    if _ini(root / "tox.ini").has_section("pytest"):
        return "tox.ini [pytest]"
    return None


def _has_test_files(folder: Path) -> bool:
    return any(any(folder.rglob(pattern)) for pattern in TEST_FILE_GLOBS)


def _python_files(root: Path) -> Iterator[Path]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        yield from (Path(directory, f) for f in files if f.endswith(".py"))


def _toml_table(path: Path, key: str) -> dict[str, object]:
    """A top-level table of a TOML file; empty when the file is missing or broken (extract reports it)."""
    try:
        value = tomlkit.parse(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
        return {}
    return value if isinstance(value, dict) else {}


def _ini(path: Path) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, configparser.Error):
        return configparser.ConfigParser(interpolation=None)
    return parser
