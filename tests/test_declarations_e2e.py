"""Where the SDK is declared, end to end through the CLI: setup.py install_requires (literal, through a
module-level name, computed), a test-minimum pin file that must stay, an open range that stays open."""

from __future__ import annotations

import importlib.metadata
import json
import zipfile
from pathlib import Path

import pytest
from fixtures_support import stable_repo_files

pytestmark = pytest.mark.slow

TASK = """\
id: acme-sdk-declarations
title: Bump acme-sdk to 2.1
sdk: {name: acme-sdk, ecosystem: python, from: ">=1,<2", to: "2.1.0"}
allowed_paths: ["src/**", "setup.py", "requirements*.txt", "requirements/**"]
acceptance_criteria:
  - "the existing test suite passes on acme-sdk 2.1.0"
"""


SETUP_PY = """\
from setuptools import setup

# Runtime dependencies: the SDK's range is open on purpose.
REQUIRES = [
    'acme-sdk>=1.2',  # the platform SDK
]

setup(
    name="acme-app",
    version="0.1",
    package_dir={"": "src"},
    packages=["acme_app"],
    install_requires=REQUIRES,
)
"""

COMPUTED_SETUP_PY = """\
from setuptools import setup

with open("deps.txt") as f:
    requires = f.read().split()

setup(
    name="acme-app",
    version="0.1",
    package_dir={"": "src"},
    packages=["acme_app"],
    install_requires=requires,
)
"""

TESTS_MIN = "# the oldest versions we support\nacme-sdk==1.4.0\n"


@pytest.fixture(scope="session")
def build_backend(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder with a setuptools wheel made from the copy beside the tests (pip builds setup.py projects
    with it; the fixture wheelhouse has none and these tests use no package index)."""
    dist = importlib.metadata.distribution("setuptools")
    folder = tmp_path_factory.mktemp("build-backend")
    wheel = folder / f"setuptools-{dist.version}-py3-none-any.whl"
    skip = ("INSTALLER", "REQUESTED", "direct_url.json")
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if "__pycache__" in file.parts or file.name in skip or not path.is_file():
                continue
            archive.write(path, file.as_posix())
    return str(folder)


def _task(tmp_path: Path) -> Path:
    path = tmp_path / "declarations.yml"
    path.write_text(TASK)
    return path


def _repo(make_repo, name: str, files: dict[str, str | None]) -> Path:
    """acme-app with only its stable module and test (fixtures_support.stable_repo_files), declaring the SDK
    nowhere but in `files`."""
    base = {**stable_repo_files(), "requirements.txt": None, "requirements-dev.txt": "pytest\n"}
    return make_repo(name, {**base, **files})


def test_setup_py_runtime_declaration_is_bumped_in_place_and_the_min_pin_stays(
    make_repo, run_codemod, tmp_path: Path, build_backend: str
):
    repo = _repo(make_repo, "setup-py", {"setup.py": SETUP_PY, "requirements/tests-min.txt": TESTS_MIN})
    result = run_codemod(repo, _task(tmp_path), "--find-links", build_backend)

    m = result.manifest
    profile = result.json("profile.json")
    roles = {(d["file"], d["line"]): (d["role"], d["specifier"]) for d in profile["sdk_declarations"]}
    assert roles == {
        ("requirements/tests-min.txt", 2): ("constraint", "==1.4.0"),
        ("setup.py", 5): ("runtime", ">=1.2"),
    }
    assert result.code == 0, m["reason"]
    assert m["status"] == "succeeded" and m["candidate"]["files"] == ["setup.py"]
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert all(v["passed"] and v["tests"]["passed"] == 1 for v in m["verifications"])
    patch = result.artifact("changes.patch").read_text()
    # byte for byte: only the specifier inside the string literal changed, and the range stays open
    assert "-    'acme-sdk>=1.2',  # the platform SDK\n+    'acme-sdk>=2.1.0',  # the platform SDK\n" in patch
    assert "tests-min" not in patch and "<3" not in patch
    # kept on purpose, and said so: a reviewer sees the pin the candidate leaves on the old version
    mr = result.artifact("merge_request.md").read_text()
    kept = "- left as it was: `requirements/tests-min.txt` line 2 `acme-sdk==1.4.0`, which excludes 2.1.0"
    assert kept in mr
    assert "name `requirements/tests-min.txt` in the task's sdk.also_bump" in mr


def test_computed_install_requires_requires_a_human_naming_the_line(make_repo, run_codemod, tmp_path: Path):
    repo = _repo(make_repo, "computed", {"setup.py": COMPUTED_SETUP_PY, "deps.txt": "acme-sdk>=1.2\n"})
    result = run_codemod(repo, _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "setup.py line 11: install_requires is computed (requires" in m["reason"]
    assert not m["verifications"] and result.artifact("changes.patch").read_bytes() == b""


def test_imported_but_undeclared_sdk_requires_a_human_not_nothing_to_do(
    make_repo, run_codemod, tmp_path: Path
):
    repo = _repo(make_repo, "undeclared", {})
    result = run_codemod(repo, _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "src/acme_app/ping.py line 1 imports acme-sdk" in m["reason"]


COMPILED_DOCS = """\
# This file was autogenerated by uv via the following command:
#    uv pip compile requirements/docs.in -o requirements/docs.txt
acme-sdk==1.4.0
    # via -r requirements/docs.in
"""


def test_a_compiled_requirements_file_left_on_the_old_pin_requires_a_human(
    make_repo, run_codemod, tmp_path: Path, build_backend: str
):
    """The bump edits setup.py; a uv pip compile output still pinning 1.4.0 would make the project's own
    install of that file fail to resolve against the new floor: green tests, but a human recompiles it
    (its header runs from the repository root, which the tool's recompile, run in the file's folder, does
    not: the item names the command)."""
    files = {"setup.py": SETUP_PY, "requirements/docs.txt": COMPILED_DOCS}
    result = run_codemod(_repo(make_repo, "compiled", files), _task(tmp_path), "--find-links", build_backend)

    m = result.manifest
    roles = {d["file"]: d["role"] for d in result.json("profile.json")["sdk_declarations"]}
    assert roles == {"requirements/docs.txt": "lock", "setup.py": "runtime"}
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "lockfile not refreshed: requirements/docs.txt: its header's 'requirements/docs.in'" in m["reason"]
    assert "recompile it by hand: `uv pip compile requirements/docs.in" in m["reason"], m["reason"]
    assert [v["passed"] for v in m["verifications"]] == [True, True]
    assert m["candidate"]["files"] == ["setup.py"]


TOX_BASE_DEPS = """\
[tox]
envlist = py311

[base]
deps =
    acme-sdk==1.4.0
    pytest

[testenv]
deps =
    -r requirements.txt
    {[base]deps}
commands = pytest {posargs}
"""


def test_a_tox_pin_the_tests_env_takes_from_another_section_is_bumped_with_the_rest(
    make_repo, run_codemod, tmp_path: Path
):
    """`[testenv] deps = {[base]deps}`: the tests' install took [base]'s `acme-sdk==1.4.0`, the bump left
    it there, and the run went green on the new version (exit 0) with a tox.ini that asks for 1.4.0 and,
    through requirements.txt, 2.1.0: the project's own CI could no longer install its tests."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n", "tox.ini": TOX_BASE_DEPS}
    task = tmp_path / "tox-task.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini"]'))
    result = run_codemod(_repo(make_repo, "tox-base", files), task)

    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    assert m["candidate"]["files"] == ["requirements.txt", "tox.ini"]
    patch = result.artifact("changes.patch").read_text()
    assert "-    acme-sdk==1.4.0\n+    acme-sdk==2.1.0\n" in patch and "+acme-sdk==2.1.0\n" in patch
    assert [v["passed"] for v in m["verifications"]] == [True, True]


