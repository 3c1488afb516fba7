"""The verification environment: what gets installed (exact pip argv), and one real install."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python.environment import (
    install_dependencies,
    pip_install_command,
    prepare_environment,
)
from agentic_codemod.adapters.python.install_plan import InstallPlan, plan_install
from agentic_codemod.adapters.python.update import update_dependency
from agentic_codemod.adapters.types import Runner
from agentic_codemod.config import MOVED_TO_PACKAGES, PackageSources, PythonEnvSettings, Settings
from agentic_codemod.errors import EnvironmentUnavailable
from agentic_codemod.models import Dependency


def write(root: Path, files: dict[str, str]) -> Path:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content, encoding="utf-8")
    return root


def settings(**python: object) -> Settings:
    """Settings from the run options' names (index_url, find_links, no_index: the package sources)."""
    sources = {new: python.pop(old) for old, new in MOVED_TO_PACKAGES.items() if old in python}
    packages = PackageSources.model_validate(sources)
    return Settings(packages=packages, python=PythonEnvSettings.model_validate(python))


BUILD_SYSTEM = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'


def test_runtime_and_one_test_requirement_file_are_installed_dev_docs_lint_are_not(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "requirements.txt": "acme-sdk==1.4.0\n",
            "requirements-dev.txt": "-r requirements.txt\npytest==9.0.0\n",
            "requirements-docs.txt": "sphinx\n",
            "requirements/test.txt": "coverage\n",
            "requirements/lint.txt": "ruff\n",
            "tests/test_app.py": "",
        },
    )
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        requirement_files=["requirements.txt", "requirements/test.txt"],
        requirements=["pytest"],
        test_source="requirements/test.txt",
    )


def test_project_with_build_system_installs_itself_and_its_test_extra(tmp_path: Path) -> None:
    pyproject = BUILD_SYSTEM + (
        '[project]\nname = "app"\ndependencies = ["acme-sdk==1.4.0"]\n'
        '[project.optional-dependencies]\ntest = ["pytest-mock"]\ndocs = ["sphinx"]\n'
        '[dependency-groups]\ndev = ["ruff"]\nrelease = ["twine"]\n'
    )
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".", requirements=["pytest-mock", "pytest"], test_source="extra [test]"
    )


