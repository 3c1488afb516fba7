"""The in-repository projects uv installs with the project: `[tool.uv.workspace]` members and `path` sources.

    members(root, workspace) -> Members(folders, unread)     (pure: lists folders, runs nothing)
    asked_by_project(root, folder, canonical) -> ([(where, text, specifier | None)], complete)

uv locks a workspace as one: every member's dependencies, extras and groups are resolved together with
the root's, so a member pinning the SDK below the target leaves the bumped repository unable to lock. What
the tool cannot list for sure is `unread`, and the caller (install_plan.asked_for) takes each as off target
(requires_human) rather than a member missed:

    a pattern outside the repository or through `..`, with `**`, of more than UV_WORKSPACE_MAX_DEPTH
    parts, or naming what no file system holds (too long); a member that is a link (never followed: it
    may lead out of the repository); a listing past UV_WORKSPACE_MAX_ENTRIES (each folder listed costs its
    entries and one more); more than UV_WORKSPACE_MAX_MEMBERS members (config.py)

Patterns are matched one path part at a time against folder names (fnmatch: `*`, `?`, `[...]`, hidden
folders too, as uv's glob); `exclude` against the whole relative path, where `*` crosses `/` as in uv.
"." (the root itself) is the project already read.

A member's declarations are its pyproject.toml's, whatever their marker (uv locks every platform at
once): [project] dependencies and optional-dependencies, [dependency-groups], uv's, PDM's and Hatch's
tables, and its own [tool.uv.sources] entry for the SDK. `complete` is False where the pyproject.toml is
not all it declares (no [project], or dynamic dependencies): the caller then reads it as `-e` of it.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from agentic_codemod.adapters.python import pep508, pyproject
from agentic_codemod.config import (
    UV_WORKSPACE_MAX_DEPTH,
    UV_WORKSPACE_MAX_ENTRIES,
    UV_WORKSPACE_MAX_MEMBERS,
    WHEEL_METADATA_MAX_BYTES,
)

Asked = tuple[str, str, "str | None"]
# [tool.uv.sources] keys that take a package from somewhere else than an index.
SOURCE_KINDS = frozenset({"git", "path", "url", "workspace"})
# What a Hatch env override adds to or sets as an env's dependencies.
HATCH_OVERRIDE_KEYS = ("dependencies", "extra-dependencies", "set-dependencies", "set-extra-dependencies")
# The name a requirement-like string starts with, when the whole does not parse as PEP 508.
LEADING_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass
class Members:
    folders: list[str] = field(default_factory=list)  # repository-relative POSIX paths
    unread: list[str] = field(default_factory=list)  # why a pattern could not be listed for sure


def members(root: Path, workspace: dict[str, Any]) -> Members:
    found = Members()
    budget = [UV_WORKSPACE_MAX_ENTRIES]
    excluded = [_normal(p) for p in _strings(workspace.get("exclude")) if _normal(p)]
    patterns = list(dict.fromkeys(_strings(workspace.get("members"))))
    for pattern in patterns:
        parts = [p for p in PurePosixPath(pattern).parts if p != "."]
        if not parts:
            continue  # "." or "": the root, read as the project
        why = _unlisted(pattern, parts)
        if why:
            found.unread.append(f"workspace member pattern {pattern[:200]!r} ({why})")
            continue
        try:
            matched = _match(root, parts, budget)
        except OSError as exc:  # a name no file system holds (too long), a folder that cannot be listed
            found.unread.append(
                f"workspace member pattern {pattern[:200]!r} (cannot be listed: {exc.strerror})"
            )
            continue
        if matched is None:
            found.unread.append(f"workspace members (past {UV_WORKSPACE_MAX_ENTRIES} entries listed)")
            break
        folders, linked = matched
        found.unread += [
            f"workspace member {f} (a link, not followed)" for f in linked if not _excluded(f, excluded)
        ]
        found.folders += [f for f in folders if f not in found.folders and not _excluded(f, excluded)]
    if len(found.folders) > UV_WORKSPACE_MAX_MEMBERS:
        found.unread.append(f"{len(found.folders)} workspace members (more than {UV_WORKSPACE_MAX_MEMBERS})")
        found.folders = []
    return found


def _unlisted(pattern: str, parts: list[str]) -> str:
    """Why a member pattern is not listed ("" when it is)."""
    if pattern.startswith("/") or ".." in parts:
        return "outside the repository, or through its parent: not read"
    if "**" in parts:
        return "`**` is not listed"
    if len(parts) > UV_WORKSPACE_MAX_DEPTH:
        return f"more than {UV_WORKSPACE_MAX_DEPTH} parts"
    return ""


def _match(root: Path, parts: list[str], budget: list[int]) -> tuple[list[str], list[str]] | None:
    """(folders, links) under `root` whose path matches `parts` part by part, links not followed (a link
    that matches is returned as one); None when the listing passes its budget: each folder listed costs
    its entries and one more, each part without a wildcard one look."""
    level, linked = [""], []
    for part in parts:
        following: list[str] = []
        for rel in level:
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if not glob.has_magic(part):
                child = f"{rel}/{part}" if rel else part
                kind = _kind(root / child)
                following += [child] if kind == "folder" else []
                linked += [child] if kind == "link" else []
                continue
            with os.scandir(root / rel if rel else root) as listing:
                entries = sorted(listing, key=lambda e: e.name)
            budget[0] -= len(entries)
            if budget[0] < 0:
                return None
            for entry in entries:
                if not fnmatch.fnmatchcase(entry.name, part):
                    continue
                child = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_symlink():
                    linked.append(child)
                elif entry.is_dir(follow_symlinks=False):
                    following.append(child)
        level = following
    return level, linked


def _kind(path: Path) -> str:
    """ "folder", "link" or "" (nothing there, or a file) for one name, without following a link."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return ""
    if stat.S_ISLNK(mode):
        return "link"
    return "folder" if stat.S_ISDIR(mode) else ""