NOXFILE = """\
import nox


@nox.session
def tests(session):
    session.install("-r", "requirements.txt", "acme-sdk==1.4.0", "pytest")
    session.run("pytest")
"""


def test_a_pin_the_tests_nox_session_installs_requires_a_human_before_any_edit(
    make_repo, run_codemod, tmp_path: Path
):
    """The tests' install took the session's `acme-sdk==1.4.0`; the bump edited requirements.txt alone
    and the run went green (exit 0), leaving a noxfile that installs both pins. noxfile.py is code the
    tool does not rewrite: the run now stops before anything is edited, naming the line."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n", "noxfile.py": NOXFILE}
    result = run_codemod(_repo(make_repo, "nox-pin", files), _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "noxfile.py line 6: noxfile.py session tests installs acme-sdk==1.4.0" in m["reason"]
    assert not m["verifications"] and result.artifact("changes.patch").read_bytes() == b""
    # the same session installing the SDK by range admits the target: bumped as before, and green
    relaxed = {**files, "noxfile.py": NOXFILE.replace("acme-sdk==1.4.0", "acme-sdk>=1.2")}
    result = run_codemod(_repo(make_repo, "nox-range", relaxed), _task(tmp_path))
    assert result.code == 0 and result.manifest["status"] == "succeeded", result.manifest["reason"]
    assert result.manifest["candidate"]["files"] == ["requirements.txt"]


@pytest.mark.parametrize(
    ("files", "where"),
    [
        # pip's `--no-build-isolation` read as a prefix of uv's `--no-build-isolation-package`: it took
        # the pin as its value (green, exit 0)
        (
            {"tox.ini": "[testenv]\ndeps = -r requirements.txt\ncommands_pre =\n"
             "    pip install --no-build-isolation acme-sdk==1.4.0\ncommands = pytest\n"},
            "tox.ini [testenv] installs acme-sdk==1.4.0",
        ),
        # tox's own interpreter, written as tox writes it (the line was dropped: green, exit 0)
        (
            {"tox.ini": "[testenv]\ndeps = -r requirements.txt\ncommands_pre =\n"
             "    {envpython} -m pip install acme-sdk==1.4.0\ncommands = pytest\n"},
            "tox.ini [testenv] installs acme-sdk==1.4.0",
        ),
        # an option whose value the noxfile does not fix took the pin as its value (green, exit 0)
        (
            {"noxfile.py": NOXFILE.replace(
                '"acme-sdk==1.4.0"', '"--index-url", INDEX, "acme-sdk==1.4.0"'
            ).replace("import nox\n", "import os\n\nimport nox\n\nINDEX = os.environ.get('INDEX')\n")},
            "noxfile.py session tests installs acme-sdk==1.4.0",
        ),
    ],
    ids=["no-build-isolation", "envpython", "nox-unknown-index"],
)  # fmt: skip
def test_a_pin_an_install_command_spells_another_way_requires_a_human(
    make_repo, run_codemod, tmp_path: Path, files: dict[str, str], where: str
):
    """helper-5's review of the install-command reader: each of these was green, exit 0."""
    task = tmp_path / "spelled.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini"]'))
    repo = _repo(make_repo, "spelled", {"requirements.txt": "acme-sdk==1.4.0\n", **files})
    result = run_codemod(repo, task)
    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert where in m["reason"]


