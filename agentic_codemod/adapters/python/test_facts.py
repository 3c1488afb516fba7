"""What the core's gates need to know about Python code and its tests (adapters/types.py TestFacts).

is_test_file(path)                    test_*.py, *_test.py, test*.py (what pytest and unittest collect)
is_test_support(path)                 conftest.py, any module under test/, tests/ or testing/
canary(command, sibling, token, sdk)  a unittest case that must fail (pytest, unittest and stestr all
                                      collect it), named test_<token>.py (<token>_test.py beside a
                                      *_test.py file under pytest; under `unittest discover -p PATTERN`
                                      a name PATTERN matches); with `sdk`, a skipped case named by
                                      where the test process imports the SDK from (WHERE_SDK)
read_results, missing_dependency, scrub
                                      test_results.py: JUnit XML (pytest), unittest -v output, stestr's
                                      subunit record, trial's report
tamper                                tamper.py: pytest hooks, plugins, configuration, start-up files, skip
                                      markers, fewer tests or asserts
suspects(copy)                        pytest hooks and plugin loading in conftest.py and config files, .pth
shadowing                             a new module, bytecode in __pycache__, or a package's __init__.py
detect(root)                          a Python dependency file or setup.py at the root
"""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import re
import secrets
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python.shadowing import STRAY_NAMES
from agentic_codemod.adapters.python.tamper import is_support, tamper
from agentic_codemod.adapters.python.test_results import (
    case_report,
    missing_test_module,
    read_results,
    reports_each_test,
    scrub,
)
from agentic_codemod.adapters.types import SDK_TEST, Canary, Shadowing, TestCommand, TestFacts

