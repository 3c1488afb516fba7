"""SDK pins in the files that install packages outside the dependency files (adapters/install_scripts.py
finds the files and lines, adapters/python/install_scripts.py reads the pins): what is read as a pin, with
which role, what is not, and what cannot be read for sure."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agentic_codemod.adapters import install_scripts as scripts
from agentic_codemod.adapters.python import install_scripts
from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files
from agentic_codemod.config import CI_CONFIG_MAX_BYTES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND

DOCKERFILE = """\
FROM python:3.12-slim
ARG ACME_VERSION=1.4.2
# RUN pip install acme-sdk==0.9 (an old line, a comment)
RUN apt-get update && pip install --no-cache-dir -r requirements.txt \\
    "acme-sdk[async] >= 1.4, <2" my-acme-sdk==1.0 acme-sdk-extras==3
RUN pip install acme-sdk==${ACME_VERSION} acme-sdk  # acme-sdk==0.8 in a comment
RUN uv pip install --system acme-sdk==${OTHER_VERSION:-1.4.3} acme-sdk==$UNSET
LABEL description="needs acme-sdk<2, from requirements.txt"
RUN conda install -y acme-sdk=1.4.0=py_0
"""
CONDA = """\
name: app
dependencies:
  - python=3.12
  - conda-forge::acme-sdk=1.4
  - acme-sdk 1.4.*
  - acme-sdk >=1.4,<2 py_0
  - acme-sdk[version='>=1.4,<2']
  - acme-sdk=1.4.0=pyhd8ed1ab_0
  - acme-sdk
  - pip:
      - acme_sdk==1.4.0
      - -r requirements.txt  # pulls acme-sdk==1.4.0
"""
PRE_COMMIT = """\
repos:
  - repo: https://github.com/pre-commit/mirrors-mypy
    rev: v1.8.0
    hooks:
      - id: mypy
        additional_dependencies: [Acme.SDK~=1.4, types-requests]  # acme-sdk<2 ships no stubs
"""
WORKFLOW = """\
env:
  ACME: "1.4.0"
jobs:
  minimum:
    name: tests on acme-sdk>=1.4 (the oldest)
    steps:
      - run: python -m pip install 'acme-sdk==${ACME}' pytest
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def pins(root: Path) -> list[tuple[str, int | None, str, str]]:
    return [(d.file, d.line, d.role, d.specifier) for d in install_scripts.found(root, "acme-sdk")]


def test_pins_in_images_environments_hooks_and_ci_jobs_with_their_roles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "Dockerfile": DOCKERFILE,
            "services/api/docker/Dockerfile.prod": "RUN pip install acme-sdk==1.4.1\n",
            "ci/environment-py311.yml": CONDA,
            ".pre-commit-config.yaml": PRE_COMMIT,
            ".github/workflows/minimum.yml": WORKFLOW,
        },
    )
    assert pins(tmp_path) == [
        (".github/workflows/minimum.yml", 7, "constraint", "==1.4.0"),  # its own env: ACME
        (".pre-commit-config.yaml", 6, "dev", "~=1.4"),
        ("Dockerfile", 5, "dev", ">=1.4,<2"),  # the logical line names pip
        ("Dockerfile", 6, "dev", "==1.4.2"),  # ARG's default
        ("Dockerfile", 7, "dev", "==1.4.3"),  # the variable's own default
        ("Dockerfile", 7, "dev", "==$UNSET"),  # a version nobody can read
        ("Dockerfile", 9, "dev", "==1.4.0.*"),  # conda install, a build string after it
        ("ci/environment-py311.yml", 4, "dev", "==1.4.*"),  # conda's own match specs
        ("ci/environment-py311.yml", 5, "dev", "==1.4.*"),
        ("ci/environment-py311.yml", 6, "dev", ">=1.4,<2"),
        ("ci/environment-py311.yml", 7, "dev", ">=1.4,<2"),
        ("ci/environment-py311.yml", 8, "dev", "==1.4.0.*"),
        ("ci/environment-py311.yml", 11, "dev", "==1.4.0"),
        ("services/api/docker/Dockerfile.prod", 1, "dev", "==1.4.1"),
    ]
    first = install_scripts.found(tmp_path, "acme-sdk")[2]
    assert first.kind == SCRIPT_KIND and first.section == "a container image"
    assert first.uneditable == (
        "Dockerfile line 5 installs acme-sdk[async] >= 1.4, <2 in a container image, which the tool does not "
        "edit"
    )


