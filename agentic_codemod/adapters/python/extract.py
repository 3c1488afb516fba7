"""Which files declare Python dependencies, and where one named dependency is declared in them, with roles.

    find_dependency_files(root) -> ["poetry.lock", "pyproject.toml", "requirements.txt", ...]
    extract_dependencies(root, files, sdk) -> [Dependency(name, specifier, file, kind, line, role, ...), ...]

Every kind of file is read: requirements files, pyproject.toml (PEP 621, PEP 735, Poetry, build-system;
uv's, PDM's and Hatch's tables; [tool.tox], uneditable), hatch.toml (Hatch's envs),
setup.cfg (and pbr's [extras]), setup.py (with ast, never executed), tox.ini and tox.toml deps, and
lockfiles (each locked version, role "lock"; refreshed by its own tool, never edited; rye's
requirements.lock and requirements-dev.lock too, which no tool here refreshes); and what the install
commands of the tox env or nox session the tests run in install by name (uneditable). Pipfile declares
nothing here. (The pins in Dockerfiles, conda environments, hooks and CI jobs: install_scripts.py.)
Roles come from roles.py; a requirements file reached through `-c` is a constraint file.

Names compare PEP 503-normalised (`Acme_SDK` == `acme-sdk`); name and specifier are returned as written.
A file that cannot be parsed stops extraction (InputError naming the file): the dependency might be
declared there, and a bump that misses a declaration is worse than none.
"""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python import (
    LOCKFILES,
    ci_config,
    hatch_toml,
    lockfile,
    pep508,
    pyproject,
    requirement_options,
    requirements_file,
    roles,
    setup_cfg,
    setup_py,
    tox_ini,
)
from agentic_codemod.adapters.python.dependency_files import REQUIREMENTS_SUFFIXES, checked_dependency_files
from agentic_codemod.adapters.python.pep508 import Declaration, DependencyFormat
from agentic_codemod.errors import InputError, RequiresHuman
from agentic_codemod.models import Dependency

# Formats whose reasons for an uneditable declaration start at its line (`line 4 (section): why`): the
# file's name goes before it.
LINE_REASON_FORMATS: tuple[DependencyFormat, ...] = (
    pyproject,
    hatch_toml,
    tox_ini.TOML,
    requirements_file,
    setup_cfg,
)


