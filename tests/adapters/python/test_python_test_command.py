"""Test command detection: an override, tox/nox commands, stestr, pytest configuration, test folders,
a unittest fallback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from agentic_codemod.adapters.python.test_command import NEVER_STOP, PYTEST, UNITTEST, detect_test_command
from agentic_codemod.config import Settings, VerificationSettings


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def _run(argv: list[str], cwd: Path, junit: Path) -> subprocess.CompletedProcess[str]:
    real = [a.replace("{interpreter}", sys.executable).replace("{junit}", str(junit)) for a in argv]
    return subprocess.run(real, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


def test_the_pytest_command_reports_test_ids_and_writes_no_cache_into_the_repository(tmp_path: Path) -> None:
    repo = write(
        tmp_path / "repo", {"pytest.ini": "[pytest]\n", "tests/test_a.py": "def test_red():\n    assert 0\n"}
    )
    command = detect_test_command(repo)
    assert command is not None and command.runner == "pytest"
    proc = _run(command.argv, repo, tmp_path / "junit.xml")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    [case] = ElementTree.parse(tmp_path / "junit.xml").getroot().iter("testcase")
    assert (case.get("classname"), case.get("name")) == ("tests.test_a", "test_red")
    assert case.find("failure") is not None
    assert not (repo / ".pytest_cache").exists()


def test_the_unittest_fallback_names_each_failing_test(tmp_path: Path) -> None:
    case = "import unittest\nclass T(unittest.TestCase):\n    def test_red(self):\n        self.fail()\n"
    repo = write(tmp_path / "repo", {"app/test_core.py": case, "app/__init__.py": ""})
    command = detect_test_command(repo)
    assert command is not None and command.runner == "unittest"
    proc = _run(command.argv, repo, tmp_path / "junit.xml")
    assert proc.returncode == 1
    assert "test_red (app.test_core.T" in proc.stderr  # per-test lines: the failure carries its id


@pytest.mark.parametrize(
    ("files", "source"),
    [
        ({"pytest.ini": "[pytest]\n"}, "pytest.ini"),
        (
            {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-ra'\n"},
            "pyproject.toml [tool.pytest.ini_options]",
        ),
        ({"pyproject.toml": "[tool.pytest]\nminversion = '9.0'\n"}, "pyproject.toml [tool.pytest]"),
        ({"setup.cfg": "[metadata]\nname = x\n[tool:pytest]\ntestpaths = t\n"}, "setup.cfg [tool:pytest]"),
        ({"tox.ini": "[tox]\nenvlist = py311\n[pytest]\naddopts = -ra\n"}, "tox.ini [pytest]"),
    ],
)
def test_pytest_configuration(tmp_path: Path, files: dict[str, str], source: str) -> None:
    command = detect_test_command(write(tmp_path, files))
    assert command is not None
    assert (command.argv, command.source, command.runner) == ([*PYTEST, *NEVER_STOP], source, "pytest")


def test_pytest_configuration_wins_over_a_test_folder(tmp_path: Path) -> None:
    write(tmp_path, {"pytest.ini": "[pytest]\n", "tests/test_app.py": ""})
    command = detect_test_command(tmp_path)
    assert command is not None and command.source == "pytest.ini"


@pytest.mark.parametrize(("folder", "file"), [("tests", "unit/test_app.py"), ("test", "app_test.py")])
def test_test_folder_runs_pytest_on_it(tmp_path: Path, folder: str, file: str) -> None:
    command = detect_test_command(write(tmp_path, {f"{folder}/{file}": "def test_x(): pass\n"}))
    assert command is not None
    assert (command.argv, command.source, command.runner) == (
        [*PYTEST, folder, *NEVER_STOP],
        f"{folder}/ folder",
        "pytest",
    )


def test_tests_folder_without_test_files_is_not_a_suite(tmp_path: Path) -> None:
    assert detect_test_command(write(tmp_path, {"tests/helpers.py": "", "app.py": ""})) is None


@pytest.mark.parametrize(
    ("commands", "runner", "argv"),
    [
        ("pytest {posargs}", "pytest", [*PYTEST, *NEVER_STOP]),
        ("python -m unittest discover -s src", "unittest", [*UNITTEST, "-s", "src"]),
    ],
)
def test_tox_commands_choose_the_runner(tmp_path: Path, commands: str, runner: str, argv: list[str]) -> None:
    write(tmp_path, {"tox.ini": f"[tox]\nenvlist = py311\n\n[testenv]\ncommands =\n    {commands}\n"})
    command = detect_test_command(tmp_path)
    assert command is not None
    assert (command.argv, command.source, command.runner) == (argv, "tox.ini [testenv] commands", runner)


def test_a_tox_command_with_toxs_own_env_values_is_read_with_its_env(tmp_path: Path) -> None:
    """pytest-localserver's `--junitxml=junit-{envname}.xml` (and `--basetemp={envtmpdir}`, as common)
    left the line out, and with it the env's command and deps: the run fell back to the tests folder
    without `requests` and ended "a test dependency is missing" (helper-45)."""
    from agentic_codemod.adapters.python import ci_config

    tox = "[tox]\nenvlist = py311\n\n[testenv]\ndeps =\n    pytest\n    requests\ncommands =\n"
    tox += (
        "  pytest -v \\\n    --junitxml=junit-{envname}.xml \\\n    --basetemp={envtmpdir} {posargs:tests}\n"
    )
    write(tmp_path, {"tox.ini": tox, "tests/test_a.py": ""})
    command = detect_test_command(tmp_path)
    assert command is not None and command.source == "tox.ini [testenv] commands"
    assert command.argv == [*PYTEST, "-v", "--basetemp=.tox/py/tmp", "tests", *NEVER_STOP]
    env = ci_config.test_env(tmp_path)
    assert env is not None and env.requirement_lines == ["pytest", "requests"]


def test_unittest_fallback_for_test_files_elsewhere(tmp_path: Path) -> None:
    command = detect_test_command(write(tmp_path, {"src/app/test_core.py": "import unittest\n"}))
    assert command is not None
    assert (command.argv, command.runner) == (UNITTEST, "unittest")


def test_nothing_that_could_be_a_test_suite(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "app.py": "",
            "pyproject.toml": "[project]\nname = 'x'\n",
            ".venv/lib/site-packages/pkg/test_vendored.py": "",  # environments are not the repo's tests
            "node_modules/x/test_x.py": "",
        },
    )
    assert detect_test_command(tmp_path) is None


def test_broken_config_files_do_not_crash_detection(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"pyproject.toml": "[tool.pytest\n", "setup.cfg": "no section header\n", "tests/test_a.py": ""},
    )
    command = detect_test_command(tmp_path)
    assert command is not None and command.source == "tests/ folder"


def test_stestr_conf_runs_stestr_on_its_test_path(tmp_path: Path) -> None:
    write(
        tmp_path,
        {".stestr.conf": "[DEFAULT]\ntest_path=./pkg/tests\ntop_dir=./\n", "pkg/tests/test_a.py": ""},
    )
    command = detect_test_command(tmp_path)
    assert command is not None
    assert (command.argv, command.runner, command.source) == (
        ["{interpreter}", "-m", "stestr", "--test-path", "./pkg/tests", "--top-dir", "./", "run"],
        "stestr",
        ".stestr.conf",
    )


def test_tox_stestr_command_wins_over_pytest_configuration(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".stestr.conf": "[DEFAULT]\ntest_path=./pkg/tests\n",
            "pytest.ini": "[pytest]\n",
            "tox.ini": "[testenv:lint]\ncommands = flake8\n"
            "[testenv:py3]\ncommands =\n  stestr run {posargs}\n",
        },
    )
    command = detect_test_command(tmp_path)
    assert command is not None
    assert command.argv == ["{interpreter}", "-m", "stestr", "--test-path", "./pkg/tests", "run"]
    assert command.source == "tox.ini [testenv:py3] commands"


def test_declared_pytest_arguments_are_kept_but_not_those_that_take_the_report(tmp_path: Path) -> None:
    tox = (
        "[testenv]\ncommands =\n"
        "  - coverage run -m pytest -x --junitxml=out.xml -p no:junitxml {posargs:tests/unit}\n"
    )
    command = detect_test_command(write(tmp_path, {"tox.ini": tox}))
    assert command is not None and command.argv == [*PYTEST, "-x", "tests/unit", *NEVER_STOP]  # -x: overruled


TESTTOOLS_CASES = "import testtools\nclass T(testtools.TestCase):\n" + "".join(
    f"    def test_{i}(self):\n        pass\n" for i in range(4)
)
PYTEST_FUNCTIONS = "def test_a(fixture):\n    pass\ndef test_b():\n    pass\n"


def test_of_several_test_commands_one_that_does_not_run_the_others_tests_requires_a_human(
    tmp_path: Path,
) -> None:
    """requests-mock's shape: unittest runs the TestCase suite, pytest a plugin's functions unittest never
    collects. Before, the larger ran and the other was named in the source only (helper-20's review: a
    second command's tests, failing on the target, ran in neither phase: green)."""
    from agentic_codemod.errors import RequiresHuman

    tox = "[testenv]\ncommands =\n    pytest tests/pytest\n    python -m testtools.run {posargs:discover}\n"
    files = {"tests/__init__.py": "", "tests/test_cases.py": TESTTOOLS_CASES}
    write(
        tmp_path,
        {"tox.ini": tox, **files, "tests/pytest/__init__.py": "", "tests/pytest/test_p.py": PYTEST_FUNCTIONS},
    )
    with pytest.raises(
        RequiresHuman,
        match=r"\(python -m testtools.run discover\) does not run the tests of pytest tests/pytest",
    ):
        detect_test_command(tmp_path)


@pytest.mark.parametrize(
    ("commands", "covered", "config"),
    [
        ("coverage run -m pytest tests\n    pytest tests", True, {}),  # the same command once unwrapped
        ("pytest tests\n    pytest tests/unit -k fast", True, {}),  # inside the chosen one's paths
        ("pytest\n    python -m unittest tests.unit.test_cases", True, {}),  # pytest collects unittest's
        ("pytest --ignore=tests/contract tests\n    pytest tests/contract", False, {}),  # helper-20's case3
        ("pytest tests/unit\n    pytest tests/contract", False, {}),
        ("pytest tests -m 'not slow'\n    pytest tests -m slow", False, {}),
        ("pytest tests\n    python -m unittest discover -s tests -p '*tests.py'", False, {}),  # mkdocs' names
        # helper-25's review: the narrowing in the configuration (addopts), and a bare `pytest` that
        # runs the configured testpaths, not the whole tree
        (
            "pytest tests\n    pytest -m contract tests",
            False,
            {"pytest.ini": "[pytest]\naddopts = -m 'not contract'\n"},
        ),
        ("pytest\n    pytest tests/contract", False, {"pytest.ini": "[pytest]\ntestpaths = tests/unit\n"}),
        ("pytest\n    pytest tests/unit", True, {"pytest.ini": "[pytest]\ntestpaths = tests/unit\n"}),
        ("pytest tests\n    pytest -c contract.ini tests", False, {}),  # another configuration
    ],
)
def test_another_test_command_is_covered_only_where_the_chosen_one_runs_its_tests(
    tmp_path: Path, commands: str, covered: bool, config: dict[str, str]
) -> None:
    from agentic_codemod.errors import RequiresHuman

    files = {f"tests/{d}/test_{d}.py": PYTEST_FUNCTIONS for d in ("unit", "contract")}
    files["tests/base_tests.py"] = TESTTOOLS_CASES  # unittest's `*tests.py` finds it, pytest does not
    write(tmp_path, {"tox.ini": f"[testenv]\ncommands =\n    {commands}\n", **files, **config})
    if covered:
        assert detect_test_command(tmp_path) is not None
    else:
        with pytest.raises(RequiresHuman, match="would run in neither phase here"):
            detect_test_command(tmp_path)


def test_of_several_test_commands_pytest_wins_when_it_covers_more(tmp_path: Path) -> None:
    noxfile = (
        "import nox\n@nox.session\ndef tests(session):\n"
        "    session.run('python', '-m', 'unittest', 'tests.test_cases')\n"
        "    session.run('pytest', 'tests')\n"
    )
    write(
        tmp_path,
        {"noxfile.py": noxfile, "tests/test_cases.py": TESTTOOLS_CASES, "tests/test_p.py": PYTEST_FUNCTIONS},
    )
    command = detect_test_command(tmp_path)
    assert command is not None
    assert command.argv == [*PYTEST, "tests", *NEVER_STOP]
    assert command.source.endswith(
        "with the most tests (~6); not run: python -m unittest tests.test_cases (~4)"
    )


def test_nox_session_command_is_read_without_running_the_noxfile(tmp_path: Path) -> None:
    noxfile = (
        "import nox\nraise SystemExit(1)\n@nox.session(name='unit')\ndef t(session):\n"
        "    session.run('python', '-m', 'unittest', 'discover', '-s', 'src')\n"
    )
    command = detect_test_command(write(tmp_path, {"noxfile.py": noxfile}))
    assert command is not None
    assert (command.argv, command.source) == ([*UNITTEST, "-s", "src"], "noxfile.py session unit commands")


TRIAL = ["{interpreter}", "-m", "twisted.trial", "--reporter=bwverbose"]


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("'coverage', 'run', '--module', 'twisted.trial', 'pkg'", [*TRIAL, "pkg"]),
        ("'python', '-m', 'twisted.trial', '--reporter=text', '-j', '2', 'pkg'", [*TRIAL, "-j", "2", "pkg"]),
        ("'trial', 'pkg.test'", [*TRIAL, "pkg.test"]),
    ],
)
def test_a_nox_session_running_twisted_trial_runs_trial_with_its_verbose_reporter(
    tmp_path: Path, line: str, argv: list[str]
) -> None:
    noxfile = f"import nox\n@nox.session\ndef tests(session):\n    session.run({line})\n"
    test = "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    files = {"noxfile.py": noxfile, "src/pkg/__init__.py": "", "src/pkg/test/__init__.py": ""}
    files["src/pkg/test/test_a.py"] = test
    command = detect_test_command(write(tmp_path, files))
    assert command is not None
    assert (command.argv, command.runner) == (argv, "trial")