def test_recon_takes_them_beside_the_dependency_files_declarations(tmp_path: Path) -> None:
    """The adapter's install_script_pins, which recon adds to extract_dependencies' declarations: the other
    callers of extract_dependencies (an editable sub-project's, the publish and worktree gates') need only
    what the bump edits, and never walk the tree for them."""
    from agentic_codemod.adapters.python import ADAPTER

    write(
        tmp_path, {"requirements.txt": "acme-sdk==1.4.0\n", "Dockerfile": "RUN pip install acme-sdk==1.4.0\n"}
    )
    found = extract_dependencies(tmp_path, find_dependency_files(tmp_path), "acme-sdk")
    assert [(d.file, d.kind) for d in found] == [("requirements.txt", "requirements")]
    assert ADAPTER.install_script_pins is install_scripts.found
    assert "Dockerfile" not in find_dependency_files(tmp_path)  # never a file the bump or pip reads


@pytest.mark.parametrize(
    "line",
    [
        "RUN pip install acme-sdk",  # no version: admits any
        "RUN pip install acme-sdk-extras==1.4 my-acme-sdk==1.4",  # other names
        "COPY vendor/acme-sdk==1.4 /x",  # no installer on the line
        "LABEL org.description='acme-sdk<2 inside'",
        "    # RUN pip install acme-sdk==1.4",  # a comment
        "RUN pip install -r requirements.txt # acme-sdk==1.4 comes from there",
        "ENV ACME_SDK=1.4",  # conda's spelling outside a conda command
        "RUN pip install acme-sdk==latest",  # no version
    ],
)
def test_what_is_no_pin_of_the_sdk_is_not_read(tmp_path: Path, line: str) -> None:
    assert pins(write(tmp_path, {"Dockerfile": line + "\n"})) == []


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("dockerfile", scripts.IMAGE),
        ("deploy/app.Dockerfile", scripts.IMAGE),
        ("docker/Containerfile.dev", scripts.IMAGE),
        ("src/dockerfile_utils.py", None),
        ("docs/Dockerfile.md", None),
        ("environment.dev.yml", scripts.CONDA),
        ("devtools/conda-envs/test_env.yaml", scripts.CONDA),
        ("envoy.yml", None),
        ("ci/build.gitlab-ci.yml", scripts.CI),
        (".gitlab/ci/test.yml", scripts.CI),
        (".github/workflows/env-check.yml", scripts.CI),
        ("sub/.github/workflows/ci.yml", None),  # GitHub reads the root's only
        ("sub/.pre-commit-config.yaml", None),
        ("Makefile", scripts.BUILD),
        ("docs/GNUmakefile", scripts.BUILD),
        ("mk/deps.mk", scripts.BUILD),
        ("scripts/setup.sh", scripts.BUILD),
        ("tox.ini", scripts.ENVS),
        ("noxfile.py", scripts.ENVS),
        ("sub/tox.ini", None),
        ("docs/requirements.txt", scripts.REQUIREMENTS),
        ("examples/cli/dev-requirements.in", scripts.REQUIREMENTS),
        ("ci/constraints-min.txt", scripts.REQUIREMENTS),
        ("tools/lint.pip", scripts.REQUIREMENTS),
        ("docs/requirements/base.txt", scripts.REQUIREMENTS),
        ("requirements.txt", None),  # the root's own: a dependency file
        ("requirements/base.txt", None),  # the root's requirements/ folder: dependency files
        ("docs/notes.txt", None),
        ("src/requirements.py", None),
    ],
)
def test_which_files_install_packages(path: str, kind: str | None) -> None:
    assert scripts.kind_of(path) == kind


def test_a_link_inside_the_repository_is_read_at_its_target(tmp_path: Path) -> None:
    write(tmp_path, {"build/envs/prod.yml": "dependencies:\n  - acme-sdk=1.4\n"})
    os.symlink("build/envs/prod.yml", tmp_path / "environment.yml")
    assert pins(tmp_path) == [
        ("build/envs/prod.yml", 2, "dev", "==1.4.*"),  # in envs/: a conda environment of its own
        ("environment.yml", 2, "dev", "==1.4.*"),
    ]


UNREAD = "installs packages outside the dependency files and may name the SDK"


