"""Bump one dependency's version declaration (pure text in, text out) and refresh lockfiles.

The declaration's range is rewritten by its range strategy (`Dependency.range_strategy`, from the task's
`sdk.range_strategy`; ranges.py): `auto` (= Renovate's `bump`) keeps the operator and the shape, moves
floors and pins to the target, lifts only a cap that excludes it, and never adds one:

    ==1.4.0 / === 1.4.0 / Poetry 1.4.0   ->  ==2.0.0 / === 2.0.0 / 2.0.0
    ~=1.4 / ==1.* / Poetry ^1.4, ~1.4    ->  ~=2.0 / ==2.* / ^2.0.0, ~2.0.0
    >=1.2 (open) / >=1.2,<2              ->  >=2.0.0 / >=2.0.0,<3
    no version: acme-sdk / "*" / URL      ->  left as written

With `dependency.line` set only the declarations on that line change (the one the bump plan chose: a
test-minimum pin in the same file stays); without it, every declaration of the dependency in the text.
Only the specifier changes: name, extras, markers, comments, quoting and every other line stay byte for
byte. Lockfiles are refreshed by the ecosystem's own tool, run in the lockfile's directory after the
pipeline has written the bumped file; a missing tool or a failing tool comes back as an ArtifactNotice.
The lock tool gets the caller's certificates and proxy from pip's configuration, as the installs do
(lock_env): the sandbox it runs in sees neither the machine's variables nor a file outside the copy.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import (
    LOCKFILES,
    compiled,
    pep508,
    pip_config,
    pyproject,
    ranges,
    requirements_file,
    setup_cfg,
    setup_py,
    tox_ini,
)
from agentic_codemod.adapters.python.dependency_files import read_dependency_files
from agentic_codemod.adapters.python.extract import file_format
from agentic_codemod.adapters.python.pep508 import Declaration, DependencyFormat
from agentic_codemod.adapters.types import ArtifactNotice, ProcessResult, Runner, refreshed_message
from agentic_codemod.config import Budgets
from agentic_codemod.models import Dependency
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.rooted import RootedFS

if TYPE_CHECKING:
    from agentic_codemod.tools.sandbox import Box

LOCK_TOOLS = {"poetry.lock": "poetry", "uv.lock": "uv", "pdm.lock": "pdm", "Pipfile.lock": "pipenv"}
# Poetry asks the keyring for index credentials; in the sandbox no keyring daemon answers.
POETRY_ENV = {"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
POETRY_BY_HAND = (
    " twice: first with {name}=={target} pinned in pyproject.toml, then with the bumped range (Poetry alone "
    "locks the newest version a range admits)"
)
# Written beside pdm.lock in the disposable copy the lock tool runs on (never in the candidate).
PDM_OVERRIDE = ".agentic-codemod-pdm-override.txt"
# Poetry's cache for one refresh (POETRY_CACHE_DIR), made empty beside poetry.lock in the same disposable
# copy: the second of its two locks (_poetry_lock_exactly) reads the package metadata the first fetched
# instead of fetching it all again (the box's HOME, where Poetry's cache would be, is new for each
# process). It holds nothing code of the first lock could not already leave for the second in the copy
# (poetry.lock itself, which the second lock starts from; an in-project .venv with poetry.toml): the
# project's virtualenv that Poetry makes in it, for one, which the second lock runs. It goes with the copy.
POETRY_CACHE = ".agentic-codemod-poetry-cache"

# The adapter contract passes no Settings to update_lockfiles: lock tools get the configured default.
MAX_LOCKFILE_BYTES = int(Budgets.model_fields["max_lockfile_bytes"].default)
LOCK_TIMEOUT_S = float(Budgets.model_fields["install_timeout_s"].default)

FORMATS_BY_KIND: dict[str, DependencyFormat] = {
    "requirements": requirements_file,
    "pep621": pyproject,
    "pep735": pyproject,
    "poetry": pyproject,
    "setup.cfg": setup_cfg,
    "setup.py": setup_py,
    "tox.ini": tox_ini,
}


def update_dependency(content: str, dependency: Dependency, target: str) -> str:
    """`content` with the declaration of `dependency` (at its line; every one when it has no line) bumped
    to `target` by its range strategy.

    ValueError when the target is not a version, the dependency is not declared in the text (at that
    line), none of its declarations carries a version that can be edited, or the declaration is computed.
    """
    _version(target)
    module = file_format(dependency.file) or FORMATS_BY_KIND.get(dependency.kind)
    if module is None:
        raise ValueError(f"{dependency.file}: unknown kind of dependency file ({dependency.kind!r})")
    canonical = pep508.canonical(dependency.name)
    try:
        declarations = module.find(content, canonical)
    except ValueError as exc:
        raise ValueError(f"{dependency.file}: {exc}") from exc
    if dependency.line is not None:
        declarations = [d for d in declarations if d.line == dependency.line]
    if not declarations:
        at = f" at line {dependency.line}" if dependency.line is not None else ""
        raise ValueError(f"{dependency.name!r} is not declared in {dependency.file}{at}")
    blocked = [d.uneditable for d in declarations if d.uneditable]
    if blocked:
        raise ValueError(f"{dependency.file}: {blocked[0]}; change it by hand")
    strategy = dependency.range_strategy

    def bump(declaration: Declaration) -> str | None:
        if dependency.line is not None and declaration.line != dependency.line:
            return None
        try:
            return ranges.new_range(declaration.specifier, declaration.style, target, strategy)
        except ValueError as exc:
            raise ValueError(f"{dependency.file} line {declaration.line}: {exc}") from exc

    if all(bump(d) is None for d in declarations):
        lines = ", ".join(str(d.line) for d in declarations)
        raise ValueError(
            f"{dependency.file} declares {dependency.name!r} without a version this tool can edit "
            f"(line {lines}: unpinned, URL, git or path); change it by hand"
        )
    return module.rewrite(content, canonical, bump)


def update_lockfiles(
    root: Path,
    dependency: Dependency,
    target: str,
    runner: Runner,
    cache: Path | None = None,
    network: bool = True,
) -> list[ArtifactNotice] | None:
    """Refresh each known lockfile beside the dependency file (and at the root), and recompile each
    compiled requirements file that pins the dependency (compiled.py); None when there is none. `cache`
    is not used: the environment's installs come from its template and uv, not from what a lock tool
    (uv, Poetry, pdm, pip-compile) fetches. Without `network` the lock tool gets none of the caller's
    pip settings: it may run the repository's build backend, and offline they serve nothing else
    (helper-39: the client key's copy read by a backend under --no-index)."""
    directories = dict.fromkeys([(root / dependency.file).parent, root])
    present = [d / name for d in directories for name in LOCKFILES if (d / name).is_file()]
    files = read_dependency_files(root)
    refused = {r.file for r in files.refused}
    recompiled = compiled.compiled_files(
        root, [f for f in files.files if f not in refused], dependency, target
    )
    if not present and not recompiled:
        return None
    notices = [_refresh(root, lockfile, dependency, runner, target, network) for lockfile in present]
    return notices + [_recompile(root, file, dependency, runner, target, network) for file in recompiled]


def _recompile(
    root: Path, file: str, dependency: Dependency, runner: Runner, target: str, network: bool
) -> ArtifactNotice:
    """uv pip compile once more, as the file's header says, with the dependency at exactly `target`."""
    path = root / file
    if path.is_symlink() or not path.parent.resolve().is_relative_to(root.resolve()):
        return ArtifactNotice(file, False, f"{file} is a symbolic link or lies behind one: not recompiled")
    before = path.read_bytes()
    argv = compiled.recompile_command(before.decode("utf-8", "replace"), file, dependency, target)
    if isinstance(argv, str):
        return ArtifactNotice(file, False, argv)
    command = shlex.join(argv)
    unsafe = compiled.unsafe_paths(argv, path.parent, root)
    if unsafe:
        return ArtifactNotice(
            file, False, f"{file}: its header's {unsafe}; recompile it by hand: `{command}`"
        )
    program, missing = lock_tool("uv", runner)
    if program is None:
        return ArtifactNotice(file, False, f"{missing}: {file} not recompiled; run `{command}`")
    env = lock_env(root, path.parent) if network else {}
    result = runner([program, *argv[1:]], cwd=path.parent, timeout_s=LOCK_TIMEOUT_S, env=env)
    if not result.ok:
        return ArtifactNotice(file, False, f"`{command}` failed: {_failure(result)}")
    try:  # code that ran during the recompile may have swapped a folder on the way for a link
        after = RootedFS(root, MAX_LOCKFILE_BYTES).read_bytes(file)
    except OSError:
        return ArtifactNotice(
            file, False, f"`{command}` left no regular file at {file} (or one behind a link)"
        )
    if after == before:
        return ArtifactNotice(file, False, f"`{command}` left {file} unchanged")
    problem = compiled.recompiled_problem(
        after.decode("utf-8", "replace"), file, dependency, target, before.decode("utf-8", "replace")
    )
    if problem:
        return ArtifactNotice(file, False, f"{problem}; recompile it by hand: `{command}`")
    digest = hashlib.sha256(after).hexdigest()
    return ArtifactNotice(file, True, refreshed_message(command, digest), sha256=digest)


def lock_env(root: Path, cwd: Path) -> dict[str, str]:
    """The caller's certificate files (copied into `root`, the disposable copy the lock tool runs on, and
    named relative to its working directory `cwd`: the sandbox shows the copy elsewhere), proxy, timeout
    and retries from pip's configuration, as the variables uv reads (SSL_CERT_FILE, HTTPS_PROXY ...; pdm
    reads the first two too), and the certificate as REQUESTS_CA_BUNDLE for poetry (requests ignores
    SSL_CERT_FILE). Not the index: a lockfile records where each package came from, and another index
    would rewrite every entry. Not a secret either: the lock tool runs the repository's build backend and
    no index front stands before the indexes the repository names, so a client certificate (its key)
    and a proxy with user info stay out (an index that needs them is not reached: the lockfile is left
    for a human to refresh)."""
    caller = pip_config.read_caller_config(os.environ)
    network: dict[str, str] = {k: caller[k] for k in ("proxy", "timeout", "retries") if k in caller}
    if pip_config.proxy_with_user_info(network.get("proxy", "")):
        del network["proxy"]
    copies = pip_config.cert_copies({k: v for k, v in caller.items() if k == "cert"}, root).items()
    env = pip_config.uv_env(network, {key: os.path.relpath(root / rel, cwd) for key, rel in copies})
    if "SSL_CERT_FILE" in env:
        env["REQUESTS_CA_BUNDLE"] = env["SSL_CERT_FILE"]
    return env


def lock_command(
    lockfile: str, dependency: Dependency, tool_version: str = "", target: str = ""
) -> list[str]:
    """The ecosystem's own command that refreshes `lockfile` after the bump, keeping other pins; uv
    locks exactly `target` (`--upgrade-package name==target`), also where the range already admits it."""
    tool = LOCK_TOOLS[lockfile]
    if tool == "poetry":
        # Poetry 2 dropped --no-update: plain `poetry lock` no longer upgrades what it need not. A version
        # not known (the probe failed) is taken as today's Poetry.
        return ["poetry", "lock", "--no-update"] if _major(tool_version) == 1 else ["poetry", "lock"]
    if tool == "uv":
        return [
            "uv",
            "lock",
            "--upgrade-package",
            f"{dependency.name}=={target}" if target else dependency.name,
        ]
    if tool == "pdm":  # `pdm update` takes no version: an override file holds `name==target`
        if target:
            return [
                "pdm",
                "update",
                "--no-sync",
                "--update-reuse",
                "--override",
                PDM_OVERRIDE,
                dependency.name,
            ]
        return ["pdm", "lock", "--update-reuse"]
    return ["pipenv", "lock"]


def _refresh(
    root: Path, lockfile: Path, dependency: Dependency, runner: Runner, target: str, network: bool
) -> ArtifactNotice:
    name = lockfile.relative_to(root).as_posix()
    if lockfile.is_symlink() or not lockfile.parent.resolve().is_relative_to(root.resolve()):
        # the tool reads and rewrites it, and this process writes beside it: never through a link
        return ArtifactNotice(name, False, f"{name} is a symbolic link or lies behind one: not refreshed")
    tool = LOCK_TOOLS[lockfile.name]
    program, missing = lock_tool(tool, runner)
    if program is None:
        command = " ".join(lock_command(lockfile.name, dependency, target=target))
        twice = POETRY_BY_HAND.format(name=dependency.name, target=target) if tool == "poetry" else ""
        return ArtifactNotice(name, False, f"{missing}: {name} not refreshed; run `{command}`{twice}")
    version, env = "", lock_env(root, lockfile.parent) if network else {}
    if tool == "poetry":
        cache = lockfile.parent / POETRY_CACHE
        repo_copy.remove(cache)  # the repository's own entry of that name, whatever it is: never used
        cache.mkdir(mode=0o700)
        env.update(POETRY_ENV, POETRY_CACHE_DIR=POETRY_CACHE)  # relative to the lock's working directory
        probe = runner([program, "--version"], cwd=lockfile.parent, timeout_s=LOCK_TIMEOUT_S, env=env)
        version = probe.output_tail if probe.ok else ""
    argv = lock_command(lockfile.name, dependency, version, target)
    command = " ".join(argv)
    if PDM_OVERRIDE in argv:
        override = lockfile.parent / PDM_OVERRIDE
        repo_copy.write_new(override, f"{dependency.name}=={target}\n")  # never the repository's own entry
        argv[argv.index(PDM_OVERRIDE)] = str(override)
    before, shown = lockfile.read_bytes(), f"`{command}`"
    if tool == "poetry" and target:
        result, shown = _poetry_lock_exactly(root, lockfile, dependency, target, runner, program, argv, env)
    else:
        result = runner([program, *argv[1:]], cwd=lockfile.parent, timeout_s=LOCK_TIMEOUT_S, env=env)
    if not result.ok:
        return ArtifactNotice(name, False, f"{shown} failed: {_failure(result)}")
    try:  # code the tool ran may have swapped the file or a folder on the way for a link (a FIFO, /dev/zero)
        after = RootedFS(root, MAX_LOCKFILE_BYTES).read_bytes(name)
    except OSError:
        return ArtifactNotice(name, False, f"{shown} left no regular file at {name} (or one behind a link)")
    if after == before:
        return ArtifactNotice(name, False, f"{shown} left {name} unchanged")
    digest = hashlib.sha256(after).hexdigest()
    return ArtifactNotice(name, True, refreshed_message(shown[1:-1], digest), sha256=digest)


def _poetry_lock_exactly(
    root: Path,
    lockfile: Path,
    dependency: Dependency,
    target: str,
    runner: Runner,
    program: str,
    argv: list[str],
    env: dict[str, str],
) -> tuple[ProcessResult, str]:
    """Poetry has no `--upgrade-package name==target`: its lock takes the newest version the bumped range
    admits (2.1.0 for `^2.0.0`), not the target the tests run. So the pyproject.toml beside poetry.lock is
    locked first with every declaration of the dependency pinned at `target`, then restored to the bumped
    text and locked again: Poetry keeps what is locked where the range admits it, and the second lock
    writes the content-hash of the bumped file. A pinned lock that fails ends the refresh (`target` cannot
    be locked with the rest; a plain lock would lock another version). Where the file declares nothing
    to pin, one lock of the bumped file (the stale-lock check names any other version). The result and
    the commands as the notice shows them."""
    plain = f"`{' '.join(argv)}`"
    rel = (lockfile.parent / "pyproject.toml").relative_to(root).as_posix()
    fs = RootedFS(root, MAX_LOCKFILE_BYTES)
    try:
        bumped = fs.read_bytes(rel)
        declared = Dependency(
            name=dependency.name, specifier="", file=rel, kind="pep621", range_strategy="pin"
        )
        pinned = update_dependency(bumped.decode("utf-8"), declared, target).encode("utf-8")
    except (OSError, ValueError):  # no pyproject.toml here (or behind a link), or none of its lines to pin
        pinned = b""
    run, timeout = [program, *argv[1:]], LOCK_TIMEOUT_S
    if not pinned or pinned == bumped:
        return runner(run, cwd=lockfile.parent, timeout_s=timeout, env=env), plain
    first = f"{plain} with {rel} pinning {dependency.name}=={target}"
    try:
        fs.write_bytes(rel, pinned)
    except OSError as exc:
        return ProcessResult(run, None, 0.0, "", error=f"{rel} could not be pinned: {exc}"), first
    result = runner(run, cwd=lockfile.parent, timeout_s=timeout, env=env)
    try:
        fs.write_bytes(rel, bumped)  # rooted: code the lock ran may have swapped a folder for a link
    except OSError as exc:
        return ProcessResult(run, None, 0.0, "", error=f"{rel} not restored after it: {exc}"), first
    if not result.ok:
        return result, first
    return runner(run, cwd=lockfile.parent, timeout_s=timeout, env=env), f"{first}, then {plain}"


LOCK_TOOL_EXTRAS = {"uv": "uv", "poetry": "lock", "pdm": "lock"}  # pyproject.toml's extras


def lock_tool(tool: str, runner: Runner) -> tuple[str | None, str]:
    """The lock tool `runner` can start, and why none where it is None ("uv is not on PATH: ..."): the
    one on PATH, else the one beside this interpreter (installed with the tool, e.g. the `lock` extra: its
    environment is mounted in the sandbox). A program the runner's box cannot see, or whose script's
    interpreter it cannot see (uv in ~/.cargo/bin, a pipx poetry under HOME, another clone's venv), is
    passed over: started in the box, it would fail as "not found", and the refresh with it."""
    box: Box | None = getattr(runner, "box", None)
    beside = Path(sys.executable).parent.resolve() / tool  # the path the sandbox mounts the venv at
    on_path = [shutil.which(tool, path=folder) for folder in os.get_exec_path()]  # every one, in order
    found = list(dict.fromkeys(p for p in (*on_path, str(beside) if beside.is_file() else None) if p))
    unseen = ""
    for program in found:
        needed = (program, *_interpreter(Path(program)))
        outside = [p for p in needed if box is not None and not box.sees(Path(p))]
        if not outside:
            return program, ""
        unseen = unseen or outside[-1]
    if found:
        extra = LOCK_TOOL_EXTRAS.get(tool)
        where = f"install agentic-codemod[{extra}] beside the tool, or " if extra else "install "
        why = f"{unseen} lies outside what the sandbox mounts ({where}{tool} under /usr)"
        return None, f"{tool} at {found[0]}: {why}"
    return None, f"{tool} is not on PATH"


def _interpreter(program: Path) -> list[str]:
    """The interpreter a script's `#!` line names (none for a binary or an `env` lookup's name)."""
    try:
        with program.open("rb") as file:
            first = file.readline(4096)
    except OSError:
        return []
    if not first.startswith(b"#!"):
        return []
    words = first[2:].decode("utf-8", "replace").split()
    return words[:1] if words and words[0].startswith("/") else []


def _failure(result: ProcessResult) -> str:
    if result.timed_out:
        return f"timed out after {result.duration_s:.0f}s\n{result.output_tail}"
    if result.error:
        return result.error
    return f"exit {result.exit_code}\n{result.output_tail}"


def _major(tool_version: str) -> int:
    match = re.search(r"(\d+)\.\d+", tool_version)
    return int(match.group(1)) if match else 0


def _version(target: str) -> Version:
    try:
        return Version(target)
    except InvalidVersion as exc:
        raise ValueError(f"target {target!r} is not a PEP 440 version") from exc
