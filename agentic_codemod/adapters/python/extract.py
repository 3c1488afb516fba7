"""Which files declare Python dependencies, and where one named dependency is declared in them.

    find_dependency_files(root) -> ["poetry.lock", "pyproject.toml", "requirements.txt", ...]
    extract_dependencies(root, files, sdk) -> [Dependency(name, specifier, file, kind, line), ...]

Files of a kind that declares nothing this adapter bumps (setup.py, Pipfile, lockfiles) are listed and
skipped by extraction.

Names compare PEP 503-normalised (`Acme_SDK` == `acme-sdk`); name and specifier are returned as written.
A pyproject.toml or setup.cfg that cannot be parsed stops extraction (InputError naming the file):
the dependency might be declared there, and a bump that misses a declaration is worse than none.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python import pep508, pyproject, requirements_file, setup_cfg
from agentic_codemod.adapters.python.dependency_files import REQUIREMENTS_SUFFIXES, checked_dependency_files
from agentic_codemod.adapters.python.pep508 import DependencyFormat
from agentic_codemod.errors import InputError
from agentic_codemod.models import Dependency


def find_dependency_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of every dependency, constraint and lock file the adapter reads
    (FILE_PATTERNS and LOCKFILES at the root, and what they include). InputError, naming each file and
    line, when one of them is refused (see dependency_files.py): nothing has read it yet.
    """
    return checked_dependency_files(root)


def extract_dependencies(root: Path, files: list[str], sdk: str) -> list[Dependency]:
    """Every declaration of `sdk` in `files`, in file order then line order."""
    canonical = pep508.canonical(sdk)
    dependencies = []
    for file in files:
        module = file_format(file)
        if module is None:
            continue
        content = _read(root, file)
        try:
            declarations = module.find(content, canonical)
        except ValueError as exc:
            raise InputError(f"{file}: {exc}", hint="fix the file, or leave it out of the task") from exc
        dependencies += [
            Dependency(name=d.name, specifier=d.specifier, file=file, kind=d.kind, line=d.line)
            for d in declarations
        ]
    return dependencies


def file_format(file: str) -> DependencyFormat | None:
    """The module that reads and rewrites this kind of file (find / rewrite), by file name."""
    name = PurePosixPath(file).name
    if name == "pyproject.toml":
        return pyproject
    if name == "setup.cfg":
        return setup_cfg
    if name.endswith(REQUIREMENTS_SUFFIXES):
        return requirements_file
    return None


def _read(root: Path, file: str) -> str:
    try:
        return (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read: {exc}", hint="check the file exists and is UTF-8") from exc
