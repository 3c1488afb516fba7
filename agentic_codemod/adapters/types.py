"""The contract every ecosystem adapter implements (Renovate-style: same file names in each package).

An adapter package declares, in its `__init__.py`, only data and re-exports:

    NAME            ecosystem name used in task files ("python")
    FILE_PATTERNS   the one definition of "dependency file": globs of every file the adapter (or the
                    ecosystem's tool on its behalf) reads as a dependency or constraint declaration
    LOCKFILES       lockfile names it knows how to refresh (by the ecosystem's own tool)
    ADAPTER         an `Adapter` built from the functions below

and one module per concern:

    dependency_files.py
                    read_dependency_files(root) -> DependencyFiles   (never raises: files + refusals)
                    is_dependency_file(path) -> bool                 (by name, at any depth)
    extract.py      find_dependency_files(root) -> list[str]         (InputError on any refusal)
                    extract_dependencies(root, files, sdk) -> list[Dependency]
    update.py       update_dependency(content, dependency, target) -> str      (pure: text in, text out)
                    update_lockfiles(root, dependency, target, runner, cache, network)
                        -> list[ArtifactNotice] | None
                        cache: the run's install cache (mounted in the runner's box) where the
                        adapter's lock_cache says so, for the lock tool to keep what it fetches for
                        the run's later installs (None: its own). The box shows the environment
                        read-only: the lock tool may run repository code. network: whether the box
                        reaches a package index (without it, none of the caller's network settings go
                        in: certificates and keys would serve only that repository code)
    test_command.py detect_test_command(root, settings) -> TestCommand | None   (settings.verification wins)
    environment.py  prepare_environment(root, env_dir, settings, runner, pins) -> VerificationEnv
                    install_dependencies(root, venv, settings, runner, pins) -> ProcessResult
                        pins: requirement strings of the tool's own (the bumped package at its `from`
                        range for the baseline; at exactly its target after the bump, installed on
                        top of the baseline environment, nothing else upgraded)
                    installed_versions(root, venv, runner) -> {canonical name: version} | None
                    copy_environment(env, dest) -> VerificationEnv | None
                        the same environment at `dest` (the bump installs into it while the baseline's
                        tests run on `env`), or None where a copy would not be the same environment
                    version_matches(version, specifier) -> bool      (the ecosystem's versioning)

and, for the core's ecosystem-neutral parts (issue 14: outside `adapters/<ecosystem>/` the code knows no
suffix, runner or version syntax), the declarations of the Adapter fields below:

    versioning      Versioning: is_version, check, matches, intersects, pins, has_version, new_range,
                    exact, compare, canonical_name, requirement
                    (Renovate's VersioningApi; `kind` is a Dependency.kind, for ecosystems with several
                    range syntaxes, e.g. Poetry's in Python)
    test_facts      TestFacts: source suffixes and ast-grep languages of the code, what a test file is
                    (and what the tests load besides), test-runner configuration files, exit codes that
                    mean "no test run", the runners' result reader (read_results, with test ids), what
                    names a missing dependency, the canary for each runner and how its report is cut,
                    what can rewrite results (suspects), what a candidate adds to tests (tamper),
                    when a new file can shadow candidate code (shadowing), and each test's outcome for the
                    test_ids gate where a report is not JUnit (case_report, reports_each_test)
    sandbox_env     variables every sandboxed process of this ecosystem gets (no bytecode, no caches,
                    no update checks)
    detect(root)    whether the repository is this ecosystem's (the registry's detection)
    first_import(root, sdk, import_names, settings)   where the code first imports the SDK, or None
    check_test_requirement(entry)   None when the adapter reads this verification.requirements entry,
                    else why not (the config accepts an entry some adapter reads)
    scaffold        Scaffold: what `agentic-codemod init` writes for the ecosystem (scaffold.py)

Writes never happen inside an adapter: the pipeline writes the returned text through the workspace,
so the trace and the deny globs cover the bump like any other edit. Tool failures come back as data.

The repository is untrusted input. Before any tool reads a dependency file, the adapter checks it: a
file, include, constraint, editable or `file:` reference that resolves outside the repository (by path or
through a symlink), or a repository choosing where packages come from (index options), is a `Refusal`
naming the file and line; `find_dependency_files` and the install raise it as an InputError (exit 2),
and the refused file's contents are never read. The manifest gate uses the same definition: every
file `is_dependency_file` names or `read_dependency_files` reaches may change only as the bump changes it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentic_codemod.config import Settings
from agentic_codemod.models import Dependency, Tally


@dataclass(frozen=True)
class ProcessResult:
    """What one subprocess did. Never an exception: a failure to start is exit_code None + error."""

    argv: list[str]
    exit_code: int | None
    duration_s: float
    output_tail: str
    timed_out: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Runner(Protocol):
    """Runs one command (the sandboxed runner of tools/verification.py in production)."""

    def __call__(
        self, argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
    ) -> ProcessResult: ...


@dataclass(frozen=True)
class TestCommand:
    """The command that verifies the repository, fixed by the adapter. `{interpreter}` is the environment's
    VerificationEnv.interpreter (python, node), `{junit}` the path of a JUnit XML report (dropped from argv
    when the runner cannot write one)."""

    __test__ = False  # not a pytest test class, whatever its name

    argv: list[str]
    source: str  # why this command: "pyproject.toml [tool.pytest.ini_options]", "tests/ folder", ...
    runner: str  # "pytest" | "unittest" | "stestr"


@dataclass(frozen=True)
class VerificationEnv:
    interpreter: Path  # the program of the isolated environment that runs the tests (python, node)
    root: Path  # the environment directory (inside the run dir)
    install_log: list[ProcessResult] = field(default_factory=list)
    # Repository-relative paths each test copy holds as symlinks into the environment (npm: node_modules)
    links: dict[str, Path] = field(default_factory=dict)
    # How it was installed, as the adapter says: {"installer": "uv" | "pip", "template": key or "",
    # "seed": what it was seeded with (python: "setuptools 65.5.0, pip 23.2.1" or why nothing)}
    install: dict[str, str] = field(default_factory=dict)
    # What the repository's install asks of each package beyond the package itself, outside what the
    # installed packages ask (python: extras, by canonical name or a local project's key; npm: none)
    extras: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ArtifactNotice:
    """A lockfile refreshed, or why it could not be (stderr of the ecosystem's tool). When refreshed, the
    message ends with the sha256 of the bytes the tool wrote: the manifest gate lets a lockfile change
    only to exactly those bytes."""

    file: str
    updated: bool
    message: str = ""
    sha256: str = ""


@dataclass(frozen=True)
class Locked:
    """What a lockfile locks under one name for this interpreter: its versions (more than one where it
    forks and the fork cannot be told), whether it comes from a package index (`indexed`; False: a git,
    path or URL source, whose code no version number names), and whether `name` at that version from the
    index is exactly it (`pinnable`; False also for an npm alias or a copy nested inside another package:
    compared, never pinned)."""

    versions: frozenset[str]
    pinnable: bool = True
    indexed: bool = True


@dataclass(frozen=True)
class Refusal:
    """A dependency file the adapter will not let any tool read, or one line of it it will not pass on."""

    file: str  # repository-relative
    line: int | None
    reason: str  # what is wrong; never the contents of a file outside the repository

    def __str__(self) -> str:
        return f"{self.file} line {self.line}: {self.reason}" if self.line else f"{self.file}: {self.reason}"


@dataclass(frozen=True)
class DependencyFiles:
    """Every dependency, constraint and lock file the adapter reads in one tree, and what it refuses."""

    files: list[str] = field(default_factory=list)  # repository-relative POSIX paths, sorted
    refused: list[Refusal] = field(default_factory=list)


@dataclass(frozen=True)
class Versioning:
    """The ecosystem's versions and ranges. Ranges are read in the syntax of `kind` (a Dependency.kind;
    "" for the ecosystem's plain syntax, as a task's `from` is written)."""

    is_version: Callable[[str], bool]  # a plain version, as a task's `to` or a lock entry is written
    check: Callable[[str, str], None]  # (range, kind): ValueError naming it when it cannot be read
    matches: Callable[[str, str, str], bool]  # (version, range, kind); an unreadable one never matches
    intersects: Callable[[str, str, str], bool]  # (range, kind, plain range): some version in both
    pins: Callable[[str, str, str], bool]  # (range, kind, version): admits that version and no other
    has_version: Callable[[str, str], bool]  # (range, kind): carries a version the bump can edit
    new_range: Callable[[str, str, str, str], str | None]  # (written, kind, target, strategy); None: none
    exact: Callable[[str], str]  # (version) -> the plain range admitting that version and no other
    compare: Callable[[str, str], int]  # (version, version) -> <0, 0, >0; ValueError when one is unreadable
    canonical_name: Callable[[str], str]  # a package name as the ecosystem compares names (PEP 503 …)
    requirement: Callable[[str, str], str]  # (name, plain range) -> a pin as the environment takes it


# The name of a canary's skipped test of where the SDK resolves: the token, this, then the answer
# ("installed", "elsewhere", "unknown"; oracle.Canary.read).
SDK_TEST = "_sdk_"


@dataclass(frozen=True)
class Canary:
    """A test the tool plants that must fail: file name (beside a test file of the repository), text.
    `checks_sdk`: the text also holds the skipped test named by where the SDK resolves (SDK_TEST);
    `rechecks_sdk`: that test asks again as it runs and fails where the SDK is then elsewhere.
    `must_fail`: the tests of the file that must fail, each its own way (a hook that passes failures of
    one kind only, every exception but AssertionError, still flips one of them)."""

    name: str
    text: str
    checks_sdk: bool = False
    rechecks_sdk: bool = False
    must_fail: int = 1


@dataclass(frozen=True)
class UnscannedCode:
    """A code file that names the SDK where no loaded rule looks (Adapter.unscanned_code)."""

    path: str  # repository-relative; "" for the tree (it could not be listed)
    why: str
    # (ast-grep language, text) the rules can read the file as (a .pyw as Python, a notebook's code
    # cells): the plan scans it so and keeps it only where a rule matches; None: it stays a human's item
    source: tuple[str, str] | None = None


@dataclass(frozen=True)
class Shadowing:
    """When a code file a test run creates can change what the candidate's code loads (tools/repo_copy.py).
    Any new code file beside candidate files can; these say what else can."""

    module_suffixes: tuple[str, ...]  # a candidate file with one of these is a module named by its stem
    cache_dirs: tuple[str, ...]  # a new code file in such a folder beside candidate files (Python: bytecode)
    package_files: tuple[str, ...]  # one of these, new in folder X, shadows the candidate's module X.<suffix>
    file_beats_folder: bool  # a new module X.<suffix> shadows a candidate folder X (node resolves X.js first)
    # folders the ecosystem looks packages up in wherever they sit (npm: node_modules, each folder's own
    # looked at before its parents'): a new entry in one (any file, a link; names starting with "." are no
    # package: node_modules/.cache) or a new link of that name anywhere can change what the code loads
    lookup_dirs: tuple[str, ...] = ()
    # files that, new in a folder holding or above candidate files, change how the code below resolves
    # (npm: package.json, the nearest one's "imports", "type" and self-reference by "name" + "exports")
    scope_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestFacts:
    """What the core's gates and the codemod need to know about the ecosystem's code and tests."""

    __test__ = False  # not a pytest test class, whatever its name

    source_suffixes: tuple[str, ...]  # code files the codemod rules and scans read
    ast_grep_languages: dict[str, tuple[str, ...]]  # a rule's `language:` -> the suffixes it scans
    code_suffixes: tuple[str, ...]  # files a test run must never write (code that could be run)
    is_test_file: Callable[[str], bool]  # by repository-relative path: a file the runner collects
    # (command, path) -> a file the command's own pattern collects that is_test_file does not know
    # (`unittest discover -p '*tests.py'`): a test file of this run too (the canary goes beside one)
    command_collects: Callable[[TestCommand, str], bool]
    # what the tests load that the runner does not collect (conftest.py, helpers under tests/, jest's
    # __mocks__): the tamper gate guards it like a test file; it is never the canary's sibling
    is_test_support: Callable[[str], bool]
    start_options: tuple[str, ...]  # options naming the one folder the runner collects from (`-s DIR`)
    test_folders: tuple[str, ...]  # folder names that hold tests (the canary goes beside a test there first)
    skipped_dirs: frozenset[str]  # folders holding no test of the repository's (installed packages, caches)
    config_files: tuple[str, ...]  # test-runner configuration (names, `*` globs) a candidate may not add
    not_a_test_run: frozenset[int]  # exit codes that mean the runner ran no tests (usage, none collected)
    # (command, the test copy, report path or None, output tail) -> (tally, test ids); (None, []) when
    # nothing readable (the copy: where a runner keeps its own record, e.g. stestr's .stestr/)
    read_results: Callable[[TestCommand, Path, Path | None, str], tuple[Tally | None, list[str]]]
    # output tail -> "the module a test file could not load" when one was missing, else None
    missing_dependency: Callable[[str], str | None]
    # (command, sibling test file's repository-relative path, token, the SDK's name or None) -> the
    # canary, planted in the sibling's folder; with the SDK's name it may add the tests of where the test
    # code's own loader resolves the SDK (oracle.py)
    canary: Callable[[TestCommand, str, str, str | None], Canary]
    scrub: Callable[[str, str], str]  # (output, canary token) -> the output without the canary's report
    suspects: Callable[[Path], list[str]]  # (a copy) -> "path: hook" for what can rewrite or hide results
    # (path, base text or None, candidate text or None, is a test file, new at this path: added or renamed
    # here) -> what the candidate introduces that could change how tests run or read (the tamper gate's
    # ecosystem findings; messages name the path)
    tamper: Callable[[str, str | None, str | None, bool, bool], list[str]]
    shadowing: Shadowing
    runner_of: Callable[[list[str]], str | None]  # the runner a declared command line runs, or None
    # (command, repository root) -> whether the command spreads its tests over several processes itself
    # (pytest-xdist, stestr, jest's workers …): beside another test run it would only compete for the
    # cores, each run taking longer to its timeout, so the baseline does not run beside the bump
    parallel: Callable[[TestCommand, Path], bool]
    # (before, after) of a codemod rule's edit -> (what it adds, whether a human must look); None: the
    # core's own assessment (Python's syntax tree in workflow/rule_risk.py)
    rule_risk: Callable[[str, str], tuple[list[str], bool]] | None
    # (command, the test copy, report path or None, output tail, canary token) -> the run's tests, each
    # with its outcome, as a JUnit document without the canary, where the runner's results are not a JUnit
    # report (jest's JSON, a TAP stream): what the test_ids gate compares by id (verify writes it as
    # reports/junit-<phase>.xml). None from it: the runner's own JUnit report is kept, without the canary;
    # None here: every runner of the ecosystem writes JUnit or reports no ids at all
    case_report: Callable[[TestCommand, Path, Path | None, str, str], ET.Element | None] | None = None
    # command -> whether every run of it gives the test_ids gate each test's outcome (a JUnit report or
    # case_report): then a phase whose outcomes cannot be read fails the gate, never leaving the count gate
    # alone. None: unknown (a runner with counts only keeps the count gate)
    reports_each_test: Callable[[TestCommand], bool] | None = None
    # (a copy, the command) -> the test files it names other than by their path (unittest's dotted
    # modules): {file: how a file beside it is named on the command line}; the canary goes beside one
    # and is named so (the command runs only what it names). None: every runner names files by path
    names_beside: Callable[[Path, TestCommand], dict[str, Callable[[str], str]]] | None = None


@dataclass(frozen=True)
class Adapter:
    name: str
    file_patterns: tuple[str, ...]
    lockfiles: tuple[str, ...]
    is_dependency_file: Callable[[str], bool]
    read_dependency_files: Callable[[Path], DependencyFiles]
    find_dependency_files: Callable[[Path], list[str]]
    extract_dependencies: Callable[[Path, list[str], str], list[Dependency]]
    update_dependency: Callable[[str, Dependency, str], str]
    update_lockfiles: Callable[
        [Path, Dependency, str, Runner, Path | None, bool], list[ArtifactNotice] | None
    ]
    # (a lockfile's text) -> {name as installed_versions names it: what the lockfile locks there}
    locked_versions: Callable[[str], dict[str, Locked]]
    # (a lockfile's text) -> the format version it says it is written in ("lockfileVersion 3"), or None
    lock_format: Callable[[str], str | None]
    # (root, env, settings, runner, names) -> remove those packages from the environment
    uninstall: Callable[[Path, VerificationEnv, Settings, Runner, Sequence[str]], ProcessResult]
    detect_test_command: Callable[[Path, Settings | None], TestCommand | None]
    prepare_environment: Callable[[Path, Path, Settings, Runner, Sequence[str]], VerificationEnv]
    install_dependencies: Callable[[Path, VerificationEnv, Settings, Runner, Sequence[str]], ProcessResult]
    installed_versions: Callable[[Path, VerificationEnv, Runner], dict[str, str] | None]
    copy_environment: Callable[[VerificationEnv, Path], VerificationEnv | None]
    version_matches: Callable[[str, str], bool]
    versioning: Versioning
    test_facts: TestFacts
    sandbox_env: dict[str, str]
    detect: Callable[[Path], bool]
    # (root, sdk name, the task's import names, settings) -> the first (file, line) importing the SDK
    first_import: Callable[[Path, str, Sequence[str], Settings], tuple[str, int] | None]
    # (the caller's environment) -> secret values of its package-index configuration, for the Redactor
    credentials: Callable[[Mapping[str, str]], list[str]]
    # (an entry of verification.requirements) -> None when this adapter reads it, else why not
    check_test_requirement: Callable[[str], str | None]
    scaffold: Scaffold  # what `agentic-codemod init` writes for this ecosystem
    # Whether the lock tool keeps what it fetches in the run's install cache for the bump's install
    # (npm, whose refresh runs no repository code: --ignore-scripts). False: its box mounts no cache
    # (Python's lock tools may run the project's build backend, which could plant a wheel there).
    lock_cache: bool = False
    # (the caller's environment) -> files of the caller's that may hold its package-index secrets (a
    # client key, a configuration file with a token): each box shows them empty where it would show them
    # (a key under /opt, npm's global npmrc under /usr; helper-43). None: the ecosystem has none
    secret_files: Callable[[Mapping[str, str]], list[str]] | None = None
    # (root, settings, canonical name) -> (where, requirement as written, its range; None: a URL or path
    # whose version cannot be read) of every requirement on the SDK the tests' install of that tree asks
    # for, read as the install reads it (workflow/steps.py checks the bumped tree with it). None: the
    # ecosystem's declarations are all its install reads (npm's package.json).
    asked_for_by_tests: Callable[[Path, Settings, str], list[tuple[str, str, str | None]]] | None = None
    # (root, sdk name) -> the SDK's pins in the files that install packages outside the dependency files
    # (Dockerfiles, conda environments, pre-commit hooks, CI jobs; adapters/install_scripts.py), each
    # uneditable, for recon to add to the declarations. None: the ecosystem reads none.
    install_script_pins: Callable[[Path, str], list[Dependency]] | None = None
    # (root, environment, sdk name) -> the repository's own files the tests would import in place of the
    # SDK installed in the environment (a vendored copy of its package; python/shadowing.py), each named.
    # None: the ecosystem's adapter checks this elsewhere or cannot.
    shadowing: Callable[[Path, VerificationEnv, str], list[str]] | None = None
    # (environment, SDK name, the task's import names, settings) -> what the host reads in the environment
    # that says it holds the SDK whatever installed_versions listed (a listing can be made to leave it out:
    # code that ran in the install took its dist-info or package.json away, helper-49): its metadata, a
    # package that requires it, its code. A run that would end "not installed" first asks this (workflow/
    # environments.install_repository). None: the listing is all the adapter can say (fails closed there).
    holding: Callable[[VerificationEnv, str, Sequence[str], Settings], list[str]] | None = None
    # (environment, canonical SDK name, its installed version, the ranges of the repository's own
    # declarations of it before the bump) -> each installed package that requires the SDK in a range
    # excluding that version ("acme-widgets 1.0.0 requires acme-sdk<2"; python/installed_files.py), read
    # without running code. None: the ecosystem's installs cannot leave one (npm nests a copy for a
    # dependency whose range the top-level version does not meet).
    capping: Callable[[VerificationEnv, str, str, Sequence[str]], list[str]] | None = None
    # Code files of the ecosystem that name the SDK where no loaded rule looks: (root, the ast-grep
    # languages of the loaded rules, SDK name, the task's import names, settings) -> what the plan makes
    # human's items of (adapters/unscanned_code.py; steps._unscanned). None: the ecosystem has none
    unscanned_code: (
        Callable[[Path, Iterable[str], str, Sequence[str], Settings], list[UnscannedCode]] | None
    ) = None
    # Code that still imports a module the FROM version of the SDK ships and the target does not: (worktree,
    # FROM's environment root or None (the bump installed into it: read FROM from the wheel folders), the
    # target's environment root, local wheel folders, SDK name, FROM version or None, target version) ->
    # "FILE:LINE imports M, which SDK TO no longer ships" items; None: the ecosystem's packages list no
    # modules a version removes (npm)
    removed_imports: (
        Callable[[Path, Path | None, Path, Sequence[Path], str, str | None, str], list[str]] | None
    ) = None


@dataclass(frozen=True)
class Scaffold:
    """The ecosystem's values in the context `agentic-codemod init` writes (scaffold.py)."""

    rule_language: str  # the example rule's ast-grep `language:`
    from_range: str  # the default --from: a 1.x range in the ecosystem's plain syntax
    bump_paths: tuple[str, ...]  # allowed_paths of a plain bump (names of special files spelled out)
    code: str  # what the code is called in prose: "Python", "JavaScript"
    name_pattern: str  # a package name --sdk may give (regex, whole name)
    module: Callable[[str], str]  # (package name) -> how the code imports it ("acme_sdk", "acme-sdk")


def refreshed_message(command: str, sha256: str) -> str:
    """The message of a refreshed lockfile's notice: it carries the hash the manifest gate holds it to."""
    return f"refreshed by `{command}` (sha256 {sha256})"


def refreshed_sha256(message: str) -> str | None:
    """The hash in a refreshed_message (as recorded in the trace), else None."""
    match = re.fullmatch(r"refreshed by `.*` \(sha256 ([0-9a-f]{64})\)", message, flags=re.DOTALL)
    return match.group(1) if match else None
