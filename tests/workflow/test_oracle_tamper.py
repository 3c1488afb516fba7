"""The tamper gate's second half: what the candidate introduces that changes how its tests run or read
(pytest hooks and plugins, pytest configuration of any name, start-up files, pytest outside the tests),
and the scope gate's view of special names, new conftest.py files and hostile spellings."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import ADAPTER
from agentic_codemod.adapters.python.tamper import introduced
from agentic_codemod.config import DEFAULT_DENY_GLOBS
from agentic_codemod.workflow import gates
from agentic_codemod.workflow.gates import Change, changed_paths, scope_gate

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
BASE = {
    "src/app/__init__.py": "def main():\n    return 1\n",
    "tests/test_app.py": "import pytest\n\n\ndef test_main():\n    assert True\n",
    "tests/conftest.py": "import pytest\n",
    "tox.ini": "[tox]\nenvlist = py311\n",
    "setup.cfg": "[metadata]\nname = app\n",
    "pyproject.toml": '[project]\nname = "app"\n',
    "pytest.ini": "[pytest]\naddopts = -q\n",
}
REPORT_HOOK = "def pytest_runtest_makereport(item, call):\n    pass\n"


def messages(path: str, before: str | None, after: str, *, is_test: bool = False) -> list[str]:
    found = introduced(path, before, after, is_test=is_test)
    assert all(path in message for message in found)  # every finding names its path
    return found


# -- hooks and plugins --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        (REPORT_HOOK, "pytest hook pytest_runtest_makereport introduced in src/app/x.py"),
        ("def pytest_report_teststatus(report, config):\n    return 'passed', '.', 'ok'\n", "pytest_report_"),
        ("def pytest_sessionfinish(session):\n    session.exitstatus = 0\n", "pytest_sessionfinish"),
        ("async def pytest_pyfunc_call(pyfuncitem):\n    return True\n", "pytest_pyfunc_call"),
        ("import pluggy\n\n@pluggy.HookimplMarker('pytest')\ndef f(): ...\n", "pytest hookimpl"),
        ("def setup(config):\n    config.pluginmanager.register(object())\n", "plugin manager use"),
        ("pytest_plugins = ['evil']\n", "pytest_plugins list"),
        ("import os\nos.environ['PYTEST_PLUGINS'] = 'evil'\n", "PYTEST_PLUGINS introduced"),
        (
            "def pytest_collection_modifyitems(items):\n    items[:] = [i for i in items if 'x' in i.name]\n",
            "pytest hook pytest_collection_modifyitems",
        ),
        (
            "def pytest_collection_modifyitems(config, items):\n"
            "    config.hook.pytest_deselected(items=items[:1])\n",
            "pytest hook pytest_collection_modifyitems",
        ),
        ("def pytest_runtest_call(item:\n    pass\n", "pytest hook pytest_runtest_call"),  # no parse
    ],
    ids=lambda v: str(v)[:30],
)
def test_a_new_hook_or_plugin_is_named_with_its_path(after: str, expected: str) -> None:
    found = messages("src/app/x.py", "x = 1\n", after)
    assert any(expected in m for m in found), found


def test_hooks_are_flagged_in_test_files_too() -> None:
    assert messages("tests/conftest.py", "import pytest\n", "import pytest\n" + REPORT_HOOK, is_test=True)


def test_what_base_already_had_is_not_introduced() -> None:
    text = "import pytest\n\n" + REPORT_HOOK
    assert messages("src/app/plugin.py", text, text + "\nX = 2\n") == []


@pytest.mark.parametrize(
    "after",
    [
        "def pytest_addoption(parser):\n    parser.addoption('--slow')\n",
        "def pytest_generate_tests(metafunc):\n    pass\n",
        "def pytest_collection_modifyitems(items):\n    items.sort(key=lambda i: i.name)\n",
    ],
)
def test_harmless_hooks_pass(after: str) -> None:
    assert messages("tests/conftest.py", "import pytest\n", "import pytest\n" + after, is_test=True) == []


@pytest.mark.parametrize(
    "after",
    [
        "import pytest\n",
        "from _pytest.reports import TestReport\n",
        "import pluggy\n",
        "from pytest import hookimpl as h\n",
        "import importlib\nimportlib.import_module('_pytest.runner')\n",
        "__import__('pytest')\n",
    ],
)
def test_code_outside_the_tests_that_imports_pytest_fails(after: str) -> None:
    found = messages("src/app/x.py", "", after)
    assert any("outside the tests" in m for m in found), found


def test_tests_may_import_pytest() -> None:
    assert (
        messages("tests/test_new.py", None, "import pytest\n\n\ndef test_x():\n    assert 1\n", is_test=True)
        == []
    )


# -- configuration and start-up files -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("pytest.ini", None, "[pytest]\n"),
        ("tests/.pytest.ini", None, ""),
        ("pytest.toml", None, "[pytest]\n"),
        ("sub/.pytest.toml", None, "[pytest]\n"),
        ("tox.ini", "[tox]\n", "[tox]\n\n[pytest]\naddopts = -q\n"),
        ("setup.cfg", "[metadata]\n", "[metadata]\n\n[tool:pytest]\naddopts = -q\n"),
        ("pyproject.toml", '[project]\nname = "a"\n', '[project]\nname = "a"\n\n[tool.pytest.ini_options]\n'),
        ("pyproject.toml", '[project]\nname = "a"\n', '[project]\nname = "a"\n[tool.pytest]\nx = 1\n'),
        # nested past tomllib's depth (a RecursionError, before: the gate crashed): read by spelling
        ("pyproject.toml", '[project]\nname = "a"\n', "[tool.pytest]\nx = " + "[" * 100_000 + "]" * 100_000),
        ("src/conftest.py", None, "X = 1\n"),
    ],
    ids=lambda v: str(v)[:24],
)
def test_new_pytest_configuration_of_any_name_fails(path: str, before: str | None, after: str) -> None:
    found = messages(path, before, after, is_test=path.endswith(".py"))
    assert any(f"new pytest configuration: {path}" in m or f"new conftest.py: {path}" in m for m in found), (
        found
    )


@pytest.mark.parametrize(
    ("path", "before", "after", "expected"),
    [
        ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -p evil\n", "pytest option -p"),
        ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -pevil\n", "pytest option -p"),
        ("pytest.ini", "[pytest]\n", "[pytest]\naddopts = -o python_files=*.txt\n", "pytest option -o"),
        ("tox.ini", "[pytest]\n", "[pytest]\naddopts = -c other.ini\n", "pytest option -c"),
        ("setup.cfg", "[tool:pytest]\n", "[tool:pytest]\naddopts = --rootdir=/tmp\n", "--rootdir"),
        ("tox.ini", "[testenv]\n", "[testenv]\nsetenv = PYTEST_PLUGINS=evil\n", "PYTEST_PLUGINS"),
        ("tox.ini", "[testenv]\n", "[testenv]\nsetenv = PYTEST_ADDOPTS=-p evil\n", "PYTEST_ADDOPTS"),
        (
            "pyproject.toml",
            '[project]\nname = "a"\n',
            '[project]\nname = "a"\n[project.entry-points.pytest11]\nevil = "a.evil"\n',
            "pytest11",
        ),
    ],
    ids=lambda v: str(v)[:24],
)
def test_plugin_options_added_to_config_fail(path: str, before: str, after: str, expected: str) -> None:
    found = messages(path, before, after)
    assert any(expected in m for m in found), found


@pytest.mark.parametrize("path", ["src/sitecustomize.py", "usercustomize.py", "src/zz.pth", "lib/A.PTH"])
def test_a_written_start_up_file_fails(path: str) -> None:
    assert f"interpreter start-up file written: {path}" in messages(path, None, "import os\n")
    assert messages(path, "import os\n", "import os\n") == []


# -- through git: the gate on a real candidate --------------------------------------------------------------


def sh(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=ENV, check=True
    )
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    for rel, text in BASE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    sh(root, "init", "-q", "-b", "main")
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "base")
    return root, sh(root, "rev-parse", "HEAD").strip()


def tamper_messages(root: Path, base: str) -> list[str]:
    result = gates.test_tamper_check(root, base, changed_paths(root, base), facts=ADAPTER.test_facts)
    assert result.passed == (not result.findings)
    return [f.message for f in result.findings]


def test_a_plugin_module_added_to_src_fails_the_tamper_gate(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "src/app/_hooks.py").write_text("import pytest\n\n\n" + REPORT_HOOK)
    found = tamper_messages(root, base)
    assert "pytest hook pytest_runtest_makereport introduced in src/app/_hooks.py" in found
    assert "import of pytest outside the tests introduced in src/app/_hooks.py" in found


def test_a_hook_added_to_an_existing_module_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    with (root / "src/app/__init__.py").open("a") as f:
        f.write("\n\n" + REPORT_HOOK)
    assert any("pytest_runtest_makereport" in m for m in tamper_messages(root, base))


def test_a_file_renamed_into_a_pytest_config_name_is_new_configuration(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "pytest.ini").unlink()
    sh(root, "commit", "-qam", "no pytest.ini")
    base = sh(root, "rev-parse", "HEAD").strip()
    (root / "tox.ini").rename(root / ".pytest.ini")
    assert "new pytest configuration: .pytest.ini" in tamper_messages(root, base)


def test_p_added_to_the_existing_addopts_fails(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "pytest.ini").write_text("[pytest]\naddopts = -q -p src.app.evil\n")
    assert "pytest option -p introduced in pytest.ini" in tamper_messages(root, base)


def test_an_ordinary_source_change_passes(repo: tuple[Path, str]) -> None:
    root, base = repo
    (root / "src/app/__init__.py").write_text("def main():\n    return 2\n")
    (root / "src/app/util.py").write_text("import os\n\n\ndef cwd():\n    return os.getcwd()\n")
    assert tamper_messages(root, base) == []


# -- the scope gate: special names, new conftest.py, spellings ----------------------------------------------


def scope(changes: list[Change], allowed: list[str]) -> list[str]:
    return [f.message for f in scope_gate(changes, allowed, DEFAULT_DENY_GLOBS).findings]


@pytest.mark.parametrize(
    "path",
    [
        "src/sitecustomize.py",
        "src/app/usercustomize.py",
        "src/evil.pth",
        "src/.gitattributes",
        "src/.gitmodules",
        "src/constraints.txt",
        "src/poetry.lock",
        "src/setup.py",
        "src/.github/workflows/x.yml",
        "src/ci/x.gitlab-ci.yml",
    ],
)
def test_scope_gate_denies_special_names_at_any_depth_unless_named(path: str) -> None:
    change = [Change(path, "A", None, "100644")]
    assert any(m.startswith("denied by") and path in m for m in scope(change, ["src/**"]))
    assert scope(change, ["src/**", path]) == []


def test_scope_gate_refuses_a_new_conftest_unless_named() -> None:
    added = [Change("src/conftest.py", "A", None, "100644")]
    assert scope(added, ["src/**"]) == ["new conftest.py not named by the task: src/conftest.py"]
    assert scope(added, ["src/**", "src/conftest.py"]) == []
    moved = [Change("src/app/conftest.py", "R", "src/app/helpers.py", "100644")]
    assert scope(moved, ["src/**"]) == ["new conftest.py not named by the task: src/app/conftest.py"]
    assert scope([Change("src/conftest.py", "M", None, "100644")], ["src/**"]) == []


def test_scope_gate_refuses_hostile_names_that_git_lists(repo: tuple[Path, str]) -> None:
    """A file made by any means (not through the workspace) is caught by its name in the git listing."""
    root, base = repo
    names = ["src/app/\uff58.py", "src/app/cafe\u0301.py", "src/app/a\u200b.py", "src/app/\u202ecod.py"]
    for name in names:
        (root / name).write_text("x = 1\n")
    os.close(os.open(os.path.join(os.fsencode(root), b"src/app/\xff.py"), os.O_CREAT | os.O_WRONLY, 0o644))
    found = scope(changed_paths(root, base), ["src/**"])
    for name in names:
        assert any(name in m and ("NFKC" in m or "invisible or bidi" in m) for m in found), (name, found)
    assert any("src/app/\udcff.py" in m for m in found), found
    assert len(found) == len(names) + 1
