"""What scripts.test runs that one test command cannot reproduce: a second test run, and variables set for
the runner. Both end the run requires_human (RequiresHuman from detect_test_command), naming what was not
run, instead of a green verification of part of the suite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.adapters import types
from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_command import JEST, MOCHA, NODE_TEST, detect_test_command
from agentic_codemod.config import Settings, VerificationSettings
from agentic_codemod.errors import InputError, RequiresHuman


def detect_scripts(tmp_path: Path, scripts: dict[str, str]) -> types.TestCommand | None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    return ADAPTER.detect_test_command(tmp_path, None)


@pytest.mark.parametrize(
    ("scripts", "shown"),
    [
        (
            {
                "test": "npm run test:unit && npm run test:integration",
                "test:unit": "node --test test/unit/",
                "test:integration": "node --test test/integration/",
            },
            [
                "package.json scripts.test -> scripts.test:unit: node --test test/unit/",
                "package.json scripts.test -> scripts.test:integration: node --test test/integration/",
            ],
        ),
        (
            {"test": "node --test a && node --test b"},
            ["package.json scripts.test: node --test a", "package.json scripts.test: node --test b"],
        ),
        ({"test": "mocha && jest"}, ["scripts.test: mocha", "scripts.test: jest"]),
        ({"test": "mocha", "posttest": "node --test"}, ["scripts.posttest: node --test"]),
        ({"test": "npm run unit", "unit": "jest", "preunit": "mocha"}, ["scripts.preunit: mocha"]),
        ({"test": "mocha && run-s test:e2e"}, ["scripts.test: run-s test:e2e"]),
        (
            {"test": "jest", "posttest": "npm run a", "a": "npm run b", "b": "npm run c"}
            | {"c": "npm run d", "d": "npm run e", "e": "mocha"},
            ["scripts.posttest -> scripts.a -> scripts.b -> scripts.c -> scripts.d: npm run e, deeper"],
        ),
    ],
)
def test_a_script_making_more_than_one_test_run_requires_a_human(
    tmp_path: Path, scripts: dict[str, str], shown: list[str]
) -> None:
    with pytest.raises(RequiresHuman, match="test runs") as caught:
        detect_scripts(tmp_path, scripts)
    for text in shown:
        assert text in caught.value.message, caught.value.message
    assert "verification.command" in caught.value.hint


@pytest.mark.parametrize(
    ("scripts", "argv"),
    [
        ({"test": "eslint . && mocha"}, MOCHA),
        ({"test": "npm run lint && node --test", "lint": "eslint ."}, NODE_TEST),
        ({"test": "tsc && jest"}, JEST),
        ({"test": "jest", "pretest": "npm run lint", "lint": "eslint .", "posttest": "tsc"}, JEST),
        ({"test": "npm run build && npm run unit", "build": "tsc", "unit": "c8 node --test"}, NODE_TEST),
        ({"test": "node --test | tap-spec"}, NODE_TEST),  # a formatter after the pipe, not a run
        ({"test": "npm run a && mocha", "a": "npm run b", "b": "npm run a"}, MOCHA),  # a cycle
    ],
)
def test_lint_and_build_steps_beside_one_runner_are_no_second_run(
    tmp_path: Path, scripts: dict[str, str], argv: list[str]
) -> None:
    command = detect_scripts(tmp_path, scripts)
    assert command is not None and command.argv == argv


@pytest.mark.parametrize(
    ("scripts", "named"),
    [
        ({"test": "ACME_SUITE=full node --test"}, "ACME_SUITE=full"),
        ({"test": "cross-env ACME_SUITE=full NODE_ENV=test jest"}, "ACME_SUITE=full"),
        ({"test": "NODE_ENV=test mocha"}, "NODE_ENV=test"),  # mocha does not set it itself
        ({"test": "env FULL=1 c8 node --test"}, "FULL=1"),
        ({"test": "export FULL=1 && node --test"}, "FULL=1"),
        ({"test": "FULL=1 npm run unit", "unit": "mocha"}, "FULL=1"),
        ({"test": "npm run unit", "unit": "FULL=1 mocha"}, "FULL=1"),
    ],
)
def test_variables_the_script_sets_for_its_runner_require_a_human(
    tmp_path: Path, scripts: dict[str, str], named: str
) -> None:
    """The test box gets the sandbox's environment only: tests a dropped `ACME_SUITE=full` switches on
    were skipped on the baseline and on the target alike (green)."""
    with pytest.raises(RequiresHuman, match=f"sets {named}") as caught:
        detect_scripts(tmp_path, scripts)
    assert "sandbox's environment" in caught.value.message


@pytest.mark.parametrize(
    ("script", "argv"),
    [
        ("cross-env NODE_ENV=test jest --runInBand", [*JEST, "--runInBand"]),  # jest sets it itself
        ("NODE_OPTIONS=--openssl-legacy-provider node --test", [NODE_TEST[0], "--openssl-legacy-provider"]),
        ("NODE_ENV=production webpack && mocha", MOCHA),  # the variable is webpack's, not the runner's
    ],
)
def test_variables_the_command_reproduces_or_that_are_not_the_runners_are_kept(
    tmp_path: Path, script: str, argv: list[str]
) -> None:
    command = detect_scripts(tmp_path, {"test": script})
    assert command is not None and command.argv[: len(argv)] == argv


def test_an_override_setting_variables_is_refused(tmp_path: Path) -> None:
    settings = Settings(verification=VerificationSettings(command="ACME_SUITE=full node --test"))
    with pytest.raises(InputError, match="sets ACME_SUITE=full"):
        ADAPTER.detect_test_command(tmp_path, settings)


@pytest.mark.parametrize(
    ("files", "said"),
    [
        ({".mocharc.yml": "bail: true\nspec: test/\n"}, ".mocharc.yml"),
        (
            {"package.json": {"scripts": {"test": "mocha"}, "mocha": {"bail": True}}},
            "package.json mocha.bail",
        ),
        ({"package.json": {"scripts": {"test": "mocha --bail test/"}}}, "--bail"),
        (
            {
                "package.json": {"scripts": {"test": "jest"}},
                "jest.config.js": "module.exports = { bail: 1 };\n",
            },
            "jest.config.js",
        ),
        ({"package.json": {"scripts": {"test": "jest -b"}}}, "-b"),
        ({"package.json": {"scripts": {"test": "vitest run --bail=1"}}}, "--bail=1"),
    ],
)
def test_a_runner_told_to_stop_at_its_first_failure_requires_a_human(
    tmp_path: Path, files: dict[str, object], said: str
) -> None:
    """The canary fails in every run: a runner that bails there leaves every test after it unrun in both
    phases (pytest gets --maxfail instead; the third review's reproduction with `addopts = "-x"`)."""
    files = {"package.json": {"scripts": {"test": "mocha"}}, **files}
    for name, content in files.items():
        (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(RequiresHuman, match="stops at its first failure") as raised:
        detect_test_command(tmp_path)
    assert said in str(raised.value)


def test_a_configuration_without_bail_is_no_early_stop(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(
        json.dumps({"scripts": {"test": "mocha"}, "mocha": {"spec": "t/"}})
    )
    (tmp_path / ".mocharc.json").write_text('{"timeout": 2000, "reporter": "spec"}')
    command = detect_test_command(tmp_path)
    assert command is not None and command.runner == "mocha"


@pytest.mark.parametrize(
    "second",
    ["yarn run test:e2e", "yarn test:e2e", "pnpm test:e2e", "pnpm run test:e2e", "npm exec -- mocha e2e",
     "node node_modules/mocha/bin/mocha.js e2e"],
)  # fmt: skip
def test_a_second_run_through_yarn_pnpm_npm_exec_or_a_runners_bin_is_seen(
    tmp_path: Path, second: str
) -> None:
    """The third review: each of these ran a second suite the tool never saw (green, exit 0)."""
    scripts = {"test": f"node --test test/ && {second}", "test:e2e": "node --test e2e/"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    with pytest.raises(RequiresHuman, match="makes 2 test runs"):
        detect_test_command(tmp_path)


@pytest.mark.parametrize(
    "script",
    ["TZ=UTC node --test", "FORCE_COLOR=0 node --test", "cross-env NO_COLOR=1 CI=true mocha"],
)
def test_variables_that_only_change_output_or_time_zone_are_no_reason_to_stop(
    tmp_path: Path, script: str
) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": script}}))
    assert detect_test_command(tmp_path) is not None


def test_a_cache_clearing_pretest_is_no_test_run(tmp_path: Path) -> None:
    scripts = {"pretest": "jest --clearCache", "test": "jest"}
    (tmp_path / "package.json").write_text(json.dumps({"scripts": scripts}))
    command = detect_test_command(tmp_path)
    assert command is not None and command.runner == "jest"


@pytest.mark.parametrize(
    ("files", "stops"),
    [
        ({"jest.config.js": "module.exports = {\n  // bail: 0,\n  testEnvironment: 'node',\n};\n"}, False),
        ({"jest.config.js": "module.exports = { bail: 0 }; // we don't bail here\n"}, False),
        ({"jest.config.js": "module.exports = { bail: false };\n"}, False),
        ({"jest.config.js": "module.exports = { bail: 1 };\n"}, True),
        (
            {
                "config/jest.json": '{"bail": 1}',
                "package.json": {"scripts": {"test": "jest --config ./config/jest.json"}},
            },
            True,
        ),
        ({"package.json": {"scripts": {"test": "mocha -bR spec"}}}, True),
        (
            {
                "package.json": {"scripts": {"test": "mocha --opts test/unit/mocha.opts"}},
                "test/unit/mocha.opts": "--bail\n",
            },
            True,
        ),
        ({"package.json": {"scripts": {"test": "mocha -c test/"}}}, False),  # mocha's -c is --colors
        (
            {
                "vitest.config.cts": "export default { test: { bail: 1 } }\n",
                "package.json": {"scripts": {"test": "vitest run"}},
            },
            True,
        ),
    ],
)
def test_bail_is_read_where_the_runner_reads_it_and_only_where_it_is_set(
    tmp_path: Path, files: dict[str, object], stops: bool
) -> None:
    """The fourth review: `jest --init`'s commented `// bail: 0,` and an explicit `bail: 0` stopped ordinary
    runs, while a config file named by --config/--opts, combined short flags and `.cts` were not read."""
    files = {"package.json": {"scripts": {"test": "jest"}}, **files}
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content if isinstance(content, str) else json.dumps(content))
    if stops:
        with pytest.raises(RequiresHuman, match="stops at its first failure"):
            detect_test_command(tmp_path)
    else:
        assert detect_test_command(tmp_path) is not None


def test_a_cache_clearing_call_before_the_runner_is_not_taken_for_the_test_command(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "jest --clearCache && jest"}}))
    command = detect_test_command(tmp_path)
    assert command is not None and "--clearCache" not in command.argv