def test_trial_given_its_test_names_at_run_time_runs_the_projects_test_packages(tmp_path: Path) -> None:
    noxfile = (
        "import nox\n@nox.session\ndef tests(session):\n    posargs = list(session.posargs) or ['pkg']\n"
        "    session.run('coverage', 'run', '--module', 'twisted.trial', *posargs)\n"
    )
    test = "import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n"
    files = {"noxfile.py": noxfile, "src/pkg/__init__.py": "", "src/pkg/test/test_a.py": test}
    files |= {"src/other/__init__.py": "", "docs/conf.py": ""}
    command = detect_test_command(write(tmp_path, files))
    assert command is not None
    assert (command.argv, command.runner) == ([*TRIAL, "pkg"], "trial")
    assert command.source.endswith("(trial names no test package: the project's pkg)")


@pytest.mark.parametrize(
    ("override", "argv"),
    [
        ("python -m pytest tests/unit", [*PYTEST, "tests/unit", *NEVER_STOP]),
        (["python3", "-m", "unittest", "pkg.tests"], ["{interpreter}", "-m", "unittest", "-v", "pkg.tests"]),
    ],
)
def test_verification_command_overrides_detection(tmp_path: Path, override: object, argv: list[str]) -> None:
    settings = Settings(verification=VerificationSettings.model_validate({"command": override}))
    command = detect_test_command(write(tmp_path, {"pytest.ini": "[pytest]\n"}), settings)
    assert command is not None
    assert (command.argv, command.source) == (argv, "verification.command")


