"""What a candidate adds to a Python repository that could change how its tests run or read (the tamper
gate's Python facts; adapters/types.py TestFacts.tamper).

    tamper(path, before, after, is_test, new_here) -> [message, ...]
        `before` is the base text (of the path it was renamed from), `after` the candidate's (None: not a
        readable regular file), `new_here`: the path did not exist at base. Each message names the path.

The test oracle's wiring, anywhere (only what the candidate introduces: more than base had at the path):
    - a pytest hook defined (`pytest_runtest_*`, `pytest_report_*`, `pytest_sessionfinish`, any `pytest_*`
      except the harmless `pytest_addoption` / `pytest_generate_tests`, and `pytest_collection_modifyitems`
      when it deselects), a `hookimpl`, the plugin manager used (`pluginmanager.register` ...), a
      `pytest_plugins` list;
    - a new .stestr.conf (it names the folder stestr collects from);
    - pytest configuration of any name: a new pytest.ini, .pytest.ini, pytest.toml, .pytest.toml, a tox.ini
      [pytest], setup.cfg [tool:pytest] or pyproject [tool.pytest*] section, a new conftest.py; `-p`, `-c`,
      `-o`, `--rootdir`, `--confcutdir` in a config file; PYTEST_PLUGINS, PYTEST_ADDOPTS or a `pytest11`
      entry point anywhere;
    - an interpreter start-up file written: sitecustomize.py, usercustomize.py, *.pth;
    - code outside the tests that imports pytest, _pytest or pluggy.
In test files and test configuration (conftest.py, pytest/tox/setup.cfg/pyproject/noxfile): more
test-selection knobs than at base (--deselect, --ignore, -k, collect_ignore, norecursedirs ...); in test
code, read with `ast`: fewer test functions or assertions, new skip/xfail markers, no code left, a test
file that no longer parses. A hook base already had is the canary test's business, not this gate's.
Deleted, emptied or moved test files are the core's findings (it sees TestFacts.is_test_file and
is_test_support).
"""

from __future__ import annotations

import ast
import collections
import re
import tomllib

from agentic_codemod.errors import UNPARSEABLE

Facts = collections.Counter[str]

STARTUP_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})
PYTEST_CONFIG_FILES = frozenset({"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml"})
OTHER_RUNNER_CONFIG = frozenset({".stestr.conf"})  # stestr's test_path and filters
# Files whose pytest section makes them pytest configuration: name -> the section's pattern.
PYTEST_SECTIONS = {
    "tox.ini": re.compile(r"^\s*\[pytest\]", re.MULTILINE),
    "setup.cfg": re.compile(r"^\s*\[tool:pytest\]", re.MULTILINE),
}
CONFIG_SUFFIXES = (".ini", ".cfg", ".toml")
# Command-line options that load a plugin or point pytest at other configuration.
# Short options take their value attached too (`-pevil`, `-oaddopts=`).
CONFIG_OPTIONS = re.compile(r"(?<![\w-])(-[pco]|--(?:config-file|override-ini|rootdir|confcutdir)(?![\w-]))")
# Anywhere in a text file: the environment variables that load plugins, the plugin entry-point group.
PLUGIN_WORDS = ("PYTEST_PLUGINS", "PYTEST_ADDOPTS", "pytest11")
HARMLESS_HOOKS = frozenset({"pytest_addoption", "pytest_generate_tests"})
DESELECTING_CALLS = frozenset({"remove", "pop", "clear", "pytest_deselected"})
TEST_RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy"})