def test_a_repository_whose_nox_session_already_pins_the_target_has_nothing_to_do(
    make_repo, run_codemod, tmp_path: Path
):
    """helper-2's review: the session's own pin of the target counted as a doubt (an uneditable
    declaration), so the run turned verify-only and its baseline could not install `from` beside the
    noxfile's `==2.1.0`: requires_human, exit 3, where it had been nothing_to_do."""
    files = {"requirements.txt": "acme-sdk==2.1.0\n", "noxfile.py": NOXFILE.replace("1.4.0", "2.1.0")}
    result = run_codemod(_repo(make_repo, "nox-on-target", files), _task(tmp_path))
    assert result.code == 0 and result.manifest["status"] == "nothing_to_do", result.manifest["reason"]


def test_the_bumped_tree_whose_tests_install_still_asks_for_the_old_version_requires_a_human(
    make_repo, run_codemod, tmp_path: Path
):
    """`deps = -c constraints.txt` with `acme-sdk==1.4.0` in constraints.txt (a constraints file, kept on
    purpose unless the task names it): requirements.txt was bumped and the run went green (exit 0), the
    tests here installing exactly the target, while the project's own install of its tests asked for
    both versions. The bumped tree is now read as the tests' install reads it before anything installs."""
    tox = "[testenv]\ndeps =\n    -c constraints.txt\n    -r requirements.txt\n    pytest\ncommands = pytest"
    files = {"requirements.txt": "acme-sdk==1.4.0\n", "constraints.txt": "acme-sdk==1.4.0\n", "tox.ini": tox}
    task = tmp_path / "constraints-task.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini", "constraints.txt"]'))
    result = run_codemod(_repo(make_repo, "constrained", files), task)

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "the tests' install of this repository still asks for acme-sdk off 2.1.0" in m["reason"]
    assert "constraints.txt line 1: acme-sdk==1.4.0" in m["reason"]
    assert all(v["phase"] == "baseline" for v in m["verifications"])  # never tested as the target
    # the task naming the constraints file: bumped with the rest, and green
    named = tmp_path / "constraints-named.yml"
    named.write_text(task.read_text().replace('to: "2.1.0"}', 'to: "2.1.0", also_bump: [constraints.txt]}'))
    result = run_codemod(_repo(make_repo, "constrained-named", files), named)
    assert result.code == 0 and result.manifest["status"] == "succeeded", result.manifest["reason"]
    assert result.manifest["candidate"]["files"] == ["constraints.txt", "requirements.txt"]
    assert "left as it was" not in result.artifact("merge_request.md").read_text()  # bumped, not kept


def test_a_constraints_file_tox_sets_in_pip_constraint_is_bumped_when_the_task_names_it(
    make_repo, run_codemod, tmp_path: Path
):
    """The constraints file reached through setenv's PIP_CONSTRAINT (not deps): named in also_bump, it is
    bumped with the rest and the tests' install here applies it, as tox would (green)."""
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n",
        "ci/constraints.txt": "# pinned for CI\nacme-sdk==1.4.0\n",
        "tox.ini": "[testenv]\nsetenv =\n    PIP_CONSTRAINT={toxinidir}/ci/constraints.txt\n"
        "deps =\n    -r requirements.txt\n    pytest\ncommands = pytest\n",
    }
    task = tmp_path / "setenv-named.yml"
    task.write_text(
        TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini", "ci/constraints.txt"]').replace(
            'to: "2.1.0"}', 'to: "2.1.0", also_bump: [ci/constraints.txt]}'
        )
    )
    result = run_codemod(_repo(make_repo, "setenv-named", files), task)
    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    assert m["candidate"]["files"] == ["ci/constraints.txt", "requirements.txt"]
    profile = json.loads((result.run_dir / "profile.json").read_text())
    found = {(d["file"], d["role"]) for d in profile["sdk_declarations"]}
    assert found == {("ci/constraints.txt", "constraint"), ("requirements.txt", "runtime")}
    # the tests' install here applied it, as tox's would
    assert '"-c", "ci/constraints.txt"' in (result.run_dir / "trace.jsonl").read_text()