def test_a_verification_command_without_a_runner_is_bad_input() -> None:
    with pytest.raises(ValueError, match="runs no test runner"):
        VerificationSettings(command="make test")


@pytest.mark.parametrize(
    ("tox_command", "argv_tail"),
    [
        ("python -m unittest discover -f -s tests", ["discover", "-v", "-s", "tests"]),
        ("python -m unittest --failfast", ["discover", "-v"]),
        ("python -m unittest -fv tests.test_a", ["-v", "tests.test_a"]),
    ],
)
def test_unittest_is_never_told_to_stop_at_its_first_failure(
    tmp_path: Path, tox_command: str, argv_tail: list[str]
) -> None:
    """The fourth review: `python -m unittest discover -f` stopped at the canary (which fails in every
    run), so the tests after it ran in neither phase: green, exit 0 on a wrong change."""
    (tmp_path / "tox.ini").write_text(f"[testenv]\ncommands = {tox_command}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import unittest\n")
    command = detect_test_command(tmp_path)
    assert command is not None and command.runner == "unittest"
    assert command.argv == ["{interpreter}", "-m", "unittest", *argv_tail]


def test_test_files_outside_the_tests_folder_run_pytest_from_the_root(tmp_path: Path) -> None:
    """Without a pytest configuration plain `pytest` collects every test file; `pytest tests` left
    `integration_tests/` unrun in both phases (helper-20's review: green on a target it fails on)."""
    repo = write(
        tmp_path / "repo",
        {
            "tests/test_a.py": "def test_a():\n    pass\n",
            "integration_tests/test_contract.py": "def test_contract():\n    assert 0\n",
        },
    )
    command = detect_test_command(repo)
    assert command is not None and command.argv == [*PYTEST, *NEVER_STOP]
    assert "integration_tests/test_contract.py" in command.source
    proc = _run(command.argv, repo, tmp_path / "junit.xml")
    assert proc.returncode == 1 and "1 failed, 1 passed" in proc.stdout, proc.stdout
    alone = write(tmp_path / "alone", {"tests/test_a.py": "def test_a():\n    pass\n", "src/app.py": ""})
    assert detect_test_command(alone).argv == [*PYTEST, "tests", *NEVER_STOP]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "files",
    [
        {"tox.ini": "[testenv]\nsetenv =\n    ACME_CONTRACT_TESTS = 1\ncommands = pytest tests\n"},
        {"tox.ini": "[testenv]\nset_env = ACME_CONTRACT_TESTS=1\ncommands = pytest tests\n"},
        {
            "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n"
            "    session.install('pytest')\n"
            "    session.run('pytest', 'tests', env={'ACME_CONTRACT_TESTS': '1'})\n"
        },
        {
            "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n"
            "    session.env['ACME_CONTRACT_TESTS'] = '1'\n    session.run('pytest', 'tests')\n"
        },
    ],
)
def test_a_variable_the_test_env_sets_that_the_code_reads_requires_a_human(
    tmp_path: Path, files: dict[str, str]
) -> None:
    """tox's setenv and nox's env= are not set here: a test skipped unless one is set ran in neither
    phase (helper-20's review: green, exit 0, on a target the contract test fails on)."""
    from agentic_codemod.errors import RequiresHuman

    test = (
        "import os\n\nimport pytest\n\n\n"
        "@pytest.mark.skipif(not os.environ.get('ACME_CONTRACT_TESTS'), reason='contract')\n"
        "def test_contract():\n    assert 0\n"
    )
    repo = write(tmp_path / "repo", {**files, "tests/test_contract.py": test})
    with pytest.raises(RequiresHuman, match=r"sets ACME_CONTRACT_TESTS for its tests") as caught:
        detect_test_command(repo)
    assert "tests/test_contract.py" in str(caught.value) and "verification.command" in str(caught.value)
    quiet = write(tmp_path / "quiet", {**files, "tests/test_a.py": "def test_a():\n    pass\n"})
    command = detect_test_command(quiet)  # a variable no code names (COVERAGE_FILE, VIRTUAL_ENV): as before
    assert command is not None and command.runner == "pytest"


