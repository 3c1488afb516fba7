"""What a candidate introduces into a JavaScript/TypeScript repository that could change how its tests run
or what they report (the tamper gate's npm facts; adapters/types.py TestFacts.tamper).

    tamper(path, before, after, is_test, new_here, config_files) -> [message, ...]
        `before` is the base text (of the path it was renamed from; None: new), `after` the candidate's
        (None: deleted or not a regular file), `new_here`: the path did not exist at base.

Each message names the path. Counted in test files (more than at base is a finding; fewer tests or
assertions too):
    skips       .skip( .todo( xit( xdescribe( xtest( this.skip( test.skip … — skipping a test to go green
    focus       .only( fit( fdescribe( — runs only some tests, the rest are silently left out
    tests       it( test( — fewer than at base
    assertions  assert… expect( — fewer than at base
In any JS/TS file or test-runner configuration:
    hooks       require.cache, Module._load, Module.prototype.require, process.exitCode =, process.exit(
                (in a test file), a custom reporter or setup file (reporters, setupFiles…, --require,
                --import, --test-reporter, NODE_OPTIONS): code that can rewrite or hide results
    config      a test-runner configuration file new at its path (TestFacts.config_files; moved there too)
    mocks       a file new in a __mocks__ folder: jest replaces the module of that name by it (a root
                __mocks__/<package>.js mocks an installed package without any jest.mock call)
A deleted test file is the core's finding (it sees TestFacts.is_test_file).
"""

from __future__ import annotations

import fnmatch
import functools
import re
from pathlib import PurePosixPath

# The patterns are sources, compiled on first use (compiled()): every run loads this adapter (the
# registry), only npm candidates are read with them.
SKIPS = (
    r"\.(?:skip|todo)\s*\(|\b(?:xit|xdescribe|xtest|xcontext)\s*\(|\bthis\.skip\s*\("
    r"|\b(?:skip|todo)\s*:\s*(?!false\b)"  # node:test's and tape's options: test(name, { skip: true }, fn)
)
FOCUS = r"\.only\s*\(|\b(?:fit|fdescribe)\s*\("
TESTS = r"(?<![\w.$])(?:it|test)\s*\("
ASSERTIONS = (
    r"\bassert\w*\s*[.(]|\bexpect\s*\("
    # tape's (and node-tap's) assertions on the test object by its usual names: t.equal(...), st.ok(...) ...
    r"|\b(?:t|st|tt|t2)\.(?:ok|notOk|equal|notEqual|strictEqual|notStrictEqual|deepEqual|notDeepEqual|deepLooseEqual"
    r"|looseEqual|same|notSame|is|isNot|error|ifError|throws|doesNotThrow|match|doesNotMatch|fail)\s*\("
)
HOOKS = (
    r"require\.cache|Module\._load|Module\.prototype\.require|process\.exitCode\s*="
    r"|[\"'](?:reporters|setupFiles|setupFilesAfterEach|setupFilesAfterEnv|globalSetup|globalTeardown"
    r"|testResultsProcessor|testPathIgnorePatterns|modulePathIgnorePatterns)[\"']\s*:"
    r"|\b(?:reporters|setupFiles|setupFilesAfterEach|setupFilesAfterEnv|globalSetup|globalTeardown"
    r"|testResultsProcessor|testPathIgnorePatterns|modulePathIgnorePatterns)\s*:"
    r"|--require\b|--import\b|--test-reporter\b|--loader\b|NODE_OPTIONS"
)
# Keys of a runner's configuration that load code or narrow what runs (.mocharc's require/file/spec/grep,
# jest's testMatch/testNamePattern ...): introduced into an existing configuration, as new as a new file.
RUNNER_KEYS = (
    r"[\"']?\b(?:require|file|node-option|grep|fgrep|invert|spec|ignore|exclude|testMatch|testRegex"
    r"|testNamePattern|roots)\b[\"']?\s*:"
)
EXITS = r"process\.exit\s*\("
MOCKS = "__mocks__"  # jest's folder of manual module mocks
CODE = (".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx")


@functools.cache
def compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def tamper(
    path: str,
    before: str | None,
    after: str | None,
    is_test: bool,
    new_here: bool,
    config_files: tuple[str, ...],
) -> list[str]:
    if after is None:
        return []
    old = before or ""
    pure = PurePosixPath(path)
    name = pure.name
    found: list[str] = []
    is_config = any(fnmatch.fnmatchcase(name, pattern) for pattern in config_files)
    if is_config and (before is None or new_here):
        found.append(f"new test-runner configuration: {path}")
    if MOCKS in pure.parts[:-1] and (before is None or new_here):
        found.append(f"new module mock: {path}")
    if name.endswith(CODE) or is_config or name == "package.json":
        found += [f"{what} introduced in {path}" for what in _more(HOOKS, old, after)]
    if is_config:
        found += [f"runner setting {what} introduced in {path}" for what in _more(RUNNER_KEYS, old, after)]
    if not is_test:
        return found
    for label, pattern in (("skip marker", SKIPS), ("focused test (.only)", FOCUS)):
        if _count(pattern, after) > _count(pattern, old):
            found.append(
                f"{label} added in {path}: {_count(pattern, old)} at base, {_count(pattern, after)} now"
            )
    if _count(EXITS, after) > _count(EXITS, old):
        found.append(f"process.exit( introduced in test file {path}")
    for label, pattern in (("tests", TESTS), ("assertions", ASSERTIONS)):
        if _count(pattern, after) < _count(pattern, old):
            found.append(
                f"fewer {label} in {path}: {_count(pattern, old)} at base, {_count(pattern, after)} now"
            )
    return found


def _more(pattern: str, before: str, after: str) -> list[str]:
    old, new = _tally(pattern, before), _tally(pattern, after)
    return sorted(key for key in new if new[key] > old.get(key, 0))


def _tally(pattern: str, text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for match in compiled(pattern).finditer(_code_only(text)):
        key = re.sub(r"\s+", "", match.group(0)).strip("\"':")
        counts[key] = counts.get(key, 0) + 1
    return counts


def _count(pattern: str, text: str) -> int:
    return len(compiled(pattern).findall(_code_only(text)))


def _code_only(text: str) -> str:
    """The text without // and /* */ comments (a commented-out skip is no skip). Strings stay: a test
    name that says 'skip' is rare, and counting it on both sides cancels out."""
    return re.sub(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", "", text, flags=re.DOTALL)
