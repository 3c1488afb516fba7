"""Every limit and default of the tool, in one place.

Settings come from the defaults below, then an optional YAML file (`--config`), then CLI flags.
A task may narrow budgets and add deny globs; it can never widen them (see `Settings.for_task`).
"""

from __future__ import annotations

import re
import shlex
import urllib.parse
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentic_codemod.semantic.settings import SemanticSettings
from agentic_codemod.yaml_input import first_error as first_error  # re-exported for its old callers
from agentic_codemod.yaml_input import load_yaml_model

# Names with a special meaning to git, CI, Python start-up or dependency resolution, denied at any depth
# (a glob without `/` matches one path component anywhere) unless the task names the exact path in
# allowed_paths: an entry without glob characters, e.g. "poetry.lock" for a task whose bump refreshes it.
# Deliberately every ecosystem's names, whatever the task's adapter: a repository is often polyglot (a
# Python service with a package.json, a JS app with a setup.py for a helper), and a start-up hook or a
# lockfile of the other ecosystem runs or resolves just the same. The only file names the core holds.
NAMEABLE_DENY_GLOBS: tuple[str, ...] = (
    ".github/**",
    "**/.github/**",
    ".gitlab/**",
    "**/.gitlab/**",
    "*.gitlab-ci.yml",  # CI includes
    ".gitattributes",  # filters, -diff: bytes that differ from what is reviewed
    ".gitmodules",
    "sitecustomize.py",  # run by every Python start-up
    "usercustomize.py",
    "*.pth",
    "setup.py",
    "*constraints*.txt",
    "*.lock",  # poetry.lock, uv.lock, pdm.lock, Pipfile.lock, Cargo.lock, yarn.lock ...
    "pylock.toml",
    "pylock.*.toml",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "pnpm-lock.yaml",
    "bun.lockb",
)
# File names that may be modified where they exist but not created, unless the task names the path.
NEW_FILE_DENY_NAMES: tuple[str, ...] = ("conftest.py",)

# Paths no actor — deterministic step or model — may write. Matched case-insensitively on normalised,
# repository-relative POSIX paths, against the full path and against every parent directory.
DEFAULT_DENY_GLOBS: tuple[str, ...] = (
    ".gitlab-ci.yml",
    "**/.gitlab-ci.yml",
    ".git",
    ".git/**",
    "**/.git/**",
    "Dockerfile*",
    "**/Dockerfile*",
    "*.pem",
    "**/*.pem",
    ".env*",
    "**/.env*",
    "apm.yml",
    "**/apm.yml",
    "apm.lock.yaml",
    "**/apm.lock.yaml",
    "apm-policy.yml",
    ".apm/**",
    "**/.apm/**",
    "apm_modules/**",
    "**/apm_modules/**",
    *NAMEABLE_DENY_GLOBS,
)

# Environment variables whose name contains one of these (any case) never reach a verification process
# and their values are redacted from every artifact.
SECRET_NAME_MARKERS: tuple[str, ...] = ("TOKEN", "SECRET", "PASSWORD", "API_KEY", "PRIVATE", "CREDENTIAL")