@pytest.mark.parametrize(
    ("tox", "covered"),
    [
        (
            "[tox]\nenvlist = py3, contract\n[testenv]\ncommands = pytest --ignore=tests/contract tests\n"
            "[testenv:contract]\ncommands = pytest tests/contract\n",
            False,
        ),  # helper-20's case3b
        (
            "[tox]\nenvlist = py3, cover\n[testenv]\ncommands = pytest tests\n"
            "[testenv:cover]\ncommands = pytest --cov=app --cov-report term tests\n",
            True,
        ),
        (
            "[tox]\nenvlist = py3\n[testenv]\ncommands = pytest tests/unit\n"  # not what a bare tox runs
            "[testenv:integration]\ncommands = pytest tests/contract\n",
            True,
        ),
        (
            "[tox]\nenvlist = py{3,311}, lint\n[testenv]\ncommands = pytest tests/unit\n"
            "[testenv:lint]\ncommands = flake8 app\n",
            True,
        ),  # no test runner
    ],
)
def test_the_other_envs_a_bare_tox_runs_are_covered_or_require_a_human(
    tmp_path: Path, tox: str, covered: bool
) -> None:
    from agentic_codemod.errors import RequiresHuman

    files = {f"tests/{d}/test_{d}.py": PYTEST_FUNCTIONS for d in ("unit", "contract")}
    write(tmp_path, {"tox.ini": tox, **files})
    if covered:
        assert detect_test_command(tmp_path) is not None
    else:
        with pytest.raises(RequiresHuman, match="does not run the tests of pytest tests/contract"):
            detect_test_command(tmp_path)


