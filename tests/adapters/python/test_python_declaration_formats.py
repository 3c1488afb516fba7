"""Spellings of a declaration that a bump once missed or broke (each a green run, exit 0, on a repository
still pinning the old version): setup.cfg values as setuptools reads them (a comment after a requirement,
`;`-separated requirements on one line, dash keys), requirement lines carrying `--hash`, rye's
requirements.lock, tox.toml and pyproject.toml's [tool.tox]."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod.adapters.python import dependency_files, setup_cfg
from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files
from agentic_codemod.adapters.python.update import update_dependency
from agentic_codemod.models import Dependency

HASH = "sha256:" + "a" * 64


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def extract(root: Path) -> list[Dependency]:
    return extract_dependencies(root, find_dependency_files(root), "acme-sdk")


def found(root: Path) -> list[tuple[str, int | None, str, str, bool]]:
    return [(d.file, d.line, d.specifier, d.role, bool(d.uneditable)) for d in extract(root)]


def bump(text: str, file: str, kind: str, line: int | None = None) -> str:
    dependency = Dependency(name="acme-sdk", specifier="", file=file, kind=kind, line=line)
    return update_dependency(text, dependency, "2.0.0")


# --- setup.cfg, as setuptools reads it (setuptools/config/setupcfg.py, _reqs.parse) ---------------------

SETUP_CFG = """\
[metadata]
name = acme-app

[options]
install_requires =
    packaging
    acme-sdk==1.4.0  # platform-managed: see #platform-sdk
setup_requires = setuptools; acme-sdk>=1.4,<2
Tests-Require = pytest ; acme-sdk~=1.4

[options.extras_require]
cli = click; acme-sdk[cli]==1.4.0
async =
    acme-sdk[async]==1.4.0; python_version >= "3.9"  # a marker on its own line is a marker