def introduced(path: str, before: str | None, after: str, *, is_test: bool) -> list[str]:
    """The oracle's wiring `after` has that `before` (the base text at the same path, None: new) had not."""
    name = path.rsplit("/", 1)[-1].casefold()
    found: list[str] = []
    if (name in STARTUP_FILES or name.endswith(".pth")) and after != before:
        found.append(f"interpreter start-up file written: {path}")
    if _is_pytest_config(name, after) and (before is None or not _is_pytest_config(name, before)):
        found.append(f"new pytest configuration: {path}")
    if name == "conftest.py" and before is None:
        found.append(f"new conftest.py: {path}")
    if name in OTHER_RUNNER_CONFIG and before is None:
        found.append(f"new test-runner configuration: {path}")
    old, new = _facts(name, before or "", is_test), _facts(name, after, is_test)
    found += [f"{what} introduced in {path}" for what in sorted(new) if new[what] > old[what]]
    return found


def _is_pytest_config(name: str, text: str) -> bool:
    if name in PYTEST_CONFIG_FILES:
        return True
    if name in PYTEST_SECTIONS:
        return bool(PYTEST_SECTIONS[name].search(text))
    if name == "pyproject.toml":
        try:
            return "pytest" in tomllib.loads(text).get("tool", {})
        except (*UNPARSEABLE, AttributeError):  # TOMLDecodeError is a ValueError; nesting: RecursionError
            return "tool.pytest" in text
    return False


def _facts(name: str, text: str, is_test: bool) -> Facts:
    facts: Facts = collections.Counter()
    for word in PLUGIN_WORDS:
        facts[word] = text.count(word)
    if name.endswith(CONFIG_SUFFIXES):
        facts.update(f"pytest option {m}" for m in CONFIG_OPTIONS.findall(text))
    if name.endswith(".py"):
        facts.update(_python_facts(text, is_test))
    return facts


def _python_facts(text: str, is_test: bool) -> Facts:
    try:
        tree = ast.parse(text)
    except UNPARSEABLE:  # unparseable or nested past the parser's limits: counted by spelling, nothing hides
        return _spelled_facts(text, is_test)
    facts: Facts = collections.Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _risky_hook(node):
            facts[f"pytest hook {node.name}"] += 1
        elif isinstance(node, ast.Attribute | ast.Name):
            word = node.attr if isinstance(node, ast.Attribute) else node.id
            if word in ("hookimpl", "HookimplMarker"):
                facts["pytest hookimpl"] += 1
            elif word in ("pluginmanager", "PytestPluginManager"):
                facts["pytest plugin manager use"] += 1
            elif word == "pytest_plugins" and isinstance(node.ctx, ast.Store):
                facts["pytest_plugins list"] += 1
        if not is_test:
            facts.update(f"import of {m} outside the tests" for m in _imported_runner_modules(node))
    return facts