@pytest.mark.parametrize(
    ("files", "stops"),
    [
        # pytest reads PYTEST_ADDOPTS itself: `--run-contract` switches the conftest's option on
        ({"tox.ini": "[testenv]\nsetenv = PYTEST_ADDOPTS = --run-contract\ncommands = pytest tests\n"}, True),
        (
            {
                "tox.ini": "[testenv]\nsetenv = PYTEST_ADDOPTS = --color=yes -n auto\n"
                "commands = pytest tests\n"
            },
            False,
        ),
        (  # a module-level mapping the session names
            {
                "noxfile.py": "import nox\nTEST_ENV = {'ACME_CONTRACT_TESTS': '1'}\n\n\n@nox.session\n"
                "def tests(session):\n    session.run('pytest', 'tests', env=TEST_ENV)\n"
            },
            True,
        ),
        (  # a mapping no reading resolves
            {
                "noxfile.py": "import nox\n\n\n@nox.session\ndef tests(session):\n"
                "    session.run('pytest', 'tests', env=make_env())\n"
            },
            True,
        ),
        (  # os.environ written in the session
            {
                "noxfile.py": "import os\n\nimport nox\n\n\n@nox.session\ndef tests(session):\n"
                "    os.environ['ACME_CONTRACT_TESTS'] = '1'\n    session.run('pytest', 'tests')\n"
            },
            True,
        ),
    ],
)
def test_variables_pytest_reads_itself_or_no_reading_resolves_require_a_human(
    tmp_path: Path, files: dict[str, str], stops: bool
) -> None:
    """helper-25's review: tox's `PYTEST_ADDOPTS = --run-contract` (no Python file names it, pytest reads
    it) and nox's `env=TEST_ENV` (a module-level dict) ended green with the contract tests skipped."""
    from agentic_codemod.errors import RequiresHuman

    test = (
        "import os\n\nimport pytest\n\n\n"
        "@pytest.mark.skipif(not os.environ.get('ACME_CONTRACT_TESTS'), reason='contract')\n"
        "def test_contract():\n    assert 0\n"
    )
    repo = write(tmp_path / "repo", {**files, "tests/test_contract.py": test})
    if stops:
        with pytest.raises(RequiresHuman, match="for its tests"):
            detect_test_command(repo)
    else:
        assert detect_test_command(repo) is not None


