"""Lockfiles: where one dependency is locked (poetry.lock, uv.lock, pdm.lock, pylock.toml, Pipfile.lock).

    find(content, canonical) -> [Declaration(name, "==<locked version>", line, "lockfile", ...)]
    locked_versions(content) -> {canonical name: {version, ...}}   every package the lockfile locks (a
                                                                   compiled requirements file's pins too)

Only read: a lockfile is never edited by this adapter, its own tool refreshes it (update.update_lockfiles).
TOML lockfiles list `[[package]]` (pylock: `[[packages]]`) tables with `name` and `version`; Pipfile.lock
is JSON with a `"name": {"version": "==X"}` entry per package. Lines are read as written, so each entry
keeps its line number; a file this reader does not follow declares nothing (it is still listed).
"""

from __future__ import annotations

import re

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration

KIND = "lockfile"
HEADER_RE = re.compile(r"^\s*\[\[\s*packages?\s*\]\]\s*$")
KEY_RE = re.compile(r"^\s*(name|version)\s*=\s*\"([^\"]*)\"")
PIPFILE_NAME_RE = re.compile(r"^\s*\"([^\"]+)\"\s*:\s*\{\s*$")
PINNED_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\#]+)")
PIPFILE_VERSION_RE = re.compile(r"^\s*\"version\"\s*:\s*\"([^\"]*)\"")


def find(content: str, canonical: str) -> list[Declaration]:
    found = [d for d in _toml_entries(content) if pep508.canonical(d.name) == canonical]
    return found + [d for d in _pipfile_entries(content) if pep508.canonical(d.name) == canonical]


def locked_versions(content: str) -> dict[str, frozenset[str]]:
    """Every package the lockfile locks, by canonical name, with the versions it locks (more than one
    where the lockfile forks by environment marker); a file this reader does not follow locks nothing."""
    found: dict[str, set[str]] = {}
    for d in [*_toml_entries(content), *_pipfile_entries(content), *_pinned_lines(content)]:
        found.setdefault(pep508.canonical(d.name), set()).add(d.specifier.removeprefix("=="))
    return {name: frozenset(versions) for name, versions in sorted(found.items())}


def _pinned_lines(content: str) -> list[Declaration]:
    """`name==version` lines at the start of a line (a compiled requirements file's pins; extras and
    markers after the version, hash options on continuation lines)."""
    entries = []
    for number, text in enumerate(content.splitlines(), start=1):
        match = PINNED_RE.match(text)
        if match:
            entries.append(Declaration(match.group(1), f"=={match.group(2)}", number, KIND, "pep440", "lock"))
    return entries


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    """Lockfiles are refreshed by their own tool, never edited here."""
    raise ValueError("a lockfile is refreshed by its own tool, not edited")


def _toml_entries(content: str) -> list[Declaration]:
    entries: list[Declaration] = []
    name, line, inside = "", 0, False
    for number, text in enumerate(content.splitlines(), start=1):
        if text.lstrip().startswith("["):
            inside, name = bool(HEADER_RE.match(text)), ""
            continue
        match = KEY_RE.match(text) if inside else None
        if match and match.group(1) == "name":
            name, line = match.group(2), number
        elif match and name:
            entries.append(Declaration(name, f"=={match.group(2)}", line, KIND, "pep440", "lock"))
            name = ""
    return entries


def _pipfile_entries(content: str) -> list[Declaration]:
    entries: list[Declaration] = []
    name, line = "", 0
    for number, text in enumerate(content.splitlines(), start=1):
        opened = PIPFILE_NAME_RE.match(text)
        if opened:
            name, line = opened.group(1), number
            continue
        version = PIPFILE_VERSION_RE.match(text)
        if version and name:
            entries.append(Declaration(name, version.group(1), line, KIND, "pep440", "lock"))
            name = ""
    return entries
