"""Lockfiles: what package-lock.json / npm-shrinkwrap.json lock where, under the environment's node_modules.

    locked_versions(content) -> {path: Locked(versions, pinnable)}
    lock_format(content) -> "lockfileVersion 3" | None
    tarball_version(name, resolved) -> str | None       the version a registry tarball URL names

Only read: npm refreshes the lockfile (update.py). Each entry under the root's node_modules is named by its
path below it, as the environment's listing names what it holds (environment.installed_versions): `gear`,
`@scope/x`, and a copy nested inside another package `acme-sdk/node_modules/gear`. Lockfile v1 has
`dependencies` (nested ones under each entry's own `dependencies`). A workspace's own node_modules
(`packages/a/node_modules/x`) is not the root's and is not read.

Pinnable (`npm install NAME@VERSION` gives exactly it) only: a top-level entry, from the registry (its
`resolved` the registry's tarball of that very version, `…/<name>/-/<base>-<version>.tgz`, or none), not
an alias (its `name`, where written, is the folder's) and not a link. Everything else is compared, never
pinned: a `resolved` of another layout (git, a path, another server's URL) or a registry tarball of
another version than the entry's `version` (an edited lock: `npm ci` installs the tarball) is not from
the registry at that version (`indexed` False). Text that is not a lockfile locks nothing.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from agentic_codemod import json_input
from agentic_codemod.adapters.types import Locked

TOP = "node_modules/"
NESTED = "/node_modules/"
MAX_V1_DEPTH = 64


def locked_versions(content: str) -> dict[str, Locked]:
    try:
        document = json_input.loads(content)
    except ValueError:
        return {}
    if not isinstance(document, dict):
        return {}
    found: dict[str, Locked] = {}
    packages = document.get("packages")
    if isinstance(packages, dict):
        for key, entry in packages.items():
            if isinstance(key, str) and key.startswith(TOP) and isinstance(entry, dict):
                if entry.get("link"):
                    continue
                path = key.removeprefix(TOP)
                found[path] = _locked(path, entry)
    else:
        _v1(document.get("dependencies"), "", found, 0)
    return {path: locked for path, locked in sorted(found.items()) if all(locked.versions)}


def lock_format(content: str) -> str | None:
    """The `lockfileVersion` the file says it is written in (1: npm 5-6; 2 and 3: npm 7 and later); None
    where it says none, or not as a whole number (the text is the repository's: never shown as given)."""
    try:
        document = json_input.loads(content)
    except ValueError:
        return None
    version = document.get("lockfileVersion") if isinstance(document, dict) else None
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version < 1_000:
        return None
    return f"lockfileVersion {version}"


def _v1(dependencies: Any, prefix: str, found: dict[str, Locked], depth: int) -> None:
    if not isinstance(dependencies, dict) or depth > MAX_V1_DEPTH:
        return
    for name, entry in dependencies.items():
        if isinstance(entry, dict):
            path = f"{prefix}{name}"
            found[path] = _locked(path, entry)
            _v1(entry.get("dependencies"), f"{path}{NESTED}", found, depth + 1)


def tarball_version(name: str, resolved: str) -> str | None:
    """The version in a registry's tarball URL of `name` (`…/<name>/-/<base>-<version>.tgz`, <base> the
    name without its scope: `…/@acme/sdk/-/sdk-1.0.0.tgz`), or None where the URL is not laid out so (a
    git, path or other server's source: its version cannot be read from it)."""
    path = urlsplit(resolved).path if "://" in resolved else resolved.partition("#")[0].partition("?")[0]
    head, marker, file = path.rpartition("/-/")
    base = f"{name.rpartition('/')[2]}-"
    if not marker or not head.endswith(f"/{name}") or "/" in file:
        return None
    if not (file.startswith(base) and file.endswith(".tgz")) or len(file) <= len(base) + 4:
        return None
    return file[len(base) : -4]


def _locked(path: str, entry: dict[str, Any]) -> Locked:
    folder = path.rpartition(NESTED)[2]
    name = entry.get("name", folder)  # an alias (`"x-cjs": "npm:x@4"`) keeps its package's name here
    resolved = entry.get("resolved")
    version = str(entry.get("version", ""))
    registry = resolved is None or (
        isinstance(resolved, str) and isinstance(name, str) and tarball_version(name, resolved) == version
    )
    own_name = name == folder
    pinnable = NESTED not in path and registry and own_name and not entry.get("bundled")
    return Locked(frozenset([version]), pinnable, indexed=registry)