def test_a_requirements_file_tox_applies_as_constraints_is_bumped_as_its_name_says(
    make_repo, run_codemod, tmp_path: Path, build_backend: str
):
    """ansible-lint's shape: set_env's PIP_CONSTRAINT names the project's pinned requirements (and turns
    it off for one env with /dev/null). Not named a constraints file, it is bumped with the rest, and the
    tests' install here applies it as tox would (green); nothing refuses /dev/null."""
    files = {
        "setup.py": SETUP_PY,
        ".config/requirements.txt": "acme-sdk==1.4.0\npytest\n",
        "tox.ini": "[testenv]\nset_env =\n    PIP_CONSTRAINT = {toxinidir}/.config/requirements.txt\n"
        "    py38: PIP_CONSTRAINT = /dev/null\ndeps = pytest\ncommands = pytest\n",
    }
    task = tmp_path / "set-env.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", ".config/requirements.txt"]'))
    result = run_codemod(_repo(make_repo, "set-env", files), task, "--find-links", build_backend)
    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    assert m["candidate"]["files"] == [".config/requirements.txt", "setup.py"]
    assert '"-c", ".config/requirements.txt"' in (result.run_dir / "trace.jsonl").read_text()


def test_an_install_command_with_options_of_its_own_stays_green(make_repo, run_codemod, tmp_path: Path):
    """helper-4's review: install_command's option values were read as requirements (`eager`, `:all:`,
    an index URL fetched as a direct requirement): requires_human at the baseline's install, exit 3."""
    install = (
        "install_command = python -I -m pip install --upgrade-strategy eager --progress-bar off "
        "--no-binary :all: -i https://pypi.invalid/simple --timeout 60 {opts} {packages}"
    )
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n",
        "tox.ini": f"[testenv]\n{install}\ndeps =\n    -r requirements.txt\n    pytest\ncommands = pytest\n",
    }
    task = tmp_path / "install-command.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini"]'))
    result = run_codemod(_repo(make_repo, "install-command", files), task)
    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    assert m["candidate"]["files"] == ["requirements.txt"]


def test_constraints_the_tool_cannot_read_are_named_in_the_evidence(make_repo, run_codemod, tmp_path: Path):
    """OpenStack's shape: deps take the upper constraints from the network unless the CI job names a file.
    The tool reads nothing from the network, so the tests here ran without them; green, and said so."""
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n",
        "tox.ini": "[testenv]\ndeps =\n    -c{env:TOX_CONSTRAINTS_FILE:https://releases.invalid/upper}\n"
        "    -r{toxinidir}/requirements.txt\n    pytest\ncommands = pytest\n",
    }
    task = tmp_path / "unread.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini"]'))
    result = run_codemod(_repo(make_repo, "unread", files), task)
    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    line = "tox.ini [testenv] deps: -c{env:TOX_CONSTRAINTS_FILE:https://releases.invalid/upper}"
    assert m["installs"]["baseline"]["unread"] == line and "unread" not in m["installs"]["after"]
    mr = result.artifact("merge_request.md").read_text()
    assert (
        "also reads what the tool could not, so the tests here ran without it (its CI may install other "
        in mr
    )
    assert line in mr


@pytest.mark.parametrize(
    ("files", "where"),
    [
        # verify only (nothing to edit: `acme-sdk` admits 2.1.0): "verified ... nothing to do", exit 0,
        # while the project's own install of its tests pinned 1.4.0 through its constraints file
        (
            {
                "requirements.txt": "acme-sdk\n",
                "constraints.txt": "acme-sdk==1.4.0\n",
                "tox.ini": "[testenv]\ndeps =\n    -c constraints.txt\n    -r requirements.txt\n    pytest\n"
                "commands = pytest\n",
            },
            "constraints.txt line 1: acme-sdk==1.4.0",
        ),
        # a local project the tests' install takes as `-e ./plugin`: requirements.txt bumped, green, exit 0
        (
            {
                "requirements.txt": "acme-sdk==1.4.0\n",
                "plugin/pyproject.toml": '[build-system]\nrequires = ["setuptools"]\nbuild-backend = '
                '"setuptools.build_meta"\n[project]\nname = "plugin"\nversion = "1"\n'
                'dependencies = ["acme-sdk==1.4.0"]\n',
                "tox.ini": "[testenv]\ndeps =\n    -r requirements.txt\n    -e ./plugin\n    pytest\n"
                "commands = pytest\n",
            },
            # a project below the root: read before any edit since (install_scripts.py), not after the bump
            "plugin/pyproject.toml line 7 pins acme-sdk==1.4.0 (project.dependencies), in a project below",
        ),
        # tox applies constraints outside deps: through the variable pip (or uv) reads in the env, and
        # through install_command; requirements.txt was bumped and the run went green, exit 0
        *(
            (
                {
                    "requirements.txt": "acme-sdk==1.4.0\n",
                    "ci/constraints.txt": "# pinned for CI\nacme-sdk==1.4.0\n",
                    "other.txt": "pytest\n",
                    "tox.ini": f"[testenv]\n{how}\ndeps =\n    -r requirements.txt\n    pytest\n"
                    "commands = pytest\n",
                },
                "ci/constraints.txt line 2: acme-sdk==1.4.0",
            )
            for how in (
                "setenv =\n    PIP_CONSTRAINT={toxinidir}/ci/constraints.txt",
                "setenv =\n    FOO = bar\n    UV_CONSTRAINT = {toxinidir}/other.txt ci/constraints.txt",
                # tox 4's default interpreter flags, options with values, tox 4's substitutions
                "install_command = python -I -m pip install --upgrade-strategy eager --timeout 60 "
                "-c{tox_root}{/}ci/constraints.txt {opts} {packages}",
                "install_command = pip install --constraint=ci/constraints.txt {opts} {packages}",
            )
        ),
    ],
    ids=[
        "verify-only-constraints",
        "editable-plugin",
        "setenv-pip-constraint",
        "setenv-uv-constraint",
        "install-command-c",
        "install-command-constraint",
    ],
)
def test_what_the_tests_install_asks_for_off_the_target_requires_a_human_wherever_it_is(
    make_repo, run_codemod, tmp_path: Path, build_backend: str, files: dict[str, str], where: str
):
    """helper-3's review of the bump's last check: it ran only after edits, and read neither what a local
    editable declares nor a URL's version (each was green or nothing_to_do, exit 0)."""
    task = tmp_path / "asked-task.yml"
    task.write_text(TASK.replace('"requirements/**"]', '"requirements/**", "tox.ini"]'))
    result = run_codemod(_repo(make_repo, "asked", files), task, "--find-links", build_backend)

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    early = where.startswith("plugin/")  # read with the declarations, before any edit
    assert (where if early else f"still asks for acme-sdk off 2.1.0: {where}") in m["reason"]