def _outside_link(root: Path) -> None:
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text("RUN pip install acme-sdk==1.4.0\n")
    os.symlink(outside / "Dockerfile", root / "Dockerfile")


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (
            _outside_link,
            f"Dockerfile {UNREAD}, and is a link out of",
        ),
        (
            lambda root: write(root, {"environment.yml": "#" * CI_CONFIG_MAX_BYTES + "\n- acme-sdk=1.4\n"}),
            f"environment.yml {UNREAD}, and is larger than {CI_CONFIG_MAX_BYTES} bytes",
        ),
        (
            lambda root: (root / "Dockerfile").write_bytes(
                "RUN pip install acme-sdk==1.4\n".encode("utf-16")
            ),
            f"Dockerfile {UNREAD}, and holds NUL bytes",
        ),
    ],
    ids=["link-out", "too-large", "utf-16"],
)
def test_what_cannot_be_read_for_sure_stops_the_run(tmp_path: Path, make, why: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    make(root)
    with pytest.raises(RequiresHuman, match=why):
        install_scripts.found(root, "acme-sdk")


def test_a_repository_too_large_to_look_through_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripts, "INSTALL_SCRIPTS_MAX_ENTRIES", 3)
    write(tmp_path, {f"src/m{i}.py": "" for i in range(3)})
    with pytest.raises(RequiresHuman, match=r"more than 3 files and folders"):
        install_scripts.found(tmp_path, "acme-sdk")
    write(tmp_path, {"node_modules/x/Dockerfile": "RUN pip install acme-sdk==1.4\n"})  # never entered
    monkeypatch.setattr(scripts, "INSTALL_SCRIPTS_MAX_ENTRIES", 10)
    assert pins(tmp_path) == []


def test_a_file_inside_the_budget_is_read_whatever_its_utf8(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_bytes(b"RUN echo \xff\xfe\nRUN pip install acme-sdk==1.4.0\n")
    assert pins(tmp_path) == [("Dockerfile", 2, "dev", "==1.4.0")]


# helper-10's review: each of these was green (exit 0) with the image on the old version, or a false alarm.
MULTI_STAGE = """\
ARG BASE=3.12
FROM python:${BASE} AS app
ARG SDK=1.4.0
ARG PACKAGES="acme-sdk==1.4.1 gunicorn"
RUN pip install --no-cache-dir \\
    # the platform SDK

    acme-sdk==${SDK} \\
    -r /app/requirements.txt
RUN pip install $PACKAGES && echo "build step # 3" && pip install acme-sdk==1.4.2
FROM python:3.12 AS tools
ARG SDK=2.0.0
RUN pip install acme-sdk==${SDK}
"""


def test_continuations_variables_and_stages_as_docker_reads_them(tmp_path: Path) -> None:
    write(tmp_path, {"docker/Dockerfile": MULTI_STAGE})
    assert pins(tmp_path) == [
        ("docker/Dockerfile", 4, "dev", "==1.4.1"),  # a list of packages in a variable
        ("docker/Dockerfile", 8, "dev", "==1.4.0"),  # past a comment and a blank line, its own stage's SDK
        ("docker/Dockerfile", 10, "dev", "==1.4.2"),  # `#` inside quotes is no comment
        ("docker/Dockerfile", 13, "dev", "==2.0.0"),  # the next stage's SDK
    ]


def test_a_requirements_file_the_image_installs_is_read_where_no_dependency_file_reaches_it(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "requirements.txt": "acme-sdk==1.4.0\n",  # a dependency file: the bump's, not read again here
            "services/api/Dockerfile": "COPY . /app\n"
            "RUN pip install -r requirements.txt -c /app/constraints.txt\n"
            "RUN pip install -r ../../requirements.txt\n",
            "services/api/requirements.txt": "flask\nacme-sdk>=1.4,<2  # the SDK\n",
            "services/api/constraints.txt": "acme_sdk==1.4.3\n",
        },
    )
    found = install_scripts.found(tmp_path, "acme-sdk")
    assert [(d.file, d.line, d.role, d.specifier) for d in found] == [
        ("services/api/requirements.txt", 2, "dev", ">=1.4,<2"),
        ("services/api/constraints.txt", 1, "dev", "==1.4.3"),  # /app/constraints.txt by its name
    ]
    assert found[0].uneditable == (
        "services/api/requirements.txt line 2 pins acme-sdk>=1.4,<2, installed by services/api/Dockerfile "
        "line 2 in a container image, which the tool does not edit"
    )


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # GitHub's expressions are variables nobody can read here: a CI job's pin, named
        (
            {".github/workflows/ci.yml": "- run: pip install acme-sdk==${{ matrix.acme }}\n"},
            [(".github/workflows/ci.yml", 1, "constraint", "==${{matrix.acme}}")],
        ),
        ({"Dockerfile": "RUN uvx --from acme-sdk==1.4.0 acme\n"}, [("Dockerfile", 1, "dev", "==1.4.0")]),
        ({"Dockerfile": "RUN poetry add acme-sdk@1.4.0\n"}, [("Dockerfile", 1, "dev", "==1.4.0")]),
        (
            {"recipe/meta.yaml": "requirements:\n  run:\n    - acme-sdk >=1.4,<2\n"},
            [("recipe/meta.yaml", 3, "dev", ">=1.4,<2")],
        ),
        ({"envs/py311.yml": "dependencies:\n  - acme-sdk=1.4\n"}, [("envs/py311.yml", 2, "dev", "==1.4.*")]),
        # test data, images and files that do not name the SDK are not read at all, whatever they hold
        ({"tests/fixtures/old/Dockerfile": "RUN pip install acme-sdk==1.2.0\n"}, []),
        ({"docs/dockerfile-layers.png": "\0PNG acme-sdk==1.4\n"}, []),
        ({"helm/values-env.yaml": "\0" * 10 + "#" * 300_000}, []),
    ],
    ids=["gha-matrix", "uvx", "poetry-add", "conda-recipe", "envs-folder", "test-data", "png", "unnamed"],
)
def test_more_places_and_spellings(tmp_path: Path, files: dict[str, str], expected: list[tuple]) -> None:
    assert pins(write(tmp_path, files)) == expected