# Fixed limits of the sandbox tools and of what agents are shown (not per task; the run's budgets are below).
MAX_PATH_CHARS = 4096  # a path longer than PATH_MAX is refused
MAX_NAME_BYTES = 255  # a path component longer than NAME_MAX is refused
KILL_GRACE_S = 2.0  # SIGTERM -> SIGKILL of a process group the tool started (tools/process_group.py)
RUN_STOP_GRACE_S = 10.0  # the same for a whole run (fleet): it stops its own groups, then writes artifacts
CANCEL_WAIT_S = (
    30.0  # a cancelled run waits this long for a test run in another thread to stop (baseline_run)
)
GIT_TIMEOUT_S = 120.0  # one git command of the snapshot/gates
GIT_REMOTE_TIMEOUT_S = 300.0  # one git command of publish (fetch, push) against a remote
# Reading a noxfile's session arguments (never run): nodes looked at per session, and the longest value kept.
NOX_READ_MAX_VISITS = 10_000  # for the whole noxfile
CI_CONFIG_MAX_BYTES = 256_000  # a noxfile.py or tox.ini read for the test environment
TOX_FACTOR_MAX_VARIANTS = 1_024  # env names one tox factor condition expands to ({a,b}-{c,d}: 4)
TOX_FACTOR_MAX_CHECKS = 100_000  # factor groups compared in one reading of a tox.ini, over its envs
TOX_MAX_LINES = 50_000  # value lines one reading of a tox.ini reads, each time one is read for an env
# uv workspace members read for what they declare of the SDK (adapters/python/uv_workspace.py): past
# either, the members are not listed and the run requires a human.
UV_WORKSPACE_MAX_MEMBERS = 200  # member folders
UV_WORKSPACE_MAX_ENTRIES = (
    20_000  # directory entries listed (and folders looked at) to match the members' patterns
)
UV_WORKSPACE_MAX_DEPTH = 16  # path parts of one member pattern
# Files and folders looked through for the files that install packages outside the dependency files
# (adapters/install_scripts.py: Dockerfiles, conda environments, CI jobs): past it, the run requires a human.
INSTALL_SCRIPTS_MAX_ENTRIES = 1_000_000
WHEEL_METADATA_MAX_BYTES = 1_000_000  # a wheel's METADATA a path source names, read for its Requires-Dist
VARIABLE_READERS_MAX_FILES = 20_000  # Python files searched for a test env's variables (test_command.py)
TEST_COMMANDS_MAX_COMPARED = 20  # test commands of a tox env or nox session whose test counts are estimated
NOX_ARG_MAX_CHARS = 4_096
MR_TITLE_MAX_CHARS = 255  # a merge request title (GitLab's own limit), always one line
MR_ITEM_MAX_CHARS = 1_000  # one finding, requires-human item or summary in the MR text: its first line
MR_LOCKED_NAMES = 8  # packages a lockfile's line in the MR names of what else the tests ran as it locks
ENV_LISTED_MAX = 100_000  # packages one environment listing reads at most (npm: node_modules, nested)
ENV_MANIFEST_MAX_BYTES = 5_000_000  # one installed package's package.json, read by the listing on the host
PYVENV_CFG_MAX_BYTES = 64_000  # a venv's pyvenv.cfg, read on the host after the baseline's install
NEXT_STREAM_MAX_BYTES = 64  # stestr's .stestr/next-stream: the number of its next run, in ASCII
ENV_RECORD_MAX_BYTES = 50_000_000  # one installed distribution's RECORD, read on the host after the bump
MIN_SECRET_CHARS = 6  # shorter env values ("1", "true") would redact half the trace
MAX_LIST_ENTRIES = 10_000  # workspace.list
MAX_SEARCH_HITS = 200  # workspace.search
MAX_SEARCH_LINE_CHARS = 2_000  # workspace.search, one hit line
MAX_PATTERN_CHARS = 500  # workspace.search, the regex an agent passes
MAX_LISTED = 400  # paths shown to an agent by list_files
OUTPUT_TAIL_CHARS = 3_000  # test output shown to the coder
EVIDENCE_TAIL_CHARS = 4_000  # test output shown to the reviewer
DIFF_CHARS = 20_000  # diff shown by show_diff
FLEET_MAX_VALUE_CHARS = 2_048  # one project, ref, index_url or find_links value of a fleet file
JUNIT_MAX_DEPTH = 64  # levels of elements in a JUnit report (a real one has 3-10); deeper is unreadable
LOST_TESTS_NAMED = 5  # tests that passed at baseline and not after, named in the test_ids gate's finding
LOST_TEST_ID_CHARS = 150  # each of their ids, cut to this
MAX_TEST_REPORT_BYTES = 256_000_000  # a test runner's report (stestr's subunit record) read after a run
MAX_IMPORT_SCAN_BYTES = 2_000_000  # one source file read for import statements (is the SDK imported?)
# report.html / fleet.html (report/): what one page shows at most; the artifacts keep everything.
REPORT_TRACE_ROWS = 5_000  # trace.jsonl lines shown as table rows
REPORT_TEST_ROWS = 5_000  # test ids in the baseline/after table (changed ones first)
REPORT_CELL_CHARS = 2_000  # one trace field, test id, finding or reason in a table cell
REPORT_TEXT_CHARS = 50_000  # one block of text: the MR text, a test output tail
REPORT_DIFF_CHARS = 500_000  # changes.patch shown highlighted
REPORT_READ_BYTES = 64_000_000  # an artifact read for the page (trace.jsonl, changes.patch, a JUnit report)

