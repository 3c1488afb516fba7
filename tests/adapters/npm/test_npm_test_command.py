"""The test command from scripts.test, with the reporter that gives test ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.adapters import types
from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_command import JEST, MOCHA, NODE_TEST, VITEST
from agentic_codemod.config import Settings, VerificationSettings
from agentic_codemod.errors import InputError, RequiresHuman


def detect(tmp_path: Path, script: str | None) -> types.TestCommand | None:
    scripts = {"test": script} if script is not None else {}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    return ADAPTER.detect_test_command(tmp_path, None)


@pytest.mark.parametrize(
    ("script", "argv", "runner"),
    [
        ("node --test", NODE_TEST, "node-test"),
        ("node --test test/ --test-reporter=dot", [*NODE_TEST, "test/"], "node-test"),
        ("cross-env NODE_ENV=test jest --runInBand", [*JEST, "--runInBand"], "jest"),
        ("jest --json --outputFile out.json src", [*JEST, "src"], "jest"),
        ("vitest run --reporter dot", VITEST, "vitest"),
        ("npm run build && mocha -R spec 'test/**/*.js'", [*MOCHA, "test/**/*.js"], "mocha"),
        ("c8 mocha", MOCHA, "mocha"),
        ("NODE_OPTIONS=--x node --test a.test.js", [*NODE_TEST, "a.test.js"], "node-test"),
    ],
)
def test_runners_are_read_from_scripts_test(
    tmp_path: Path, script: str, argv: list[str], runner: str
) -> None:
    command = detect(tmp_path, script)
    assert command is not None
    assert (command.argv, command.runner, command.source) == (argv, runner, "package.json scripts.test")


@pytest.mark.parametrize(
    "script",
    [None, 'echo "Error: no test specified" && exit 1', "tap test/*.js", "./run-tests.sh", "make test"],
)
def test_no_command_without_a_runner_that_reports_ids(tmp_path: Path, script: str | None) -> None:
    assert detect(tmp_path, script) is None


def settings_with(command: str) -> Settings:
    return Settings(verification=VerificationSettings(command=command))


def test_override_is_read_the_same_way_and_a_foreign_one_is_refused(tmp_path: Path) -> None:
    command = ADAPTER.detect_test_command(tmp_path, settings_with("node --test test/unit"))
    assert command is not None and command.argv == [*NODE_TEST, "test/unit"]
    python_only = Settings(verification=VerificationSettings(command="python -m pytest"))
    with pytest.raises(InputError, match="runs no test runner"):  # readable by another ecosystem only
        ADAPTER.detect_test_command(tmp_path, python_only)
    with pytest.raises(ValueError, match="runs no test runner this tool reads"):
        settings_with("make test")


def detect_scripts(tmp_path: Path, scripts: dict[str, str]) -> types.TestCommand | None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    return ADAPTER.detect_test_command(tmp_path, None)


@pytest.mark.parametrize(
    ("scripts", "argv", "runner", "source"),
    [
        (  # ljharb's layout: the runner sits one script down, behind a coverage wrapper with options
            {"test": "npm run tests-only", "tests-only": "nyc --reporter=text mocha 'test/**/*.js'"},
            [*MOCHA, "test/**/*.js"],
            "mocha",
            "package.json scripts.test -> scripts.tests-only",
        ),
        (  # fastify's layout: a lint step first, then c8 with its own options before node --test
            {
                "test": "npm run lint && npm run test:unit",
                "lint": "eslint .",
                "test:unit": "c8 --100 node --test",
            },
            NODE_TEST,
            "node-test",
            "package.json scripts.test -> scripts.test:unit",
        ),
        (  # a wrapper option taking a separate value, and npm's own flags
            {"test": "npm run -s unit", "unit": "c8 --reporter lcov jest --runInBand"},
            [*JEST, "--runInBand"],
            "jest",
            "package.json scripts.test -> scripts.unit",
        ),
        (
            {"test": "nyc npm run test-spec", "test-spec": "mocha spec -R spec"},
            [*MOCHA, "spec"],
            "mocha",
            "package.json scripts.test -> scripts.test-spec",
        ),
    ],
)
def test_npm_run_is_followed_into_the_script_it_names(
    tmp_path: Path, scripts: dict[str, str], argv: list[str], runner: str, source: str
) -> None:
    command = detect_scripts(tmp_path, scripts)
    assert command is not None
    assert (command.argv, command.runner, command.source) == (argv, runner, source)


@pytest.mark.parametrize(
    "scripts",
    [
        {"test": "npm run a", "a": "npm run b", "b": "npm run a"},  # a cycle
        {"test": "npm test"},  # itself
        {"test": "npm run missing"},
        {"test": "npm run a", "a": "npm run b", "b": "npm run c", "c": "npm run d", "d": "npm run e"}
        | {"e": "mocha"},  # deeper than RUN_DEPTH
        {"test": "c8 --100 ./run.sh"},  # a wrapper whose options lead to no runner
    ],
)
def test_npm_run_chains_that_lead_nowhere_give_no_command(tmp_path: Path, scripts: dict[str, str]) -> None:
    assert detect_scripts(tmp_path, scripts) is None


@pytest.mark.parametrize(
    ("script", "argv"),
    [
        (  # des.js 1.1.0: its DES vectors need OpenSSL's legacy provider on Node 17+
            "NODE_OPTIONS=--openssl-legacy-provider mocha --reporter=spec test/*-test.js",
            [MOCHA[0], "--openssl-legacy-provider", *MOCHA[1:], "test/*-test.js"],
        ),
        (
            "cross-env NODE_OPTIONS='--experimental-vm-modules --require ./hook.js' jest",
            [JEST[0], "--experimental-vm-modules", *JEST[1:]],
        ),
        ("NODE_OPTIONS=--import=./forge.mjs node --test", NODE_TEST),  # code loading stays out
    ],
)
def test_node_options_of_the_script_reach_node_only_from_the_allowed_set(
    tmp_path: Path, script: str, argv: list[str]
) -> None:
    command = detect(tmp_path, script)
    assert command is not None and command.argv == argv


def test_a_runner_without_a_reader_beside_a_readable_one_requires_a_human(tmp_path: Path) -> None:
    """process-warning 4.0.1 runs its node suite under tap (no reader) and one jest file; pino 9 its whole
    suite under `tap --ts` and a jest smoke test. The jest run alone was verified and the rest named "not
    run": pino's bump of tap to 18 (which refuses `--ts` and runs no test) ended green, exit 0 (helper-46)."""
    scripts = {
        "test": "npm run test:unit && npm run test:jest && npm run test:typescript",
        "test:unit": "tap",
        "test:jest": "jest jest.test.js",
        "test:typescript": "tsd",
    }
    with pytest.raises(
        RequiresHuman, match=r"makes 3 test runs .*scripts.test:unit: tap \(no reader for tap\)"
    ):
        detect_scripts(tmp_path, scripts)
    pino = {"test": "npm run lint && npm run transpile && tap --ts && jest test/jest && npm run test-types"}
    pino["test-types"] = "tsc && tsd"
    with pytest.raises(RequiresHuman, match=r"makes 3 test runs"):
        detect_scripts(tmp_path, pino)