SOURCE_SUFFIXES = (".py",)
# A file with one of these suffixes that appears in the test copy during a verification (beside the
# candidate's files) is code the test run planted, e.g. a .pyc or .pth shadowing a module: not green.
CODE_SUFFIXES: tuple[str, ...] = (".py", ".pyc", ".pyo", ".pth", ".so", ".pyd")
AST_GREP_LANGUAGES: dict[str, tuple[str, ...]] = {"python": SOURCE_SUFFIXES}
TEST_FILE = re.compile(r"^(test_.*|.*_test)\.py$")
CONFIG_FILES = (
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    ".stestr.conf",
)
# pytest: 5 = no tests collected, 4 = usage error, 3 = internal error; 126/127 = cannot execute / not found.
NOT_A_TEST_RUN = frozenset({3, 4, 5, 126, 127})
# Options that name the one directory a runner collects tests from (unittest discover, stestr).
START_OPTIONS = ("-s", "--start-directory", "--test-path")
# unittest discover's options that take a value (the rest are flags, or -p, read on its own).
DISCOVER_VALUE_OPTIONS = frozenset({"-s", "--start-directory", "-t", "--top-level-directory", "-k"})
MODULE_NAME = re.compile(r"[_a-z]\w*\.py", re.IGNORECASE)  # what unittest discover imports
# Code that can change what a test run reports (pytest hooks and plugin loading, in any file).
SUSPECT = re.compile(
    r"(def\s+pytest_(runtest_\w+|report_\w+|collection_modifyitems|terminal_summary|sessionfinish)"
    r"|pluginmanager\.register|PYTEST_PLUGINS|pytest_plugins\s*=|-p\s+(?!no:)[\w.]+)"
)
SUSPECT_FILES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml")
SUSPECT_SKIPPED_DIRS = frozenset(
    {".git", "node_modules", "site-packages", "__pycache__", ".tox", ".nox", "build"}
)
SHADOWING = Shadowing(
    module_suffixes=SOURCE_SUFFIXES,
    cache_dirs=("__pycache__",),
    package_files=("__init__.py",),
    file_beats_folder=False,  # a package (X/__init__.py) wins over a module X.py beside it
)
DETECTED_BY = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "tox.ini")
# Where the test process imports the SDK's modules from, asked twice by the canary's module: as it is
# collected (the name of its SDK test) and as that test runs, after every test module and conftest.py was
# imported (it fails when the answer is then "elsewhere": Canary.rechecks_sdk). The distribution's roots
# are the shallowest modules its RECORD ships (`acme`; `google.cloud.storage` under a namespace; never a
# `numpy.libs` folder, an editable install's finder, or a stray `tests` package: shadowing.STRAY_NAMES).
# "installed" when each root is a module object whose file is one the distribution installed into the
# running interpreter's own site-packages (not loaded yet: where importlib.util.find_spec finds it, which
# runs no code of the root's), a package all of whose folders are in site-packages, and each loaded
# submodule of a root has a file there or in the standard library (an alias: requests.packages.urllib3 is
# urllib3), or none and is made by the distribution's own code (six.moves) or is a folder of it;
# "elsewhere" when one is not (a mock or stub in sys.modules, a copy a conftest.py put first on sys.path or
# in a package's __path__, a vendored wheel, an import hook's module, a blocked import, a module that
# raises as it is read: once the distribution is found installed, an error can only come from a module
# posing as it); "unknown" when that cannot be told (not installed there, an editable install, no RECORD,
# an error reading the distribution).
WHERE_SDK = """

def {fn}(name):
    try:
        import csv
        import importlib.metadata
        import importlib.util
        import os
        import sys
        import sysconfig
        import types

        paths = sysconfig.get_paths()
        sites = {{os.path.realpath(paths[k]) for k in ("purelib", "platlib")}}
        libraries = sites | {{os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib")}}
        found = importlib.metadata.distributions(name=name)  # a copy earlier on sys.path comes first
        dist = next((d for d in found if os.path.realpath(str(d.locate_file(""))) in sites), None)
        if dist is None:
            return "unknown"

        def under(path, tops):
            return any(path.startswith(top + os.sep) for top in tops)

        base = os.path.realpath(str(dist.locate_file("")))
        record = dist.read_text("RECORD")
        if record is None:
            return "unknown"
        files, folders, modules = set(), set(), set()
        for row in csv.reader(record.splitlines()):
            parts = row[0].split("/") if row else []
            if not parts or ".." in parts or parts[0].endswith((".dist-info", ".data")) or not parts[0]:
                continue
            if parts[0].startswith("__editable__"):
                return "unknown"
            files.add(os.path.join(base, *parts))  # a link inside site-packages is no file of the SDK's
            for depth in range(len(parts) - 1, 0, -1):
                folder = os.path.join(base, *parts[:depth])
                if folder in folders:
                    break
                folders.add(folder)
            stem, _, suffix = parts[-1].partition(".")
            names = [*parts[:-1], stem]
            if suffix.rpartition(".")[2] not in ("py", "pyc", "so", "pyd") or parts[0] in {stray}:
                continue
            if "__pycache__" in names or not all(n.isidentifier() for n in names):
                continue
            names = names[:-1] if stem == "__init__" else names
            if names:
                modules.add(".".join(names))

        def shallowest(module):
            return not any(module.rsplit(".", d)[0] in modules for d in range(1, module.count(".") + 1))

        roots = [m for m in sorted(modules) if shallowest(m)]

        def own(cls):
            owner = getattr(sys.modules.get(getattr(cls, "__module__", None) or ""), "__file__", None)
            return isinstance(owner, str) and os.path.realpath(owner) in files

        def installed(module):
            if not isinstance(module, types.ModuleType):
                return False
            file = getattr(module, "__file__", None)
            if isinstance(file, str):
                return under(os.path.realpath(file), libraries)
            spec = getattr(module, "__spec__", None)
            if own(type(module)) or own(type(getattr(spec, "loader", None))):
                return True
            return any(os.path.realpath(p) in folders for p in getattr(module, "__path__", None) or ())

    except Exception:
        return "unknown"
    try:  # the distribution is installed here: a module that raises as it is read only poses as it
        for root in roots:
            module = sys.modules.get(root, False)
            if module is False:
                try:
                    spec = importlib.util.find_spec(root)
                except ImportError:
                    return "elsewhere"
                if spec is None or not spec.has_location or os.path.realpath(spec.origin) not in files:
                    return "elsewhere"
            elif not isinstance(module, types.ModuleType):
                return "elsewhere"
            elif os.path.realpath(str(getattr(module, "__file__", None))) not in files:
                return "elsewhere"
            elif not all(under(os.path.realpath(p), sites) for p in getattr(module, "__path__", None) or ()):
                return "elsewhere"  # a folder of the repository's added to the package's own
            if not all(installed(m) for n, m in list(sys.modules.items()) if n.startswith(root + ".")):
                return "elsewhere"
        return "installed" if roots else "unknown"
    except Exception:
        return "elsewhere"
"""
# The answer as a test's name (a reader sees names and outcomes only: oracle.Canary.read): skipped, or
# failed where the SDK is elsewhere by the time the tests run.
SDK_TEST_CASE = """

def {fn}_again(self):
    if {fn}({sdk}) == "elsewhere":
        self.fail("the SDK is imported from elsewhere than the installed distribution as the tests run")
    self.skipTest("where the SDK is imported from")


setattr({cls}, "{name}" + {fn}({sdk}), {fn}_again)
"""