def test_a_link_to_a_file_the_clone_does_not_hold_is_no_file(tmp_path: Path) -> None:
    os.symlink("build/Dockerfile.generated", tmp_path / "Dockerfile")
    assert pins(tmp_path) == []


def test_a_hostile_line_is_read_in_linear_time(tmp_path: Path) -> None:
    """A 255 KB line of `,a==1${A:-` took 54 s in one regex: its quantifiers are bounded now. Not a timing
    test: a backtracking regex would not finish this test run."""
    write(tmp_path, {"environment.yml": "- acme-sdk" + ",a==1${A:-" * 25_000 + "\n"})
    assert pins(tmp_path) == []


# helper-11's review of the fixes above.
def test_the_name_is_read_however_the_task_spells_it(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": "RUN pip install acme-sdk==1.4.0\n"})
    for spelling in ("Acme-SDK", "acme_sdk", "Acme.Sdk"):
        assert [d.specifier for d in install_scripts.found(tmp_path, spelling)] == ["==1.4.0"]


def test_a_file_ending_inside_a_continuation_keeps_its_last_instruction(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": "FROM python\nRUN pip install acme-sdk==1.4.0 \\\n# the end\n"})
    assert pins(tmp_path) == [("Dockerfile", 2, "dev", "==1.4.0")]


def test_a_stage_takes_the_args_declared_before_the_first_from_not_the_last_stages(tmp_path: Path) -> None:
    run = "RUN pip install acme-sdk==${V}\n"
    dockerfile = f"ARG V=1.0\nFROM a\nARG V=2.0\n{run}FROM b\nARG V\n{run}"
    assert pins(write(tmp_path, {"Dockerfile": dockerfile})) == [
        ("Dockerfile", 4, "dev", "==2.0"),
        ("Dockerfile", 7, "dev", "==1.0"),
    ]


def test_the_repositorys_own_test_images_are_read(tmp_path: Path) -> None:
    write(tmp_path, {"tests/integration/Dockerfile": "RUN pip install acme-sdk==1.4.0\n"})
    assert pins(tmp_path) == [("tests/integration/Dockerfile", 1, "dev", "==1.4.0")]


@pytest.mark.parametrize(
    ("files", "link", "why"),
    [
        (
            {
                "docker/Dockerfile": "RUN pip install -r requirements.txt\n",
                "docker/requirements.txt": "#" * 300_000,
            },
            None,
            "docker/requirements.txt, which docker/Dockerfile line 1 installs in a container image, cannot",
        ),
        (
            {},
            ("Dockerfile", "Dockerfile"),
            "Dockerfile installs packages outside the dependency files and may name",
        ),
    ],
    ids=["requirements-too-large", "link-loop"],
)
def test_what_an_image_installs_and_cannot_be_read_stops_the_run(
    tmp_path: Path, files: dict[str, str], link: tuple[str, str] | None, why: str
) -> None:
    write(tmp_path, files)
    if link:
        os.symlink(link[1], tmp_path / link[0])
    with pytest.raises(RequiresHuman, match=re.escape(why)):
        install_scripts.found(tmp_path, "acme-sdk")


def test_a_path_no_file_system_holds_is_no_file(tmp_path: Path) -> None:
    write(tmp_path, {"Dockerfile": f"RUN pip install -r {'a' * 300} -rdocker/req.txt acme-sdk==1.4\n"})
    write(tmp_path, {"docker/req.txt": "acme-sdk<2\n"})
    assert pins(tmp_path) == [("Dockerfile", 1, "dev", "==1.4"), ("docker/req.txt", 1, "dev", "<2")]


def test_a_later_stage_does_not_take_an_earlier_stages_args_without_global_ones(tmp_path: Path) -> None:
    """With no ARG before the first FROM, the second stage's `${V}` is nobody's value, not the first's."""
    run = "RUN pip install acme-sdk==${V}\n"
    dockerfile = f"FROM a\nARG V=2.0\n{run}FROM b\nARG V=2.1\nFROM c\n{run}"
    assert pins(write(tmp_path, {"Dockerfile": dockerfile})) == [
        ("Dockerfile", 3, "dev", "==2.0"),
        ("Dockerfile", 7, "dev", "==${V}"),
    ]


def test_many_pins_in_one_file_are_read_going_down_it_once(tmp_path: Path) -> None:
    """9,000 pins in one Dockerfile took 10 s: the assignments were read again from the top for each
    pin. Not a timing test: it checks every pin is found with the value in force at its line."""
    lines = [f"ARG V=1.{i}\nRUN pip install acme-sdk==${{V}}\n" for i in range(4_000)]
    found = pins(write(tmp_path, {"Dockerfile": "".join(lines)}))
    assert len(found) == 4_000 and found[-1] == ("Dockerfile", 8_000, "dev", "==1.3999")


COMPILED = """\
#
# This file is autogenerated by pip-compile with Python 3.12
# by the following command:
#
#    pip-compile docs/requirements.in
#
acme-sdk==1.4.0
    # via -r docs/requirements.in
sphinx==7.2.6
"""


def test_requirements_files_below_the_root_that_no_dependency_file_reaches_with_their_roles(
    tmp_path: Path,
) -> None:
    """Before, none of these was read: `docs/requirements.txt` pinning acme-sdk==1.4.0 stayed as it was
    beside a run that succeeded (exit 0). A pip-compile output is a lock (a human recompiles it after the
    bump); the root's own files and what they include are the adapter's dependency files, not read here;
    test data is not walked."""
    write(
        tmp_path,
        {
            "requirements.txt": "acme-sdk==1.4.0\n-r ci/requirements-base.txt\n",
            "requirements/dev.txt": "acme-sdk>=1.4\n",
            "ci/requirements-base.txt": "acme-sdk>=1.4,<2\n",  # reached by the root's: a dependency file
            "docs/requirements.txt": "sphinx\nAcme_SDK == 1.4.0  # the docs build\n",
            "examples/cli/requirements.txt": "acme-sdk>=1.2,<2\n",
            "ci/constraints-min.txt": "acme-sdk==1.0.0\n",
            "site/requirements.txt": COMPILED,
            "tests/fixtures/old/requirements.txt": "acme-sdk==0.1\n",
            "notes/requirements.txt": "acme-sdk\n",  # no version: admits any
        },
    )
    found = install_scripts.found(tmp_path, "acme-sdk")
    assert [(d.file, d.line, d.role, d.specifier) for d in found] == [
        ("ci/constraints-min.txt", 1, "constraint", "==1.0.0"),
        ("docs/requirements.txt", 2, "dev", "== 1.4.0"),
        ("examples/cli/requirements.txt", 1, "runtime", ">=1.2,<2"),
        ("site/requirements.txt", 7, "lock", "==1.4.0"),
    ]
    assert all(d.kind == SCRIPT_KIND and d.section == scripts.REQUIREMENTS for d in found)
    assert found[1].uneditable.startswith(
        "docs/requirements.txt line 2 pins Acme_SDK== 1.4.0, in a requirements"
    )
    declared = extract_dependencies(tmp_path, find_dependency_files(tmp_path), "acme-sdk")
    assert "ci/requirements-base.txt" in {d.file for d in declared}  # the bump's, as before


def test_a_requirements_file_an_install_line_names_is_read_once_with_the_scripts_role(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "docker/Dockerfile": "RUN pip install -r docker/requirements.txt\n",
            "docker/requirements.txt": "acme-sdk==1.4.0\n",
        },
    )
    assert [(d.file, d.role, d.section) for d in install_scripts.found(tmp_path, "acme-sdk")] == [
        ("docker/requirements.txt", "dev", scripts.IMAGE)
    ]


def test_build_scripts_and_the_install_commands_of_tox_and_nox_envs(tmp_path: Path) -> None:
    """Before, a `pip install acme-sdk==1.4.0` in a Makefile, a shell script, a docs env's commands in
    tox.ini or a docs session of noxfile.py stayed as it was beside a green run (exit 0). A tox deps line
    is the adapter's own declaration (bumped), never a pin here; a script whose path names the oldest
    versions keeps them on purpose."""
    write(
        tmp_path,
        {
            "Makefile": "SDK_VERSION := 1.4.0\ninstall:\n\tpip install acme-sdk==$(SDK_VERSION)\n",
            "scripts/setup.sh": "#!/bin/sh\nexport ACME=1.4.1\n"
            "python -m pip install \\\n  acme-sdk==${ACME}\n",
            "ci/install-oldest-deps.sh": "pip install acme-sdk==1.0.0\n",
            "tox.ini": "[testenv]\ndeps = acme-sdk==1.4.0\n"
            "[testenv:docs]\ncommands_pre = pip install acme-sdk==1.4.2\n",
            "noxfile.py": "import nox\n@nox.session\ndef docs(session):\n"
            '    session.install("sphinx", "acme-sdk==1.4.3")\n',
        },
    )
    assert pins(tmp_path) == [
        ("Makefile", 3, "dev", "==1.4.0"),
        ("ci/install-oldest-deps.sh", 1, "constraint", "==1.0.0"),
        ("noxfile.py", 4, "dev", "==1.4.3"),
        ("scripts/setup.sh", 4, "dev", "==1.4.1"),
        ("tox.ini", 4, "dev", "==1.4.2"),
    ]


def test_projects_below_the_root_and_pipfiles(tmp_path: Path) -> None:
    """Before, a monorepo's `services/worker/pyproject.toml` and a root Pipfile pinning acme-sdk==1.4.0
    were never read: the root bumped, green, exit 0. Their pins are uneditable, with their sections' roles;
    a project file inside a tests folder is test data (tomlkit's tests/examples/pyproject.toml)."""
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "root"\ndependencies = ["acme-sdk>=1.4,<2"]\n',
            "services/worker/pyproject.toml": '[project]\nname = "w"\n'
            'dependencies = [\n  "acme-sdk==1.4.0",\n]\n',
            "libs/old/setup.cfg": "[options]\ninstall_requires =\n    acme-sdk~=1.4\n",
            "Pipfile": '[packages]\nflask = "*"\nacme-sdk = "==1.4.0"\n\n'
            '[dev-packages]\nacme_sdk = {version = ">=1.4"}\n',
            "tests/examples/pyproject.toml": '[tool.poetry.dependencies]\nacme-sdk = "^0.3"\n',
            "examples/app/pyproject.toml": "not toml [[[ acme-sdk==1.0",  # unreadable: no pin
        },
    )
    assert pins(tmp_path) == [
        ("Pipfile", 3, "runtime", "==1.4.0"),
        ("Pipfile", 6, "dev", ">=1.4"),
        ("libs/old/setup.cfg", 3, "runtime", "~=1.4"),
        ("services/worker/pyproject.toml", 4, "runtime", "==1.4.0"),
    ]