def real_folder(root: Path, rel: str) -> bool:
    """`rel` is a folder under `root` reached without a link on the way."""
    path = root
    for part in PurePosixPath(rel).parts:
        path = path / part
        if _kind(path) != "folder":
            return False
    return True


def _normal(pattern: str) -> str:
    return "/".join(p for p in PurePosixPath(pattern).parts if p != ".")


def _excluded(folder: str, excluded: list[str]) -> bool:
    """uv's exclude: the whole relative path against the pattern, where `*` crosses `/`."""
    return any(fnmatch.fnmatchcase(folder, pattern) for pattern in excluded)


def asked_by_project(root: Path, folder: str, canonical: str) -> tuple[list[Asked], bool]:
    """(every requirement on the SDK in the project at `folder`'s pyproject.toml, whatever its marker, and
    whether that is all it declares). `folder`: reached without a link (the caller checks). Read:
    [project] dependencies and optional-dependencies, [dependency-groups], uv's, PDM's and Hatch's tables
    with Hatch's overrides (asked_in), and its own [tool.uv.sources] entry for the SDK (other than an
    index: None). A pyproject.toml that is a link, not a file or cannot be read: one entry, off target.
    Not all: no pyproject.toml, no [project] table, or dependencies it makes `dynamic` (setup.py,
    setup.cfg or a file declares them: the caller reads those)."""
    rel = f"{folder}/pyproject.toml"
    try:
        kind = _kind(root / rel)
    except OSError as exc:
        return [(rel, f"cannot be read: {exc.strerror}", None)], True
    if kind:
        return [(rel, "a link or not a file: not read", None)], True
    if not (root / rel).is_file():
        return [], False
    try:
        doc = pyproject.parse((root / rel).read_text(encoding="utf-8")).unwrap()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [(rel, f"cannot be read: {exc}", None)], True
    project = _table(doc, "project")
    dynamic = _strings(project.get("dynamic"))
    complete = bool(project) and not {"dependencies", "optional-dependencies"} & set(dynamic)
    arrays: list[tuple[str, Any]] = [("project.dependencies", project.get("dependencies"))]
    arrays += [
        (f"project.optional-dependencies.{k}", v) for k, v in _table(project, "optional-dependencies").items()
    ]
    arrays += [(f"dependency-groups.{k}", v) for k, v in _table(doc, "dependency-groups").items()]
    arrays += pyproject.tool_arrays(doc) + hatch_overrides(
        _table(_table(doc, "tool"), "hatch"), "tool.hatch."
    )
    found = asked_in([(f"{rel} [{where}]", array) for where, array in arrays], canonical)
    sources = _table(_table(_table(doc, "tool"), "uv"), "sources")
    found += [
        (f"{rel} [tool.uv.sources]", f"{name} = {source}", None)
        for name, source in sources.items()
        if pep508.canonical(name) == canonical and not index_only(source)
    ]
    return found, complete


