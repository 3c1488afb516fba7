"""What the core's gates need to know about JavaScript/TypeScript code and its tests.

    is_test_file(path) -> bool       *.test.* / *.spec.* (js, cjs, mjs, jsx, ts, cts, mts, tsx), files
                                     under test/, tests/ or __tests__/ with a code suffix
    canary(command, sibling, token)  a test that must fail, in the runner's own style, named by `token`
    is_test_support(path) -> bool    a code file in a __mocks__ folder (jest's manual mocks)
    read_results(command, copy, report, output)  test_results.read_results by the command's runner
    case_report(command, copy, report, output, token)  test_results.case_report: each test's outcome
                                     as JUnit, for the test_ids gate, where the report is not JUnit
    reports_each_test(command)       True: every runner here gives the test_ids gate its tests' outcomes
    missing_dependency(output)       a test file that could not load a package ("Cannot find module 'x'"
                                     in a load failure; a relative path is the repository's own bug)
    scrub(output, token)             every output line naming the canary dropped
    suspects(copy)                   result hooks (test_results' HOOKS) in runner configuration and
                                     package.json, and __mocks__ folders
    TEST_FACTS                       the contract's TestFacts

Test-runner configuration a candidate may not add (the tamper gate): jest/vitest/mocha/ava/c8/nyc config
files of every suffix, .mocharc.*, .babelrc (it rewrites test code), .npmrc (node-options), and
package.json keys are read by the manifest gate (package.json changes only as the bump changes it).
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

from agentic_codemod import json_input
from agentic_codemod.adapters.npm.rule_risk import assess as assess_rule_edit
from agentic_codemod.adapters.npm.tamper import HOOKS, MOCKS, compiled
from agentic_codemod.adapters.npm.tamper import tamper as find_tampering
from agentic_codemod.adapters.npm.test_command import JEST
from agentic_codemod.adapters.npm.test_results import case_report as read_cases
from agentic_codemod.adapters.npm.test_results import read_results as read_by_runner
from agentic_codemod.adapters.types import SDK_TEST, Canary, Shadowing, TestCommand, TestFacts
from agentic_codemod.models import Tally
from agentic_codemod.tools.sandbox import REPO_MOUNT

SOURCE_SUFFIXES = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx")
# ast-grep's languages and the suffixes it reads for each (a rule of one language scans its files only).
AST_GREP_LANGUAGES: dict[str, tuple[str, ...]] = {
    "javascript": (".js", ".cjs", ".mjs", ".jsx"),
    "typescript": (".ts", ".cts", ".mts"),
    "tsx": (".tsx",),
}
# What a test run may never write in the copy: code node would load, native addons.
CODE_SUFFIXES = (*SOURCE_SUFFIXES, ".node", ".json")
TEST_NAME = re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$")
TEST_FOLDERS = frozenset({"test", "tests", "__tests__"})
CONFIG_FILES = (
    "jest.config.*",
    "vitest.config.*",
    "vitest.workspace.*",
    "vite.config.*",
    ".mocharc*",
    "ava.config.*",
    ".c8rc*",
    ".nycrc*",
    ".babelrc*",
    "babel.config.*",
    ".swcrc",
    "tsconfig*.json",
)
# A test file that could not load a package: the module named, in the runners' load-failure reports.
MISSING_MODULE = re.compile(r"Cannot find (?:module|package) '([^']+)'")
LOAD_FAILURE = re.compile(r"Test suite failed to run|Require stack:|ERR_MODULE_NOT_FOUND|Failed to load url")
SUSPECT_SKIPPED_DIRS = frozenset({".git", "node_modules"})
# node resolves require("./x") to x.js before the folder x/: a new x.js shadows a candidate folder. A bare
# require("acme-sdk") looks in node_modules of the file's folder first, then each parent's: a package a
# test run writes into src/node_modules or test/node_modules (any file: node loads a `main` of any suffix
# as code) is what the code below loads, not the environment's (the copy's root node_modules is a stamped
# link to it). A new package.json above candidate code changes its scope ("imports", "exports" by name).
SHADOWING = Shadowing(
    module_suffixes=SOURCE_SUFFIXES,
    cache_dirs=(),
    package_files=(),
    file_beats_folder=True,
    lookup_dirs=("node_modules",),
    scope_files=("package.json",),
)
NOT_A_TEST_RUN = frozenset({126, 127})  # cannot execute / not found (every runner exits 1 on failures)


def is_test_file(path: str) -> bool:
    pure = PurePosixPath(path)
    if not pure.name.endswith(SOURCE_SUFFIXES) or "node_modules" in pure.parts:
        return False
    return bool(TEST_NAME.search(pure.name)) or bool(TEST_FOLDERS & set(pure.parts[:-1]))


def is_test_support(path: str) -> bool:
    pure = PurePosixPath(path)
    in_mocks = MOCKS in pure.parts[:-1] and "node_modules" not in pure.parts
    return in_mocks and pure.name.endswith(SOURCE_SUFFIXES)


# A test file's name around its stem: test-x.js, x-test.js, x_test.js, x.spec.ts, x.js (in a test folder).
SIBLING_NAME = re.compile(
    r"^(?P<pre>(?:test|spec)[._-])?(?P<stem>.+?)(?P<post>[._-](?:test|spec)s?)?(?P<ext>\.[cm]?[jt]sx?)$", re.I
)


JEST_FILE_ARG = re.compile(r"[\w-]+(?:\.[\w-]+)*\.(?:test|spec)\.[cm]?[jt]sx?")


def _jest_file_pattern(command: TestCommand) -> str | None:
    """A file name jest is told to run (a path pattern without a folder, `jest.test.js`), else None."""
    if command.runner != "jest" or JEST[1] not in command.argv:
        return None
    args = command.argv[command.argv.index(JEST[1]) + len(JEST) - 1 :]
    names = [a for a in args if JEST_FILE_ARG.fullmatch(a)]
    return names[0] if names else None


def command_collects(command: TestCommand, path: str) -> bool:
    """No npm runner here collects by a pattern the command names that is_test_file does not know."""
    return False


def canary(command: TestCommand, sibling: str, token: str, sdk: str | None = None) -> Canary:
    """The canary beside `sibling` (a test file the runner collects), named so the runner collects it: like
    the sibling, its stem replaced by the token (utils-test.js -> <token>-test.js), since a command's own
    glob (`mocha test/*-test.js`) collects the sibling's pattern and maybe no other. With `sdk`, a CommonJS
    canary of a runner whose skipped tests are read by name also asks where the SDK resolves (sdk_tests)."""
    rel = PurePosixPath(sibling)
    suffix = rel.suffix or ".js"
    found = SIBLING_NAME.match(rel.name)
    name = f"{token}.test{suffix}"
    if found and (found["pre"] or found["post"]):
        name = f"{found['pre'] or ''}{token}{found['post'] or ''}{found['ext']}"
    pattern = _jest_file_pattern(command)
    if pattern:  # jest runs only paths its arguments match (`jest jest.test.js`, process-warning)
        name = f"{token}.{pattern}"
    if suffix in (".ts", ".mts", ".cts", ".tsx") or command.runner == "vitest":
        body = (
            f'import {{ test, expect }} from "vitest";\n\ntest("{token}", () => {{\n'
            f"  expect(1).toBe(2);\n}});\n"
            if command.runner == "vitest"
            else f'test("{token}", () => {{\n  expect(1).toBe(2);\n}});\n'
        )
        return Canary(name, body)
    checks = (
        sdk is not None
        and command.runner in SDK_CHECKED_RUNNERS
        and PurePosixPath(name).suffix in (".js", ".cjs")
    )
    up = "/".join([".."] * (len(rel.parts) - 1)) or "."  # from the canary's folder to the copy's root
    extra = sdk_tests(command.runner or "", token, sdk, up) if checks and sdk is not None else ""
    if command.runner == "node-test":
        return Canary(
            name,
            f'const test = require("node:test");\nconst assert = require("node:assert");\n\n'
            f'test("{token}", () => {{\n  assert.strictEqual(1, 2);\n}});\n{extra}',
            checks,
        )
    if command.runner == "tape":
        return Canary(
            name,
            f'var test = require("tape");\n\n'
            f'test("{token}", function (t) {{\n  t.equal(1, 2, "{token}");\n  t.end();\n}});\n{extra}',
            checks,
        )
    if command.runner == "mocha":
        return Canary(
            name,
            f'const assert = require("assert");\n\n'
            f'it("{token}", () => {{\n  assert.strictEqual(1, 2);\n}});\n{extra}',
            checks,
        )
    return Canary(name, f'test("{token}", () => {{\n  expect(1).toBe(2);\n}});\n{extra}', checks)


# The runners whose canary also checks where the SDK resolves: CommonJS test files with `require.resolve`
# (jest's applies its moduleNameMapper, modulePaths and resolver; node's its hooks), whose readers list
# skipped tests by name (test_results.py).
SDK_CHECKED_RUNNERS = frozenset({"jest", "node-test", "tape", "mocha"})
# Where `require.resolve(SDK)` leads from the canary's folder, against the package node's own lookup finds
# from there (the nearest node_modules/SDK up the tree, links resolved): "installed" (a file inside it,
# and that node_modules the copy's root's, where the run links the environment in; one nearer the
# canary is a copy the repository's tests made before it loaded, test/node_modules), "elsewhere", or "unknown"
# (anything threw: no require, an ESM-only package, no fs). Asked as the file loads, so the answer can
# name a test.
WHERE_SDK = """
const {fn} = (() => {{
  try {{
    const path = require("path");
    const fs = require("fs");
    const sdk = {sdk};
    const got = fs.realpathSync(require.resolve(sdk));
    const root = path.resolve(__dirname, {root});
    for (let dir = __dirname; ; dir = path.dirname(dir)) {{
      const pkg = path.join(dir, "node_modules", sdk);
      if (fs.existsSync(path.join(pkg, "package.json"))) {{
        return dir === root && got.startsWith(fs.realpathSync(pkg) + path.sep) ? "installed" : "elsewhere";
      }}
      if (path.dirname(dir) === dir) return "elsewhere";
    }}
  }} catch (e) {{
    return "unknown";
  }}
}})();
"""
# The answer as the name of a skipped test, in each runner's words: a skipped test fails nothing (mocha
# exits with the number of failures, and a green run exits 1: the canary's), and a runner that hides it
# leaves the answer "unknown", never "installed".
SDK_TESTS = {
    # tape 5 prints nothing for a skipped test: a skipped assertion (`ok N name # SKIP`) is read instead
    "tape": 'test("{name}" + {fn}, function (t) {{\n  t.skip("{name}" + {fn});\n  t.end();\n}});\n',
    "mocha": 'it.skip("{name}" + {fn}, () => {{}});\n',
    "node-test": 'test("{name}" + {fn}, {{ skip: true }}, () => {{}});\n',
    "jest": 'test.skip("{name}" + {fn}, () => {{}});\n',
}


# jest's `require.resolve` does not see a module factory (`jest.mock(name, factory)` in a setup file,
# `automock`): where it answered "installed", the module the tests get must also be the real one. A
# package whose exports are a getter (ansi-styles 4) gives a new object each time: no such comparison.
JEST_MOCKED = """
const {fn}_jest = (() => {{
  if ({where} !== "installed") return {where};
  try {{
    const actual = jest.requireActual({sdk});
    if (actual !== jest.requireActual({sdk})) return "installed";
    return require({sdk}) === actual ? "installed" : "elsewhere";
  }} catch (e) {{
    return "unknown";
  }}
}})();
"""


def sdk_tests(runner: str, token: str, sdk: str, up: str = ".") -> str:
    """Where the SDK resolves, asked as the file loads, and the skipped test named by the answer; `up`:
    the copy's root from the canary's folder."""
    where, quoted = f"{token}_where", json.dumps(sdk)
    text = WHERE_SDK.format(fn=where, sdk=quoted, root=json.dumps(up))
    if runner == "jest":
        text += JEST_MOCKED.format(fn=token, where=where, sdk=quoted)
        where = f"{token}_jest"
    return text + "\n" + SDK_TESTS[runner].format(name=f"{token}{SDK_TEST}", fn=where)


def read_results(
    command: TestCommand, copy: Path, report: Path | None, output: str
) -> tuple[Tally | None, list[str]]:
    return read_by_runner(command.runner, report, output, _roots(copy))


def case_report(
    command: TestCommand, copy: Path, report: Path | None, output: str, token: str
) -> ET.Element | None:
    return read_cases(command.runner, report, output, token, _roots(copy))


def reports_each_test(command: TestCommand) -> bool:
    """Every npm runner this tool runs gives each test's outcome: node, vitest and mocha a JUnit report,
    jest its JSON, tape (and node without its report) the TAP (test_results.case_report)."""
    return True


def _roots(copy: Path) -> tuple[str, ...]:
    """Where the runner saw the copy: the sandbox's mount, or the copy itself (the baseline's and the
    candidate's copies are two folders under process isolation), as given and resolved."""
    return (str(REPO_MOUNT), str(copy), str(copy.resolve()))


