"""Read a .gitlab-ci.yml the way GitLab composes it, far enough to assert the job graph (imported by name).

load_ci(path) -> dict          `include: local` merged, `!reference` kept as Reference, no `extends` resolved
job(ci, name) -> dict          one job with its `extends` chain merged (hashes deep, everything else replaced)
gitlab_ci_local() -> str|None  the gitlab-ci-local CLI when it (and rsync, for the shell executor) is here
project_copy(dest) -> Path     this project's files (tracked + untracked, not ignored) as a fresh git repo
schema_check(path) -> (ok, out) check-jsonschema's built-in `vendor.gitlab-ci` schema (the dev extra has it)
run_script(script, env, cwd, shell="bash") -> Ran   a job's script for real, `agentic-codemod` a stub that
                               records the argument vector it was given (Ran.argv; None if never called)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Reference:
    path: tuple[str, ...]


class _Loader(yaml.SafeLoader):
    pass


def _reference(loader: yaml.SafeLoader, node: yaml.Node) -> Reference:
    assert isinstance(node, yaml.SequenceNode)
    return Reference(tuple(str(loader.construct_scalar(n)) for n in node.value))


_Loader.add_constructor("!reference", _reference)


def load_yaml(path: Path) -> dict[str, Any]:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)


def load_ci(path: Path, root: Path = ROOT) -> dict[str, Any]:
    data = load_yaml(path)
    merged: dict[str, Any] = {}
    for inc in data.pop("include", []) or []:
        included = load_ci(root / inc["local"], root)
        merged = _deep_merge(merged, included)
    return _deep_merge(merged, data)


def job(ci: dict[str, Any], name: str) -> dict[str, Any]:
    raw = dict(ci[name])
    parents = raw.pop("extends", [])
    parents = [parents] if isinstance(parents, str) else parents
    out: dict[str, Any] = {}
    for parent in parents:
        out = _deep_merge(out, job(ci, parent))
    return _deep_merge(out, raw)


def _deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def gitlab_ci_local() -> str | None:
    found = shutil.which("gitlab-ci-local")
    return found if found and shutil.which("rsync") else None


def project_copy(dest: Path) -> Path:
    """gitlab-ci-local reads what git knows: copy the working tree (minus ignored files), commit it."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t.invalid",
        "HOME": str(dest),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
    }
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        ["commit", "-qm", "copy"],
        ["remote", "add", "origin", "https://gitlab.example.com/platform/agentic-codemod.git"],
        ["update-ref", "refs/remotes/origin/main", "HEAD"],
        ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"],
    ):
        subprocess.run(["git", *args], cwd=dest, check=True, env=env, capture_output=True)
    return dest


def schema_check(path: Path) -> tuple[bool, str]:
    """Validate a CI file against GitLab's own schema, as shipped inside check-jsonschema (no network).

    `--data-transform gitlab-ci` teaches its YAML reader GitLab's `!reference` tag.
    """
    tool = Path(sys.executable).with_name("check-jsonschema")
    assert tool.is_file(), "check-jsonschema is missing: it is in the dev extra (scripts/bootstrap.sh)"
    done = subprocess.run(
        [str(tool), "--builtin-schema", "vendor.gitlab-ci", "--data-transform", "gitlab-ci", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done.returncode == 0, done.stdout + done.stderr


RECORDER = """#!/bin/sh
mkdir -p codemod-run
for arg in "$@"; do printf '%s\\0' "$arg"; done > "$ARGV_FILE"
printf '{"reason": "recorded"}' > codemod-run/run.json
"""


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    argv: list[str] | None  # what `agentic-codemod` received, one entry per argument


def run_script(script: str, env: Mapping[str, str], cwd: Path, shell: str = "bash") -> Ran:
    """Run a job script the way the runner does (`bash -eo pipefail`, or plain `sh -e`)."""
    bin_dir = cwd / ".stub-bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    stub = bin_dir / "agentic-codemod"
    stub.write_text(RECORDER)
    stub.chmod(0o755)
    argv_file = cwd / ".argv"
    argv_file.unlink(missing_ok=True)
    flags = ["-eo", "pipefail"] if shell == "bash" else ["-e"]
    done = subprocess.run(
        [shell, *flags, "-c", script],
        cwd=cwd,
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}", "ARGV_FILE": str(argv_file), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    argv = argv_file.read_bytes().decode().split("\0")[:-1] if argv_file.exists() else None
    return Ran(done.returncode, done.stdout, done.stderr, argv)