def asked_in(arrays: list[tuple[str, Any]], canonical: str) -> list[Asked]:
    """(where, requirement, specifier) of each string on the SDK in the (where, array) pairs, whatever its
    marker; a URL, or a string that does not parse but starts with the SDK's name (Hatch's
    `acme-sdk @ {root:uri}/...`): None, off target."""
    found: list[Asked] = []
    for where, array in arrays:
        for text in _strings(array):
            requirement = pep508.parse(text)
            if requirement is not None and pep508.matches(requirement, canonical):
                found.append((where, text.strip(), None if requirement.url else str(requirement.specifier)))
            elif requirement is None and (lead := LEADING_NAME.match(text)):
                found += [(where, text.strip(), None)] if pep508.canonical(lead[1]) == canonical else []
    return found


def hatch_overrides(hatch: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """(where, entries) of what Hatch's env overrides add or set (`platform.linux.dependencies = [...]`,
    `matrix.v.dependencies = [{value = "...", if = [...]}]`), each as if it always applied; `hatch`: the
    table holding `envs` ([tool.hatch] of a pyproject.toml, the whole of hatch.toml)."""
    found: list[tuple[str, Any]] = []
    for name, env in _table(hatch, "envs").items():
        overrides = _table(env, "overrides") if isinstance(env, dict) else {}
        for by_source in overrides.values():
            for options in by_source.values() if isinstance(by_source, dict) else []:
                for key in HATCH_OVERRIDE_KEYS:
                    items = options.get(key) if isinstance(options, dict) else None
                    entries = [i.get("value") if isinstance(i, dict) else i for i in _list(items)]
                    found.append((f"{prefix}envs.{name}.overrides.{key}", entries))
    return found


def asked_by_wheel(root: Path, rel: str, canonical: str) -> list[Asked]:
    """What a wheel in the repository a path source names asks for of the SDK: its METADATA's
    Requires-Dist lines, whatever their marker. Not a regular file reached without a link, not one
    `*.dist-info/METADATA` at the top, past WHEEL_METADATA_MAX_BYTES or unreadable: off target (None)."""
    where = f"{rel} (a wheel a path source names)"
    parent = PurePosixPath(rel).parent.as_posix()
    try:
        inside = (parent == "." or real_folder(root, parent)) and _kind(root / rel) == ""
    except OSError as exc:
        return [(where, f"cannot be read: {exc.strerror}", None)]
    if not inside or not (root / rel).is_file():
        return [(where, "not a file of the repository (a link, or missing): not read", None)]
    try:
        with zipfile.ZipFile(root / rel) as archive:
            names = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(names) != 1 or archive.getinfo(names[0]).file_size > WHEEL_METADATA_MAX_BYTES:
                return [(where, "no single METADATA of a readable size: not read", None)]
            with archive.open(names[0]) as metadata:
                text = metadata.read(WHEEL_METADATA_MAX_BYTES + 1).decode("utf-8")
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError, RuntimeError) as exc:
        return [(where, f"cannot be read: {exc}", None)]
    found: list[Asked] = []
    for line in text.split("\n\n", 1)[0].splitlines():  # the headers, before the description
        name, _, value = line.partition(":")
        requirement = pep508.parse(value) if name.strip().lower() == "requires-dist" else None
        if requirement is not None and pep508.matches(requirement, canonical):
            found.append(
                (
                    f"{rel} Requires-Dist",
                    value.strip(),
                    None if requirement.url else str(requirement.specifier),
                )
            )
    return found


def index_only(source: Any) -> bool:
    """Whether a [tool.uv.sources] value only names indexes (under markers): the version still comes from
    the requirements. Anything else (git, path, url, workspace, a shape uv may add) is off target."""
    entries = source if isinstance(source, list) else [source]
    return all(isinstance(e, dict) and "index" in e and not e.keys() & SOURCE_KINDS for e in entries)


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
