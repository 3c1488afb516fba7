"""The command that verifies an npm repository, from package.json `scripts.test`, first match wins:

    0. settings.verification.command (the task's, else the config's)          -> read the same way
    1. scripts.test names a runner this tool reads with test ids:
         node --test [args]  -> node --test --test-reporter=junit --test-reporter-destination={junit}
                                --test-reporter=tap --test-reporter-destination=stdout [args]
         jest [args]         -> node node_modules/.bin/jest --ci --json --outputFile={junit} [args]
         vitest [run] [args] -> node node_modules/.bin/vitest run --reporter=junit
                                --outputFile={junit} --reporter=default [args]
         mocha [args]        -> node node_modules/.bin/mocha --reporter=xunit
                                --reporter-options=output={junit} [args]
         tape [args]         -> node node_modules/.bin/tape [args]   (its TAP on stdout; `| tap-spec` dropped)
    none (no scripts.test, npm's placeholder "no test specified", or a runner this tool cannot read):
    None — without test ids a change cannot be verified.

The runner and the arguments given to it are kept; what wraps them in the script (`cross-env X=1`,
`npm run build &&`, `nyc`, `c8` and their own options) is not, and neither are arguments that would move,
rename or switch off the report (--reporter, --json, --outputFile, --test-reporter…). A command
`npm run NAME` (`npm run-script NAME`, `npm test`) is read as the script it names, as npm runs it
(`"test": "npm run tests-only"`, `"test:unit": "c8 --100 node --test"`), at most RUN_DEPTH scripts deep;
the source then names the chain, and the runners without a reader the script also runs ("(not run:
tap)"). A `NODE_OPTIONS=…` assignment in front of the runner reaches node as
flags, only those of NODE_FLAGS. `{interpreter}` is the environment's node.
Runner names: "node-test", "jest", "vitest", "mocha", "tape" (test_results.py reads each one's report).
A runner starts from its node_modules/.bin link, which npm points at the bin file of the installed version
(mocha 2-5 have bin/mocha, 6+ bin/mocha.js); `--reporter-options` is the spelling every mocha from 2 on
reads.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from agentic_codemod import json_input
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.config import Settings
from agentic_codemod.errors import InputError

NODE_TEST = [
    "{interpreter}",
    "--test",
    "--test-reporter=junit",
    "--test-reporter-destination={junit}",
    "--test-reporter=tap",
    "--test-reporter-destination=stdout",
]
JEST = ["{interpreter}", "node_modules/.bin/jest", "--ci", "--json", "--outputFile={junit}"]
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
    "jest": ("--json", "--outputFile", "--reporters", "--silent"),
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
# Test runners this tool has no reader for: a script that also runs one is verified in part only, and
# the command's source says what was left out.
UNREAD_RUNNERS = ("tap", "ava", "jasmine", "karma", "lab", "uvu", "qunit", "tsd", "tstyche", "playwright")
RUN_DEPTH = 4  # npm run NAME followed at most this many scripts deep (a cycle stops there too)
NPM_RUN = ("run", "run-script", "run-scripts", "rum", "urn")
NPM_TEST = ("test", "t", "tst")


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
        return command
    scripts = _scripts(root)
    command = _from_script(scripts, "test", ["package.json scripts.test"])
    unread = _unread_runners(scripts, "test", {"test"})
    if command is None or not unread:
        return command
    # the script also runs tests this tool cannot read: verification covers part of the suite only
    return TestCommand(command.argv, f"{command.source} (not run: {', '.join(unread)})", command.runner)


def _unread_runners(scripts: dict[str, str], name: str, seen: set[str]) -> list[str]:
    """The test runners without a reader (UNREAD_RUNNERS) that script `name` runs, following npm run."""
    found: list[str] = []
    for part in _commands(scripts.get(name, "")):
        named = _npm_run(part)
        if named is not None and named not in seen and len(seen) <= RUN_DEPTH:
            found += _unread_runners(scripts, named, seen | {named})
            continue
        words = _unwrapped(part)
        if words and Path(words[0]).name in UNREAD_RUNNERS:
            found.append(" ".join(words)[:80])
    return found


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
        if command is not None:
            return command
    return None


def _npm_run(words: list[str]) -> str | None:
    """The script name of `npm run NAME` / `npm test` (after wrappers such as nyc), else None."""
    rest = _unwrapped(words)
    if len(rest) < 2 or Path(rest[0]).name != "npm":
        return None
    args = [w for w in rest[1:] if not w.startswith("-")]  # npm's own flags (--silent, -s)
    if args[:1] and args[0] in NPM_TEST:
        return "test"
    if len(args) >= 2 and args[0] in NPM_RUN:
        return args[1]
    return None


def declared_command(tokens: list[str], source: str) -> TestCommand | None:
    """The runner of one command line (its wrappers left out), with its own arguments kept, and the
    NODE_OPTIONS flags of NODE_FLAGS it sets given to node itself."""
    words = _unwrapped(tokens)
    if not words:
        return None
    flags = _node_flags(tokens[: len(tokens) - len(words)])
    head = Path(words[0]).name
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
    while words and (words[0] in WRAPPERS or ("=" in words[0] and not words[0].startswith("-"))):
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
