"""Bump one dependency's range in package.json (pure text in, text out) and refresh package-lock.json.

    update_dependency(content, dependency, target) -> str
    update_lockfiles(root, dependency, target, runner) -> [ArtifactNotice] | None

The range is rewritten by the dependency's range strategy (ranges.py); only that JSON string changes.
With `dependency.line` set only the declaration on that line changes; without it, every declaration of
the package in the file. Lock entries are never edited: package-lock.json / npm-shrinkwrap.json is
refreshed by npm itself, in the directory of the root package.json (workspaces share it):

    npm install --package-lock-only --ignore-scripts --no-audit --no-fund

--package-lock-only installs nothing and --ignore-scripts runs no repository code; it still runs inside
the install box (the pipeline's runner). The caller's registry settings go in as npm_config_* variables
and its credentials through a private user config file in the copy, removed when npm ends.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from agentic_codemod.adapters.npm import LOCKFILES, npm_config, package_json, ranges
from agentic_codemod.adapters.npm.extract import KIND_LOCK
from agentic_codemod.adapters.types import ArtifactNotice, ProcessResult, Runner, refreshed_message
from agentic_codemod.config import Budgets
from agentic_codemod.models import Dependency

LOCK_COMMAND = ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"]
LOCK_TIMEOUT_S = float(Budgets.model_fields["install_timeout_s"].default)
USERCONFIG = ".codemod-npmrc"  # the caller's credentials, for the length of one npm call, in a copy


def update_dependency(content: str, dependency: Dependency, target: str) -> str:
    """`content` with the declaration(s) of `dependency` rewritten to admit `target`. ValueError when the
    target is not a version, the package is not declared (at that line), or no declaration carries a
    version this tool can edit (a tag, URL, path or workspace reference)."""
    if dependency.kind == KIND_LOCK:
        raise ValueError(f"{dependency.file} is a lockfile: npm refreshes it, it is never edited")
    try:
        declarations = package_json.find(content, dependency.name)
    except ValueError as exc:
        raise ValueError(f"{dependency.file}: {exc}") from exc
    if dependency.line is not None:
        declarations = [d for d in declarations if d.line == dependency.line]
    if not declarations:
        at = f" at line {dependency.line}" if dependency.line is not None else ""
        raise ValueError(f"{dependency.name!r} is not declared in {dependency.file}{at}")

    def bump(declaration: package_json.Declaration) -> str | None:
        if dependency.line is not None and declaration.line != dependency.line:
            return None
        try:
            return ranges.new_range(declaration.specifier, target, dependency.range_strategy)
        except ValueError as exc:
            raise ValueError(f"{dependency.file} line {declaration.line}: {exc}") from exc

    if all(bump(d) is None for d in declarations):
        lines = ", ".join(str(d.line) for d in declarations)
        raise ValueError(
            f"{dependency.file} declares {dependency.name!r} without a version this tool can edit "
            f"(line {lines}: a tag, URL, path or workspace reference); change it by hand"
        )
    return package_json.rewrite(content, dependency.name, bump)


def update_lockfiles(
    root: Path, dependency: Dependency, target: str, runner: Runner
) -> list[ArtifactNotice] | None:
    """Refresh the lockfile beside the root package.json; None when there is none."""
    present = [root / name for name in LOCKFILES if (root / name).is_file()]
    if not present:
        return None
    return [_refresh(root, lockfile, runner) for lockfile in present]


def _refresh(root: Path, lockfile: Path, runner: Runner) -> ArtifactNotice:
    name = lockfile.relative_to(root).as_posix()
    command = " ".join(LOCK_COMMAND)
    if shutil.which("npm") is None:
        return ArtifactNotice(name, False, f"npm is not on PATH: {name} not refreshed; run `{command}`")
    before = lockfile.read_bytes()
    result = run_npm(LOCK_COMMAND, root, runner, LOCK_TIMEOUT_S)
    if not result.ok:
        return ArtifactNotice(name, False, f"`{command}` failed: {_failure(result)}")
    after = lockfile.read_bytes() if lockfile.is_file() else b""
    if after == before:
        return ArtifactNotice(name, False, f"`{command}` left {name} unchanged")
    digest = hashlib.sha256(after).hexdigest()
    return ArtifactNotice(name, True, refreshed_message(command, digest), sha256=digest)


def run_npm(argv: list[str], cwd: Path, runner: Runner, timeout_s: float) -> ProcessResult:
    """One npm call with the caller's registry settings (variables) and credentials (a private user
    config file in `cwd`, a disposable copy, removed afterwards)."""
    config = npm_config.read_caller_config(os.environ)
    auth = npm_config.auth_lines(config)
    userconfig = cwd / USERCONFIG
    argv = list(argv)
    if auth:
        fd = os.open(userconfig, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(auth)
        argv += ["--userconfig", str(userconfig)]
    try:
        return runner(argv, cwd=cwd, timeout_s=timeout_s, env=npm_config.install_env(config))
    finally:
        userconfig.unlink(missing_ok=True)


def _failure(result: ProcessResult) -> str:
    if result.timed_out:
        return f"timed out after {result.duration_s:.0f}s\n{result.output_tail}"
    if result.error:
        return result.error
    return f"exit {result.exit_code}\n{result.output_tail}"
