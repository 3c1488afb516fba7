"""Lockfiles: what package-lock.json / npm-shrinkwrap.json lock where the project's packages are installed.

    locked_versions(content) -> {name: {version}}   every package at the top of node_modules

Only read: npm refreshes the lockfile (update.py). A top-level entry (`packages["node_modules/<name>"]`,
scoped names included; lockfile v1: `dependencies["<name>"]`) is what the environment's listing holds
under that name; a copy nested inside another package (`node_modules/a/node_modules/b`) is not listed
there, so it is not read here either. Text that is not a lockfile of either shape locks nothing.
"""

from __future__ import annotations

import json

TOP = "node_modules/"


def locked_versions(content: str) -> dict[str, frozenset[str]]:
    try:
        document = json.loads(content)
    except ValueError:
        return {}
    if not isinstance(document, dict):
        return {}
    found: dict[str, str] = {}
    packages = document.get("packages")
    if isinstance(packages, dict):
        for key, entry in packages.items():
            name = key.removeprefix(TOP) if isinstance(key, str) and key.startswith(TOP) else ""
            if name and "/node_modules/" not in key and isinstance(entry, dict):
                found[name] = str(entry.get("version", ""))
    else:
        dependencies = document.get("dependencies")
        for name, entry in (dependencies if isinstance(dependencies, dict) else {}).items():
            if isinstance(entry, dict):
                found[str(name)] = str(entry.get("version", ""))
    return {name: frozenset([version]) for name, version in sorted(found.items()) if version}