def missing_dependency(output: str) -> str | None:
    if not LOAD_FAILURE.search(output):
        return None
    names = [n for n in MISSING_MODULE.findall(output) if not n.startswith((".", "/"))]
    return f"Cannot find module '{names[0]}'" if names else None


def scrub(output: str, token: str) -> str:
    return "".join(line for line in output.splitlines(keepends=True) if token not in line)


def suspects(copy: Path) -> list[str]:
    """'path: hook' for every runner configuration or package.json that loads code into the run or
    rewrites its report, and every __mocks__ folder."""
    found: list[str] = []
    for directory, dirs, files in os.walk(copy):
        dirs[:] = sorted(d for d in dirs if d not in SUSPECT_SKIPPED_DIRS)
        rel = Path(directory).relative_to(copy)
        if rel.name == MOCKS:
            found.append(f"{rel.as_posix()}: module mocks")
        for name in sorted(files):
            if name != "package.json" and not any(fnmatch.fnmatchcase(name, p) for p in CONFIG_FILES):
                continue
            try:
                text = Path(directory, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            matches = compiled(HOOKS).finditer(text)
            hooks = sorted({re.sub(r"\s+", "", m.group(0)).strip("\"':") for m in matches})
            if hooks:
                found.append(f"{(rel / name).as_posix()}: {', '.join(hooks)}")
    return found


def tamper(path: str, before: str | None, after: str | None, is_test: bool, new_here: bool) -> list[str]:
    return find_tampering(path, before, after, is_test, new_here, CONFIG_FILES)


def runner_of(tokens: list[str]) -> str | None:
    from agentic_codemod.adapters.npm.test_command import declared_command

    command = declared_command(tokens, "")
    return command.runner if command is not None else None


# Runners that spread test files over workers by default, and the options that keep them to one.
PARALLEL_BY_DEFAULT = {
    "jest": ("--runInBand", "-i", "--maxWorkers=1", "-w=1"),
    "vitest": ("--no-file-parallelism", "--maxWorkers=1", "--poolOptions.threads.singleThread"),
    "node-test": ("--test-concurrency=1",),
}


def parallel(command: TestCommand, _root: Path) -> bool:
    """Whether the command runs its tests on several processes itself: jest's and vitest's workers and
    node's test runner's files by default (unless an option keeps them to one), mocha with `--parallel`."""
    serial = PARALLEL_BY_DEFAULT.get(command.runner)
    if serial is not None:
        return not any(arg in serial for arg in command.argv)
    return command.runner == "mocha" and any(arg in ("--parallel", "-p") for arg in command.argv)


def detect(root: Path) -> bool:
    """An npm repository: a package.json object at the root."""
    try:
        return isinstance(json_input.loads((root / "package.json").read_text(encoding="utf-8")), dict)
    except (OSError, ValueError):
        return False


TEST_FACTS = TestFacts(
    source_suffixes=SOURCE_SUFFIXES,
    ast_grep_languages=AST_GREP_LANGUAGES,
    code_suffixes=CODE_SUFFIXES,
    is_test_file=is_test_file,
    command_collects=command_collects,
    is_test_support=is_test_support,
    start_options=(),
    test_folders=tuple(sorted(TEST_FOLDERS)),
    skipped_dirs=frozenset({"node_modules", "build"}),
    config_files=CONFIG_FILES,
    not_a_test_run=NOT_A_TEST_RUN,
    read_results=read_results,
    missing_dependency=missing_dependency,
    canary=canary,
    scrub=scrub,
    suspects=suspects,
    tamper=tamper,
    runner_of=runner_of,
    parallel=parallel,
    shadowing=SHADOWING,
    rule_risk=assess_rule_edit,
    case_report=case_report,
    reports_each_test=reports_each_test,
)
# Every sandboxed process of an npm run: no update checks, no funding or audit calls, CI behaviour
# (no watch mode, no interactive prompts), no colours in the output the tool reads.
SANDBOX_ENV = {
    "CI": "true",
    "NO_UPDATE_NOTIFIER": "1",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "FORCE_COLOR": "0",
    "NO_COLOR": "1",
}
