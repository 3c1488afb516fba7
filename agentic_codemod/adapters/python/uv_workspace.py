"""The in-repository projects uv installs with the project: `[tool.uv.workspace]` members and `path` sources.

    members(root, workspace) -> Members(folders, unread)     (pure: lists folders, runs nothing)
    asked_by_project(root, folder, canonical) -> [(where, text, specifier | None)]

uv locks a workspace as one: every member's dependencies, extras and groups are resolved together with
the root's, so a member pinning the SDK below the target leaves the bumped repository unable to lock. What
the tool cannot list for sure is `unread`, and the caller (install_plan.asked_for) takes each as off target
(requires_human) rather than a member missed:

    a pattern with `**`, or one past config.UV_WORKSPACE_MAX_ENTRIES directory entries listed, or more
    than config.UV_WORKSPACE_MAX_MEMBERS members

Patterns are matched one path part at a time against folder names (fnmatch, as uv's glob does for `*`,
`?` and `[...]`), never through a symlink: a member behind a link is not listed (uv would follow it, but
a link may lead out of the repository, and reading there is what the tool never does); `exclude` is
applied the same way. "." (the root itself) is the project already read.

A member's declarations are its pyproject.toml's (every role but lock: uv locks its extras and groups
too), read as a repository's pyproject.toml is; a member without one is left to the caller.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from agentic_codemod.adapters.python import pep508, pyproject
from agentic_codemod.config import UV_WORKSPACE_MAX_ENTRIES, UV_WORKSPACE_MAX_MEMBERS

Asked = tuple[str, str, "str | None"]


@dataclass
class Members:
    folders: list[str] = field(default_factory=list)  # repository-relative POSIX paths
    unread: list[str] = field(default_factory=list)  # why a pattern could not be listed for sure


def members(root: Path, workspace: dict[str, Any]) -> Members:
    found = Members()
    budget = [UV_WORKSPACE_MAX_ENTRIES]
    excluded = [p for p in _strings(workspace.get("exclude")) if p.strip()]
    for pattern in _strings(workspace.get("members")):
        parts = [p for p in PurePosixPath(pattern).parts if p != "."]
        if not parts:
            continue  # "." or "": the root, read as the project
        if pattern.startswith("/") or ".." in parts:
            continue  # outside the repository: never read (uv would refuse a member outside the root too)
        if "**" in parts:
            found.unread.append(f"workspace member pattern {pattern!r} (`**` is not listed)")
            continue
        matched = _match(root, parts, budget)
        if matched is None:
            found.unread.append(
                f"workspace member pattern {pattern!r} (past {UV_WORKSPACE_MAX_ENTRIES} entries)"
            )
            break
        for folder in matched:
            if folder not in found.folders and not any(_is(folder, e) for e in excluded):
                found.folders.append(folder)
    if len(found.folders) > UV_WORKSPACE_MAX_MEMBERS:
        found.unread.append(f"{len(found.folders)} workspace members (more than {UV_WORKSPACE_MAX_MEMBERS})")
        found.folders = []
    return found


def _match(root: Path, parts: list[str], budget: list[int]) -> list[str] | None:
    """Folders under `root` whose path matches `parts` part by part, links not followed; None when the
    listing would pass the budget of directory entries."""
    level = [""]
    for part in parts:
        following: list[str] = []
        for rel in level:
            if not _magic(part):
                child = f"{rel}/{part}" if rel else part
                following += [child] if _real_folder(root, child) else []
                continue
            try:
                with os.scandir(root / rel if rel else root) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            budget[0] -= len(entries)
            if budget[0] < 0:
                return None
            following += [
                f"{rel}/{e.name}" if rel else e.name
                for e in entries
                if e.is_dir(follow_symlinks=False) and fnmatch.fnmatchcase(e.name, part)
            ]
        level = following
    return level


def _magic(part: str) -> bool:
    return any(c in part for c in "*?[")


def _real_folder(root: Path, rel: str) -> bool:
    """`rel` is a folder under `root` reached without a link on the way."""
    path = root
    for part in PurePosixPath(rel).parts:
        path = path / part
        if path.is_symlink() or not path.is_dir():
            return False
    return True


def _is(folder: str, pattern: str) -> bool:
    parts = [p for p in PurePosixPath(pattern).parts if p != "."]
    mine = PurePosixPath(folder).parts
    return len(parts) == len(mine) and all(
        fnmatch.fnmatchcase(m, p) for m, p in zip(mine, parts, strict=True)
    )


def asked_by_project(root: Path, folder: str, canonical: str) -> list[Asked]:
    """Every requirement on the SDK in the project at `folder`'s pyproject.toml, whatever its marker:
    [project] dependencies and optional-dependencies, [dependency-groups], and uv's, PDM's and Hatch's
    tables (a URL: None, off target). A link on the way, or a file that cannot be read: one entry, off
    target. [] when the folder has no pyproject.toml."""
    rel = f"{folder}/pyproject.toml"
    path = root / rel
    if not path.exists() and not path.is_symlink():
        return []
    if not _real_folder(root, folder) or path.is_symlink() or not path.is_file():
        return [(rel, "a link or not a file: not read", None)]
    try:
        doc = pyproject.parse(path.read_text(encoding="utf-8")).unwrap()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [(rel, f"cannot be read: {exc}", None)]
    project = _table(doc, "project")
    arrays: list[tuple[str, Any]] = [("project.dependencies", project.get("dependencies"))]
    arrays += [
        (f"project.optional-dependencies.{k}", v) for k, v in _table(project, "optional-dependencies").items()
    ]
    arrays += [(f"dependency-groups.{k}", v) for k, v in _table(doc, "dependency-groups").items()]
    found: list[Asked] = []
    for where, array in [*arrays, *pyproject.tool_arrays(doc)]:
        for text in _strings(array):
            requirement = pep508.parse(text)
            if requirement is not None and pep508.matches(requirement, canonical):
                written = None if requirement.url else str(requirement.specifier)
                found.append((f"{rel} [{where}]", text.strip(), written))
    return found


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