def test_a_nox_run_spreading_arguments_is_read_or_requires_a_human(tmp_path: Path) -> None:
    """helper-25's review: `session.run("pytest", *ARGS)` was read as a bare `pytest` (its words
    dropped). A module-level list of strings is spread; `*session.posargs` is empty as CI runs nox; any
    other spread value requires a human."""
    from agentic_codemod.errors import RequiresHuman

    session = "import nox\n{top}\n\n@nox.session\ndef tests(session):\n    session.run('pytest', {spread})\n"
    files = {"tests/unit/test_u.py": PYTEST_FUNCTIONS}
    spread = write(
        tmp_path / "a", {"noxfile.py": session.format(top="ARGS = ['tests/unit']", spread="*ARGS"), **files}
    )
    assert detect_test_command(spread).argv == [*PYTEST, "tests/unit", *NEVER_STOP]  # type: ignore[union-attr]
    posargs = write(
        tmp_path / "b", {"noxfile.py": session.format(top="", spread="*session.posargs"), **files}
    )
    assert detect_test_command(posargs) is not None
    computed = write(tmp_path / "c", {"noxfile.py": session.format(top="", spread="*make_args()"), **files})
    with pytest.raises(RequiresHuman, match="arguments spread from a value the tool cannot read"):
        detect_test_command(computed)


