"""The command that verifies an npm repository, from package.json `scripts.test`, first match wins:

    0. settings.verification.command (the task's, else the config's)          -> read the same way
    1. scripts.test names a runner this tool reads with test ids:
         node --test [args]  -> node --test --test-reporter=junit --test-reporter-destination={junit}
                                --test-reporter=tap --test-reporter-destination=stdout [args]
         jest [args]         -> node node_modules/.bin/jest --reporters=default --ci --json
                                --outputFile={junit} [args]
         vitest [run] [args] -> node node_modules/.bin/vitest run --reporter=junit
                                --outputFile={junit} --reporter=default [args]
         mocha [args]        -> node node_modules/.bin/mocha --reporter=xunit
                                --reporter-options=output={junit} [args]
         tape [args]         -> node node_modules/.bin/tape [args]   (its TAP on stdout; `| tap-spec` dropped)
    none (no scripts.test, npm's placeholder "no test specified", or a runner this tool cannot read):
    None — without test ids a change cannot be verified.

The runner and the arguments given to it are kept; what wraps them in the script (`cross-env`,
`npm run build &&`, `nyc`, `c8` and their own options) is not, and neither are arguments that would move,
rename, switch off or rewrite the report (--reporter, --json, --outputFile, --test-reporter,
--testResultsProcessor…). A command
`npm run NAME` (`npm run-script NAME`, `npm test`) is read as the script it names, as npm runs it
(`"test": "npm run tests-only"`, `"test:unit": "c8 --100 node --test"`), at most RUN_DEPTH scripts deep;
the source then names the chain. A `NODE_OPTIONS=…` assignment in front of the runner reaches node as
flags, only those of NODE_FLAGS. `{interpreter}` is the environment's node.


What one test command cannot reproduce ends the run requires_human (RequiresHuman, at recon), never green
on part of the suite:
    - a script that makes more than one test run (`npm run test:unit && npm run test:integration`,
      `mocha && jest`, a runner in `pretest`/`posttest`, a script runner such as `run-s` or
      `concurrently`, a chain deeper than RUN_DEPTH beside a runner): the command runs one runner and
      the others would be dropped. A runner without a reader (tap, ava, tsd …: UNREAD_RUNNERS) beside
      a readable one is such a run (before, it was left out and named "not run": pino's whole tap
      suite beside one jest test ended green on the jest test). Steps that run no runner (`eslint .`,
      `tsc`, `npm run build`) are no test run and stay out. So is another package's test run: a
      command after `cd DIR` that runs tests (`cd rfc/2560 && npm test` was read as the root's own
      `test`, a cycle, and dropped), and a package manager's run of other packages' scripts
      (`npm --prefix DIR test`, `npm test --workspaces`, `pnpm -r test`, `yarn workspace X test`).
      A script whose one test run is such a run stops the run too.
    - variables the script sets for its runner (`ACME_SUITE=full node --test`, `cross-env X=1 jest`,
      `export X=1 &&`, `X=1 npm run unit`): the test box gets the sandbox's environment only, so tests
      those variables switch on would be skipped in both runs. Kept: NODE_OPTIONS (read above) and
      NODE_ENV=test for jest and vitest, which set exactly that themselves when it is unset
      (ENV_THE_RUNNER_SETS). A verification.command that sets variables is refused (InputError).
Runner names: "node-test", "jest", "vitest", "mocha", "tape" (test_results.py reads each one's report).
A runner starts from its node_modules/.bin link, which npm points at the bin file of the installed version
(mocha 2-5 have bin/mocha, 6+ bin/mocha.js); `--reporter-options` is the spelling every mocha from 2 on
reads.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from agentic_codemod import json_input
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.config import Settings
from agentic_codemod.errors import InputError, RequiresHuman

NODE_TEST = [
    "{interpreter}",
    "--test",
    "--test-reporter=junit",
    "--test-reporter-destination={junit}",
    "--test-reporter=tap",
    "--test-reporter-destination=stdout",
]
# `--reporters=default`: a reporter of the repository's (config `reporters`) gets jest's aggregated results
# before the --json report is written from them, and can rewrite them (each failure "passed": helper-26's
# case C); on the command line it replaces the configured ones. It comes before the other options: jest
# reads `--reporters` as a list, which would take the test paths after it for reporters (process-warning's
# `jest jest.test.js` in the corpus: "Could not resolve a module for a custom reporter").
JEST = [
    "{interpreter}",
    "node_modules/.bin/jest",
    "--reporters=default",
    "--ci",
    "--json",
    "--outputFile={junit}",
]
VITEST = [
    "{interpreter}",
    "node_modules/.bin/vitest",
    "run",
    "--reporter=junit",
    "--outputFile={junit}",
    "--reporter=default",
]
MOCHA = [
    "{interpreter}",
    "node_modules/.bin/mocha",
    "--reporter=xunit",
    "--reporter-options=output={junit}",
]
TAPE = ["{interpreter}", "node_modules/.bin/tape"]
RUNNERS = {"jest": JEST, "vitest": VITEST, "mocha": MOCHA, "_mocha": MOCHA, "tape": TAPE}
# Arguments that take the report away from the tool (a value joined with = or following).
DROPPED = {
    "node-test": ("--test-reporter", "--test-reporter-destination"),
    "jest": ("--json", "--outputFile", "--reporters", "--silent", "--testResultsProcessor"),
    "vitest": ("--reporter", "--outputFile"),
    "mocha": ("--reporter", "-R", "--reporter-option", "--reporter-options", "-O"),
    "tape": (),
}
TAKES_VALUE = (
    "--test-reporter",
    "--test-reporter-destination",
    "--outputFile",
    "--reporter",
    "-R",
    "--reporters",
    "--testResultsProcessor",
)
WRAPPERS = ("cross-env", "nyc", "c8", "npx", "env", "dotenv", "--")
PLACEHOLDER = "no test specified"
# NODE_OPTIONS flags a test script may set that are passed to node (des.js runs its suite with
# --openssl-legacy-provider, ESM jest suites with --experimental-vm-modules): they change what the runtime
# allows, never which code loads or where reports go (--require, --import, --loader stay out).
NODE_FLAGS = (
    "--openssl-legacy-provider",
    "--experimental-vm-modules",
    "--max-old-space-size",
    "--no-warnings",
    "--expose-gc",
    "--no-deprecation",
    "--stack-size",
)
# Test runners this tool has no reader for: a script that also runs one makes a test run the command
# cannot reproduce (pino's tap suite beside one jest smoke test was green on the smoke test: helper-46).
UNREAD_RUNNERS = ("tap", "ava", "jasmine", "karma", "lab", "uvu", "qunit", "tsd", "tstyche", "playwright")
RUN_DEPTH = 4  # npm run NAME followed at most this many scripts deep (a cycle stops there too)
NPM_RUN = ("run", "run-script", "run-scripts", "rum", "urn")
NPM_TEST = ("test", "t", "tst")
# Programs that run other scripts or commands, in parallel or in series: what they run is not followed here,
# so beside a runner they count as one more test run the command would drop.
SCRIPT_RUNNERS = ("run-s", "run-p", "npm-run-all", "npm-run-all2", "concurrently", "wireit", "turbo", "nx")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# (not NODE_ENV: code may switch tests on by it; jest and vitest set NODE_ENV=test themselves)
HARMLESS_VARIABLES = frozenset({"TZ", "FORCE_COLOR", "NO_COLOR", "CI", "LANG", "LC_ALL"})
# A runner given one of these runs no test (`"pretest": "jest --clearCache"`): no test run.
NO_RUN_FLAGS = frozenset({"--clearCache", "--showConfig", "--listTests", "--version", "--help", "-h", "-v"})
PACKAGE_MANAGERS = ("npm", "yarn", "pnpm")
# A package manager's options that run other packages' scripts than the root's (a folder, workspaces).
OTHER_PACKAGES = frozenset(
    {"--prefix", "-C", "--dir", "--cwd", "--workspaces", "-ws", "--workspace", "-w", "--filter", "-F"}
    | {"-r", "--recursive"}
)
EXEC_COMMANDS = ("exec", "x", "dlx")  # `npm exec RUNNER`, `pnpm dlx RUNNER`: the runner itself
# yarn's and pnpm's own commands: `yarn NAME` runs script NAME only where NAME is none of these.
MANAGER_COMMANDS = frozenset(
    {"install", "i", "add", "remove", "rm", "upgrade", "up", "update", "why", "info", "list", "ls", "link"}
    | {"unlink", "pack", "publish", "config", "cache", "audit", "outdated", "version", "init", "create"}
    | {"workspace", "workspaces", "bin", "global", "import", "licenses", "login", "logout", "node", "owner"}
    | {"patch", "prune", "rebuild", "set", "store", "tag", "team", "unplug", "env", "fetch", "exec", "dlx"}
    | {"run", "test", "t"}
)
# Variables a script may set in front of its runner that the command reproduces without setting them: the
# runner sets the same value itself when it is unset (jest's bin and vitest: NODE_ENV=test).
ENV_THE_RUNNER_SETS = {"jest": ("NODE_ENV=test",), "vitest": ("NODE_ENV=test",)}


@dataclass(frozen=True)
class _Run:
    """One test run a script makes: the runner's command (None: a run that cannot be read, e.g. `run-s`),
    how it shows in a message, and the variable assignments that reach its process."""

    command: TestCommand | None
    shown: str
    assigned: tuple[str, ...] = ()


def detect_test_command(root: Path, settings: Settings | None = None) -> TestCommand | None:
    override = settings.verification.command if settings is not None else None
    if override:
        tokens = override if isinstance(override, list) else shlex.split(override)
        command = declared_command(tokens, "verification.command")
        if command is None:
            raise InputError(
                f"verification.command {override!r} runs no test runner this tool can read",
                hint="name node --test, jest, vitest or mocha (e.g. 'node --test test/')",
            )
        unset = _unset(_assignments(tokens), command.runner)
        if unset:
            raise InputError(
                f"verification.command {override!r} sets {', '.join(unset)}, which the test run cannot set",
                hint="name the runner and its arguments only; the tests run with the sandbox's environment",
            )
        _never_stops_early(root, command)
        _results_unrewritten(root, command)
        return command
    scripts = _scripts(root)
    command = _from_script(scripts, "test", ["package.json scripts.test"])
    if command is None:
        return None
    _reproducible(_runs(scripts, "test", ["package.json scripts.test"], ()))
    _never_stops_early(root, command)
    _results_unrewritten(root, command)
    return command


# Where a runner reads that it stops at its first failure (mocha's and jest's `bail`, vitest's too), and
# the arguments that say so. The canary fails in every run: a run that stops there leaves every test after
# it unrun, in both phases alike, and would be green on what ran (pytest is told --maxfail instead).
_MOCHARC = tuple(f".mocharc.{ext}" for ext in ("js", "cjs", "mjs", "json", "jsonc", "yml", "yaml"))
_CONFIG_EXTENSIONS = ("js", "ts", "mjs", "cjs", "mts", "cts", "json")
BAIL_CONFIGS = {
    "mocha": (*_MOCHARC, "test/mocha.opts"),
    "jest": tuple(f"jest.config.{ext}" for ext in _CONFIG_EXTENSIONS),
    "vitest": tuple(f"{name}.config.{ext}" for name in ("vitest", "vite") for ext in _CONFIG_EXTENSIONS),
}
BAIL_ARGS = {"mocha": ("--bail", "-b"), "jest": ("--bail", "-b"), "vitest": ("--bail",), "node-test": ()}
# `bail: 1`, `"bail": true`, `bail = 2`, mocha.opts' `--bail`: a value of 0 or false, or a comment line
# (`// bail: 0,` as `jest --init` writes it), is no bail.
BAIL_SETTING = re.compile(r"""(?m)^(?P<before>[^\n]*?)["']?\bbail\b["']?\s*[:=]\s*(?P<value>[^,\s}\]]*)""")
BAIL_FLAG = re.compile(r"(?m)^(?P<before>[^\n]*?)--bail\b")
NOT_BAILING = frozenset({"0", "false", "'0'", '"0"'})
# Arguments naming the configuration file the runner reads instead of its default one (mocha's -c is
# --colors).
CONFIG_ARGS = {"mocha": ("--config", "--opts"), "jest": ("--config", "-c"), "vitest": ("--config", "-c")}
BAIL_CONFIG_MAX_BYTES = 1_000_000


def _never_stops_early(root: Path, command: TestCommand) -> None:
    """RequiresHuman where the runner is told to stop at its first failure (BAIL_CONFIGS): by an argument
    of the command, by its own configuration file, or by package.json's `mocha` / `jest` key. Read as text
    (a JavaScript configuration is never run): any `bail` there counts, whatever its value."""
    flags = BAIL_ARGS.get(command.runner, ())
    said = [a for a in command.argv if a.split("=", 1)[0] in flags or _combined_b(a, command.runner)]
    named = [*BAIL_CONFIGS.get(command.runner, ()), *_config_args(command.argv, command.runner)]
    files = [f for f in dict.fromkeys(named) if _mentions_bail(root / f)]
    try:
        manifest = json_input.loads(_read_small(root / "package.json") or "{}")
    except ValueError:  # read before: this is the file the scripts came from
        manifest = {}
    key = manifest.get(command.runner) if isinstance(manifest, dict) else None
    if command.runner in ("mocha", "jest") and isinstance(key, dict) and "bail" in key:
        files.append(f"package.json {command.runner}.bail")
    if said or files:
        raise RequiresHuman(
            f"the {command.runner} run stops at its first failure ({', '.join([*said, *files])}): the tool's "
            "must-fail canary test would stop it, and the tests after it would run in neither phase",
            hint=f"take `bail` out of the {command.runner} configuration the tests run with, or set "
            "verification.command to a run that does not stop early",
        )


RESULTS_PROCESSOR = re.compile(r"(?m)^(?P<before>[^\n]*?)\btestResultsProcessor\b")


def _results_unrewritten(root: Path, command: TestCommand) -> None:
    """RequiresHuman where jest's configuration names a `testResultsProcessor`: a program of the
    repository's that gets the results before the --json report is written, and can rewrite them
    (helper-26's case C: a "known failures" processor turned each failure into a pass, the report said 3
    passed while jest printed 3 failed, exit 0). Results another program rewrote prove nothing. The
    option on the command line is dropped (DROPPED); in package.json's `jest` key, jest.config.* or the
    file `--config` names it stops the run, read as text (a configuration that cannot be read counts, as
    for `bail`)."""
    if command.runner != "jest":
        return
    named = [*BAIL_CONFIGS["jest"], *_config_args(command.argv, "jest")]
    files = [f for f in dict.fromkeys(named) if _mentions_processor(root / f)]
    try:
        manifest = json_input.loads(_read_small(root / "package.json") or "{}")
    except ValueError:
        manifest = {}
    key = manifest.get("jest") if isinstance(manifest, dict) else None
    if isinstance(key, dict) and "testResultsProcessor" in key:
        files.append(f"package.json jest.testResultsProcessor ({str(key['testResultsProcessor'])[:200]!r})")
    if files:
        raise RequiresHuman(
            f"jest's results go through a testResultsProcessor ({', '.join(files)}): a program of the "
            "repository's rewrites them before the tool reads them, so a green run would prove nothing",
            hint="take testResultsProcessor out of the jest configuration the tests run with (a reporter "
            "can do its job without changing the results), or migrate this repository by hand",
        )


def _mentions_processor(path: Path) -> bool:
    """Whether a jest configuration file names testResultsProcessor outside a comment line; one that is
    there but no small regular file counts (what jest reads there cannot be told)."""
    if not os.path.lexists(path):
        return False
    text = _read_small(path)
    return text is None or any(not _commented(m["before"]) for m in RESULTS_PROCESSOR.finditer(text))


def _combined_b(arg: str, runner: str) -> bool:
    """mocha's or jest's `-b` among combined short flags (`-bR`)."""
    return (
        runner in ("mocha", "jest")
        and arg[:1] == "-"
        and arg[1:2] != "-"
        and arg[1:].isalpha()
        and "b" in arg
    )


def _config_args(argv: list[str], runner: str) -> list[str]:
    """The configuration files the command names (`--config FILE`, `-c FILE`, `--opts FILE`, `--config=FILE`),
    as paths from the root (a file outside it is no file of the repository's)."""
    found = []
    for index, arg in enumerate(argv):
        name, equals, value = arg.partition("=")
        if name in CONFIG_ARGS.get(runner, ()):
            value = value if equals else (argv[index + 1] if index + 1 < len(argv) else "")
            if value and not value.startswith(("/", "..")) and "{" not in value:
                found.append(os.path.normpath(value))
    return found


def _mentions_bail(path: Path) -> bool:
    """Whether a configuration file sets `bail` to anything but 0 or false outside a comment line; one
    that is there but no small regular file (a link, a folder, too large) counts as setting it: what the
    runner reads there cannot be told."""
    if not os.path.lexists(path):
        return False
    text = _read_small(path)
    if text is None:
        return True
    settings = [m for m in BAIL_SETTING.finditer(text) if m["value"].strip().lower() not in NOT_BAILING]
    return any(not _commented(m["before"]) for m in [*settings, *BAIL_FLAG.finditer(text)])


def _commented(before: str) -> bool:
    return before.lstrip().startswith(("//", "#", "*", "/*"))


def _read_small(path: Path) -> str | None:
    """The text of a regular file of at most BAIL_CONFIG_MAX_BYTES, not through a link; else None."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > BAIL_CONFIG_MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _reproducible(runs: list[_Run]) -> None:
    """RequiresHuman unless the script makes exactly one test run, with no variable set for it that the
    command leaves out (see the module docstring): a run green on part of the suite proves nothing."""
    if len(runs) > 1:
        shown = "; ".join(r.shown for r in runs[:4])
        raise RequiresHuman(
            f"package.json scripts.test makes {len(runs)} test runs ({shown}): "
            "the tool runs one test command and would leave the others unverified",
            hint="set verification.command to one runner that runs every test (e.g. 'node --test "
            "test/unit/ test/integration/'), or verify the others by hand",
        )
    if runs and runs[0].command is None:  # its one run is one the command cannot make (`cd test && mocha`)
        raise RequiresHuman(
            f"package.json scripts.test runs its tests as the tool cannot ({runs[0].shown})",
            hint="set verification.command to a runner run from the repository's root, or verify by hand",
        )
    unset = _unset(runs[0].assigned, runs[0].command.runner if runs[0].command else "") if runs else []
    if unset:
        raise RequiresHuman(
            f"package.json scripts.test sets {', '.join(unset)} for its test run ({runs[0].shown}): the "
            "tests run with the sandbox's environment only, so what those variables switch on would not "
            "be tested",
            hint="make the tests run without the variables (scripts.test), or verify by hand",
        )


def _runs(scripts: dict[str, str], name: str, chain: list[str], assigned: tuple[str, ...]) -> list[_Run]:
    """Every test run script `name` makes as npm runs it: its `pre`/`post` scripts, each command of it
    (linters and builds are no runner: not a run), `npm run OTHER` followed, with the variables set along
    the way (`X=1 npm run unit`, `export X=1 &&`) that reach each runner."""
    runs: list[_Run] = []
    for script_name in (f"pre{name}", name, f"post{name}"):
        script = scripts.get(script_name)
        if script is None or PLACEHOLDER in script:
            continue
        own = [*chain[:-1], f"{chain[-1].rsplit('scripts.', 1)[0]}scripts.{script_name}"]  # pretest
        exported = assigned
        moved = False  # after `cd DIR`, the script's commands run in another folder (another package)
        for part in _commands(script):
            words = [w for w in part if w not in ("(", ")")]
            if not words:
                continue
            if words[0] == "export":
                exported += tuple(w for w in words[1:] if ASSIGNMENT.match(w))
                continue
            if words[0] in ("cd", "pushd"):
                moved = True
                continue
            found = _runs_of(scripts, words, own, exported + _assignments(words))
            if moved and (found or _npm_run(words) is not None):  # a test run of another folder (helper-46)
                where = " -> ".join(own)
                found = [_Run(None, f"{where}: {' '.join(words)[:80]} (after cd: another folder)")]
            runs += found
    return runs


def _runs_of(
    scripts: dict[str, str], part: list[str], chain: list[str], assigned: tuple[str, ...]
) -> list[_Run]:
    """The test runs of one command of a script (see _runs); `chain` leads to that script."""
    where = " -> ".join(chain)
    if _other_packages(part):  # `npm --prefix DIR test`, `npm test --workspaces`: another package's tests
        return [_Run(None, f"{where}: {' '.join(part)[:80]} (another package's scripts)")]
    named = _npm_run(part)
    if named is not None:
        if named in {c.rsplit("scripts.", 1)[-1] for c in chain}:
            return []  # a cycle: npm would not end either, and it adds no other runner
        if len(chain) > RUN_DEPTH:
            return [_Run(None, f"{where}: npm run {named}, deeper than {RUN_DEPTH} scripts")]
        return _runs(scripts, named, [*chain, f"scripts.{named}"], assigned)
    command = declared_command(part, where)
    words = _unwrapped(part)
    if command is not None and not _runs_no_test(part):
        return [_Run(command, f"{where}: {' '.join(words)[:80]}", assigned)]
    if words and Path(words[0]).name in SCRIPT_RUNNERS:
        return [_Run(None, f"{where}: {' '.join(words)[:80]}")]
    if words and Path(words[0]).name in UNREAD_RUNNERS:  # tests this tool cannot read (helper-46)
        return [_Run(None, f"{where}: {' '.join(words)[:80]} (no reader for {Path(words[0]).name})")]
    return []


def _assignments(tokens: list[str]) -> tuple[str, ...]:
    """The `NAME=value` words in front of the runner (bare, after `cross-env` or `env`)."""
    wrapping = tokens[: len(tokens) - len(_unwrapped(tokens))]
    return tuple(w for w in wrapping if ASSIGNMENT.match(w))


def _unset(assigned: tuple[str, ...], runner: str) -> list[str]:
    """The assignments the test command does not reproduce and that may decide which tests run: all but
    NODE_OPTIONS (its NODE_FLAGS reach node), what the runner sets itself (ENV_THE_RUNNER_SETS), and what
    changes how tests print or what time zone they see, never which of them run (HARMLESS_VARIABLES: a
    test that needs TZ=UTC fails in both runs without it, which is no false success)."""
    kept = ENV_THE_RUNNER_SETS.get(runner, ())
    return [
        a
        for a in assigned
        if not a.startswith("NODE_OPTIONS=")
        and a not in kept
        and a.split("=", 1)[0] not in HARMLESS_VARIABLES
    ]


def _from_script(scripts: dict[str, str], name: str, chain: list[str]) -> TestCommand | None:
    """The first runner of script `name`, following `npm run OTHER` into the script it names."""
    script = scripts.get(name)
    if script is None or PLACEHOLDER in script:
        return None
    for part in _commands(script):
        named = _npm_run(part)
        if named is not None:
            seen = {c.rsplit("scripts.", 1)[-1] for c in chain}
            if named not in seen and len(chain) <= RUN_DEPTH:
                found = _from_script(scripts, named, [*chain, f"scripts.{named}"])
                if found is not None:
                    return found
            continue
        command = declared_command(part, " -> ".join(chain))
        if command is not None and not _runs_no_test(part):
            return command
    return None


def _runs_no_test(part: list[str]) -> bool:
    """A runner told only to clear its cache or print something (NO_RUN_FLAGS): no test run."""
    return bool(NO_RUN_FLAGS.intersection(w.split("=", 1)[0] for w in _unwrapped(part)))


def _other_packages(words: list[str]) -> bool:
    """A package manager's test or run command for other packages than the root's (a folder, workspaces:
    `npm --prefix DIR test`, `npm test -ws`, `pnpm -r test`, `pnpm --filter X test`, `yarn workspace X
    test`, `yarn workspaces run test`): their scripts are not the root's, and not read here."""
    rest = _unwrapped(words)
    if len(rest) < 2 or Path(rest[0]).name not in PACKAGE_MANAGERS:
        return False
    args = [w.split("=", 1)[0] for w in rest[1:]]
    args = args[: args.index("--")] if "--" in args else args  # after `--`: the script's own arguments
    runs = any(a in NPM_TEST or "test" in a for a in args if not a.startswith("-"))  # not `pnpm -r build`
    elsewhere = any(a in OTHER_PACKAGES for a in args) or args[:1] in (["workspace"], ["workspaces"])
    return runs and elsewhere


def _npm_run(words: list[str]) -> str | None:
    """The script name of `npm run NAME` / `npm test`, `yarn run NAME` / `yarn NAME`, `pnpm run NAME` /
    `pnpm NAME` (after wrappers such as nyc), else None. A name that is no script runs nothing here."""
    rest = _unwrapped(words)
    if len(rest) < 2 or Path(rest[0]).name not in PACKAGE_MANAGERS:
        return None
    args = [w for w in rest[1:] if not w.startswith("-")]  # the manager's own flags (--silent, -s)
    if args[:1] and args[0] in NPM_TEST:
        return "test"
    if len(args) >= 2 and args[0] in NPM_RUN:
        return args[1]
    if Path(rest[0]).name != "npm" and args and args[0] not in MANAGER_COMMANDS:
        return args[0]  # yarn and pnpm run a script by its name alone
    return None


def declared_command(tokens: list[str], source: str) -> TestCommand | None:
    """The runner of one command line (its wrappers left out), with its own arguments kept, and the
    NODE_OPTIONS flags of NODE_FLAGS it sets given to node itself."""
    words = _unwrapped(tokens)
    if not words:
        return None
    flags = _node_flags(tokens[: len(tokens) - len(words)])
    head = Path(words[0]).name
    if head == "node" and len(words) > 1 and _runner_bin(words[1]):  # `node node_modules/mocha/bin/mocha.js`
        words, head = [_runner_bin(words[1]) or "", *words[2:]], _runner_bin(words[1]) or ""
    if head == "node" and "--test" in words:
        args = [w for w in words[1:] if w != "--test"]
        return TestCommand(
            [NODE_TEST[0], *flags, *NODE_TEST[1:], *_kept(args, "node-test")], source, "node-test"
        )
    if head in RUNNERS:
        runner = "mocha" if head == "_mocha" else head
        args = words[1:]
        if runner == "vitest" and args[:1] in (["run"], ["watch"]):
            args = args[1:]
        argv = RUNNERS[head]
        return TestCommand([argv[0], *flags, *argv[1:], *_kept(args, runner)], source, runner)
    return None


def _runner_bin(path: str) -> str | None:
    """The runner a script path under node_modules is (`node_modules/mocha/bin/mocha.js`,
    `node_modules/.bin/jest`, `./node_modules/jest/bin/jest.js`), else None."""
    parts = Path(path).parts
    if "node_modules" not in parts:
        return None
    stem = Path(path).name.removesuffix(".js").removesuffix(".cjs").removesuffix(".mjs")
    package = parts[parts.index("node_modules") + 1] if len(parts) > parts.index("node_modules") + 1 else ""
    for name in (stem, package):
        if name in RUNNERS:
            return name
    return None


def _node_flags(wrapping: list[str]) -> list[str]:
    """The flags of a `NODE_OPTIONS=…` assignment in front of the runner that NODE_FLAGS lets through."""
    flags: list[str] = []
    for word in wrapping:
        if word.startswith("NODE_OPTIONS="):
            flags += [f for f in word.split("=", 1)[1].split() if f.split("=", 1)[0] in NODE_FLAGS]
    return flags


def _unwrapped(tokens: list[str]) -> list[str]:
    """The command line without what wraps the runner: env assignments and wrappers, and a wrapper's
    own options (`c8 --100 node --test`, `nyc --reporter lcov mocha`): after a wrapper, words up to the
    first one that names a runner, node or npm."""
    words = list(tokens)
    while words:
        if len(words) > 1 and Path(words[0]).name in PACKAGE_MANAGERS and words[1] in EXEC_COMMANDS:
            words = words[2:]  # `npm exec -- mocha`, `pnpm exec jest`: the runner itself
            continue
        if not (words[0] in WRAPPERS or ("=" in words[0] and not words[0].startswith("-"))):
            break
        wrapper = words.pop(0)
        if wrapper in WRAPPERS and words and words[0].startswith("-"):
            heads = [i for i, w in enumerate(words) if Path(w).name in (*RUNNERS, "node", "npm")]
            words = words[heads[0] :] if heads else []
    return words


def _kept(args: list[str], runner: str) -> list[str]:
    kept: list[str] = []
    queue = list(args)
    while queue:
        arg = queue.pop(0)
        name = arg.split("=", 1)[0]
        if name in DROPPED[runner]:
            if "=" not in arg and name in TAKES_VALUE and queue:
                queue.pop(0)
            continue
        kept.append(arg)
    return kept


def _commands(script: str) -> list[list[str]]:
    """The simple commands of a script line (split at &&, ||, ;), each as words."""
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return []
    parts: list[list[str]] = [[]]
    for word in words:
        if word in ("&&", "||", ";", "|", "&"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [p for p in parts if p]


def _scripts(root: Path) -> dict[str, str]:
    try:
        document = json_input.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    scripts = document.get("scripts") if isinstance(document, dict) else None
    if not isinstance(scripts, dict):
        return {}
    return {k: v for k, v in scripts.items() if isinstance(k, str) and isinstance(v, str)}