def test_the_third_reviews_variants_are_read_and_fetching_is_no_install(tmp_path: Path) -> None:
    """A requirement by URL (a git tag of the old version) has no version anybody can read: it counts as
    excluding the target (`@ URL`), in a script, a requirements file below the root, a project below the
    root and a Pipfile. A noxfile's `session.install(` spread over lines is one call; a rye lock below the
    root is a requirements file; `pip download` installs nothing; "minimal" names no oldest versions."""
    write(
        tmp_path,
        {
            "install.sh": 'pip install "acme-sdk @ git+https://example.invalid/acme.git@v1.4.0"\n'
            "pip install git+https://example.invalid/acme.git@v1.4.0#egg=acme-sdk\n"
            "pip download --no-deps acme-sdk==1.4.0 -d wheels/\n",
            "docs/requirements.txt": "sphinx\nacme-sdk @ https://example.invalid/acme_sdk-1.4.0-py3-none-any.whl\n",
            "services/worker/pyproject.toml": '[project]\nname = "w"\n'
            'dependencies = ["acme-sdk @ git+https://example.invalid/acme.git@v1.4.0"]\n',
            "Pipfile": '[packages]\nacme-sdk = {git = "https://example.invalid/acme.git", ref = "v1.4.0"}\n',
            "noxfile.py": "import nox\n@nox.session\ndef docs(session):\n    session.install(\n"
            '        "sphinx",\n        "acme-sdk==1.4.0",\n    )\n',
            "deploy/requirements.lock": "# generated by rye\nacme-sdk==1.4.0\n",
            "docker/install-minimal.sh": "pip install acme-sdk==1.4.0\n",
        },
    )
    found = {(d.file, d.line): (d.role, d.specifier) for d in install_scripts.found(tmp_path, "acme-sdk")}
    url = "git+https://example.invalid/acme.git@v1.4.0"
    assert found == {
        ("install.sh", 1): ("dev", f"@ {url}"),
        ("install.sh", 2): ("dev", f"@ {url}#egg=acme-sdk"),
        ("docs/requirements.txt", 2): ("dev", "@ https://example.invalid/acme_sdk-1.4.0-py3-none-any.whl"),
        ("services/worker/pyproject.toml", 3): ("runtime", f"@ {url}"),
        ("Pipfile", 2): ("runtime", "@ https://example.invalid/acme.git"),
        ("noxfile.py", 6): ("dev", "==1.4.0"),
        ("deploy/requirements.lock", 2): ("runtime", "==1.4.0"),
        ("docker/install-minimal.sh", 1): ("dev", "==1.4.0"),
    }
    from agentic_codemod.adapters.python.versioning import matches

    assert not matches("2.0.0", f"@ {url}", SCRIPT_KIND)  # unreadable: counts as excluding the target