"""


def test_setup_cfg_comments_one_line_lists_and_dash_keys_are_declarations(tmp_path: Path) -> None:
    root = write(tmp_path, {"setup.cfg": SETUP_CFG})
    assert found(root) == [
        ("setup.cfg", 7, "==1.4.0", "runtime", False),
        ("setup.cfg", 8, ">=1.4,<2", "build", False),
        ("setup.cfg", 9, "~=1.4", "test", False),
        ("setup.cfg", 12, "==1.4.0", "extra", False),
        ("setup.cfg", 14, "==1.4.0", "extra", False),
    ]


def test_setup_cfg_bump_changes_only_each_version(tmp_path: Path) -> None:
    after = bump(SETUP_CFG, "setup.cfg", "setup.cfg")
    assert after == (
        SETUP_CFG.replace("acme-sdk==1.4.0  #", "acme-sdk==2.0.0  #")
        .replace("acme-sdk>=1.4,<2", "acme-sdk>=2.0.0,<3")
        .replace("acme-sdk~=1.4", "acme-sdk~=2.0")
        .replace("acme-sdk[cli]==1.4.0", "acme-sdk[cli]==2.0.0")
        .replace("acme-sdk[async]==1.4.0;", "acme-sdk[async]==2.0.0;")
    )


def test_the_deprecated_dash_key_is_read_where_setuptools_reads_it(tmp_path: Path) -> None:
    text = "[options]\ninstall-requires =\n    acme-sdk==1.4.0\n"
    assert found(write(tmp_path, {"setup.cfg": text})) == [("setup.cfg", 3, "==1.4.0", "runtime", False)]
    assert bump(text, "setup.cfg", "setup.cfg") == text.replace("1.4.0", "2.0.0")
    assert setup_cfg.declares_dependencies(text)


def test_a_setup_cfg_dash_key_file_directive_is_followed_and_checked(tmp_path: Path) -> None:
    """`install-requires = file: ...` names a requirements file setuptools reads: it is a dependency file
    and checked like one (an index option there is refused)."""
    files = {"setup.cfg": "[options]\ninstall-requires = file: reqs/base.in\n", "reqs/base.in": "acme-sdk\n"}
    assert "reqs/base.in" in dependency_files.read_dependency_files(write(tmp_path, files)).files
    (tmp_path / "reqs/base.in").write_text("--index-url https://example.invalid/simple\n")
    refused = dependency_files.read_dependency_files(tmp_path).refused
    assert [(r.file, r.line) for r in refused] == [("reqs/base.in", 1)]


@pytest.mark.parametrize(
    ("value", "texts"),
    [
        (" packaging; acme-sdk==1.4.0", ["packaging", "acme-sdk==1.4.0"]),
        ('acme-sdk==1.4.0; python_version < "3.9"', ["acme-sdk==1.4.0", 'python_version < "3.9"']),
        ('\nacme-sdk==1.4.0; python_version < "3.9"', ['acme-sdk==1.4.0; python_version < "3.9"']),
        ("\na  # c\n# gone\nb", ["a", "b"]),
        ("# gone; acme-sdk", ["acme-sdk"]),
    ],
    ids=["one-line-list", "one-line-marker-split", "marker-on-a-line", "comments", "comment-item"],
)
def test_requirement_texts_split_a_value_as_setuptools_does(value: str, texts: list[str]) -> None:
    assert setup_cfg.requirement_texts(value) == texts


def test_a_requirement_continued_with_a_backslash_is_found_but_not_edited(tmp_path: Path) -> None:
    text = "[options]\ninstall_requires =\n    acme-sdk \\\n    ==1.4.0\n"
    (dependency,) = extract(write(tmp_path, {"setup.cfg": text}))
    assert (dependency.line, dependency.specifier, dependency.role) == (3, "==1.4.0", "runtime")
    assert dependency.uneditable.startswith("setup.cfg line 3 (options.install_requires): a requirement")
    with pytest.raises(ValueError, match="continued with"):
        bump(text, "setup.cfg", "setup.cfg")


# --- requirement lines carrying --hash ------------------------------------------------------------------

HASHED = f"packaging==24.0 \\\n    --hash={HASH}\nacme-sdk==1.4.0 \\\n    --hash={HASH}\n"


@pytest.mark.parametrize(
    "text",
    [HASHED, f"acme-sdk==1.4.0 --hash={HASH}\n", f"acme-sdk==1.4.0 \\\n    --ha={HASH}\n"],
    ids=["continued", "same-line", "optparse-prefix"],
)
def test_a_hashed_pin_is_uneditable_naming_its_line_and_the_tool(tmp_path: Path, text: str) -> None:
    (dependency,) = extract(write(tmp_path, {"requirements.txt": text}))
    line = 3 if text == HASHED else 1
    assert (dependency.line, dependency.specifier, dependency.role) == (line, "==1.4.0", "runtime")
    assert dependency.uneditable.startswith(f"requirements.txt line {line}: acme-sdk==1.4.0 carries --hash")
    assert "regenerate the file with the tool that wrote it" in dependency.uneditable
    with pytest.raises(ValueError, match="carries --hash"):
        bump(text, "requirements.txt", "requirements")


def test_a_hashed_line_is_never_rewritten_even_beside_an_editable_one() -> None:
    from agentic_codemod.adapters.python import requirements_file

    text = f"acme-sdk==1.4.0 ; python_version < '3'\nacme-sdk==1.4.0 --hash={HASH}\n"
    after = requirements_file.rewrite(text, "acme-sdk", lambda d: "==2.0.0")
    assert after == text.replace("1.4.0 ;", "2.0.0 ;", 1)


def test_a_pdm_export_is_a_lock_whose_stale_pin_is_a_human_item(tmp_path: Path) -> None:
    """pdm export's header says which tool wrote it: a lock (recompiled by nobody here), so its entry is
    not uneditable (workflow/declarations.stale_locks names it after the bump)."""
    header = "# This file is @generated by PDM.\n# Please do not edit it manually.\n\n"
    root = write(tmp_path, {"requirements.txt": header + HASHED})
    assert found(root) == [("requirements.txt", 6, "==1.4.0", "lock", False)]


# --- rye's lockfiles ------------------------------------------------------------------------------------

RYE_LOCK = """\
# generated by rye
# use `rye lock` or `rye sync` to update this lockfile
#
# last locked with the following flags:
#   pre: false