@pytest.mark.parametrize(
    "files",
    [
        # commands only under factor conditions: no env read as the tests' (before: the pytest
        # configuration ran tests/ alone, integration/ in neither phase)
        {
            "tox.ini": "[tox]\nenvlist = py311-{unit,integration}\n[testenv]\ncommands =\n"
            "    unit: pytest tests/unit\n    integration: pytest tests/contract\n"
        },
        # an env of the envlist without a section of its own, its command a factor line of [testenv]
        {
            "tox.ini": "[tox]\nenvlist = py311, contract\n[testenv]\ncommands =\n"
            "    !contract: pytest tests/unit\n    contract: pytest tests/contract\n"
        },
        # tox.toml's envs (before: never read for commands)
        {
            "tox.toml": 'env_list = ["py311", "contract"]\n'
            '[env_run_base]\ncommands = [["pytest", "tests/unit"]]\n'
            '[env.contract]\ncommands = [["pytest", { replace = "posargs", default = ["tests/contract"] }]]\n'
        },
    ],
)
def test_tests_a_tox_env_runs_under_a_factor_or_in_tox_toml_are_not_left_unrun(
    tmp_path: Path, files: dict[str, str]
) -> None:
    """helper-25's review: each of these ended green with tests/contract run in neither phase."""
    from agentic_codemod.errors import RequiresHuman

    layout = {f"tests/{d}/test_{d}.py": PYTEST_FUNCTIONS for d in ("unit", "contract")}
    repo = write(tmp_path, {**files, **layout, "pytest.ini": "[pytest]\ntestpaths = tests/unit\n"})
    with pytest.raises(RequiresHuman, match="tests/contract"):
        detect_test_command(repo)