def test_a_tox_env_or_nox_session_named_for_the_oldest_versions_keeps_them_on_purpose(tmp_path: Path) -> None:
    """The third review: `def tests_oldest_supported(session)` installing acme-sdk==1.4.0 stopped the run;
    like a build script named for them, an env or session named for the oldest versions keeps them (kept
    and named in the merge request), while another session's pin still stops the run."""
    write(
        tmp_path,
        {
            "noxfile.py": "import nox\n\n@nox.session\ndef tests_oldest_supported(session):\n"
            '    session.install("acme-sdk==1.4.0")\n\n@nox.session\ndef docs(session):\n'
            '    session.install("acme-sdk==1.4.1")\n',
            "tox.ini": "[testenv:py311-min]\ncommands_pre = pip install acme-sdk==1.0.0\n",
        },
    )
    assert pins(tmp_path) == [
        ("noxfile.py", 5, "constraint", "==1.4.0"),
        ("noxfile.py", 9, "dev", "==1.4.1"),
        ("tox.ini", 2, "constraint", "==1.0.0"),
    ]


def test_a_parenthesis_in_a_string_or_a_nested_def_misleads_no_reading(tmp_path: Path) -> None:
    """The fourth review: `session.run("echo", "(")` kept the call open and swallowed the next session's
    install; a nested `def` took the session's name; a `[testenv]` after `[testenv:py311-oldest]` kept its
    name."""
    write(
        tmp_path,
        {
            "noxfile.py": 'import nox\n@nox.session\ndef lint(session):\n    session.run("echo", "(")\n'
            "@nox.session\ndef tests_oldest(session):\n    def helper():\n        pass\n"
            '    session.install("acme-sdk==1.4.0")\n@nox.session\ndef docs(session):\n'
            '    session.install("acme-sdk==1.4.1")\n',
            "tox.ini": "[testenv:py311-oldest]\ndeps = x\n"
            "[testenv]\ncommands_pre = pip install acme-sdk==1.4.2\n",
        },
    )
    assert pins(tmp_path) == [
        ("noxfile.py", 9, "constraint", "==1.4.0"),
        ("noxfile.py", 12, "dev", "==1.4.1"),
        ("tox.ini", 4, "dev", "==1.4.2"),
    ]