@pytest.mark.parametrize(
    "other",
    [
        "cd rfc/2560 && npm install && npm test",  # asn1.js: its sub-packages' suites
        "(cd packages/core && npm test)",
        "npm --prefix packages/core test",
        "npm test --workspaces",
        "npm run test -ws",
        "pnpm -r test",
        "pnpm --filter @acme/core test",
        "yarn workspace @acme/core test",
        "yarn workspaces run test",
    ],
)
def test_a_test_run_of_another_package_beside_the_roots_requires_a_human(tmp_path: Path, other: str) -> None:
    """`cd DIR && npm test` read as the root's own `test` again (a cycle: dropped), `npm --prefix DIR test`
    and workspaces runs not read at all: the root's mocha run was all that was verified (helper-46)."""
    with pytest.raises(RequiresHuman, match=r"makes 2 test runs"):
        detect_scripts(tmp_path, {"test": f"mocha test/ && {other}"})
    assert detect_scripts(tmp_path, {"test": "mocha test/ && cd docs && make html"}) is not None  # no test
    assert detect_scripts(tmp_path, {"test": "pnpm -r build && mocha test/"}) is not None  # a build
    assert detect_scripts(tmp_path, {"test": "npm run unit -- -w", "unit": "mocha test/"}) is not None
    with pytest.raises(RequiresHuman, match=r"runs its tests as the tool cannot .*after cd"):
        detect_scripts(tmp_path, {"test": "cd test && mocha ."})  # run from test/, not from the root
