"""Lockfiles: where one dependency is locked (poetry.lock, uv.lock, pdm.lock, pylock.toml, Pipfile.lock).

    find(content, canonical) -> [Declaration(name, "==<locked version>", line, "lockfile", ...)]
    locked_versions(content) -> {canonical name: Locked(versions, pinnable)}   every package the lockfile
                                   locks (a compiled requirements file's pins too)
    lock_format(content) -> "lock-version 2.1" | None   the format the file says it is written in
    constraints(root, names, max_bytes) -> ([name==version], [file], [file (why not read)])   what the
                                   lockfiles `names` at the root lock for this interpreter, as constraints
                                   for an install, the files read and those there but not read

Only read: a lockfile is never edited by this adapter, its own tool refreshes it (update.update_lockfiles).
TOML lockfiles list `[[package]]` (pylock: `[[packages]]`) tables with `name` and `version`; Pipfile.lock
is JSON with a `"name": {"version": "==X"}` entry per package. Lines are read as written, so each entry
keeps its line number; a file this reader does not follow declares nothing (it is still listed).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.version import InvalidVersion, Version

from agentic_codemod import json_input
from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration
from agentic_codemod.adapters.types import Locked
from agentic_codemod.tools.paths import Refused
from agentic_codemod.tools.rooted import RootedFS

KIND = "lockfile"
PLAIN_PACKAGE_RE = re.compile(r"[a-z0-9]([a-z0-9._-]*[a-z0-9])?")  # canonical: never an option or a URL
NON_INDEX_KEYS = frozenset({"git", "path", "url", "editable", "vcs", "directory", "archive", "file"})
PIPFILE_SOURCES = frozenset({"git", "path", "file", "editable", "hg", "svn", "bzr"})
HEADER_RE = re.compile(r"^\s*\[\[\s*packages?\s*\]\]\s*$")
KEY_RE = re.compile(r"^\s*(name|version)\s*=\s*\"([^\"]*)\"")
PIPFILE_NAME_RE = re.compile(r"^\s*\"([^\"]+)\"\s*:\s*\{\s*$")
PINNED_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\#]+)")
EXTRA_RE = re.compile(r"\bextras?\b")  # the marker variables of extras (PEP 508 `extra`, PEP 751 `extras`)
PIPFILE_VERSION_RE = re.compile(r"^\s*\"version\"\s*:\s*\"([^\"]*)\"")
FORMAT_RE = re.compile(r"[0-9A-Za-z.+-]{1,40}")  # a format version as lock tools write one


def find(content: str, canonical: str) -> list[Declaration]:
    found = [d for d in _toml_entries(content) if pep508.canonical(d.name) == canonical]
    return found + [d for d in _pipfile_entries(content) if pep508.canonical(d.name) == canonical]


def _document(content: str) -> object | None:
    """The lockfile parsed as TOML (uv, poetry, pdm, pylock), else as JSON (Pipfile.lock); None for
    neither, nesting past either parser's depth included."""
    try:
        return tomllib.loads(content)
    except (ValueError, RecursionError):  # TOMLDecodeError is a ValueError
        try:
            return json_input.loads(content)
        except ValueError:
            return None


def locked_versions(content: str) -> dict[str, Locked]:
    """Every package the lockfile locks, by canonical name, with the versions it locks (more than one
    where the lockfile forks by environment marker) and whether each comes from a package index (a git,
    path, URL or editable source is not: `name==version` from the index would be another package). TOML
    lockfiles (uv, poetry, pdm, pylock), Pipfile.lock (JSON) and a compiled requirements file's `==`
    pins; a file none of them reads locks nothing."""
    document = _document(content)
    entries: list[tuple[str, str, bool]] = []
    listed = document.get("package", document.get("packages")) if isinstance(document, dict) else None
    if isinstance(listed, list):
        for entry in listed:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and _applies(entry):
                entries.append((entry["name"], str(entry.get("version", "")), _from_index(entry)))
    elif isinstance(document, dict):  # Pipfile.lock: {"default": {name: {"version": "==X"}}, "develop": ...}
        for section in ("default", "develop"):
            for name, entry in (document.get(section) or {}).items():
                if isinstance(entry, dict) and _holds(str(entry.get("markers") or "")):
                    version = str(entry.get("version", "")).removeprefix("==")
                    entries.append((str(name), version, not (PIPFILE_SOURCES & entry.keys())))
    else:
        entries = [(d.name, d.specifier.removeprefix("=="), True) for d in _pinned_lines(content)]
    found: dict[str, tuple[set[str], bool]] = {}
    for name, version, indexed in entries:
        if not version:  # the project itself (a dynamic version), or a git or path entry: no version locked
            continue
        versions, from_index = found.setdefault(pep508.canonical(name), (set(), True))
        versions.add(version)
        found[pep508.canonical(name)] = (versions, from_index and indexed)
    return {
        name: Locked(frozenset(v), pinnable=indexed, indexed=indexed)
        for name, (v, indexed) in sorted(found.items())
    }


