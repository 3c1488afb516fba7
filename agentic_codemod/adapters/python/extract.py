"""Which files declare Python dependencies, and where one named dependency is declared in them.

    find_dependency_files(root) -> ["pyproject.toml", "requirements.txt", "requirements/dev.txt", ...]
    extract_dependencies(root, files, sdk) -> [Dependency(name, specifier, file, kind, line), ...]

Names compare PEP 503-normalised (`Acme_SDK` == `acme-sdk`); name and specifier are returned as written.
A pyproject.toml or setup.cfg that cannot be parsed stops extraction (InputError naming the file):
the dependency might be declared there, and a bump that misses a declaration is worse than none.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python import pep508, pyproject, requirements_file, setup_cfg
from agentic_codemod.adapters.python.pep508 import DependencyFormat
from agentic_codemod.errors import InputError
from agentic_codemod.models import Dependency

# Globs relative to the repository root. Subprojects deeper in the tree are not looked at.
FILE_PATTERNS: tuple[str, ...] = ("requirements*.txt", "requirements/*.txt", "pyproject.toml", "setup.cfg")


def find_dependency_files(root: Path) -> list[str]:
    """Repository-relative POSIX paths of the files matching FILE_PATTERNS that declare dependencies.

    A pyproject.toml or setup.cfg without a dependency table is left out; one that cannot be parsed is
    kept, so that extraction reports it. Symlinks leading out of the repository are ignored.
    """
    root = root.resolve()
    found: set[str] = set()
    for pattern in FILE_PATTERNS:
        for path in root.glob(pattern):
            if path.is_file() and path.resolve().is_relative_to(root) and _declares(path):
                found.add(path.relative_to(root).as_posix())
    return sorted(found)


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
    if name.endswith(".txt"):
        return requirements_file
    return None


def _declares(path: Path) -> bool:
    if path.suffix == ".txt":
        return True
    try:
        module = pyproject if path.name == "pyproject.toml" else setup_cfg
        return bool(module.declares_dependencies(path.read_text(encoding="utf-8")))
    except (ValueError, OSError):
        return True


def _read(root: Path, file: str) -> str:
    try:
        return (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read: {exc}", hint="check the file exists and is UTF-8") from exc
