"""Which files declare npm dependencies, and where one named dependency is declared in them, with roles.

    find_dependency_files(root) -> ["package-lock.json", "package.json", "packages/a/package.json", ...]
    extract_dependencies(root, files, sdk) -> [Dependency(name, specifier, file, kind, line, role, ...)]

package.json files (the root and its workspaces): dependencies, devDependencies, peerDependencies,
optionalDependencies and overrides (roles.py). package-lock.json / npm-shrinkwrap.json: every installed
copy of the package (`packages["node_modules/…/<sdk>"].version`), role "lock", its exact version as the
specifier; refreshed by npm, never edited. A file that cannot be parsed stops extraction (InputError
naming the file): the dependency might be declared there. (The pins in Dockerfiles, hooks and CI jobs:
install_scripts.py.)
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from agentic_codemod import json_input
from agentic_codemod.adapters.npm import LOCKFILES, package_json, roles
from agentic_codemod.adapters.npm.dependency_files import checked_dependency_files
from agentic_codemod.errors import InputError
from agentic_codemod.models import Dependency

KIND_MANIFEST = "package.json"
KIND_LOCK = "package-lock"


def find_dependency_files(root: Path) -> list[str]:
    """Every package.json, lockfile and .npmrc the adapter reads; InputError naming each refusal."""
    return checked_dependency_files(root)


def extract_dependencies(root: Path, files: list[str], sdk: str) -> list[Dependency]:
    found: list[Dependency] = []
    for file in files:
        name = PurePosixPath(file).name
        if name == "package.json":
            found += _manifest(root, file, sdk)
        elif name in LOCKFILES:
            found += _lock(root, file, sdk)
    return found


def _manifest(root: Path, file: str, sdk: str) -> list[Dependency]:
    text = _read(root, file)
    try:
        declarations = package_json.find(text, sdk)
    except ValueError as exc:
        raise InputError(f"{file}: {exc}", hint="fix the file, or leave it out of the task") from exc
    return [
        Dependency(
            name=d.name,
            specifier=d.specifier,
            file=file,
            kind=KIND_MANIFEST,
            line=d.line,
            role=roles.role(d.section),
            section=d.section,
        )
        for d in declarations
    ]


def _lock(root: Path, file: str, sdk: str) -> list[Dependency]:
    text = _read(root, file)
    try:
        document = json_input.loads(text)
        packages = document.get("packages", {}) if isinstance(document, dict) else {}
    except ValueError as exc:
        raise InputError(f"{file}: not valid JSON: {exc}", hint="regenerate it with npm install") from exc
    if not isinstance(packages, dict):
        raise InputError(f"{file}: `packages` is not an object", hint="regenerate it with npm install (v7+)")
    found = []
    for key, entry in packages.items():
        if not (key == f"node_modules/{sdk}" or key.endswith(f"/node_modules/{sdk}")):
            continue
        version = entry.get("version", "") if isinstance(entry, dict) else ""
        line = _line_of(text, json.dumps(key))
        found.append(
            Dependency(
                name=sdk,
                specifier=str(version),
                file=file,
                kind=KIND_LOCK,
                line=line,
                role="lock",
                section=key,
            )
        )
    return found


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _read(root: Path, file: str) -> str:
    try:
        return (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read: {exc}", hint="check the file exists and is UTF-8") from exc