# What a codemod rule's edit may not bring into a file without a human's look (workflow/rule_risk.py): the
# modules and callables that reach the network, processes, files or dynamic code. An entry covers the
# dotted name itself and everything under it, after import aliases are resolved; "*" is a glob.
RULE_EDIT_RISKY_NAMES: tuple[str, ...] = (
    *("socket", "ssl", "urllib", "http", "requests", "httpx", "aiohttp", "ftplib", "smtplib", "webbrowser"),
    *("subprocess", "pty", "multiprocessing", "shutil", "tempfile", "pathlib", "ctypes", "importlib"),
    *("pickle", "marshal", "builtins", "io.open", "codecs.open", "sys.modules", "sys.path", "sys.meta_path"),
    *("os.system", "os.popen", "os.exec*", "os.spawn*", "os.fork*", "os.posix_spawn*", "os.kill*"),
    *("os.remove", "os.unlink", "os.rmdir", "os.removedirs", "os.rename", "os.replace", "os.open"),
    *("os.write", "os.putenv", "os.environ", "os.chmod", "os.chown", "os.symlink", "os.link"),
    *("exec", "eval", "compile", "open", "__import__", "globals", "breakpoint", "setattr", "delattr"),
)

# Never readable, never writable: files that usually hold credentials.
SECRET_FILE_GLOBS: tuple[str, ...] = (
    ".env*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".pypirc",
    ".npmrc",
)

# Only these variables are passed from the caller's environment to a verification process.
VERIFICATION_ENV_ALLOWLIST: tuple[str, ...] = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "SOURCE_DATE_EPOCH",
)


class Budgets(BaseModel):
    """Hard limits. Hitting one stops the actor and fails the run with the budget named."""

    model_config = ConfigDict(extra="forbid")

    max_changed_files: int = Field(20, ge=1)
    max_file_bytes: int = Field(256_000, ge=1)
    max_total_bytes: int = Field(1_000_000, ge=1)
    # A lockfile its own tool refreshed during the bump (package-lock.json, poetry.lock ...): tool output,
    # pinned by sha256 in the manifest gate, never an edit; real ones run to megabytes, so it is charged
    # here instead of max_file_bytes and max_total_bytes.
    max_lockfile_bytes: int = Field(64_000_000, ge=1)
    max_tool_calls: int = Field(80, ge=1)  # per actor (role or deterministic step)
    role_tool_calls: dict[str, int] = Field(default_factory=dict)  # per-role override, e.g. {coder: 120}
    max_run_tool_calls: int = Field(400, ge=1)  # all actors of one run together
    max_iterations: int = Field(3, ge=1)
    verification_timeout_s: float = Field(600.0, gt=0)  # one verification run
    max_verification_total_s: float = Field(3600.0, gt=0)  # every verification of one run together
    install_timeout_s: float = Field(600.0, gt=0)
    # Wall-clock seconds of LLM mode, checked before every model and tool call of an agent: the whole run
    # (from its start) and per role (only while that role's agent runs), e.g. {coder: 1800}.
    max_run_seconds: float = Field(7200.0, gt=0)
    role_seconds: dict[str, float] = Field(default_factory=dict)
    # Address space of each process that runs repository code (installs, tests) inside the sandbox.
    sandbox_memory_bytes: int = Field(8 * 1024**3, ge=64 * 1024**2)
    output_tail_bytes: int = Field(6_000, ge=256)
    # A test run's output kept for its result readers (head + tail): readers that work from the output
    # (tape, node's TAP, unittest, trial) see all of it up to here; run.json keeps output_tail_bytes.
    test_output_bytes: int = Field(16_000_000, ge=256)
    trace_field_chars: int = Field(2_000, ge=64)

    def narrowed(self, overrides: dict[str, Any]) -> Budgets:
        """Apply task overrides; a task may only lower a limit."""
        merged = self.model_dump()
        for key, value in overrides.items():
            if isinstance(value, dict):  # per-role limits: each role may only go lower
                default = merged["max_tool_calls"] if key == "role_tool_calls" else float("inf")
                roles = dict(merged[key])
                for role, limit in value.items():
                    roles[role] = min(roles.get(role, default), limit)
                merged[key] = roles
            else:
                merged[key] = min(merged[key], value)
        return Budgets.model_validate(merged)


# Where python.cache_dir is unset: the variable naming the runner's shared cache (fleet --local sets it).
CACHE_DIR_VARIABLE = "CODEMOD_CACHE_DIR"