def is_test_file(path: str) -> bool:
    """pytest's names (test_*.py, *_test.py) and unittest discover's default pattern (test*.py, a
    top-level tests.py too)."""
    name = PurePosixPath(path).name
    return bool(TEST_FILE.match(name)) or (name.startswith("test") and name.endswith(".py"))


def canary(command: TestCommand, sibling: str, token: str, sdk: str | None = None) -> Canary:
    """The must-fail test; with `sdk` (a distribution name), also the skipped test named by where the
    test process imports that distribution's modules from (WHERE_SDK)."""
    beside_suffixed = PurePosixPath(sibling).name.endswith("_test.py") and command.runner == "pytest"
    name = f"{token}_test.py" if beside_suffixed else f"test_{token}.py"
    pattern = discover_pattern(command.argv) if command.runner == "unittest" else None
    if pattern is not None:  # `unittest discover -p '*tests.py'` collects only what its pattern matches
        name = next((n for n in _named_by_token(token, pattern) if fnmatch.fnmatchcase(n, pattern)), name)
    cls = f"Test{token.capitalize()}"
    text = (  # two must-fail tests: an assertion's failure, and an exception of another kind
        "import unittest\n\n\n"
        f"class {cls}(unittest.TestCase):\n"
        f"    def test_{token}(self):\n"
        f"        self.assertEqual({secrets.randbelow(900) + 100}, {secrets.randbelow(900) + 1000})\n\n"
        f"    def test_{token}_raises(self):\n"
        f"        raise AttributeError({secrets.randbelow(900) + 100})\n"
    )
    if sdk is None:
        return Canary(name, text, must_fail=2)
    where = WHERE_SDK.format(fn=f"_{token}_where", stray=repr(tuple(sorted(STRAY_NAMES))))
    said = SDK_TEST_CASE.format(cls=cls, name=f"test_{token}{SDK_TEST}", fn=f"_{token}_where", sdk=repr(sdk))
    return Canary(name, text + where + said, checks_sdk=True, rechecks_sdk=True, must_fail=2)


def command_collects(command: TestCommand, path: str) -> bool:
    """A file `unittest discover -p PATTERN` collects by its own pattern (an importable module name)."""
    pattern = discover_pattern(command.argv) if command.runner == "unittest" else None
    name = PurePosixPath(path).name
    return pattern is not None and bool(MODULE_NAME.fullmatch(name)) and fnmatch.fnmatchcase(name, pattern)


def discover_pattern(argv: list[str]) -> str | None:
    """The file pattern of `unittest discover` (-p / --pattern, or its second positional argument); None
    where the command does not say (unittest's own default, test*.py)."""
    if "discover" not in argv:
        return None
    args = argv[argv.index("discover") + 1 :]
    positional: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-p", "--pattern"):
            return args[i + 1] if i + 1 < len(args) else None
        if arg.startswith("--pattern="):
            return arg.partition("=")[2]
        if arg.startswith("-p") and not arg.startswith("--") and len(arg) > 2:
            return arg[2:]
        i += 2 if arg in DISCOVER_VALUE_OPTIONS else 1
        if not arg.startswith("-"):
            positional.append(arg)
    return positional[1] if len(positional) > 1 else None


def _named_by_token(token: str, pattern: str) -> list[str]:
    """Canary file names that unittest can import (a module name), the pattern's own shape last: each
    `*` the token, each `?` one letter."""
    shaped = pattern.replace("*", f"_{token}_").replace("?", "x")
    names = [f"test_{token}.py", f"{token}_test.py", f"test_{token}_tests.py", f"{token}_tests.py", shaped]
    return [n for n in names if MODULE_NAME.fullmatch(n)]


def suspects(copy: Path) -> list[str]:
    """'path: hook' for every place in the copy that can rewrite or hide test results."""
    found: list[str] = []
    for directory, dirs, files in os.walk(copy):
        dirs[:] = sorted(d for d in dirs if d not in SUSPECT_SKIPPED_DIRS)
        for name in sorted(files):
            if name not in SUSPECT_FILES and not name.endswith(".pth"):
                continue
            path = Path(directory, name)
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            hooks = sorted(
                {m.group(0).split("(")[0].replace("def ", "").strip() for m in SUSPECT.finditer(text)}
            )
            if hooks or name.endswith(".pth"):
                found.append(f"{path.relative_to(copy).as_posix()}: {', '.join(hooks) or 'path hook'}")
    return found