def _risky_hook(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    if not node.name.startswith("pytest_") or node.name in HARMLESS_HOOKS:
        return False
    return node.name != "pytest_collection_modifyitems" or _deselects(node)


def _deselects(node: ast.AST) -> bool:
    """Whether a pytest_collection_modifyitems body removes items (reordering them does not count)."""
    for child in ast.walk(node):
        if isinstance(child, ast.Delete):
            return True
        if isinstance(child, ast.Assign | ast.AugAssign):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            if any(isinstance(t, ast.Subscript) for t in targets):
                return True
        func = child.func if isinstance(child, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in DESELECTING_CALLS:
            return True
    return False


def _imported_runner_modules(node: ast.AST) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and not node.level:
        names = [node.module or ""]
    elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if called in ("__import__", "import_module") and isinstance(node.args[0].value, str):
            names = [node.args[0].value]
    roots = (n.split(".", 1)[0] for n in names)
    return [r for r in roots if r in TEST_RUNNER_MODULES]


_SPELLED_HOOK = re.compile(r"\bdef\s+(pytest_\w+)")
_SPELLED_IMPORT = re.compile(r"^\s*(?:from|import)\s+(_?pytest|pluggy)\b", re.MULTILINE)


def _spelled_facts(text: str, is_test: bool) -> Facts:
    facts: Facts = collections.Counter()
    facts.update(f"pytest hook {h}" for h in _SPELLED_HOOK.findall(text) if h not in HARMLESS_HOOKS)
    for word, label in (("hookimpl", "pytest hookimpl"), ("pluginmanager", "pytest plugin manager use")):
        facts[label] += text.count(word)
    if not is_test:
        facts.update(f"import of {m} outside the tests" for m in _SPELLED_IMPORT.findall(text))
    return facts


# Names that skip or expect-fail a test, however they are imported (pytest.mark.skip, mark.xfail, skip …).
SKIP_NAMES = frozenset(
    {
        "skip",
        "skipif",
        "xfail",
        "skipIf",
        "skipUnless",
        "expectedFailure",
        "SkipTest",
        "skipTest",
        "importorskip",
    }
)
# Test-selection knobs in config files and conftest.py; more of them than at base narrows the suite.
SELECTION_TOKENS = (
    "--deselect",
    "--ignore",
    " -k ",
    "collect_ignore",
    "norecursedirs",
    "pytest_collection_modifyitems",
    "pytest_ignore_collect",
)
TEST_CONFIG_FILES = frozenset(
    {
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "conftest.py",
        "noxfile.py",
    }
)
TEST_DIRS = frozenset({"test", "tests", "testing"})


def tamper(path: str, before: str | None, after: str | None, is_test: bool, new_here: bool) -> list[str]:
    name = path.rsplit("/", 1)[-1]
    config = name in TEST_CONFIG_FILES
    if after is None:  # a test file that is no regular file is the core's finding
        return [f"test file is not a readable regular file: {path}"] if config and not is_test else []
    found = introduced(path, None if new_here else before, after, is_test=is_support(path))
    if is_test or config:
        found += _compare(path, before or "", after, report_emptied=not is_test)
    return found


def is_support(path: str) -> bool:
    """What pytest loads beside the collected test files: conftest.py, and any module in a test folder
    (test/, tests/, testing/); test_*.py and *_test.py too."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py"):
        return False
    parts = path.split("/")[:-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or bool(TEST_DIRS & set(parts))
    )


def _compare(path: str, before: str, after: str, *, report_emptied: bool) -> list[str]:
    if before.strip() and not after.strip():  # an emptied test file is the core's finding
        return [f"test file emptied: {path}"] if report_emptied else []
    found = [
        f"test selection narrowed in {path}: more {t.strip()!r}"
        for t in SELECTION_TOKENS
        if after.count(t) > before.count(t)
    ]
    if not path.endswith(".py"):
        return found
    old, new = _test_facts(before), _test_facts(after)
    if new is None:
        return [*found, f"test file no longer parses: {path}"]
    if old is None:
        return found
    if old["statements"] and not new["statements"]:
        found.append(f"test file emptied (no code left): {path}")
    for key, label in (("tests", "test functions"), ("asserts", "assertions")):
        if new[key] < old[key]:
            found.append(f"fewer {label} in {path}: {old[key]} at base, {new[key]} now")
    if new["skips"] > old["skips"]:
        found.append(f"skip/xfail marker added in {path}: {old['skips']} at base, {new['skips']} now")
    return found


def _test_facts(text: str) -> dict[str, int] | None:
    """Counts from the syntax tree: asserts (plus self.assert*), test functions, skip markers."""
    try:
        tree = ast.parse(text)
    except UNPARSEABLE:
        return None
    facts = {"asserts": 0, "tests": 0, "skips": 0, "statements": len(tree.body)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            facts["asserts"] += 1
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            facts["asserts"] += node.func.attr.startswith("assert")
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            facts["tests"] += 1
        facts["skips"] += _skip_refs(node)
    return facts


def _skip_refs(node: ast.AST) -> int:
    if isinstance(node, ast.Attribute):
        return int(node.attr in SKIP_NAMES)
    if isinstance(node, ast.Name):
        return int(node.id in SKIP_NAMES)
    if isinstance(node, ast.ImportFrom):
        return sum(alias.name in SKIP_NAMES for alias in node.names)
    return 0