class PackageSources(BaseModel):
    """Where a verification environment installs packages from, in any ecosystem (`run --index-url`,
    `--find-links`, `--no-index`; a fleet's index_url, find_links, no_index). Each adapter reads them in
    its own tool's terms (docs/adapters.md): the Python adapter passes them to uv/pip; npm reads its
    registry from the caller's npm configuration and leaves these unread."""

    model_config = ConfigDict(extra="forbid")

    index_url: str | None = None  # the package index instead of the caller's configured one
    local: list[str] = Field(default_factory=list)  # directories (or URLs) of package files, beside it
    local_only: bool = False  # install only from `local`: the index is never contacted

    @property
    def reach_network(self) -> bool:
        """Whether installs reach anything over the network: an index, or a `local` that is a URL."""
        return not self.local_only or any("://" in link for link in self.local)

    def secrets(self) -> list[str]:
        """The user info of index_url and of the `local` URLs (`https://TOKEN@host/...`, a password):
        for the run's Redactor, which the caller's own configuration teaches its secrets too."""
        found: list[str] = []
        for url in [self.index_url or "", *self.local]:
            parts = urllib.parse.urlsplit(url) if "://" in url else None
            secret = parts and (parts.password or parts.username)
            found += [urllib.parse.unquote(secret), secret] if secret else []
        return found


MOVED_TO_PACKAGES = {"index_url": "index_url", "find_links": "local", "no_index": "local_only"}


class PythonEnvSettings(BaseModel):
    """How the Python adapter builds its verification environments (read only by adapters/python)."""

    model_config = ConfigDict(extra="forbid")

    # Installed beside the repository's own test requirements when it declares none of them; None: the
    # adapter's own (its default test runner).
    extra_test_requirements: list[str] | None = None
    # Who creates the venv and installs: "auto" (uv when it starts, else pip), "uv" or "pip".
    installer: Literal["auto", "uv", "pip"] = "auto"
    # The runner's shared cache (environment templates, uv's cache for building them); None: the
    # CODEMOD_CACHE_DIR variable, else ~/.cache/agentic-codemod. Repository code never sees it.
    cache_dir: str | None = None
    # How long an environment template resolved against an index is reused (pinned local wheel
    # directories only: no limit); 0 turns templates off.
    env_template_ttl_s: float = Field(86_400.0, ge=0)
    # A template no run has copied for this long is deleted when another one is built.
    env_template_keep_s: float = Field(7 * 86_400.0, gt=0)
    # At most this many templates are kept (15-30 MB each): building another deletes the least recently
    # copied beyond it.
    env_template_max_count: int = Field(64, ge=1)
    # The local front that holds the caller's index credentials and client key for an install that runs
    # repository code (index_front.py): how long it waits for an index (pip's `timeout` wins), and the
    # largest index page it rewrites.
    index_front_timeout_s: float = Field(60.0, gt=0)
    index_front_page_max_bytes: int = Field(32 * 1024 * 1024, ge=1024)

    @model_validator(mode="before")
    @classmethod
    def _moved(cls, value: Any) -> Any:
        moved = sorted(set(value) & set(MOVED_TO_PACKAGES)) if isinstance(value, dict) else []
        if moved:
            raise ValueError(
                f"{moved[0]} moved to packages.{MOVED_TO_PACKAGES[moved[0]]} (the package sources of every "
                "ecosystem)"
            )
        return value


class VerificationSettings(BaseModel):
    """What verifies a repository where detection is wrong (the task's fields win over the config's):
    `command` (e.g. "python -m pytest tests/unit" or "node --test test/": a runner some adapter reads),
    `requirements` (test requirements instead of the detected ones, as an adapter reads them: Python's
    are PEP 508 strings or `-r FILE` / `-c FILE` inside the repository) and `extras` (of the project,
    instead of the detected test extras)."""

    model_config = ConfigDict(extra="forbid")

    command: str | list[str] | None = None
    requirements: list[str] | None = None
    extras: list[str] | None = None

    @field_validator("command")
    @classmethod
    def _command(cls, value: str | list[str] | None) -> str | list[str] | None:
        from agentic_codemod.adapters import registry  # the ecosystem's adapter checks it again, later

        if value is None:
            return None
        try:
            tokens = value if isinstance(value, list) else shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"cannot be split into arguments: {exc}") from exc
        if any("{python}" in t for t in tokens):  # the placeholder's old name, never documented
            raise ValueError("`{python}` is now `{interpreter}` (the environment's python or node)")
        adapters = registry().values()
        if (
            not tokens
            or any("\0" in t for t in tokens)
            or not any(a.test_facts.runner_of(tokens) for a in adapters)
        ):
            raise ValueError(
                f"{value!r} runs no test runner this tool reads "
                "(docs/adapters.md lists each ecosystem's runners)"
            )
        return value

    @field_validator("requirements")
    @classmethod
    def _requirements(cls, value: list[str] | None) -> list[str] | None:
        from agentic_codemod.adapters import registry  # the adapters say which entries they read

        adapters = registry().values()
        for entry in value or []:
            reasons = [(a.name, a.check_test_requirement(entry)) for a in adapters]
            if all(reason is not None for _, reason in reasons):
                raise ValueError(
                    f"{entry!r} is no test requirement an adapter reads ("
                    + "; ".join(f"{name}: {reason}" for name, reason in reasons)
                    + ")"
                )
        return value

    @field_validator("extras")
    @classmethod
    def _extras(cls, value: list[str] | None) -> list[str] | None:
        for entry in value or []:
            if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", entry):
                raise ValueError(f"{entry!r} is not an extra name")
        return value

    def over(self, base: VerificationSettings) -> VerificationSettings:
        """These fields where set, else `base`'s."""
        return VerificationSettings(
            command=self.command if self.command is not None else base.command,
            requirements=self.requirements if self.requirements is not None else base.requirements,
            extras=self.extras if self.extras is not None else base.extras,
        )