def test_a_docs_build_a_nox_conda_install_and_root_requirements_in_files(tmp_path: Path) -> None:
    """helper-22's survey of 62 real projects: Read the Docs' build jobs (anyio), nox's
    `session.conda_install` (nox itself), trio's `test-requirements.in` at the root. Before, never read:
    green, exit 0, the old pin left where the docs build, a session or pip-compile installs it."""
    from agentic_codemod.adapters.python import ADAPTER

    write(
        tmp_path,
        {
            ".readthedocs.yaml": (
                "version: 2\nbuild:\n  os: ubuntu-22.04\n  jobs:\n    post_install:\n"
                "      - pip install acme-sdk==1.4.0\n      - uv pip install -r docs/requirements.txt\n"
            ),
            "docs/requirements.txt": (  # referencing's: a compiled file the docs build installs
                "# This file was autogenerated by uv via the following command:\n"
                "#    uv pip compile --output-file docs/requirements.txt docs/requirements.in\n"
                "acme-sdk==1.4.0\n    # via sphinx\n"
            ),
            "noxfile.py": (
                "import nox\n\n\n@nox.session(venv_backend='conda')\ndef conda_tests(session):\n"
                "    session.conda_install('acme-sdk<2')\n"
            ),
            "test-requirements.in": "acme-sdk>=1.4,<2\n",
        },
    )
    assert pins(tmp_path) == [
        (".readthedocs.yaml", 6, "dev", "==1.4.0"),
        ("docs/requirements.txt", 3, "lock", "==1.4.0"),  # a lock to recompile, whoever installs it
        ("noxfile.py", 6, "dev", "<2"),
    ]
    assert "test-requirements.in" in find_dependency_files(tmp_path)  # a dependency file the bump edits
    found = ADAPTER.extract_dependencies(tmp_path, find_dependency_files(tmp_path), "acme-sdk")
    assert [(d.file, d.specifier) for d in found] == [("test-requirements.in", ">=1.4,<2")]


