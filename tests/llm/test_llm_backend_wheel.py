"""`llm_backend up` for the mock works from an installed wheel, in a directory that is not the repository.

The wheel is built from this tree (`pip wheel . --no-deps`, setup.py ships llm/ as agentic_codemod.llm_files)
and installed into a fresh venv; the dependencies come from the test venv through a path entry placed after
the fresh venv's own site-packages, so the wheel's agentic_codemod is the one imported, not this checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import httpx
import pytest
from mock_llm import free_port

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "setup.py", "README.md", "agentic_codemod", "llm")


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:  # a copy: the build writes build/ and *.egg-info, never into the tree
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run(
        [*pip, "wheel", ".", "--no-deps", "--no-build-isolation", "-w", str(base / "dist"), "-q"],
        cwd=src,
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = (base / "dist").glob("agentic_codemod-*.whl")
    env_dir = base / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [*pip, "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    site = next((env_dir / "lib").glob("python3*/site-packages"))
    deps = next(p for p in sys.path if p.endswith("site-packages") and Path(p, "httpx").is_dir())
    (site / "zz_test_deps.pth").write_text(deps + "\n")  # appended after site: the wheel's package wins
    return python


def test_the_mock_starts_from_the_installed_wheel_outside_the_repository(
    wheel_python: Path, tmp_path: Path
) -> None:
    where = tmp_path / "elsewhere"
    where.mkdir()
    port = free_port()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "BACKEND": "mock"}
    env["CODEMOD_LLM_PORT"] = str(port)
    installed = subprocess.run(
        [str(wheel_python), "-c", "import agentic_codemod; print(agentic_codemod.__file__)"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert not installed.startswith(str(ROOT)), installed  # the wheel, not this checkout
    run = [str(wheel_python), "-m", "agentic_codemod.llm.backend"]
    try:
        up = subprocess.run([*run, "up"], cwd=where, env=env, capture_output=True, text=True, timeout=60)
        assert up.returncode == 0, up.stdout + up.stderr
        backend = json.loads((where / ".cache" / "llm" / "backend.json").read_text())
        assert backend["up"][1].startswith(str(Path(installed).parent / "llm_files"))
        models = httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=5).json()
        assert [m["id"] for m in models["data"]] == ["mock-model"]
    finally:
        down = subprocess.run([*run, "down"], cwd=where, env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 0 and "mock stopped" in down.stdout, down.stdout + down.stderr
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2)
