"""Where the test requirements come from: one source, the narrowest declared, lint-only packages left out."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python.install_plan import InstallPlan, plan_install
from agentic_codemod.config import Settings, VerificationSettings
from agentic_codemod.errors import InputError

BUILD = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
PROJECT = BUILD + '[project]\nname = "app"\nversion = "1"\ndependencies = ["acme-sdk==1.4.0"]\n'


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def test_tox_testenv_deps_and_extras_win_and_linters_are_left_out(tmp_path: Path) -> None:
    tox = (
        "[tox]\nenvlist = py311, lint\n\n[testenv]\nextras = testing\n"
        "deps =\n    -r{toxinidir}/requirements/test.txt\n    hypothesis>=6\n    pytest-mypy\n"
        "    py38: old-thing\ncommands =\n    coverage run -m pytest {posargs:tests}\n\n"
        "[testenv:lint]\ndeps = ruff\ncommands = ruff check .\n"
    )
    pyproject = PROJECT + '[project.optional-dependencies]\ntesting = ["pytest-checkdocs", "pytest-cov"]\n'
    write(
        tmp_path,
        {
            "tox.ini": tox,
            "pyproject.toml": pyproject,
            "requirements/test.txt": "pytest\n",
            "requirements/tests-min.txt": "acme-sdk==1.0\n",
            "test-requirements.txt": "never-this\n",
            "tests/test_app.py": "",
        },
    )
    plan = plan_install(tmp_path, Settings())
    assert plan == InstallPlan(
        requirement_files=["requirements/test.txt"],
        project=".",
        requirements=["hypothesis>=6", "pytest-cov"],
        test_source="tox.ini [testenv]",
        left_out=["pytest-mypy", "pytest-checkdocs"],
    )


def test_tox_factor_lines_are_taken_where_they_hold_for_the_env_the_tests_run_in(tmp_path: Path) -> None:
    """Deprecated 1.2.14's tox.ini (corpus): `py{37,...,312,py3}: PyTest-Cov` beside `commands = pytest
    --cov ...`. Left out, the command failed (pytest exit 4, `--cov` unknown) and the run ended 3; read
    for py311 (`tox -e py311`) as tox does, pytest-cov is installed. Lines for other envs stay out, and
    so do the commands of a factor that does not hold."""
    here = f"py{sys.version_info.major}{sys.version_info.minor}"
    tox = (
        "[tox]\nenvlist = py{37,38}-wrapt{1.10,1.14}, " + here + "-wrapt1.14\n\n[base]\ndeps =\n"
        f"    {here}: hypothesis\n\n[testenv]\n"
        "deps =\n    py{37,38,39,310,311,312,313,314,py3}: PyTest-Cov\n    wrapt1.14: wrapt ~= 1.14.0\n"
        "    !cov: coverage\n    py27: never-this\n    {[base]deps}\n"
        "commands =\n    py27: python setup.py test\n"
        f"    {here},py314: pytest --cov-report term-missing --cov=app tests/\n"
    )
    write(tmp_path, {"tox.ini": tox, "pyproject.toml": PROJECT, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source == f"tox.ini [testenv] as env {here}"
    assert plan.requirements == ["PyTest-Cov", "coverage", "hypothesis", "pytest"]  # pytest: none declared
    from agentic_codemod.adapters.python.ci_config import test_env

    found = test_env(tmp_path)
    assert found is not None
    assert found.command == ["pytest", "--cov-report", "term-missing", "--cov=app", "tests/"]


@pytest.mark.parametrize(
    "attack", ["conditions", "substitutions", "skipped-lines", "envlist", "spaces", "digits"]
)
def test_a_tox_ini_past_what_the_tool_reads_requires_a_human_naming_it(tmp_path: Path, attack: str) -> None:
    """helper-8's review: 40 conditions of 1,024 distinct groups each, and 200 envs that inherit them,
    6.7 KB, took 35 s per reading of the test env, read at least three times a run; `{[a]x}` lines that
    each name `{[b]x}`, and so on, multiply. Now a reading has one budget
    (config.TOX_FACTOR_MAX_CHECKS, TOX_MAX_LINES) and past it the run needs a human, the file named:
    a reading cut short could take another env's lines."""
    from agentic_codemod.adapters.python.ci_config import test_env
    from agentic_codemod.errors import RequiresHuman

    if attack == "conditions":
        condition = "-".join(f"{{a{i},b{i}}}" for i in range(10))
        lines = "".join(f"    {condition}: pytest tests/t{i}.py\n" for i in range(40))
        tox = f"[testenv]\ncommands =\n{lines}\n" + "".join(f"[testenv:e{i}]\n" for i in range(200))
        limit = "TOX_FACTOR_MAX_CHECKS"
    elif attack == "substitutions":
        levels = "".join(
            f"[s{level}]\nx =\n" + f"    {{[s{level + 1}]x}}\n" * 30 for level in range(4)
        )  # 30**4 lines of pytest, memoized or not
        tox = "[testenv]\ncommands =\n    {[s0]x}\n" + levels + "[s4]\nx =\n    pytest\n"
        limit = "TOX_MAX_LINES"
    elif attack == "skipped-lines":  # lines read and not taken, for each of 1,000 envs (40 s)
        envs = "".join(f"[testenv:e{i}]\n" for i in range(1_000))
        tox = "[testenv]\ncommands =\n" + " a: x\n" * 10_000 + envs
        limit = "TOX_MAX_LINES"
    elif attack == "envlist":  # 15,000 lines of 1,000 env names each (about a minute, helper-10)
        tox = "[tox]\nenvlist =\n" + "    a{1-1000}\n" * 15_000 + "[testenv]\ncommands = pytest\n"
        limit = "TOX_FACTOR_MAX_CHECKS"
    else:  # a regex that backtracked over 100,000 spaces (minutes); a range past int()'s digits (a crash)
        condition = "a" + " " * 100_000 + "b" if attack == "spaces" else "py3{" + "1" * 5_000 + "-2}"
        tox = f"[tox]\nenvlist = {condition}\n[testenv]\ndeps =\n    {condition}: acme-sdk<2\n"
        write(
            tmp_path,
            {"tox.ini": tox + "commands = pytest\n", "pyproject.toml": PROJECT, "tests/test_a.py": ""},
        )
        found = test_env(tmp_path)
        assert found is not None
        # a space inside a factor: no condition, tox keeps the whole line; the digits: one no env has
        kept = [f"{condition}: acme-sdk<2"] if attack == "spaces" else []
        assert found.requirement_lines == kept
        return
    write(tmp_path, {"tox.ini": tox, "pyproject.toml": PROJECT, "tests/test_app.py": ""})
    with pytest.raises(RequiresHuman, match=f"tox.ini: .*config.{limit}"):
        test_env(tmp_path)


def test_an_env_the_envlist_does_not_name_installs_only_what_every_such_env_would(tmp_path: Path) -> None:
    """`envlist = py311-sdk{1,2}`: [testenv] is read as py311, and a line is taken only where it holds
    for py311-sdk1 and py311-sdk2 too. `!sdk2: acme-sdk<2` (the sdk1 env's pin) was installed while the
    bump kept it as a constraint, so pip got both. A command continued with `\\` is one command."""
    here = f"py{sys.version_info.major}{sys.version_info.minor}"
    tox = (
        f"[tox]\nenvlist = {here}-sdk{{1,2}}\n[testenv]\ndeps =\n    !sdk2: acme-sdk<2\n    !cov: coverage\n"
        "commands =\n    pytest \\\n        tests/unit\n"
    )
    write(tmp_path, {"tox.ini": tox, "pyproject.toml": PROJECT, "tests/unit/test_app.py": ""})
    from agentic_codemod.adapters.python.ci_config import test_env

    found = test_env(tmp_path)
    assert found is not None
    assert (found.requirement_lines, found.command) == (["coverage"], ["pytest", "tests/unit"])


def test_nox_session_is_read_with_ast_never_run(tmp_path: Path) -> None:
    noxfile = (
        "import nox\nraise SystemExit('a noxfile must never be executed')\n\n"
        "@nox.session(python=['3.11'])\ndef lint(session):\n    session.install('flake8')\n"
        "    session.run('flake8')\n\n"
        "@nox.session\ndef tests(session):\n"
        "    session.install('-r', 'requirements-test.txt', '-e', '.[test]')\n"
        "    session.install('--upgrade', 'freezegun', *session.posargs)\n"
        "    session.run('pytest', '-x', *session.posargs)\n"
    )
    pyproject = PROJECT + '[project.optional-dependencies]\ntest = ["mock"]\n'
    write(
        tmp_path,
        {
            "noxfile.py": noxfile,
            "pyproject.toml": pyproject,
            "requirements-test.txt": "pytest\n",
            "tests/test_app.py": "",
        },
    )
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source == "noxfile.py session tests"
    assert (plan.requirement_files, plan.project, plan.requirements) == (
        ["requirements-test.txt"],
        ".[test]",
        ["freezegun"],
    )


def test_pep735_test_group_with_included_group(tmp_path: Path) -> None:
    pyproject = PROJECT + (
        '[dependency-groups]\nbase = ["pytest>=8"]\ntest = [{include-group = "base"}, "respx", "mypy"]\n'
        'dev = ["ruff"]\n[project.optional-dependencies]\ntest = ["never-this"]\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".",
        requirements=["pytest>=8", "respx"],
        test_source="[dependency-groups] test",
        left_out=["mypy"],
    )


def test_testing_extra_drops_linters_and_expands_a_self_reference(tmp_path: Path) -> None:
    pyproject = PROJECT + (
        "[project.optional-dependencies]\n"
        'testing = ["pytest>=6", "pytest-ruff", "app[enabler]"]\n'
        'enabler = ["pytest-enabler", "pytest-black"]\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.project, plan.requirements, plan.left_out) == (
        ".",
        ["pytest>=6", "pytest-enabler"],
        ["pytest-ruff", "pytest-black"],
    )


def test_an_extra_whose_contents_cannot_be_read_is_installed_as_declared(tmp_path: Path) -> None:
    pyproject = BUILD + '[tool.poetry]\nname = "app"\n[tool.poetry.extras]\ntests = ["pytest"]\n'
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.project, plan.test_source) == (".[tests]", "extra [tests]")


@pytest.mark.parametrize(
    ("files", "chosen"),
    [
        ({"test-requirements.txt": "a\n", "requirements/test.txt": "b\n"}, "test-requirements.txt"),
        ({"requirements/tests-min.txt": "a\n", "requirements/tests.txt": "b\n"}, "requirements/tests.txt"),
        (
            {"requirements/tests-min.txt": "a\n", "requirements-test-unit.txt": "b\n"},
            "requirements-test-unit.txt",
        ),
        ({"requirements-dev.txt": "pytest\n", "requirements-docs.txt": "sphinx\n"}, "requirements-dev.txt"),
    ],
    ids=["test-requirements", "not-the-minimum-pins", "glob", "dev-last-resort"],
)
def test_one_test_requirements_file_never_all(tmp_path: Path, files: dict[str, str], chosen: str) -> None:
    write(tmp_path, {"requirements.txt": "acme-sdk==1.4.0\n", "tests/test_a.py": "", **files})
    plan = plan_install(tmp_path, Settings())
    assert plan.requirement_files == ["requirements.txt", chosen]
    assert plan.test_source == chosen


def test_the_override_replaces_detection_and_keeps_what_it_names(tmp_path: Path) -> None:
    pyproject = PROJECT + '[project.optional-dependencies]\ntest = ["never-this"]\nextra-a = ["x"]\n'
    write(tmp_path, {"pyproject.toml": pyproject, "ci/reqs.txt": "pytest\n", "tests/test_app.py": ""})
    override = VerificationSettings(requirements=["-r ci/reqs.txt", "flake8"], extras=["extra-a"])
    plan = plan_install(tmp_path, Settings(verification=override))
    assert plan == InstallPlan(
        requirement_files=["ci/reqs.txt"],
        project=".[extra-a]",
        requirements=["flake8"],
        test_source="verification (task or config)",
    )


@pytest.mark.parametrize(
    "deps",
    ["-r{toxinidir}/../outside.txt", "--index-url https://evil.example/simple", "pkg @ file:///etc/x"],
)
def test_tox_deps_leading_out_are_refused_before_pip(tmp_path: Path, deps: str) -> None:
    write(
        tmp_path,
        {"tox.ini": f"[testenv]\ndeps =\n    {deps}\ncommands = pytest\n", "tests/test_a.py": ""},
    )
    (tmp_path.parent / "outside.txt").write_text("secret-package\n")
    with pytest.raises(InputError, match="refused"):
        plan_install(tmp_path, Settings())


def test_nox_install_leading_out_is_refused_before_pip(tmp_path: Path) -> None:
    noxfile = (
        "import nox\n@nox.session\ndef tests(s):\n    s.install('-r', '../x.txt')\n    s.run('pytest')\n"
    )
    write(tmp_path, {"noxfile.py": noxfile, "tests/test_a.py": ""})
    with pytest.raises(InputError, match=r"noxfile.py session tests.*resolves outside"):
        plan_install(tmp_path, Settings())


def test_stestr_is_installed_for_a_stestr_suite_unless_declared(tmp_path: Path) -> None:
    write(tmp_path, {".stestr.conf": "[DEFAULT]\ntest_path=./app/tests\n", "app/tests/test_a.py": ""})
    assert plan_install(tmp_path, Settings()).requirements == ["stestr"]
    write(tmp_path, {"test-requirements.txt": "stestr>=3\n"})
    assert plan_install(tmp_path, Settings()).requirements == []


POETRY = (
    '[build-system]\nrequires = ["poetry-core"]\nbuild-backend = "poetry.core.masonry.api"\n'
    '[tool.poetry]\nname = "app"\nversion = "1"\n[tool.poetry.dependencies]\npython = "^3.7"\n'
    'acme-sdk = "^1.4"\n'
)


def test_poetry_dev_group_is_translated_to_pep508_for_pip(tmp_path: Path) -> None:
    pyproject = POETRY + (
        "[tool.poetry.group.dev.dependencies]\n"
        'mypy = [{ version = "^1.0", python = "<3.8" }, { version = "^1.5", python = ">=3.8" }]\n'
        'pytest = "^7.1.2"\npytest-mock = { version = "~3.8", extras = ["x"] }\n'
        'towncrier = ">=22.12.0"\nlocal-helper = { path = "helper" }\n'
        '[tool.poetry.group.doc.dependencies]\nfuro = "*"\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".",
        requirements=["pytest>=7.1.2,<8", "pytest-mock[x]>=3.8,<3.9", "towncrier>=22.12.0"],
        test_source="[tool.poetry.group.dev.dependencies]",
        left_out=[
            'mypy>=1.0,<2; python_full_version < "3.8"',
            'mypy>=1.5,<2; python_full_version >= "3.8"',
            "local-helper = {'path': 'helper'}",
        ],
    )


def test_poetry_legacy_dev_dependencies_keep_their_python_markers(tmp_path: Path) -> None:
    pyproject = POETRY + (
        "[tool.poetry.dev-dependencies]\n"
        'pytest = [{ version = "^7.2", python = "^3.7" }, { version = "^3.0", python = ">=3.5,<3.7" }]\n'
        'black = { version = "22.1.0", python = "^3.7" }\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source == "[tool.poetry.dev-dependencies]"
    assert plan.requirements == [
        'pytest>=7.2,<8; python_full_version >= "3.7" and python_full_version < "4"',
        'pytest>=3.0,<4; python_full_version >= "3.5" and python_full_version < "3.7"',
    ]
    assert plan.left_out == ['black==22.1.0; python_full_version >= "3.7" and python_full_version < "4"']


def test_a_poetry_test_group_wins_over_its_dev_group(tmp_path: Path) -> None:
    pyproject = POETRY + (
        '[tool.poetry.group.dev.dependencies]\nnever-this = "*"\n'
        '[tool.poetry.group.test.dependencies]\npytest = "^8"\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirements, plan.test_source) == (
        ["pytest>=8,<9"],
        "[tool.poetry.group.test.dependencies]",
    )


def test_tox_commands_pre_pdm_sync_names_every_extra_and_the_test_group(tmp_path: Path) -> None:
    tox = (
        "[testenv]\nallowlist_externals = pdm\ncommands_pre =\n    pdm sync -G :all,test\n"
        "commands =\n    coverage run -m pytest tests {posargs:-n auto}\n"
    )
    pyproject = PROJECT + (
        '[project.optional-dependencies]\nmsgspec = ["msgspec>=0.19"]\nyaml = ["PyYAML>=6"]\n'
        '[dependency-groups]\ntest = ["pytest>=8", "pytest-xdist"]\nlint = ["ruff"]\n'
    )
    write(tmp_path, {"tox.ini": tox, "pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".",
        requirements=["pytest>=8", "pytest-xdist", "msgspec>=0.19", "PyYAML>=6"],
        test_source="tox.ini [testenv]",
    )


def test_install_commands_name_groups_extras_and_requirements(tmp_path: Path) -> None:
    tox = (
        "[testenv]\ncommands_pre =\n    uv sync --group test --extra mocking --group nowhere\n"
        "commands =\n    python -m pip install -U -r requirements-ci.txt freezegun\n    pytest\n"
    )
    pyproject = BUILD + (
        '[project]\nname = "app"\nversion = "1"\ndynamic = ["optional-dependencies"]\n'
        '[dependency-groups]\ntest = ["pytest>=8"]\n'
    )
    setup_cfg = "[options.extras_require]\nmocking = mock\n"
    files = {
        "tox.ini": tox,
        "pyproject.toml": pyproject,
        "setup.cfg": setup_cfg,
        "requirements-ci.txt": "x\n",
    }
    write(tmp_path, {**files, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirement_files, plan.requirements) == (
        ["requirements-ci.txt"],
        ["freezegun", "pytest>=8", "mock"],
    )
    assert plan.left_out == ["group nowhere (declared nowhere)"]


def test_tox_constraints_applied_outside_deps_are_constraints_files_of_the_plan(tmp_path: Path) -> None:
    # tox applies these to every install of the env (deps and the package), so the tests' install
    # reads them as deps' `-c` lines: PIP_CONSTRAINT / UV_CONSTRAINT in setenv (whitespace-separated
    # files), install_command's own arguments ({opts} {packages} are what deps says), tox's
    # `constraints`; a value with a substitution left out (as deps' lines are), other variables ignored
    tox = (
        "[testenv]\nsetenv =\n    PIP_CONSTRAINT = {toxinidir}/a.txt  b.txt\n    UV_CONSTRAINT=c.txt\n"
        "    OTHER_CONSTRAINT = never.txt\n    PIP_INDEX_URL = https://example.invalid/simple\n"
        "constraints = d.txt\n"
        "install_command = {envpython} -m pip install --constraint={toxinidir}/e.txt -c f.txt "
        "{opts} {packages}\n"
        "deps = pytest\ncommands = pytest\n\n[testenv:other]\nsetenv = PIP_CONSTRAINT = {env:X:g.txt}\n"
        "commands = pytest\n"
    )
    files = {f"{name}.txt": "x\n" for name in "abcdefg"}
    write(tmp_path, {"tox.ini": tox, **files, "pyproject.toml": PROJECT, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirements, plan.test_source) == (["pytest"], "tox.ini [testenv]")
    assert sorted(plan.constraint_files) == ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt"]


@pytest.mark.parametrize(
    ("setenv", "expected"),
    [
        # ansible-lint's shape: the general assignment, replaced for some envs (a later line wins in tox)
        ("PIP_CONSTRAINT = {toxinidir}/a.txt\n    py38: PIP_CONSTRAINT = /dev/null", ["a.txt"]),
        ("PIP_CONSTRAINT = {toxinidir}/a.txt\n    py3: PIP_CONSTRAINT = /dev/null", []),
        ("PIP_CONSTRAINT = a.txt\n    PIP_CONSTRAINT =", []),
        ("PIP_CONSTRAINT = a.txt\n    PIP_CONSTRAINT = {envtmpdir}/c.txt", []),  # not read, not a.txt
        ("PIP_CONSTRAINT = a.txt\n    PIP_CONSTRAINT = {env:X:https://u.invalid/c.txt}", []),
        ("PIP_CONSTRAINT = a.txt\n    PIP_CONSTRAINT = {env:X:b.txt}", ["b.txt"]),  # X unset: b.txt
        ("UV_CONSTRAINT = a.txt\n    PIP_CONSTRAINT = b.txt", ["a.txt", "b.txt"]),
    ],
    ids=[
        "override-elsewhere",
        "override-here",
        "emptied",
        "unreadable-last",
        "url-default",
        "local-default",
        "both-variables",
    ],
)
@pytest.mark.parametrize("key", ["setenv", "set_env"])
def test_the_last_assignment_of_a_constraint_variable_the_env_takes_is_the_one_read(
    tmp_path: Path, key: str, setenv: str, expected: list[str]
) -> None:
    tox = f"[tox]\nenvlist = py3\n[testenv]\n{key} =\n    {setenv}\ndeps = pytest\ncommands = pytest\n"
    write(tmp_path, {"tox.ini": tox, "a.txt": "", "b.txt": "", "pyproject.toml": PROJECT})
    assert sorted(plan_install(tmp_path, Settings()).constraint_files) == expected


def test_the_env_testenv_is_read_for_is_its_own_section_where_it_has_one(tmp_path: Path) -> None:
    # helper-4's review: `envlist = py3` with [testenv:py3] setting PIP_CONSTRAINT: `tox -e py3` reads
    # that section (deps and commands from [testenv]); the tool read [testenv] alone
    tox = (
        "[tox]\nenvlist = py3\n[testenv]\ndeps = pytest\ncommands = pytest\n"
        "[testenv:py3]\nsetenv = PIP_CONSTRAINT = a.txt\n"
    )
    write(tmp_path, {"tox.ini": tox, "a.txt": "", "pyproject.toml": PROJECT})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirements, plan.constraint_files) == (["pytest"], ["a.txt"])
    assert plan.test_source.startswith("tox.ini [testenv:py3]")


def test_what_the_install_reads_through_substitutions_the_tool_cannot_resolve_is_named(
    tmp_path: Path,
) -> None:
    # OpenStack's upper constraints come from the network unless the CI job names a file: the tests here
    # install without them, and the run says so (run.json installs.baseline.unread, the merge request)
    tox = (
        "[testenv]\nsetenv =\n    PIP_CONSTRAINT = {env:CONSTRAINTS}\n    OTHER = {env:X}\n"
        "install_command = pip install -c {envtmpdir}/c.txt {opts} {packages}\n"
        "deps =\n    -c{env:TOX_CONSTRAINTS_FILE:https://releases.invalid/upper/master}\n"
        "    -r{toxinidir}/requirements.txt\ncommands = pytest {env:PYTEST_ARGS:}\n"
    )
    write(tmp_path, {"tox.ini": tox, "requirements.txt": "pytest\n", "pyproject.toml": PROJECT})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirement_files, plan.constraint_files) == (["requirements.txt"], [])
    assert plan.unread == [
        "tox.ini [testenv] setenv: PIP_CONSTRAINT = {env:CONSTRAINTS}",
        "tox.ini [testenv] install_command: pip install -c {envtmpdir}/c.txt {opts} {packages}",
        "tox.ini [testenv] deps: -c{env:TOX_CONSTRAINTS_FILE:https://releases.invalid/upper/master}",
    ]


def test_a_named_env_inherits_testenv_setenv_constraints_and_its_own_replace_them(tmp_path: Path) -> None:
    tox = (
        "[testenv]\nsetenv = PIP_CONSTRAINT = a.txt\ncommands = ruff check .\n\n"
        "[testenv:unit]\ndeps = pytest\ncommands = pytest\n"
    )
    write(tmp_path, {"tox.ini": tox, "a.txt": "", "b.txt": "", "pyproject.toml": PROJECT})
    assert plan_install(tmp_path, Settings()).constraint_files == ["a.txt"]
    own = tox.replace("deps = pytest", "setenv = PIP_CONSTRAINT = b.txt\ndeps = pytest")
    write(tmp_path, {"tox.ini": own})
    assert plan_install(tmp_path, Settings()).constraint_files == ["b.txt"]


def test_nox_install_of_a_module_level_path_is_read_and_each_install_call_on_its_own(tmp_path: Path) -> None:
    # referencing 0.36.2's noxfile: `-r` names a file through a module-level dict of paths; a later
    # install() in the same session names a package. Read as one flat list of literals, `-r` took the
    # package as its file ("-r coverage[toml]") and the install failed before any test ran.
    noxfile = (
        "from pathlib import Path\nimport nox\n\nROOT = Path(__file__).parent\n"
        "REQUIREMENTS = dict(docs=ROOT / 'docs' / 'requirements.txt', tests=ROOT / 'test-requirements.txt')\n"
        "PACKAGE = ROOT / 'app'\n\n"
        "@nox.session\ndef tests(session):\n    session.install('-r', REQUIREMENTS['tests'])\n"
        "    if session.posargs:\n        session.install('coverage[toml]')\n"
        "        session.run('coverage', 'run', '-m', 'pytest', PACKAGE)\n"
        "    else:\n        session.run('pytest', *session.posargs, PACKAGE)\n"
    )
    write(
        tmp_path,
        {
            "noxfile.py": noxfile,
            "pyproject.toml": PROJECT,
            "test-requirements.txt": "pytest\npytest-subtests\n",
            "docs/requirements.txt": "sphinx\n",
            "app/tests/test_app.py": "",
        },
    )
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source == "noxfile.py session tests"
    assert (plan.requirement_files, plan.requirements) == (["test-requirements.txt"], ["coverage[toml]"])


def test_nox_install_option_whose_value_is_unknown_is_left_out_with_it(tmp_path: Path) -> None:
    noxfile = (
        "import nox\n\n@nox.session\ndef tests(session):\n"
        "    session.install('-r', requirements_of(session))\n"
        "    session.install('-c', f'constraints-{session.python}.txt', 'freezegun')\n"
        "    session.install('mock')\n    session.run('pytest')\n"
    )
    write(tmp_path, {"noxfile.py": noxfile, "pyproject.toml": PROJECT, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirement_files, plan.requirements) == ([], ["freezegun", "mock", "pytest"])


def test_a_hostile_noxfile_is_read_within_bounds(tmp_path: Path) -> None:
    """The noxfile is the repository's: a value nested 400 deep (unparsed whole, it hit the recursion
    limit and failed the run), one longer than NOX_ARG_MAX_CHARS, and names that fan out (11 levels of
    os.path.join(A, A, A, A, A): 5**10 steps read naively) are each unknown, and the session's literal
    arguments are still read."""
    fanout = "A0 = 'a'\n" + "".join(
        f"A{i} = os.path.join({', '.join([f'A{i - 1}'] * 5)})\n" for i in range(1, 12)
    )
    noxfile = (
        f"import nox, os\n{fanout}LONG = '{'x' * 5000}'\n\n@nox.session\ndef tests(session):\n"
        f"    session.install({' / '.join(['ROOT'] * 400)})\n"
        "    session.install(A11)\n    session.install(LONG)\n    session.install('mock')\n"
        "    session.run('pytest')\n"
    )
    write(tmp_path, {"noxfile.py": noxfile, "pyproject.toml": PROJECT, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source == "noxfile.py session tests"
    assert (plan.requirement_files, plan.requirements) == ([], ["mock", "pytest"])


@pytest.mark.parametrize("shape", ["deep decorator", "device", "too large"])
def test_a_noxfile_the_tool_cannot_read_within_bounds_is_no_test_environment(
    tmp_path: Path, shape: str
) -> None:
    """A decorator 400 attributes deep (ast.unparse of it raised RecursionError out of the reading), a
    noxfile that is a link to /dev/zero (read whole, it took all memory), one over CI_CONFIG_MAX_BYTES:
    the reading finds no session, and the plan falls back to what else the repository declares."""
    from agentic_codemod.config import CI_CONFIG_MAX_BYTES

    write(tmp_path, {"pyproject.toml": PROJECT, "tests/test_app.py": ""})
    session = "def tests(session):\n    session.install('mock')\n    session.run('pytest')\n"
    if shape == "deep decorator":
        (tmp_path / "noxfile.py").write_text(f"import nox\n@nox{'.b' * 400}\n{session}")
    elif shape == "device":
        (tmp_path / "noxfile.py").symlink_to("/dev/zero")
    else:
        (tmp_path / "noxfile.py").write_text(
            f"import nox\n@nox.session\n{session}#{'x' * CI_CONFIG_MAX_BYTES}\n"
        )
    plan = plan_install(tmp_path, Settings())
    assert not plan.test_source.startswith("noxfile.py") and "mock" not in plan.requirements


COMPILED_HEADER = "# This file was autogenerated by uv via the following command:\n"


def test_what_the_tests_install_asks_for_of_the_sdk_read_as_the_install_reads_it(tmp_path: Path) -> None:
    """install_plan.asked_for, the bump's last check (workflow/steps.py): the plan's own strings whose
    markers hold here, and the lines of the files it reads through -r and -c; compiled files (their tool
    refreshes them) left out."""
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    files = {
        "tox.ini": "[testenv]\ndeps =\n    -r requirements.txt\n    -c constraints.txt\n"
        "    acme-sdk>=1; python_version < '3'\n    Acme_SDK[x]<1.5\n    -e ./plugin\ncommands = pytest\n",
        "plugin/pyproject.toml": '[project]\nname = "plugin"\ndependencies = ["acme-sdk==1.4.0"]\n'
        '[project.optional-dependencies]\nvendored = ["acme-sdk @ file:./vendor/acme_sdk-1.4.0.whl"]\n',
        "requirements.txt": "-r requirements/base.txt\n-r requirements/test.txt\n",
        "requirements/base.txt": "requests\nacme-sdk==2.0.0  # bumped\n",
        "constraints.txt": "-c pinned.txt\nacme-sdk==1.2.0; python_version < '3'  # not here\n",
        "pinned.txt": "acme-sdk==1.4.0\n",
        "requirements/test.txt": f"{COMPILED_HEADER}acme-sdk==1.4.0\n",  # its tool recompiles it
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    asked = asked_for(tmp_path, Settings(), "acme-sdk")
    assert sorted(asked, key=str) == [
        ("pinned.txt line 1", "acme-sdk==1.4.0", "==1.4.0"),
        ("plugin/pyproject.toml line 3", "acme-sdk==1.4.0", "==1.4.0"),  # what `-e ./plugin` declares (not
        # its extra `vendored`, which the install does not name)
        ("requirements/base.txt line 2", "acme-sdk==2.0.0", "==2.0.0"),
        ("tox.ini [testenv]", "Acme_SDK[x]<1.5", "<1.5"),
    ]
    # a URL in a file the install reads: no version to read (None), which the bump's check takes as off
    (tmp_path / "pinned.txt").write_text("acme-sdk @ https://example.invalid/acme_sdk-1.4.0.whl\n")
    assert ("pinned.txt line 1", "acme-sdk @ https://example.invalid/acme_sdk-1.4.0.whl", None) in asked_for(
        tmp_path, Settings(), "acme-sdk"
    )


def test_what_uv_and_pdm_apply_to_every_install_is_asked_for(tmp_path: Path) -> None:
    """[tool.uv] constraint- and override-dependencies and PDM's overrides apply to every install uv or
    PDM makes of the project, and a [tool.uv.sources] entry takes the SDK from git, a path or a workspace
    member instead of the index: none of them is read by the tool's own install, so each must be in what
    the bump's last check reads (a uv override of 1.4.0 or a git source was green, exit 0)."""
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "a"\nversion = "1"\ndependencies = ["acme-sdk>=2"]\n'
        '[tool.uv]\nconstraint-dependencies = ["acme-sdk<2", "other<1"]\n'
        'override-dependencies = ["acme-sdk==1.4.0; python_version < \'3\'", "Acme_SDK==1.4.0"]\n'
        '[tool.uv.sources]\nacme-sdk = { git = "https://example.invalid/acme-sdk" }\n'
        'other = { path = "../other" }\n'
        '[tool.pdm.resolution.overrides]\nacme-sdk = ">=1,<2"\n'
    )
    asked = asked_for(tmp_path, Settings(), "acme-sdk")
    assert asked == [
        ("the tests' install", "acme-sdk>=2", ">=2"),
        ("pyproject.toml [tool.uv] constraint-dependencies", "acme-sdk<2", "<2"),
        # whatever its marker: uv locks for every platform and Python at once (helper-6's review)
        (
            "pyproject.toml [tool.uv] override-dependencies",
            "acme-sdk==1.4.0; python_version < '3'",
            "==1.4.0",
        ),
        ("pyproject.toml [tool.uv] override-dependencies", "Acme_SDK==1.4.0", "==1.4.0"),
        ("pyproject.toml [tool.pdm.resolution.overrides]", "acme-sdk = '>=1,<2'", "<2,>=1"),
        ("pyproject.toml [tool.uv.sources]", "acme-sdk = {'git': 'https://example.invalid/acme-sdk'}", None),
        # another package's path source outside the repository: what it asks for cannot be read
        (
            "pyproject.toml [tool.uv.sources] path ../other",
            "outside the repository, or through its parent: not read",
            None,
        ),
    ]
    # an index source picks where the version comes from, not which: nothing asked there
    pyproject.write_text(
        '[project]\nname = "a"\nversion = "1"\ndependencies = ["acme-sdk>=2"]\n'
        '[tool.uv.sources]\nacme-sdk = [{ index = "internal", marker = "sys_platform == \'linux\'" }]\n'
    )
    assert asked_for(tmp_path, Settings(), "acme-sdk") == [("the tests' install", "acme-sdk>=2", ">=2")]
    # any other kind of source beside it, a workspace member or a URL: no version, off target
    for source in ("{ workspace = true }", '[{ index = "internal" }, { url = "https://x.invalid/a.whl" }]'):
        pyproject.write_text(f"[tool.uv.sources]\nacme-sdk = {source}\n")
        assert [w for w, _, v in asked_for(tmp_path, Settings(), "acme-sdk") if v is None] == [
            "pyproject.toml [tool.uv.sources]"
        ]


PDM = '[build-system]\nrequires = ["pdm-backend"]\nbuild-backend = "pdm.backend"\n[project]\nname = "app"\n'


def test_a_pdm_projects_test_group_is_its_test_source(tmp_path: Path) -> None:
    """unearth's shape: the test requirements only in [tool.pdm.dev-dependencies] test (before: no test
    source, pytest alone installed, the baseline failing on `import flask`). Requirements by name are
    taken; PDM's editable and URL entries are left out, recorded, as Poetry's path entries are; lint-only
    packages as everywhere."""
    pyproject = PDM + (
        "[tool.pdm.dev-dependencies]\n"
        'test = ["pytest>=6.1", "flask>=2.1.2", "trustme>=0.9.0; python_version < \\"3.13\\"", "mypy",\n'
        '        "-e file:///${PROJECT_ROOT}/plugins/sub", "sub @ file:///${PROJECT_ROOT}/plugins/sub"]\n'
        'doc = ["furo"]\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".",
        requirements=["pytest>=6.1", "flask>=2.1.2", 'trustme>=0.9.0; python_version < "3.13"'],
        test_source="[tool.pdm.dev-dependencies] test",
        left_out=[
            "mypy",
            "-e file:///${PROJECT_ROOT}/plugins/sub",
            "sub @ file:///${PROJECT_ROOT}/plugins/sub",
        ],
    )
    # `pdm sync -G test` in the tox env that runs the tests names the same group
    write(tmp_path, {"tox.ini": "[testenv]\ncommands_pre = pdm sync -G test\ncommands = pytest\n"})
    plan = plan_install(tmp_path, Settings())
    assert plan.test_source.startswith("tox.ini") and "flask>=2.1.2" in plan.requirements


def test_uvs_legacy_dev_dependencies_are_the_dev_group_of_last_resort(tmp_path: Path) -> None:
    pyproject = PDM.replace("pdm-backend", "hatchling").replace("pdm.backend", "hatchling.build")
    pyproject += '[tool.uv]\ndev-dependencies = ["pytest>=8", "respx"]\n'
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    plan = plan_install(tmp_path, Settings())
    assert (plan.test_source, plan.requirements) == ("[tool.uv] dev-dependencies", ["pytest>=8", "respx"])
    # a test group wins, as PEP 735's does over dev
    write(tmp_path, {"pyproject.toml": pyproject + '[tool.pdm.dev-dependencies]\ntests = ["pytest"]\n'})
    assert plan_install(tmp_path, Settings()).test_source == "[tool.pdm.dev-dependencies] tests"


def test_what_the_projects_own_tables_ask_for_the_bump_cannot_edit_is_read(tmp_path: Path) -> None:
    """helper-6's review: a URL pin of the SDK in a PDM dev group, uv's dev list or a Hatch env (never
    edited: it has no version), a Hatch env override, a PDM override spelt as a bare version, and what
    an in-repository project uv installs (a path source, a workspace member) declares: each was green,
    exit 0, or (the bare version) read as no version."""
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    files = {
        "tests/test_a.py": "def test_a():\n    pass\n",
        "pyproject.toml": '[project]\nname = "a"\nversion = "1"\ndependencies = ["acme-sdk>=2", "plugin"]\n'
        '[tool.pdm.dev-dependencies]\ntest = ["acme-sdk @ git+https://example.invalid/sdk@v1.4.0"]\n'
        '[tool.pdm.resolution.overrides]\nacme-sdk = "2.0.0"\n'
        '[tool.hatch.envs.default]\ndependencies = ["acme-sdk @ {root:uri}/vendor/acme_sdk-1.4.0.whl"]\n'
        "[tool.hatch.envs.test.overrides]\nplatform.linux.dependencies = ['acme-sdk<2']\n"
        "matrix.v.extra-dependencies = [{ value = 'acme-sdk==1.4.0', if = ['1'] }]\n"
        '[tool.uv.sources]\nplugin = { path = "plugins/plugin", editable = true }\n'
        '[tool.uv.workspace]\nmembers = ["packages/*", "../outside", "**"]\n',
        "plugins/plugin/pyproject.toml": '[project]\nname = "plugin"\ndependencies = ["acme-sdk<2"]\n',
        "packages/one/pyproject.toml": '[project]\nname = "one"\ndependencies = ["acme-sdk==1.4.0"]\n',
    }
    write(tmp_path, files)
    asked = asked_for(tmp_path, Settings(), "acme-sdk")
    assert asked[1:] == [
        (
            "pyproject.toml [tool.pdm.dev-dependencies] test",
            "acme-sdk @ git+https://example.invalid/sdk@v1.4.0",
            None,
        ),
        (
            "pyproject.toml [tool.hatch.envs.default] dependencies",
            "acme-sdk @ {root:uri}/vendor/acme_sdk-1.4.0.whl",
            None,
        ),
        ("pyproject.toml [tool.hatch.envs.test.overrides] dependencies", "acme-sdk<2", "<2"),
        ("pyproject.toml [tool.hatch.envs.test.overrides] extra-dependencies", "acme-sdk==1.4.0", "==1.4.0"),
        ("pyproject.toml [tool.pdm.resolution.overrides]", "acme-sdk = '2.0.0'", "==2.0.0"),
        ("plugins/plugin/pyproject.toml [project.dependencies]", "acme-sdk<2", "<2"),
        (
            "pyproject.toml [tool.uv.workspace]",
            "workspace member pattern '../outside' (outside the repository, or through its parent: not read)",
            None,
        ),
        ("pyproject.toml [tool.uv.workspace]", "workspace member pattern '**' (`**` is not listed)", None),
        ("packages/one/pyproject.toml [project.dependencies]", "acme-sdk==1.4.0", "==1.4.0"),
    ], asked


def test_uvs_legacy_dev_list_comes_after_requirements_dev_and_a_lint_only_one_is_passed_over(
    tmp_path: Path,
) -> None:
    """helper-6's review: `[tool.uv] dev-dependencies = ["ruff", "pre-commit"]` beside requirements-dev.txt
    became the test source, empty once lint tools were left out: the tests lost their requirements
    (exit 3, where d37197b was green)."""
    pyproject = PDM.replace("pdm-backend", "hatchling").replace("pdm.backend", "hatchling.build")
    write(
        tmp_path,
        {
            "pyproject.toml": pyproject + '[tool.uv]\ndev-dependencies = ["ruff>=0.5", "pre-commit"]\n',
            "requirements-dev.txt": "pytest\nacme-plugin\n",
            "tests/test_app.py": "",
        },
    )
    assert plan_install(tmp_path, Settings()).test_source == "requirements-dev.txt"
    (tmp_path / "requirements-dev.txt").unlink()
    plan = plan_install(tmp_path, Settings())
    assert (plan.test_source, plan.requirements) == ("", ["pytest"])  # nothing but lint: no source
    write(
        tmp_path,
        {"pyproject.toml": pyproject + '[tool.pdm.dev-dependencies]\ntest = ["mypy"]\ndev = ["respx"]\n'},
    )
    assert plan_install(tmp_path, Settings()).test_source == "[tool.pdm.dev-dependencies] dev"


def test_what_hatch_toml_asks_for_the_bump_cannot_edit_is_read(tmp_path: Path) -> None:
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    hatch = '[envs.default]\ndependencies = ["acme-sdk @ {root:uri}/vendor/acme_sdk-1.4.0.whl"]\n'
    hatch += "[envs.test.overrides]\nplatform.linux.dependencies = ['acme-sdk<2']\n"
    write(
        tmp_path,
        {
            "tests/test_a.py": "",
            "pyproject.toml": '[project]\nname = "a"\nversion = "1"\n',
            "hatch.toml": hatch,
        },
    )
    assert asked_for(tmp_path, Settings(), "acme-sdk") == [
        ("hatch.toml [envs.default] dependencies", "acme-sdk @ {root:uri}/vendor/acme_sdk-1.4.0.whl", None),
        ("hatch.toml [envs.test.overrides] dependencies", "acme-sdk<2", "<2"),
    ]


def test_uv_workspace_members_are_listed_as_uv_does_without_following_a_link_or_walking_too_far(
    tmp_path: Path,
) -> None:
    """helper-7's review of the first reading (Path.glob, then `-e` of each member): `members = ["."]`
    crashed (IndexError, exit 1), `exclude` was not applied (a legacy member pinning the old version: exit
    3), a member's requirements.txt with its own index refused the run, a member's dev group or extra
    was not read (uv locks them: green, and `uv lock` unsatisfiable), `set-dependencies` of a Hatch
    override was not read, and a glob through a loop of links hung the run."""
    from agentic_codemod.adapters.python import uv_workspace
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import UV_WORKSPACE_MAX_ENTRIES, Settings

    files = {
        "tests/test_a.py": "",
        "pyproject.toml": '[project]\nname = "a"\nversion = "1"\n'
        'dependencies = ["acme-sdk>=2", "plug[sdk]"]\n[tool.uv.sources]\nplug = { path = "plug" }\n'
        '[tool.uv.workspace]\nmembers = [".", "", "packages/*"]\nexclude = ["packages/legacy"]\n'
        "[tool.hatch.envs.test.overrides]\nmatrix.python.set-dependencies = ['acme-sdk>=1.4,<2']\n",
        "plug/pyproject.toml": '[project]\nname = "plug"\n'
        '[project.optional-dependencies]\nsdk = ["acme-sdk<2"]\n',
        "packages/one/pyproject.toml": '[project]\nname = "one"\n'
        '[dependency-groups]\ndev = ["acme-sdk>=1.4,<2"]\n',
        "packages/one/requirements.txt": "--extra-index-url https://download.pytorch.org/whl/cpu\ntorch\n",
        "packages/legacy/pyproject.toml": '[project]\nname = "legacy"\ndependencies = ["acme-sdk==1.0"]\n',
    }
    write(tmp_path, files)
    (tmp_path / "packages" / "linked").symlink_to(tmp_path / "plug")
    assert asked_for(tmp_path, Settings(), "acme-sdk")[1:] == [
        ("pyproject.toml [tool.hatch.envs.test.overrides] set-dependencies", "acme-sdk>=1.4,<2", "<2,>=1.4"),
        ("plug/pyproject.toml [project.optional-dependencies.sdk]", "acme-sdk<2", "<2"),
        (
            "pyproject.toml [tool.uv.workspace]",
            "workspace member packages/linked (a link, not followed)",
            None,
        ),
        ("packages/one/pyproject.toml [dependency-groups.dev]", "acme-sdk>=1.4,<2", "<2,>=1.4"),
    ]
    # a loop of links under a deep pattern: not followed, and the listing stops at its budget
    loop = tmp_path / "d"
    loop.mkdir()
    for n in range(8):
        (loop / f"l{n}").symlink_to("..")
    assert uv_workspace.members(tmp_path, {"members": ["*/*/*/*/*/*/*/*/*/*/*/*"]}).folders == []
    for n in range(UV_WORKSPACE_MAX_ENTRIES // 1000 + 1):
        (tmp_path / "many" / f"g{n}").mkdir(parents=True)
        for m in range(1000):
            (tmp_path / "many" / f"g{n}" / f"p{m}").mkdir()
    listed = uv_workspace.members(tmp_path, {"members": ["many/*/*"]})
    assert (listed.folders, listed.unread) == (
        [],
        [f"workspace members (past {UV_WORKSPACE_MAX_ENTRIES} entries listed)"],
    )
    listed = uv_workspace.members(tmp_path, {"members": ["many/g0/*"]})
    assert listed.folders == [] and listed.unread == ["1000 workspace members (more than 200)"]


def test_what_uv_installs_but_the_tool_cannot_read_is_off_target_never_dropped(tmp_path: Path) -> None:
    """helper-8's review of uv_workspace: a member whose pyproject.toml holds only [build-system] beside a
    setup.py, a member's own git source for the SDK, a wheel path source and an over-long pattern were
    each dropped without a word (green) or raised (ENAMETOOLONG: exit 1); `*` of uv's exclude crosses `/`;
    an empty folder listed cost nothing of the budget."""
    from agentic_codemod.adapters.python import uv_workspace
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import UV_WORKSPACE_MAX_ENTRIES, Settings

    pyproject = '[project]\nname = "a"\nversion = "1"\ndependencies = ["acme-sdk>=2", "wheel-dep"]\n'
    pyproject += '[tool.uv.sources]\nwheel-dep = { path = "vendor/wheel_dep-1.0-py3-none-any.whl" }\n'
    pyproject += (
        '[tool.uv.workspace]\nmembers = ["packages/*", "' + "x" * 300 + '"]\nexclude = ["packages/old*"]\n'
    )
    files = {
        "tests/test_a.py": "",
        "pyproject.toml": pyproject,
        "vendor/wheel_dep-1.0-py3-none-any.whl": "",
        "packages/legacy/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\n',
        "packages/legacy/setup.py": "from setuptools import setup\n"
        'setup(name="legacy", install_requires=["acme-sdk<2"])\n',
        "packages/git/pyproject.toml": '[project]\nname = "git"\ndependencies = ["acme-sdk"]\n'
        '[tool.uv.sources]\nacme-sdk = { git = "https://example.invalid/sdk", tag = "v1.4.0" }\n',
        "packages/old/sub/pyproject.toml": "",
        "packages/old/pyproject.toml": '[project]\nname = "old"\ndependencies = ["acme-sdk==1.0"]\n',
    }
    write(tmp_path, files)
    asked = asked_for(tmp_path, Settings(), "acme-sdk")
    assert [(where, written) for where, _, written in asked[1:]] == [
        ("vendor/wheel_dep-1.0-py3-none-any.whl (a wheel a path source names)", None),  # not a zip
        ("pyproject.toml [tool.uv.workspace]", None),  # the over-long name: cannot be listed
        ("packages/git/pyproject.toml [project.dependencies]", ""),
        ("packages/git/pyproject.toml [tool.uv.sources]", None),
        ("packages/legacy/setup.py line 2", "<2"),
    ], asked
    assert "cannot be listed: File name too long" in asked[2][1]
    # every folder listed costs one at least: a pattern repeated over empty folders stops at the budget
    for n in range(UV_WORKSPACE_MAX_ENTRIES // 2 + 1):
        (tmp_path / "e" / f"d{n}").mkdir(parents=True)
    listed = uv_workspace.members(tmp_path, {"members": ["e/*/*", "e/*/x/*"]})
    assert listed.unread == [f"workspace members (past {UV_WORKSPACE_MAX_ENTRIES} entries listed)"]


def test_a_wheel_a_path_source_names_is_read_for_what_it_requires(tmp_path: Path) -> None:
    """helper-8's review: `{ path = "vendor/plug-1.0-py3-none-any.whl" }` whose METADATA says
    `Requires-Dist: acme-sdk<2` was dropped (green while `uv lock` of the bumped tree cannot resolve)."""
    import zipfile

    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    pyproject = '[project]\nname = "a"\nversion = "1"\ndependencies = ["acme-sdk>=2", "plug"]\n'
    pyproject += '[tool.uv.sources]\nplug = { path = "vendor/plug-1.0-py3-none-any.whl" }\n'
    write(tmp_path, {"tests/test_a.py": "", "pyproject.toml": pyproject})
    (tmp_path / "vendor").mkdir()
    metadata = "Metadata-Version: 2.1\nName: plug\nVersion: 1.0\nRequires-Dist: cog\n"
    metadata += (
        "Requires-Dist: acme-sdk<2; extra == 'sdk'\n\nRequires-Dist: acme-sdk==0.1 (the description)\n"
    )
    with zipfile.ZipFile(tmp_path / "vendor" / "plug-1.0-py3-none-any.whl", "w") as archive:
        archive.writestr("plug-1.0.dist-info/METADATA", metadata)
        archive.writestr("nested/x-1.dist-info/METADATA", "Requires-Dist: acme-sdk==0.2\n")
    assert asked_for(tmp_path, Settings(), "acme-sdk")[1:] == [
        ("vendor/plug-1.0-py3-none-any.whl Requires-Dist", "acme-sdk<2; extra == 'sdk'", "<2")
    ]


def test_what_a_local_editable_of_a_requirements_file_declares_is_asked_for(tmp_path: Path) -> None:
    """`-e ./libs/helpers` in a requirements file the tests' install reads (a path from the root, as pip
    takes it): before, only a tox env's or nox session's editables were read."""
    from agentic_codemod.adapters.python.install_plan import asked_for
    from agentic_codemod.config import Settings

    files = {
        "requirements.txt": "acme-sdk==2.0.0\n-e ./libs/helpers\n-r requirements/dev.txt\n",
        "requirements/dev.txt": "-e ./libs/tools[test]\n-e git+https://example.invalid/x.git#egg=x\n",
        "libs/helpers/pyproject.toml": '[project]\nname = "helpers"\ndependencies = ["acme-sdk==1.4.0"]\n',
        "libs/tools/pyproject.toml": '[project]\nname = "tools"\n'
        '[project.optional-dependencies]\ntest = ["acme-sdk<2"]\n',
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    asked = asked_for(tmp_path, Settings(), "acme-sdk")
    assert ("libs/helpers/pyproject.toml line 3", "acme-sdk==1.4.0", "==1.4.0") in asked
    assert ("libs/tools/pyproject.toml line 4", "acme-sdk<2", "<2") in asked  # the extra it names