def lock_format(content: str) -> str | None:
    """The format version a lockfile says it is written in: uv.lock `version`, poetry.lock and pylock
    `lock-version`, pdm.lock `lock_version`, Pipfile.lock `pipfile-spec`. Not the tool's own version
    (Poetry's header) nor uv's `revision` (changes older uv reads as they are). None where the file says
    none (a compiled requirements file) or says it in a shape no lock tool writes (the text is the
    repository's: never shown as given)."""
    document = _document(content)
    if not isinstance(document, dict):
        return None
    meta = document.get("metadata")
    spec = document.get("_meta")
    if "lock-version" in document:  # pylock.toml
        key, value = "lock-version", document["lock-version"]
    elif isinstance(meta, dict) and ("lock-version" in meta or "lock_version" in meta):  # poetry, pdm
        key = "lock-version" if "lock-version" in meta else "lock_version"
        value = meta[key]
    elif isinstance(spec, dict) and "pipfile-spec" in spec:  # Pipfile.lock
        key, value = "pipfile-spec", spec["pipfile-spec"]
    elif "version" in document and isinstance(document.get("package", []), list):  # uv.lock
        key, value = "version", document["version"]
    else:
        return None
    return shown_format(key, value)


def shown_format(key: str, value: object) -> str | None:
    """`key value` where value is text, a whole number or a decimal written like a version; else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    text = str(value)
    return f"{key} {text}" if FORMAT_RE.fullmatch(text) else None


def constraints(root: Path, names: Sequence[str], max_bytes: int) -> tuple[list[str], list[str], list[str]]:
    """`name==version` for every package the lockfiles `names` at `root` lock for this interpreter at one
    version from a package index (a git, path or URL entry, or a name locked at two versions, is left to
    the resolver), and the lockfiles read. An install under them as constraints holds every package it
    installs to the version the repository ships, not the newest its ranges admit. Read without
    following a link; a name or version that is not a plain package name and a PEP 440 version (a line
    that would be an option or a URL in a constraints file) is left out. A lockfile that is there but not
    read (a link, over `max_bytes`, not UTF-8) is named with why, for run.json."""
    fs = RootedFS(root, max_bytes)
    found: dict[str, set[str]] = {}
    unpinnable: set[str] = set()
    files: list[str] = []
    unread: list[str] = []
    for name in names:
        try:
            text = fs.read_bytes(name).decode("utf-8")
        except FileNotFoundError:
            continue
        except Refused as exc:
            unread.append(f"{name} ({exc.reason})")
            continue
        except OSError as exc:
            unread.append(f"{name} ({exc.strerror or type(exc).__name__})")
            continue
        except UnicodeDecodeError:
            unread.append(f"{name} (not UTF-8)")
            continue
        files.append(name)
        for package, locked in locked_versions(text).items():
            found.setdefault(package, set()).update(locked.versions)
            if not locked.pinnable:
                unpinnable.add(package)
    lines = []
    for package, versions in sorted(found.items()):
        (version, *more) = sorted(versions)
        plain = PLAIN_PACKAGE_RE.fullmatch(package) and _version(version)
        if plain and not more and package not in unpinnable:
            lines.append(f"{package}=={version}")
    return lines, files, unread


def _version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return text == text.strip() and all(c.isalnum() or c in ".+!-_" for c in text)


def _applies(entry: dict[str, object]) -> bool:
    """A uv.lock fork (`resolution-markers`), a Poetry entry (`markers`: one string, or one per group), a
    pdm or pylock entry (`marker`) applies where one of its markers holds for this interpreter, which the
    verification environments are made from; an unreadable marker is kept (never dropped)."""
    markers = entry.get("resolution-markers", entry.get("markers", entry.get("marker")))
    if isinstance(markers, str):
        markers = [markers]
    elif isinstance(markers, dict):
        markers = list(markers.values())
    if not isinstance(markers, list) or not markers:
        return True
    return any(_holds(str(m)) for m in markers)


def _holds(marker: str) -> bool:
    """Whether `marker` holds for this interpreter. One that names an extra is kept: Poetry marks every
    entry only an extra of the project needs `extra == "test"`, and the verification environment installs
    the extras the tests need (which ones, this reader cannot know)."""
    if not marker.strip() or EXTRA_RE.search(marker):
        return True
    try:
        return Marker(marker).evaluate()
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def _from_index(entry: dict[str, object]) -> bool:
    """uv: `source = {registry = ...}`; poetry: no `[package.source]` or one of type legacy/pypi; pdm: no
    git/path/url/editable key; pylock: no vcs/directory/archive table."""
    source = entry.get("source")
    if isinstance(source, dict):
        if "type" in source:  # poetry
            return source.get("type") in ("legacy", "pypi", "")
        return set(source) <= {"registry"} and "registry" in source
    return not (NON_INDEX_KEYS & entry.keys())


def _pinned_lines(content: str) -> list[Declaration]:
    """`name==version` lines at the start of a line (a compiled requirements file's pins; extras and
    markers after the version, hash options on continuation lines)."""
    entries = []
    for number, text in enumerate(content.splitlines(), start=1):
        match = PINNED_RE.match(text)
        marker = text.partition(";")[2].split(" \\")[0].strip() if match else ""
        if match and (not marker or _holds(marker)):  # a line for another platform does not apply here
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