UV_PROJECT = (
    '[project]\nname = "acme-app"\nversion = "0.1"\nrequires-python = ">=3.11"\n'
    'dependencies = ["acme-sdk>=1.4,<2"]\n\n{tool}\n'
    '[tool.pytest.ini_options]\npythonpath = ["src"]\ntestpaths = ["tests"]\n'
)


def _pyproject_task(tmp_path: Path, also_bump: str = "") -> Path:
    task = tmp_path / f"pyproject-task{'-named' if also_bump else ''}.yml"
    text = TASK.replace('"requirements/**"]', '"requirements/**", "pyproject.toml", "hatch.toml"]')
    task.write_text(text.replace('to: "2.1.0"}', f'to: "2.1.0"{also_bump}}}'))
    return task


def test_the_dev_groups_and_envs_uv_pdm_and_hatch_install_are_bumped_with_the_project(
    make_repo, run_codemod, tmp_path: Path
):
    """A pin in [tool.uv] dev-dependencies, [tool.pdm.dev-dependencies], a Hatch env or hatch.toml was left
    as it was beside a bumped [project] range: green, exit 0, and the merged tree's own `uv sync` (pdm
    install, hatch env create) could not resolve (`acme-sdk>=2.1.0,<3` and `acme-sdk>=1.4,<2`). Now they
    are bumped too."""
    tool = (
        '[tool.uv]\ndev-dependencies = ["pytest", "acme-sdk>=1.4,<2"]\n'
        '[tool.pdm.dev-dependencies]\ntest = ["pytest", "acme-sdk~=1.4"]\n'
        '[tool.hatch.envs.default]\ndependencies = ["pytest", "acme-sdk>=1.4,<2"]\n'
    )
    hatch = '[envs.test]\ndependencies = ["pytest", "acme-sdk>=1.4,<2"]  # Hatch\'s own file\n'
    files = {"pyproject.toml": UV_PROJECT.replace("{tool}", tool), "hatch.toml": hatch}
    result = run_codemod(_repo(make_repo, "tool-tables", files), _pyproject_task(tmp_path))

    m = result.manifest
    assert result.code == 0 and m["status"] == "succeeded", m["reason"]
    assert "hatch.toml" in m["candidate"]["files"] and "pyproject.toml" in m["candidate"]["files"]
    bumped = [line for line in result.artifact("changes.patch").read_text().splitlines() if line[:2] == "+d"]
    assert bumped == [
        '+dependencies = ["pytest", "acme-sdk>=2.1.0,<3"]  # Hatch\'s own file',
        '+dependencies = ["acme-sdk>=2.1.0,<3"]',
        '+dev-dependencies = ["pytest", "acme-sdk>=2.1.0,<3"]',
        '+dependencies = ["pytest", "acme-sdk>=2.1.0,<3"]',
    ]
    assert '+test = ["pytest", "acme-sdk~=2.1"]' in result.artifact("changes.patch").read_text()


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ('[tool.uv]\noverride-dependencies = ["acme-sdk==1.4.0"]\n',
         "pyproject.toml [tool.uv] override-dependencies: acme-sdk==1.4.0"),
        ('[tool.uv]\nconstraint-dependencies = ["acme-sdk<2"]\n',
         "pyproject.toml [tool.uv] constraint-dependencies: acme-sdk<2"),
        ('[tool.pdm.resolution.overrides]\nacme-sdk = "==1.4.0"\n',
         "pyproject.toml [tool.pdm.resolution.overrides]: acme-sdk = '==1.4.0'"),
        ('[tool.uv.sources]\nacme-sdk = { git = "https://example.invalid/acme-sdk", tag = "v1.4.0" }\n',
         "pyproject.toml [tool.uv.sources]: acme-sdk = {'git': 'https://example.invalid/acme-sdk'"),
    ],
    ids=["uv-override", "uv-constraint", "pdm-override", "uv-git-source"],
)  # fmt: skip
def test_what_uv_and_pdm_apply_to_the_projects_install_off_the_target_requires_a_human(
    make_repo, run_codemod, tmp_path: Path, tool: str, where: str
):
    """uv's and PDM's constraints and overrides, and a uv source that takes the SDK from git, are applied to
    every install uv or PDM makes of the project, and the tool's own install reads none of them: each was
    green, exit 0, its tests run on the index's 2.1.0 while the project's own install would take 1.4.0 (or
    the git tag)."""
    repo = _repo(make_repo, "resolver", {"pyproject.toml": UV_PROJECT.replace("{tool}", tool)})
    result = run_codemod(repo, _pyproject_task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    early = where.startswith("plugin/")  # read with the declarations, before any edit
    assert (where if early else f"still asks for acme-sdk off 2.1.0: {where}") in m["reason"]
    assert all(v["phase"] == "baseline" for v in m["verifications"])  # never tested as the target
    if "sources" not in where:  # named in also_bump, the constraint or override is bumped: green
        result = run_codemod(repo, _pyproject_task(tmp_path, ", also_bump: [pyproject.toml]"))
        assert result.code == 0 and result.manifest["status"] == "succeeded", result.manifest["reason"]
        patch = result.artifact("changes.patch").read_text().splitlines()
        added = [line for line in patch if line.startswith("+") and "acme" in line]
        assert len(added) == 2 and not any("1.4" in line for line in added), added


def test_a_pin_in_a_tool_table_the_bump_cannot_edit_in_place_requires_a_human_naming_its_line(
    make_repo, run_codemod, tmp_path: Path
):
    """helper-6's review: an escape sequence before the version (`"acme\\u002Dsdk>=1.4,<2"`) made the bump
    raise: failed, exit 1, with the exception's words."""
    tool = '[tool.uv]\ndev-dependencies = ["pytest", "acme\\u002Dsdk>=1.4,<2"]\n'
    repo = _repo(make_repo, "escaped", {"pyproject.toml": UV_PROJECT.replace("{tool}", tool)})
    result = run_codemod(repo, _pyproject_task(tmp_path))
    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert (
        "pyproject.toml line 8 (tool.uv.dev-dependencies): an escape sequence before its version"
        in m["reason"]
    )


DOCKERFILE = "FROM python:3.12-slim\nRUN pip install --no-cache-dir gunicorn acme-sdk==1.4.0\n"
MINIMUM_JOB = "minimum:\n  script:\n    - pip install acme-sdk==1.4.0 pytest\n    - pytest\n"


@pytest.mark.parametrize(
    ("file", "text", "where"),
    [
        ("Dockerfile", DOCKERFILE, "Dockerfile line 2 installs acme-sdk==1.4.0 in a container image"),
        # helper-9's review: the version from a variable, and conda's own spelling, were passed over (green)
        (
            "docker/api/Dockerfile",
            "ARG ACME_SDK_VERSION=1.4.0\nRUN pip install \\\n    acme-sdk==${ACME_SDK_VERSION}  # pinned\n",
            "docker/api/Dockerfile line 3 installs acme-sdk==${ACME_SDK_VERSION} in a container image",
        ),
        (
            "ci/environment-py311.yml",
            "dependencies:\n  - conda-forge::acme-sdk=1.4.0=pyhd8ed1ab_0\n",
            "ci/environment-py311.yml line 2 installs conda-forge::acme-sdk=1.4.0=pyhd8ed1ab_0 in a conda",
        ),
        (
            "environment.yml",
            "dependencies:\n  - pip\n  - pip:\n      - acme-sdk>=1.4,<2\n",
            "environment.yml line 4 installs acme-sdk>=1.4,<2 in a conda environment",
        ),
        (
            ".pre-commit-config.yaml",
            "repos:\n- repo: local\n  hooks:\n  - id: mypy\n    additional_dependencies: [acme-sdk~=1.4]\n",
            ".pre-commit-config.yaml line 5 installs acme-sdk~=1.4 in a pre-commit hook",
        ),
        (
            "Makefile",
            "SDK := 1.4.0\ninstall:\n\tpip install acme-sdk==$(SDK)\n",
            "Makefile line 3 installs acme-sdk==$(SDK) in a build script",
        ),
        (
            "scripts/bootstrap.sh",
            "#!/bin/sh\nset -e\npython -m pip install acme-sdk==1.4.0\n",
            "scripts/bootstrap.sh line 3 installs acme-sdk==1.4.0 in a build script",
        ),
        (
            "services/worker/pyproject.toml",
            '[project]\nname = "worker"\nversion = "0.1"\ndependencies = ["acme-sdk==1.4.0"]\n',
            "services/worker/pyproject.toml line 4 pins acme-sdk==1.4.0 (project.dependencies), in a project "
            "below the root",
        ),
        (
            "Pipfile",
            '[packages]\nacme-sdk = "==1.4.0"\n',
            "Pipfile line 2 pins acme-sdk==1.4.0 (project.dependencies), in a Pipfile",
        ),
    ],
    ids=[
        "dockerfile",
        "arg-variable",
        "conda-build-string",
        "conda",
        "pre-commit",
        "makefile",
        "shell",
        "project-below-the-root",
        "pipfile",
    ],
)
def test_a_pin_an_image_environment_or_hook_installs_off_the_target_requires_a_human(
    make_repo, run_codemod, tmp_path: Path, file: str, text: str, where: str
):
    """The bump edited requirements.txt, the tests passed on the target and the run went green (exit 0),
    with a Dockerfile (conda environment, pre-commit hook) that still installs the old version: after a
    migration the merged repository's image would run the new code on the old SDK. The tool does not edit
    these files (Dockerfile* is in the default deny list): the run stops before any edit, naming the line.
    A pin there that admits the target changes nothing."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n", file: text}
    result = run_codemod(_repo(make_repo, "image-pin", files), _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert where in m["reason"]
    assert "have it read a dependency file" in m["reason"]  # the hint: what to do
    assert not m["verifications"] and result.artifact("changes.patch").read_bytes() == b""
    admitting = {
        **files,
        file: text.replace("1.4.0", "2.1.0").replace("1.4,<2", "2.1").replace("~=1.4", ">=2"),
    }
    result = run_codemod(_repo(make_repo, "image-admits", admitting), _task(tmp_path))
    assert result.code == 0 and result.manifest["status"] == "succeeded", result.manifest["reason"]
    assert result.manifest["candidate"]["files"] == ["requirements.txt"]


def test_a_ci_jobs_pin_is_kept_and_named_and_decides_nothing(make_repo, run_codemod, tmp_path: Path):
    """A CI job may install an old version on purpose (a minimum-versions job): the run stays green and
    the merge request names the pin; on a repository already on the target it is no doubt either."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n", ".gitlab-ci.yml": MINIMUM_JOB}
    result = run_codemod(_repo(make_repo, "ci-pin", files), _task(tmp_path))

    assert result.code == 0 and result.manifest["status"] == "succeeded", result.manifest["reason"]
    assert result.manifest["candidate"]["files"] == ["requirements.txt"]
    text = result.artifact("merge_request.md").read_text()
    assert "left as it was: `.gitlab-ci.yml` line 3 `acme-sdk==1.4.0`, which excludes 2.1.0" in text
    assert "installed by a CI job, which the tool does not edit" in text
    on_target = {
        **files,
        "requirements.txt": "acme-sdk==2.1.0\n",
        "Dockerfile": DOCKERFILE.replace("1.4.0", "2.1.0"),
    }
    result = run_codemod(_repo(make_repo, "ci-pin-on-target", on_target), _task(tmp_path))
    assert result.code == 0 and result.manifest["status"] == "nothing_to_do", result.manifest["reason"]


