"""A test oracle that can't be flipped quietly: the canary.

Every verification, the baseline included, plants one test the tool owns into the disposable copy,
beside a test file of the repository, so it is collected under the repository's own configuration
(conftest.py, plugins, addopts; jest/mocha config and setup files). The canary must fail. If it reads as
passed, or goes missing, something in the repository rewrites or hides results, and no result of that run
can be trusted. What a test file is, what the canary says and how its report is cut from the output are
the ecosystem's (the adapter's TestFacts); this module knows no runner.

    canary = plant(root, command, facts, sdk)  the canary's file in the copy (never in the candidate)
    state = canary.state_in(tally, ids)      "failed" (as it must) | "passed" | "missing"
    state, sdk = canary.read(tally, ids)     the same, and where the test code's loader resolved the SDK

Where the adapter can (npm: CommonJS tests of jest, node, tape, mocha; Python), the canary's file also
asks the test code's own loader where the SDK resolves: `require.resolve` sees jest's moduleNameMapper and
modulePaths, node's resolution hooks, module-alias, tsconfig-paths, however they were set up (a name
built at run time, a preload, a setup file). Against the package node's plain lookup finds from the
canary's folder, it is "installed", "elsewhere" or "unknown" (the check could not run), and names a
skipped test (`<token>_sdk_<answer>`), since a reader sees names and outcomes only. "elsewhere" means the
tests would not test the installed SDK: the run stops (test_runs.untrusted). A runner that hides that
test reads as "unknown", never as "installed". Python's canary asks the test process itself where the
SDK's modules were (or would be) imported from (adapters/python/test_facts.WHERE_SDK): a mock or stub in
sys.modules, or a copy a conftest.py put first on sys.path, is "elsewhere".
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentic_codemod.adapters.types import SDK_TEST, TestCommand, TestFacts
from agentic_codemod.models import Tally

CanaryState = Literal["failed", "passed", "missing"]
SdkResolution = Literal["installed", "elsewhere", "unknown"]
# Options whose value is a file loaded before the tests (node's, mocha's), never a test file to run.
PRELOAD_OPTIONS = frozenset({"--require", "-r", "--import", "--loader", "--experimental-loader"})
NOTE = "[agentic-codemod: the canary test failed as it must; its report is cut from this output]\n"


@dataclass(frozen=True)
class Canary:
    file: str  # repository-relative
    token: str  # in the class and test names
    named: bool = False  # the command names its test files: the canary's path goes after them (see plant)
    argument: str = ""  # what names the canary there, where not its path (unittest's dotted module name)
    checks_sdk: bool = False  # the file holds the skipped test named by where the SDK resolves (SDK_TEST)
    rechecks_sdk: bool = False  # that test fails where the SDK is elsewhere as the tests run (Python)
    must_fail: int = 1  # the file's tests that must fail, each its own way (adapters/types.py Canary)

    def read(self, tally: Tally | None, case_ids: list[str]) -> tuple[CanaryState, SdkResolution | None]:
        """state_in, and where the SDK resolved (None: not checked): the skipped test that says it is
        taken out of the tally (in place) and the ids first, so the must-fail test is read as before."""
        if not self.checks_sdk:
            return self.state_in(tally, case_ids), None
        prefix = f"{self.token}{SDK_TEST}"
        said = [t for t in case_ids if prefix in t]
        answers = {t.partition(prefix)[2].partition(" ")[0] for t in said}
        sdk: SdkResolution = "unknown"
        if tally is not None:
            # its failure is read wherever the ids are not (helper-48: taken for a third failure of the
            # canary's, it hid a copy of the SDK first on sys.path)
            failing = [t for t in tally.failing if prefix in t]
            tally.failing = [t for t in tally.failing if prefix not in t]
            for _ in failing:  # a runner that failed a skipped test: counted, and no answer
                _uncount(tally)
            if failing and self.rechecks_sdk:  # it failed as it must where the SDK was then elsewhere
                sdk = "elsewhere"
            if not failing and said:
                tally.skipped = max(tally.skipped - len(said), 0)
                if answers == {"installed"} or answers == {"elsewhere"}:
                    sdk = "installed" if answers == {"installed"} else "elsewhere"
        rest = [t for t in case_ids if prefix not in t]
        return self.state_in(tally, rest), sdk

    def state_in(self, tally: Tally | None, case_ids: list[str]) -> CanaryState:
        """What happened to the canary; the canary is taken out of the tally (in place). `case_ids`: every
        test the report lists (passing ones too); a reader without them names failing tests only."""
        if tally is None:
            return "missing"
        failing = {t for t in tally.failing if self.token in t}
        if failing or any(self.token in t for t in case_ids):
            tally.failing = [t for t in tally.failing if self.token not in t]
            for _ in failing:
                _uncount(tally)
            if len(failing) >= self.must_fail:
                return "failed"
            # one of them passed (or went missing beside the others): the results cannot be trusted
            tally.passed = max(tally.passed - (self.must_fail - len(failing)), 0)
            return "passed"
        return "missing"


def plant(root: Path, command: TestCommand, facts: TestFacts, sdk: str | None = None) -> Canary | None:
    """The adapter's canary beside the shallowest of its test files (one in a test folder first) under
    the folder the command collects from (hidden folders and the ecosystem's skipped_dirs are not
    searched); None if there is none. Where the command names test files one by one (`node --test
    test/a.test.js`, `pytest tests/test_a.py`) the canary goes beside one of those, and its path is
    added to the command (Canary.named), since such a runner collects nothing else."""
    named = _named_test_files(command, facts)
    beside = facts.names_beside(root, command) if facts.names_beside else {}  # named other than by path
    named = named | frozenset(beside)
    best: tuple[int, int, str] | None = None
    best_named: tuple[int, int, str] | None = None
    for start in _start_dirs(root, command, facts.start_options):
        for directory, dirs, files in os.walk(start):
            dirs[:] = sorted(d for d in dirs if d not in facts.skipped_dirs and not d.startswith("."))
            rel = Path(directory).relative_to(root)
            in_tests = any(part in facts.test_folders for part in rel.parts)
            for name in sorted(files):
                found = (rel / name).as_posix()
                if facts.is_test_file(found) or facts.command_collects(command, found) or found in named:
                    key = (0 if in_tests else 1, len(rel.parts), found)
                    best = key if best is None or key < best else best
                    if found in named:
                        best_named = key if best_named is None or key < best_named else best_named
    best = best_named or best
    if best is None:
        return None
    token = f"c{secrets.token_hex(5)}"
    sibling = root / best[2]
    planted = facts.canary(command, best[2], token, sdk)
    path = sibling.parent / planted.name
    path.write_text(planted.text, encoding="utf-8")
    file = path.relative_to(root).as_posix()
    naming = beside.get(best[2]) if best_named is not None else None
    return Canary(
        file=file,
        token=token,
        named=best_named is not None,
        argument=naming(file) if naming is not None else "",
        checks_sdk=planted.checks_sdk,
        rechecks_sdk=planted.rechecks_sdk,
        must_fail=planted.must_fail,
    )


def _named_test_files(command: TestCommand, facts: TestFacts) -> frozenset[str]:
    """The command's arguments that could name a test file by its relative path (`./` dropped; no glob or
    pattern). Only a file the walk in plant() finds counts, so a name through a link or outside the copy
    never does, and an argument that is a pattern (jest's) matching no such path changes nothing. The
    value of an option that loads a file first (`node --require ./test/setup.js --test`) names no test:
    taken for one, the canary went beside the setup file as the only file named, so node ran the canary
    alone and the run "ran no test"."""
    named = set()
    for previous, arg in zip(command.argv, command.argv[1:], strict=False):
        rel = arg.removeprefix("./")
        if (
            previous not in PRELOAD_OPTIONS
            and rel
            and not rel.startswith(("-", "/"))
            and not any(c in rel for c in "*?[{")
            and ".." not in rel.split("/")
            and facts.is_test_file(rel)
        ):
            named.add(rel)
    return frozenset(named)


def scrub(output: str, token: str, facts: TestFacts) -> str:
    """The output without the canary's own report (the ecosystem cuts its runners' formats), so the
    coder, the reviewer and a lesson read the repository's results only; a note says it was cut."""
    text = facts.scrub(output, token)
    return text + ("" if text.endswith("\n") or not text else "\n") + NOTE


def suspects(root: Path, facts: TestFacts) -> list[str]:
    """'path: hook' for every place in the copy that can rewrite or hide test results."""
    return facts.suspects(root)


def _start_dirs(root: Path, command: TestCommand, start_options: tuple[str, ...]) -> list[Path]:
    """The directory the runner starts from (an option of the ecosystem's, e.g. unittest -s), else
    directories named on the command line (tests/), else the repository root."""
    argv = command.argv
    for option in start_options:
        if option in argv[:-1]:
            start = _folder_inside(root, argv[argv.index(option) + 1])
            if start is not None:
                return [start]
    named = [_folder_inside(root, a) for a in argv[1:] if not a.startswith(("-", "{"))]
    return [d for d in named if d is not None] or [root]


def _folder_inside(root: Path, rel: str) -> Path | None:
    """root/rel when it is a real folder of the copy: no absolute path, no `..`, no symlink on the way
    (the repository's command names it; the canary is written there by the tool, outside any sandbox)."""
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or ".." in parts:
        return None
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink() or not path.is_dir():
            return None
    return path


def _uncount(tally: Tally) -> None:
    """One failure (or error) fewer: the canary's."""
    if tally.failed:
        tally.failed -= 1
    elif tally.errors:
        tally.errors -= 1