--index-url https://pypi.org/simple/

-e file:.
acme-sdk==1.4.0
    # via acme-app
packaging==24.0
"""


def test_rye_lockfiles_are_lock_entries_of_a_guarded_dependency_file(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": '[project]\nname = "a"\nversion = "0"\ndependencies = ["acme-sdk>=1.4,<2"]\n',
        "requirements.lock": RYE_LOCK,
        "requirements-dev.lock": RYE_LOCK.replace("packaging==24.0\n", f"pytest==8.0 --hash={HASH}\n"),
    }
    root = write(tmp_path, files)
    assert found(root) == [
        ("pyproject.toml", 4, ">=1.4,<2", "runtime", False),
        ("requirements-dev.lock", 10, "==1.4.0", "lock", False),
        ("requirements.lock", 10, "==1.4.0", "lock", False),
    ]
    assert dependency_files.is_dependency_file("requirements.lock")  # the manifest gate guards them
    assert dependency_files.is_dependency_file("sub/requirements-dev.lock")
    assert not dependency_files.read_dependency_files(root).refused  # pip never reads them for the tool
    with pytest.raises(ValueError, match="refreshed by its own tool"):
        bump(RYE_LOCK, "requirements.lock", "lockfile", 10)


# --- tox.toml and pyproject.toml's [tool.tox] -----------------------------------------------------------

TOX_TOML = """\
env_list = ["py311", "docs"]

[env_run_base]
deps = ["pytest", "acme-sdk==1.4.0"]  # the tests' env
commands = [["pytest"]]

[env.docs]
deps = [
    "sphinx",
    "acme-sdk>=1.4,<2",
]
"""


def test_tox_toml_deps_are_declarations_with_the_roles_of_tox_ini_and_bumped_in_place(tmp_path: Path) -> None:
    root = write(tmp_path, {"tox.toml": TOX_TOML})
    assert found(root) == [
        ("tox.toml", 4, "==1.4.0", "test", False),
        ("tox.toml", 10, ">=1.4,<2", "dev", False),
    ]
    assert bump(TOX_TOML, "tox.toml", "tox.toml") == TOX_TOML.replace("==1.4.0", "==2.0.0").replace(
        ">=1.4,<2", ">=2.0.0,<3"
    )
    assert dependency_files.is_dependency_file("tox.toml")


LEGACY = '''\
[project]
name = "acme-app"
version = "0.1"
dependencies = ["acme-sdk>=1.4,<2"]

[tool.tox]
legacy_tox_ini = """
[tox]
envlist = py311

[testenv]
deps =
    pytest
    acme-sdk==1.4.0  # pinned