def test_pixi_environments_are_read_with_their_features_roles(tmp_path: Path) -> None:
    """dask's and xarray's pixi manifests (helper-22's survey: 3 of 62 real projects) pin packages in
    conda's spelling; a feature's are a matrix of versions kept on purpose, as a CI job's. Before,
    never read: green, exit 0, `pixi run test` still on the old version."""
    write(
        tmp_path,
        {
            "pixi.toml": (
                '[project]\nname = "app"\n\n[dependencies]\nacme-sdk = ">=1.4,<2"\n\n'
                '[feature.mindeps-array.dependencies]\nacme-sdk = "=1.4"\n\n'
                '[feature.docs.pypi-dependencies]\nacme-sdk = { version = "==1.4.0" }\n\n'
                '[target.linux-64.dependencies]\nacme_sdk = "1.4.*"\n'
            ),
            "pyproject.toml": (
                '[project]\nname = "app"\ndependencies = ["acme-sdk>=1.4"]\n\n'
                '[tool.pixi.feature.min-versions.dependencies]\nacme-sdk = "1.4.0"\n'
                '[tool.pixi.pypi-dependencies]\nacme-sdk = { git = "https://example.invalid/acme.git" }\n'
            ),
            "tests/data/pixi.toml": '[dependencies]\nacme-sdk = "=1.0"\n',  # test data
        },
    )
    assert pins(tmp_path) == [
        ("pixi.toml", 5, "dev", ">=1.4,<2"),
        ("pixi.toml", 8, "constraint", "==1.4.*"),  # conda's `=1.4`: every 1.4 release
        ("pixi.toml", 11, "constraint", "==1.4.0"),  # a feature: a matrix of versions
        ("pixi.toml", 14, "dev", "==1.4.*"),
        ("pyproject.toml", 8, "dev", "@ https://example.invalid/acme.git"),  # no version anybody can read
        ("pyproject.toml", 6, "constraint", "==1.4.0.*"),
    ]