def test_extra_test_requirements_are_skipped_when_declared_or_not_pytest(tmp_path: Path) -> None:
    write(
        tmp_path, {"requirements.txt": "-r requirements/base.txt\n", "requirements/base.txt": "PyTest>=8\n"}
    )
    write(tmp_path, {"tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()).requirements == []
    unittest_only = write(tmp_path / "u", {"requirements.txt": "acme-sdk\n", "src/test_app.py": ""})
    assert plan_install(unittest_only, Settings()).requirements == []


def test_application_without_build_system_installs_its_dependencies_directly(tmp_path: Path) -> None:
    pyproject = '[project]\nname = "app"\ndependencies = ["acme-sdk==1.4.0", "requests"]\n'
    write(tmp_path, {"pyproject.toml": pyproject, "tests/test_app.py": ""})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        requirements=["acme-sdk==1.4.0", "requests", "pytest"]
    )


def test_setup_cfg_project_with_setup_py(tmp_path: Path) -> None:
    cfg = (
        "[options]\ninstall_requires =\n    acme-sdk==1.4.0\n[options.extras_require]\ntests =\n    pytest\n"
    )
    write(tmp_path, {"setup.cfg": cfg, "setup.py": "from setuptools import setup\nsetup()\n"})
    assert plan_install(tmp_path, Settings()) == InstallPlan(
        project=".", requirements=["pytest"], test_source="extra [tests]"
    )


def test_pip_command_uses_this_pip_against_the_env_interpreter(tmp_path: Path) -> None:
    plan = InstallPlan(requirement_files=["requirements.txt"], project=".[test]", requirements=["pytest"])
    config = settings(index_url="https://pypi.example/simple", find_links=["/wheels"], no_index=True)
    assert pip_install_command(tmp_path / "bin/python", config, plan, upgrade=True) == [
        sys.executable, "-P", "-m", "pip", "--python", str(tmp_path / "bin/python"), "install",
        "--disable-pip-version-check", "--no-input", "--no-index",
        "--index-url", "https://pypi.example/simple", "--find-links", "/wheels",
        "--upgrade", "-r", "requirements.txt", "-e", ".[test]", "--", "pytest",
    ]  # fmt: skip


def build_wheel(root: Path, wheels: Path, version: str, runner: Runner) -> None:
    source = write(
        root / f"tinypkg-{version}",
        {
            "pyproject.toml": BUILD_SYSTEM + f'[project]\nname = "tinypkg"\nversion = "{version}"\n',
            "tinypkg/__init__.py": f'VERSION = "{version}"\n',
        },
    )
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index"]
    result = runner([*argv, "-w", str(wheels), str(source)], cwd=root, timeout_s=120)
    assert result.ok, result.output_tail


def imported_version(python: Path, runner: Runner, cwd: Path) -> str:
    result = runner([str(python), "-c", "import tinypkg; print(tinypkg.VERSION)"], cwd=cwd, timeout_s=60)
    assert result.ok, result.output_tail
    return result.output_tail.strip()


@pytest.mark.slow
def test_real_environment_installs_from_local_wheels_and_reinstalls_after_a_bump(
    tmp_path: Path, runner: Runner
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(tmp_path, wheels, "0.1.0", runner)
    build_wheel(tmp_path, wheels, "0.2.0", runner)
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg==0.1.0  # pinned\n", "app.py": ""})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[])

    env = prepare_environment(repo, tmp_path / "env", config, runner, [])

    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    assert env.interpreter == tmp_path / "env" / "bin" / "python"
    assert imported_version(env.interpreter, runner, repo) == "0.1.0"

    dependency = Dependency(name="tinypkg", specifier="==0.1.0", file="requirements.txt", kind="requirements")
    bumped = update_dependency((repo / "requirements.txt").read_text(), dependency, "0.2.0")
    (repo / "requirements.txt").write_text(bumped)
    result = install_dependencies(repo, env, config, runner, ["tinypkg==0.2.0"])

    assert result.ok, result.output_tail
    assert env.install_log[-1] is result
    assert imported_version(env.interpreter, runner, repo) == "0.2.0"


@pytest.mark.slow
def test_a_test_child_process_with_a_scrubbed_environment_writes_no_bytecode_beside_the_code(
    tmp_path: Path, runner: Runner
) -> None:
    """jupyter_core's tests run `python jupyter witness` with env={"PATH": ""}: PYTHONDONTWRITEBYTECODE is
    gone there, and the child's .pyc files beside the repository's modules ended the run as planted code
    (the test copy's shadowing check). The venv itself says it: no bytecode, in every interpreter of it;
    the installed packages keep what the install compiled."""
    wheels = tmp_path / "wheels"
    build_wheel(tmp_path, wheels, "0.1.0", runner)
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg==0.1.0\n", "app/__init__.py": "X = 1\n"})
    config = settings(find_links=[str(wheels)], no_index=True, extra_test_requirements=[])
    env = prepare_environment(repo, tmp_path / "env", config, runner, [])
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail

    child = subprocess.run(
        [str(env.interpreter), "-c", "import app, tinypkg; print(app.X)"],
        cwd=repo,
        env={"PATH": ""},
        capture_output=True,
        text=True,
        check=False,
    )

    assert child.stdout.strip() == "1", child.stderr
    assert not list(repo.rglob("*.pyc")), "the child wrote bytecode into the repository"
    assert list((tmp_path / "env").rglob("tinypkg/__pycache__/*.pyc")), "the install compiled nothing"


@pytest.mark.slow
def test_install_failure_is_data(tmp_path: Path, runner: Runner) -> None:
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg-never-published==1.0\n"})
    config = settings(find_links=[str(tmp_path)], no_index=True, extra_test_requirements=[])
    env = prepare_environment(repo, tmp_path / "env", config, runner, [])
    assert not env.install_log[-1].ok
    # pip: "No matching distribution found"; uv: "... was not found in the provided package locations"
    assert re.search(r"No matching distribution|was not found in the", env.install_log[-1].output_tail)


@pytest.mark.slow
def test_unreachable_index_pauses_the_run(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_RETRIES", "1")  # pip reports a broken connection only when it retries
    repo = write(tmp_path / "repo", {"requirements.txt": "tinypkg-never-published==1.0\n"})
    config = settings(index_url="https://127.0.0.1:9/simple", extra_test_requirements=[])
    with pytest.raises(EnvironmentUnavailable, match="package index cannot be reached"):
        prepare_environment(repo, tmp_path / "env", config, runner, [])