def runner_of(tokens: list[str]) -> str | None:
    from agentic_codemod.adapters.python.ci_config import runner_of as declared_runner

    found = declared_runner(tokens)
    return found[0] if found is not None else None


def detect(root: Path) -> bool:
    return any((root / name).is_file() for name in DETECTED_BY) or any(root.glob("requirements*.txt"))


# pytest-xdist's options (`-n 4`, `-nauto`, `--numprocesses=auto`, `--dist load`), trial's `-j N`/`--jobs`
XDIST_OPTION = re.compile(r"^(-n|--numprocesses|--dist|--tx)(=|$)|^-n\S|^(-j|--jobs)(=|$)|^-j\d")
XDIST_ADDOPTS = re.compile(r"""(^|[\s"'\[,=])((-n|--numprocesses|--dist|--tx)(=|\s|\d|["'])|-nauto\b)""")
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")
MAX_CONFIG_BYTES = 1_000_000


def parallel(command: TestCommand, root: Path) -> bool:
    """Whether the command runs its tests on several processes itself: stestr (every CPU unless
    `--serial`), pytest-xdist's or trial's options on the command line, or `-n`/`--numprocesses`/`--dist`
    in an addopts of the repository's pytest configuration (read as text; anything unreadable is left
    out). A wrong "no" costs time, never evidence: the runs beside each other just take longer."""
    if command.runner == "stestr":
        return "--serial" not in command.argv
    if any(XDIST_OPTION.match(arg) for arg in command.argv):
        return True
    if command.runner != "pytest":
        return False
    for name in PYTEST_CONFIGS:
        path = root / name
        try:
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "addopts" in text and XDIST_ADDOPTS.search(text):
            return True
    return False


DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
MODULE_BASES = ("", "src")  # where a dotted name's first part may be: the working folder, a src layout


def names_beside(root: Path, command: TestCommand) -> dict[str, Callable[[str], str]]:
    """TestFacts.names_beside: unittest's arguments naming test modules by dotted name
    (`isodate.tests.test_suite`, or a class or method in one): {the module's file, repository-relative:
    how a file beside it is named, its dotted name from the same folder}. Such a command runs only what
    it names, so the canary must be named beside them (helper-45: without it, every run of isodate's
    suite was "the canary went missing ... no result can be trusted")."""
    return {
        file: functools.partial(_dotted, base=base) for file, base in _named_modules(root, command).items()
    }


def _named_modules(root: Path, command: TestCommand) -> dict[str, str]:
    """{a module file the command names by dotted name: the folder its name starts from}."""
    if command.runner != "unittest":
        return {}
    found: dict[str, str] = {}
    for arg in command.argv[1:]:
        if not DOTTED.fullmatch(arg):
            continue
        parts = arg.split(".")
        for end in range(len(parts), 1, -1):  # a module, or a class or method in one
            hit = [b for b in MODULE_BASES if _regular(root / b / ("/".join(parts[:end]) + ".py"))]
            if hit:
                found[posixpath.join(hit[0], "/".join(parts[:end]) + ".py")] = hit[0]
                break
    return found


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def _dotted(file: str, base: str) -> str:
    """The dotted module name of `file` (a .py file) under folder `base`."""
    rel = posixpath.relpath(file, base) if base else file
    return rel.removesuffix(".py").replace("/", ".")


TEST_FACTS = TestFacts(
    source_suffixes=SOURCE_SUFFIXES,
    ast_grep_languages=AST_GREP_LANGUAGES,
    code_suffixes=CODE_SUFFIXES,
    is_test_file=is_test_file,
    command_collects=command_collects,
    is_test_support=is_support,
    start_options=START_OPTIONS,
    test_folders=("tests", "test"),
    skipped_dirs=frozenset({"node_modules", "site-packages", "__pycache__", "build"}),
    config_files=CONFIG_FILES,
    not_a_test_run=NOT_A_TEST_RUN,
    read_results=read_results,
    missing_dependency=missing_test_module,
    canary=canary,
    scrub=scrub,
    suspects=suspects,
    tamper=tamper,
    runner_of=runner_of,
    parallel=parallel,
    shadowing=SHADOWING,
    rule_risk=None,  # workflow/rule_risk.py reads Python's syntax tree itself
    case_report=case_report,
    reports_each_test=reports_each_test,
    names_beside=names_beside,
)
# Every sandboxed process of a Python run: no bytecode written into the copy, no pytest cache.
SANDBOX_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
