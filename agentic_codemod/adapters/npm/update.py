"""Bump one dependency's range in package.json (pure text in, text out) and refresh package-lock.json.

    update_dependency(content, dependency, target) -> str
    update_lockfiles(root, dependency, target, runner, cache) -> [ArtifactNotice] | None

The range is rewritten by the dependency's range strategy (ranges.py); only that JSON string changes.
With `dependency.line` set only the declaration on that line changes; without it, every declaration of
the package in the file. Lock entries are never edited: package-lock.json / npm-shrinkwrap.json is
refreshed by npm itself, in the directory of the root package.json (workspaces share it):

    npm install --package-lock-only --ignore-scripts --no-audit --no-fund

npm locks the newest version the bumped range admits, which need not be the target the run tests (`^5.2.1`
locks 5.2.5 when that is out). Then the target is locked by name, the root package.json put back as the
bump wrote it, and the lock refreshed once more (npm keeps a locked version the range admits):

    npm install --package-lock-only --ignore-scripts --no-audit --no-fund NAME@TARGET
    npm install --package-lock-only --ignore-scripts --no-audit --no-fund

A lockfile that still locks another version at node_modules/NAME is not refreshed (a notice: a human
looks), never one that ships a version no test ran on.

--package-lock-only installs nothing and --ignore-scripts runs no repository code; it still runs inside
the install box (the pipeline's runner). The caller's registry settings go in as npm_config_* variables
and its credentials through a private user config file in the copy, removed when npm ends.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from agentic_codemod import json_input
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
    root: Path,
    dependency: Dependency,
    target: str,
    runner: Runner,
    cache: Path | None = None,
    network: bool = True,
) -> list[ArtifactNotice] | None:
    """Refresh the lockfile beside the root package.json; None when there is none. `cache`: npm's cache
    for it (the run's install cache: the package documents it fetches are what the bump's install of the
    target then reads, environment.SAME_RUN). `network` changes nothing here: npm's refresh runs no
    repository code (--ignore-scripts), so the caller's registry settings go in either way."""
    present = [root / name for name in LOCKFILES if (root / name).is_file()]
    if not present:
        return None
    return [_refresh(root, lockfile, dependency.name, target, runner, cache) for lockfile in present]


def _refresh(
    root: Path, lockfile: Path, package: str, target: str, runner: Runner, cache: Path | None
) -> ArtifactNotice:
    name = lockfile.relative_to(root).as_posix()
    command = " ".join(LOCK_COMMAND)
    if shutil.which("npm") is None:
        return ArtifactNotice(name, False, f"npm is not on PATH: {name} not refreshed; run `{command}`")
    before = lockfile.read_bytes()
    result = run_npm(LOCK_COMMAND, root, runner, LOCK_TIMEOUT_S, cache)
    if result.ok and _locked(lockfile, package) not in (None, target):
        result = _lock_target(root, f"{package}@{target}", runner, cache)
    if not result.ok:
        return ArtifactNotice(name, False, f"`{' '.join(result.argv)}` failed: {_failure(result)}")
    locked = _locked(lockfile, package)
    if locked not in (None, target):
        return ArtifactNotice(name, False, f"`{command}` locks {package} {locked}, not {target}")
    after = lockfile.read_bytes() if lockfile.is_file() else b""
    if after == before:
        return ArtifactNotice(name, False, f"`{command}` left {name} unchanged")
    digest = hashlib.sha256(after).hexdigest()
    return ArtifactNotice(name, True, refreshed_message(command, digest), sha256=digest)


def _lock_target(root: Path, spec: str, runner: Runner, cache: Path | None) -> ProcessResult:
    """Lock `spec` (NAME@TARGET) by name, put the root package.json back as the bump wrote it (npm
    rewrites its range there, and nowhere else), and refresh once more so the lock's ranges are its own."""
    manifest = root / "package.json"  # a regular file: dependency_files refuses a symlinked one
    written = manifest.read_bytes()
    try:
        result = run_npm([*LOCK_COMMAND, spec], root, runner, LOCK_TIMEOUT_S, cache)
    finally:
        manifest.write_bytes(written)
    return run_npm(LOCK_COMMAND, root, runner, LOCK_TIMEOUT_S, cache) if result.ok else result


def _locked(lockfile: Path, package: str) -> str | None:
    """The version the lockfile locks at node_modules/<package>; None when it locks none there."""
    try:
        entry = (
            json_input.loads(lockfile.read_text(encoding="utf-8"))
            .get("packages", {})
            .get(f"node_modules/{package}")
        )
    except (OSError, ValueError, AttributeError):
        return None
    return str(entry.get("version")) if isinstance(entry, dict) and entry.get("version") else None


def run_npm(
    argv: list[str], cwd: Path, runner: Runner, timeout_s: float, cache: Path | None = None
) -> ProcessResult:
    """One npm call with the caller's registry settings (variables) and credentials (a private user
    config file in `cwd`, a disposable copy, removed afterwards); `cache`: npm's cache folder (else
    npm's default, under HOME, which the sandbox makes an empty tmpfs for each call)."""
    config = npm_config.read_caller_config(os.environ)
    auth = npm_config.auth_lines(config)
    argv = list(argv)
    env = npm_config.install_env(config) | ({"npm_config_cache": str(cache)} if cache is not None else {})
    if not auth:
        return runner(argv, cwd=cwd, timeout_s=timeout_s, env=env)
    # The copy is the repository's, and install scripts of an earlier npm call could write around it:
    # the folder is opened without following a link (a swapped-in symlink is refused), whatever it holds
    # under the name goes, and the file is created new in that very folder.
    try:
        folder = os.open(cwd, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return ProcessResult(argv=argv, exit_code=None, output_tail="", duration_s=0.0, error=f"{cwd}: {exc}")
    try:
        _remove_at(folder, USERCONFIG)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(USERCONFIG, flags, 0o600, dir_fd=folder), "w", encoding="utf-8") as handle:
            handle.write(auth)
        argv += ["--userconfig", str(cwd / USERCONFIG)]
        return runner(argv, cwd=cwd, timeout_s=timeout_s, env=env)
    finally:
        _remove_at(folder, USERCONFIG)
        os.close(folder)


def _remove_at(folder: int, name: str) -> None:
    """Remove the entry `name` of the open folder (a file, a link, or a folder's tree), following no link."""
    try:
        os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
    except (IsADirectoryError, PermissionError):
        shutil.rmtree(name, dir_fd=folder)


def _failure(result: ProcessResult) -> str:
    if result.timed_out:
        return f"timed out after {result.duration_s:.0f}s\n{result.output_tail}"
    if result.error:
        return result.error
    return f"exit {result.exit_code}\n{result.output_tail}"