def find_dependency_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of every dependency, constraint and lock file the adapter reads
    (FILE_PATTERNS and LOCKFILES at the root, and what they include). InputError, naming each file and
    line, when one of them is refused (see dependency_files.py): nothing has read it yet.
    """
    return checked_dependency_files(root)


def extract_dependencies(root: Path, files: list[str], sdk: str) -> list[Dependency]:
    """Every declaration of `sdk` in `files`, in file order then line order, each with its role."""
    canonical = pep508.canonical(sdk)
    constraints = constraint_files(root, files)
    dependencies = []
    for file in files:
        module = file_format(file)
        if module is None:
            continue
        content = _read(root, file)
        try:
            declarations = module.find(content, canonical)
            if module is pyproject:  # [tool.tox]: tox's own configuration, read where tox reads it
                declarations += tox_ini.find_in_pyproject(content, canonical)
        except ValueError as exc:
            raise InputError(f"{file}: {exc}", hint="fix the file, or leave it out of the task") from exc
        compiled = module is requirements_file and roles.is_compiled(content)
        conditional = file == "tox.ini" and any(d.section.startswith("testenv[") for d in declarations)
        tox_env, tox_reading = (_tox_env(root) if conditional else None), tox_ini.FactorReading()
        for d in declarations:
            role = _role(file, d, constraints, compiled, tox_env, tox_reading)
            dependencies.append(
                Dependency(
                    name=d.name,
                    specifier=d.specifier,
                    file=file,
                    kind=d.kind,
                    line=d.line,
                    role=role,
                    section=d.section,
                    uneditable=_uneditable(file, module, d, role),
                )
            )
    return dependencies + _installed_by_commands(root, canonical)


def _uneditable(file: str, module: DependencyFormat, d: Declaration, role: roles.Role) -> str:
    """Why the bump cannot edit the declaration, naming the file; "" for a lock entry, which the bump
    never edits and whose staleness after the bump is a human item (workflow/declarations.stale_locks
    reads only lock entries without a reason: a compiled file's `--hash` lines are such entries)."""
    if role == "lock" or not d.uneditable:
        return ""
    return f"{file} {d.uneditable}" if module in LINE_REASON_FORMATS else d.uneditable


def _installed_by_commands(root: Path, canonical: str) -> list[Dependency]:
    """What the install commands of the tox env or nox session the tests run in install of the SDK by
    name (`session.install("acme-sdk==1.4")`, `commands_pre = pip install acme-sdk==1.4`): test
    declarations the bump cannot edit (a command line, noxfile.py's code), so each is `uneditable` and a
    pin that excludes the target stops the run (workflow/declarations.py), rather than a green run whose
    merged noxfile or tox.ini still installs the old version."""
    try:
        env = ci_config.test_env(root)
    except RequiresHuman:  # the tests' install reads it again and stops there, where an override helps
        return []
    if env is None:
        return []
    file = env.source.split(" ", 1)[0]
    found = []
    for line, text in env.installs_at:
        requirement = pep508.parse(pep508.strip_comment(text))
        if requirement is None or not pep508.matches(requirement, canonical) or requirement.url:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue  # not installed on this interpreter
        where = f"{file} line {line}: {env.source}" if line else env.source
        found.append(
            Dependency(
                name=requirement.name,
                specifier=str(requirement.specifier),
                file=file,
                kind="install-command",
                line=line or None,
                role="test",
                section=env.source.removeprefix(file).strip(),
                uneditable=f"{where} installs {text.strip()} with an install command, which the tool does "
                "not edit",
            )
        )
    return found


def _role(
    file: str,
    d: Declaration,
    constraints: frozenset[str],
    compiled: bool,
    tox_env: tox_ini.EnvReading | None,
    tox_reading: tox_ini.FactorReading,
) -> roles.Role:
    try:
        return roles.role(
            file,
            d.kind,
            d.section,
            constraints=constraints,
            compiled=compiled,
            tox_env=tox_env,
            tox_reading=tox_reading,
        )
    except tox_ini.TooComplex as exc:
        raise RequiresHuman(
            f"{file}: {exc}; the tool does not guess which env its declarations are for",
            hint="simplify the file, or leave it out of the task",
        ) from exc


def _tox_env(root: Path) -> tox_ini.EnvReading | None:
    """The env tox.ini's [testenv] factor lines are read for; None (each a matrix entry, kept) where the
    file is past what the tool reads: the tests' own reading of it then fails, naming it, unless the
    task sets verification.command and verification.requirements."""
    try:
        return ci_config.tox_deps_env(root)
    except RequiresHuman:
        return None


def constraint_files(root: Path, files: list[str]) -> frozenset[str]:
    """Repository-relative paths of the files some requirements file names with `-c` / `--constraint`."""
    named: set[str] = set()
    for file in files:
        if not file.endswith(REQUIREMENTS_SUFFIXES):
            continue
        try:
            text = requirement_options.decode((root / file).read_bytes())
        except (OSError, ValueError):
            continue  # find_dependency_files refused it already
        options, _problems = requirement_options.scan(text)
        folder = PurePosixPath(file).parent
        for option in options:
            if option.name == "--constraint":
                named.add(posixpath.normpath((folder / option.value.removeprefix("file:")).as_posix()))
    return frozenset(named)


def file_format(file: str) -> DependencyFormat | None:
    """The module that reads and rewrites this kind of file (find / rewrite), by file name."""
    name = PurePosixPath(file).name
    if name == "pyproject.toml":
        return pyproject
    if name == "hatch.toml":
        return hatch_toml
    if name == "setup.cfg":
        return setup_cfg
    if name == "setup.py":
        return setup_py
    if name == "tox.ini":
        return tox_ini
    if name == "tox.toml":
        return tox_ini.TOML
    if (
        name in LOCKFILES
        or name in lockfile.REQUIREMENTS_LOCKS
        or (name.startswith("pylock.") and name.endswith(".toml"))
    ):
        return lockfile
    if name.endswith(REQUIREMENTS_SUFFIXES):
        return requirements_file
    return None


def _read(root: Path, file: str) -> str:
    try:
        return (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read: {exc}", hint="check the file exists and is UTF-8") from exc
