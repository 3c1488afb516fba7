"""A small git repository to point the enforcement layer at."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout.strip()


def make_repo(root: Path, files: dict[str, str]) -> str:
    """Write `files`, commit them, return the commit id."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return git(root, "rev-parse", "HEAD")


REPO_FILES = {
    "src/app.py": "import acme\n\n\ndef main():\n    return acme.fetch('x')\n",
    "tests/test_app.py": "from src.app import main\n\n\ndef test_main():\n    assert main()\n",
    "README.md": "# app\n",
    "requirements.txt": "acme-sdk==1.4.0\n",
    ".gitlab-ci.yml": "stages: [test]\n",
    ".env": "API_TOKEN=supersecretvalue123\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    make_repo(root, REPO_FILES)
    return root


@pytest.fixture(name="git")
def git_fixture():
    """`git(root, *args) -> stdout` with a fixed identity."""
    return git