class ScanSettings(BaseModel):
    """Bounds of the codemod scans (ast-grep, workflow/scan.py). A scan is computed once per file content
    and rule; exceeding a cap ends the run with requires_human naming the file."""

    model_config = ConfigDict(extra="forbid")

    timeout_s: float = Field(120.0, gt=0)  # one ast-grep process
    max_output_bytes: int = Field(16_000_000, ge=1_000)  # JSON read from ast-grep for one rule
    max_matches_per_rule: int = Field(5_000, ge=1)  # matches of one rule in the whole repository
    # file names given to one ast-grep process at most; the system's limit (SC_ARG_MAX less the
    # environment, with a margin: scan.argv_room) when that is smaller
    max_argv_bytes: int = Field(4_000_000, ge=1_000)


class GateSettings(BaseModel):
    """Optional gates. The deterministic ones (scope, tamper, evidence) are always on."""

    model_config = ConfigDict(extra="forbid")

    semantic: SemanticSettings = Field(default_factory=SemanticSettings)


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gates: GateSettings = Field(default_factory=GateSettings)
    # How repository code runs: "sandbox" (bubblewrap; the run pauses with 75 where it cannot start) or
    # "process" (a plain process group; only on the user's explicit --isolation process, stated in every
    # artifact).
    isolation: Literal["sandbox", "process"] = "sandbox"
    bwrap: str = "bwrap"  # the bubblewrap program (name on PATH or absolute path)

    budgets: Budgets = Field(default_factory=Budgets)
    deny_globs: list[str] = Field(default_factory=lambda: list(DEFAULT_DENY_GLOBS))
    secret_name_markers: list[str] = Field(default_factory=lambda: list(SECRET_NAME_MARKERS))
    verification_env_allowlist: list[str] = Field(default_factory=lambda: list(VERIFICATION_ENV_ALLOWLIST))
    packages: PackageSources = Field(default_factory=PackageSources)
    python: PythonEnvSettings = Field(default_factory=PythonEnvSettings)
    verification: VerificationSettings = Field(default_factory=VerificationSettings)
    scan: ScanSettings = Field(default_factory=ScanSettings)
    # Cap on the SKILL.md text + rule notes handed to a run (bytes).
    context_budget_bytes: int = Field(64_000, ge=1_000)
    # Cap on the lesson text (hypotheses from earlier runs) handed to one plan (bytes).
    experience_budget_bytes: int = Field(4_000, ge=0)
    # Fraction of baseline tests that may disappear before the candidate counts as test tampering.
    min_test_count_ratio: float = Field(1.0, gt=0, le=1.0)
    # The baseline's tests run beside the bump, the codemod and the first verification (sandbox isolation
    # only, and only where the adapter can copy the baseline environment for the bump to install into): a
    # run then costs about one test run less of wall time, and at its peak two test runs' memory and CPU.
    # false: one after the other (workflow/baseline_run.py).
    concurrent_baseline: bool = True

    def for_task(self, extra_deny_globs: list[str], budget_overrides: dict[str, Any]) -> Settings:
        """Settings narrowed by a task: more deny globs, lower budgets — never the other way."""
        deny = list(dict.fromkeys([*self.deny_globs, *DEFAULT_DENY_GLOBS, *extra_deny_globs]))
        return self.model_copy(
            update={"deny_globs": deny, "budgets": self.budgets.narrowed(budget_overrides)}
        )


def load_settings(path: Path | None) -> Settings:
    """Defaults, or defaults updated from a YAML file. Errors name the file and the field."""
    if path is None:
        return Settings()
    hint = "the fields and their types: schemas/config.schema.json"
    settings = load_yaml_model(path, Settings, what="config file", hint=hint, empty_ok=True)
    # The defaults are a floor: a config file adds deny globs, it cannot remove the built-in ones.
    return settings.for_task([], {})