[testenv:docs]
deps = acme-sdk~=1.4
"""
'''


def test_legacy_tox_ini_deps_are_uneditable_declarations_at_their_pyproject_line(tmp_path: Path) -> None:
    root = write(tmp_path, {"pyproject.toml": LEGACY})
    assert found(root) == [
        ("pyproject.toml", 4, ">=1.4,<2", "runtime", False),
        ("pyproject.toml", 14, "==1.4.0", "test", True),
        ("pyproject.toml", 17, "~=1.4", "dev", True),
    ]
    reason = extract(root)[1].uneditable
    assert reason.startswith(
        "pyproject.toml line 14 ([tool.tox] legacy_tox_ini, [testenv] deps): acme-sdk==1.4.0"
    )
    # the bump edits [project] and never the string
    after = bump(LEGACY, "pyproject.toml", "pep621", 4)
    assert after == LEGACY.replace(">=1.4,<2", ">=2.0.0,<3")


def test_a_legacy_string_with_escapes_is_named_at_its_key(tmp_path: Path) -> None:
    root = write(tmp_path, {"pyproject.toml": LEGACY.replace("    pytest", "    py\\u0074est")})
    reasons = [d.uneditable for d in extract(root) if d.uneditable]
    assert reasons[0].startswith("pyproject.toml line 7 ([tool.tox] legacy_tox_ini, its line 7")


def test_native_tool_tox_tables_are_uneditable_declarations(tmp_path: Path) -> None:
    text = (
        '[project]\nname = "a"\nversion = "0"\n\n[tool.tox.env_run_base]\ndeps = ["acme-sdk==1.4.0"]\n'
        '[tool.tox.env.lint]\ndeps = ["acme-sdk"]\n'
    )
    root = write(tmp_path, {"pyproject.toml": text})
    assert found(root) == [("pyproject.toml", 6, "==1.4.0", "test", True)]  # no version: admits any
    assert extract(root)[0].uneditable.startswith("pyproject.toml line 6 ([tool.tox] env_run_base deps)")


# --- pyproject.toml: flit's own metadata table, and tables the tool does not read (helper-45) -------------

FLIT = """\
[build-system]
requires = ["flit_core >=2,<4"]
build-backend = "flit_core.buildapi"

[tool.flit.metadata]
module = "acme_app"
requires = ["acme-sdk >=1.4,<2"]
dev-requires = ["acme-sdk ==1.4.0"]

[tool.flit.metadata.requires-extra]
test = ["pytest >=4.4.0", "acme-sdk[async] >=1.4.0,<2.0.0"]
"""


def test_flits_own_metadata_table_declares_and_is_bumped(tmp_path: Path) -> None:
    """typer's repository declares its dependencies in `[tool.flit.metadata]` (flit_core builds the
    package's metadata from it): never read, so a bump of pytest-xdist there ended "nothing to do", exit 0,
    with `<2.0.0` left in place."""
    root = write(tmp_path, {"pyproject.toml": FLIT})
    assert found(root) == [
        ("pyproject.toml", 7, ">=1.4,<2", "runtime", False),
        ("pyproject.toml", 8, "==1.4.0", "dev", False),
        ("pyproject.toml", 11, ">=1.4.0,<2.0.0", "test", False),
    ]
    bumped = bump(FLIT, "pyproject.toml", "pep621")
    assert 'requires = ["acme-sdk >=2.0.0,<3"]' in bumped and 'dev-requires = ["acme-sdk ==2.0.0"]' in bumped
    assert '"acme-sdk[async] >=2.0.0,<3.0.0"]' in bumped


def test_a_versioned_requirement_in_a_table_the_tool_does_not_read_is_an_uneditable_declaration(
    tmp_path: Path,
) -> None:
    """A versioned requirement of the SDK in an array of any other table (cibuildwheel's test-requires,
    pytest's required_plugins ...) is a declaration of some tool's that the run can neither read nor bump;
    a bare name (isort's known-third-party) declares nothing."""
    text = (
        '[project]\nname = "a"\nversion = "0"\n\n[tool.cibuildwheel]\ntest-requires = ["acme-sdk==1.4.0"]\n'
        '[tool.isort]\nknown_third_party = ["acme-sdk"]\n[[tool.x.y]]\nz = ["other", "acme_sdk>=1"]\n'
    )
    root = write(tmp_path, {"pyproject.toml": text})
    assert found(root) == [
        ("pyproject.toml", 6, "==1.4.0", "runtime", True),
        ("pyproject.toml", 10, ">=1", "runtime", True),
    ]
    assert extract(root)[0].uneditable.startswith(
        "pyproject.toml line 6 (tool.cibuildwheel.test-requires): a table the tool does not read dependencies"
    )
    with pytest.raises(ValueError, match="a table the tool does not read dependencies from"):
        bump(text, "pyproject.toml", "pep735")  # read, never edited
