"""copy_environment: the baseline's venv copied for the bump only where the copy is the same environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.python import installer
from agentic_codemod.adapters.python.environment import copy_environment, venv_python
from agentic_codemod.adapters.types import VerificationEnv


def _uv_venv(path: Path) -> VerificationEnv:
    uv = installer.find_uv()
    if uv is None:
        pytest.skip("uv is not installed beside the tool")
    subprocess.run(uv.venv_command(path), check=True)
    return VerificationEnv(venv_python(path), path, install={"installer": "uv"})


def _script(env: Path, name: str) -> Path:
    """A console script as uv writes one into a relocatable venv (found beside it, by relative path)."""
    script = env / "bin" / name
    script.write_text(
        "#!/bin/sh\n"
        '\'\'\'exec\' "$(dirname -- "$(realpath -- "$0")")"/\'python\' "$0" "$@"\n'
        "' '''\n"
        "import sys\nprint(sys.prefix)\n"
    )
    script.chmod(0o755)
    return script


def test_a_relocatable_uv_venv_is_copied_and_its_scripts_run_the_copy(tmp_path: Path) -> None:
    env = _uv_venv(tmp_path / "env")
    _script(env.root, "where")
    copied = copy_environment(env, tmp_path / "env-after")
    assert copied is not None
    assert copied.root == tmp_path / "env-after" and copied.interpreter == venv_python(tmp_path / "env-after")
    assert copied.install == env.install and copied.install is not env.install
    said = subprocess.run([str(copied.root / "bin" / "where")], capture_output=True, text=True, check=True)
    assert Path(said.stdout.strip()) == copied.root  # the copy's own interpreter, not the baseline's


def test_a_venv_whose_scripts_name_the_original_interpreter_is_not_copied(tmp_path: Path) -> None:
    """python -m venv (pip's installs too) write the original's absolute path into every script: a copy
    would run the baseline's packages."""
    plain = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True)
    assert (
        copy_environment(
            VerificationEnv(venv_python(plain), plain, install={"installer": "uv"}), tmp_path / "a"
        )
        is None
    )
    env = _uv_venv(tmp_path / "env")
    pip_installed = VerificationEnv(env.interpreter, env.root, install={"installer": "pip"})
    assert copy_environment(pip_installed, tmp_path / "b") is None
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_copy_never_lands_in_a_folder_that_holds_something(tmp_path: Path) -> None:
    env = _uv_venv(tmp_path / "env")
    dest = tmp_path / "env-after"
    dest.mkdir()
    (dest / "left-over").write_text("x")
    assert copy_environment(env, dest) is None
    assert [p.name for p in dest.iterdir()] == ["left-over"]