def test_a_pin_of_the_target_in_an_image_proves_nothing(make_repo, run_codemod, tmp_path: Path):
    """helper-9's review: with requirements.txt admitting the target without pinning it, a Dockerfile's
    `acme-sdk==2.1.0` counted as the proof that the repository is on the target: nothing_to_do, exit 0,
    no test run. The image's pin is no part of the tests' install: the run is verify only, whose baseline
    cannot install the old version beside requirements.txt's range here (requires_human, exit 3)."""
    files = {"requirements.txt": "acme-sdk>=2.1,<3\n", "Dockerfile": DOCKERFILE.replace("1.4.0", "2.1.0")}
    result = run_codemod(_repo(make_repo, "image-on-target", files), _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "cannot install the repository's dependencies with acme-sdk>=1,<2 for verification" in m["reason"]
    assert json.loads(result.artifact("plan.json").read_text())["verify_only"]


DOCS_COMPILED = """\
#
# This file is autogenerated by pip-compile with Python 3.12
# by the following command:
#
#    pip-compile docs/requirements.in
#
acme-sdk==1.4.0
    # via -r docs/requirements.in
"""


def test_a_requirements_file_below_the_root_that_no_dependency_file_reaches_is_read(
    make_repo, run_codemod, tmp_path: Path
):
    """Before, `docs/requirements.txt` (what a docs build installs) and `examples/cli/requirements.txt`
    pinning the old version were never read: requirements.txt bumped, green, exit 0, and a merged
    repository whose docs and example still install acme-sdk 1.4. Now a pin there that excludes the target
    stops the run before any edit, naming the file and line; a compiled one (pip-compile's header) is a
    lock to recompile, a human's after green tests; a minimum-pins file is kept and named."""
    files = {"requirements.txt": "acme-sdk==1.4.0\n", "docs/requirements.txt": "sphinx\nacme-sdk==1.4.0\n"}
    result = run_codemod(_repo(make_repo, "docs-pin", files), _task(tmp_path))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert (
        "docs/requirements.txt line 2 pins acme-sdk==1.4.0, in a requirements file below the root"
        in (m["reason"])
    )
    assert not m["verifications"] and result.artifact("changes.patch").read_bytes() == b""

    compiled = {"requirements.txt": "acme-sdk==1.4.0\n", "docs/requirements.txt": DOCS_COMPILED}
    result = run_codemod(_repo(make_repo, "docs-compiled", compiled), _task(tmp_path))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert m["classification"] == "green" and m["candidate"]["files"] == ["requirements.txt"]
    assert "docs/requirements.txt line 7 locks acme-sdk ==1.4.0" in m["reason"]
    assert "recompile it with its own tool so that it locks exactly 2.1.0" in m["reason"]

    kept = {"requirements.txt": "acme-sdk==1.4.0\n", "ci/oldest/requirements-min.txt": "acme-sdk==1.4.0\n"}
    result = run_codemod(_repo(make_repo, "min-pins-kept", kept), _task(tmp_path))
    assert (result.code, result.manifest["status"]) == (0, "succeeded"), result.manifest["reason"]
    text = result.artifact("merge_request.md").read_text()
    assert "left as it was: `ci/oldest/requirements-min.txt` line 1 `acme-sdk==1.4.0`, which excludes" in text
    assert "a minimum-pins or constraints file keeps an old version on purpose" in text


def test_a_cap_alone_is_bumped_to_a_range_that_no_longer_admits_the_old_version(
    make_repo, run_codemod, tmp_path: Path
):
    """`acme-sdk<2` (a cap alone, as `numpy<2` is written) was bumped to `acme-sdk<3`: green, exit 0, and
    a merged requirements.txt that an environment already holding 1.4 satisfies as it is, beside code
    migrated to 2.x. The floor moves to the target with the cap."""
    files = {"requirements.txt": "acme-sdk<2  # pinned by the platform team\n"}
    result = run_codemod(_repo(make_repo, "cap-alone", files), _task(tmp_path))
    assert (result.code, result.manifest["status"]) == (0, "succeeded"), result.manifest["reason"]
    patch = result.artifact("changes.patch").read_text()
    assert "+acme-sdk>=2.1.0,<3  # pinned by the platform team" in patch


def test_nothing_to_do_is_never_claimed_while_the_tests_install_asks_for_the_old_version(
    make_repo, run_codemod, tmp_path: Path
):
    """requirements.txt already pins the target, and requirements-dev.txt (what the tests install) reads
    constraints.txt, which pins 1.4.0: before, `nothing_to_do` without a test run, exit 0, though
    `pip install -r requirements-dev.txt` cannot resolve. What the tests' install asks for is read first."""
    files = {
        "requirements.txt": "acme-sdk==2.1.0\n",
        "requirements-dev.txt": "-r requirements.txt\n-c constraints.txt\npytest\n",
        "constraints.txt": "acme-sdk==1.4.0\n",
    }
    result = run_codemod(_repo(make_repo, "proof-with-old-constraint", files), _task(tmp_path))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "the tests' install of this repository still asks for acme-sdk off 2.1.0" in m["reason"]
    assert "constraints.txt" in m["reason"] and not m["verifications"]
    on_target = {**files, "constraints.txt": "acme-sdk==2.1.0\n"}
    result = run_codemod(_repo(make_repo, "proof-on-target", on_target), _task(tmp_path))
    assert (result.code, result.manifest["status"]) == (0, "nothing_to_do"), result.manifest["reason"]


APPENDED_SETUP_PY = """\
import sys

from setuptools import setup

install_requires = ["acme-sdk>=1.4,<2"]
if sys.platform == "win32":
    install_requires.append("pywin32")

setup(
    name="acme-app",
    version="0.1",
    package_dir={"": "src"},
    packages=["acme_app"],
    install_requires=install_requires,
)
"""


def test_a_pin_in_a_computed_install_requires_is_not_passed_over_beside_a_bumped_requirements_file(
    make_repo, run_codemod, tmp_path: Path
):
    """setup.py builds install_requires from a list it appends to (computed), and requirements.txt pins
    the SDK too: before, requirements.txt was bumped, green, exit 0, with setup.py still requiring <2 (the
    merged `pip install -r requirements.txt -e .` cannot resolve). The string is read, uneditable."""
    files = {"setup.py": APPENDED_SETUP_PY, "requirements.txt": "acme-sdk==1.4.0\n"}
    result = run_codemod(_repo(make_repo, "appended", files), _task(tmp_path))
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "setup.py line 5: acme-sdk>=1.4,<2 is a string of a computed install_requires" in m["reason"]
    assert not m["verifications"] and result.artifact("changes.patch").read_bytes() == b""


HELPERS_PYPROJECT = """\
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "acme-helpers"
version = "0.1"
dependencies = ["acme-sdk==1.4.0"]
"""


def test_what_a_local_editable_of_a_requirements_file_declares_is_asked_for(
    make_repo, run_codemod, tmp_path: Path, build_backend: str
):
    """requirements.txt installs `-e ./libs/acme-helpers`, whose pyproject.toml pins acme-sdk==1.4.0:
    before, requirements.txt was bumped and the bump forced 2.1.0 in beside it: green, exit 0, and a merged
    `pip install -r requirements.txt` that cannot resolve. What the editable declares is read as the
    tests' install reads it."""
    files = {
        "requirements.txt": "acme-sdk==1.4.0\n-e ./libs/acme-helpers\n",
        "libs/acme-helpers/pyproject.toml": HELPERS_PYPROJECT,
        "libs/acme-helpers/acme_helpers.py": "",
    }
    result = run_codemod(
        _repo(make_repo, "editable-helpers", files), _task(tmp_path), "--find-links", build_backend
    )
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "libs/acme-helpers/pyproject.toml line 8" in m["reason"] and "acme-sdk==1.4.0" in m["reason"]
    assert "iteration-1" not in [v["phase"] for v in m["verifications"]]  # nothing tested on the candidate
