"""Which files the npm adapter reads, and which it refuses to let npm read.

    read_dependency_files(root) -> DependencyFiles     never raises: files + refusals
    is_dependency_file(path) -> bool                   by name, at any depth (FILE_PATTERNS, LOCKFILES,
                                                       UNSUPPORTED_LOCKFILES)
    checked_dependency_files(root) -> [str]            InputError naming every refusal

Read: package.json at the root and in every workspace its `workspaces` field names (a list of globs, or
{"packages": [...]}), package-lock.json / npm-shrinkwrap.json beside the root one, and the root .npmrc.

Refused (the run stops, exit 2, before npm reads anything):
  - a pnpm-lock.yaml or yarn.lock: those package managers are not supported yet, and installing with npm
    would ignore the lock the repository relies on;
  - a file that is a symlink, or resolves outside the repository;
  - a workspace glob that is absolute or climbs out with `..`;
  - a workspace glob in syntax npm's globs (minimatch) read otherwise than Path.glob: braces
    (`packages/{web,api}`), extglobs (`+(a|b)`), character classes (`[ab]`), backslash escapes. Read as
    written they would match other folders than npm's, and a workspace npm reads would go unread. (A
    negated glob, `!packages/old`, is passed over: every folder it would leave out is still read, which
    can only add declarations; so are the hidden folders `*` matches here and minimatch does not.)
  - a workspace folder that is a symlink, or reached through one (`packages/web -> ../apps/web`): npm
    reads the package it leads to, and dependency files must be regular files where they are;
  - a `file:` / `link:` dependency that resolves outside the repository (npm would copy or link it in);
  - an .npmrc key that makes npm run something or read configuration from elsewhere (script-shell,
    node-options, userconfig, globalconfig, …: npm_config.REFUSED_KEYS), that turns install scripts on,
    or that routes the registry's traffic (proxy, https-proxy, noproxy, strict-ssl=false, ca, cert, key:
    npm_config.NETWORK_KEYS; a proxy would get the caller's token with each request).
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from agentic_codemod import json_input
from agentic_codemod.adapters.npm import FILE_PATTERNS, LOCKFILES, UNSUPPORTED_LOCKFILES, npm_config
from agentic_codemod.adapters.npm.package_json import SECTIONS
from agentic_codemod.adapters.types import DependencyFiles, Refusal
from agentic_codemod.errors import InputError

MAX_WORKSPACES = 500  # a glob that names more packages than this is refused (a runaway pattern)
# What minimatch reads as glob syntax and Path.glob does not (or reads otherwise): refused, never guessed.
UNREAD_GLOB = frozenset("{}()[]\\")


def is_dependency_file(path: str) -> bool:
    name = PurePosixPath(path.replace("\\", "/")).name.lower()
    return name in {n.lower() for n in (*FILE_PATTERNS, *LOCKFILES, *UNSUPPORTED_LOCKFILES)}


def read_dependency_files(root: Path) -> DependencyFiles:
    files: list[str] = []
    refused: list[Refusal] = []
    for name in UNSUPPORTED_LOCKFILES:
        if (root / name).exists() or (root / name).is_symlink():
            tool = UNSUPPORTED_LOCKFILES[name]
            refused.append(
                Refusal(name, None, f"{tool} lockfiles are not supported yet (only npm's package-lock.json)")
            )
    manifests = ["package.json"] if _inside(root, "package.json", refused) else []
    if manifests:
        manifests += _workspaces(root, refused)
    for manifest in manifests:
        files.append(manifest)
        refused += _file_references(root, manifest)
    for name in (*LOCKFILES, ".npmrc"):
        if ((root / name).exists() or (root / name).is_symlink()) and _inside(root, name, refused):
            files.append(name)
    if ".npmrc" in files:
        refused += [Refusal(".npmrc", line, reason) for line, reason in npm_config.refused_lines(root)]
    return DependencyFiles(sorted(dict.fromkeys(files)), refused)


def checked_dependency_files(root: Path) -> list[str]:
    found = read_dependency_files(root)
    if found.refused:
        raise InputError(
            "refused dependency files: " + "; ".join(str(r) for r in found.refused),
            hint="use npm with a package-lock.json, keep every referenced path inside the repository",
        )
    return found.files


def _inside(root: Path, name: str, refused: list[Refusal]) -> bool:
    """Whether `name` is a regular file of the repository (not a symlink, not outside); refusals noted."""
    path = root / name
    if path.is_symlink():
        refused.append(Refusal(name, None, "is a symlink; dependency files must be regular files"))
        return False
    if not path.is_file():
        return False
    if not path.resolve().is_relative_to(root.resolve()):
        refused.append(Refusal(name, None, "resolves outside the repository"))
        return False
    return True


def _workspaces(root: Path, refused: list[Refusal]) -> list[str]:
    try:
        document = json_input.loads((root / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # extract names the broken file
    field = document.get("workspaces") if isinstance(document, dict) else None
    globs = field.get("packages") if isinstance(field, dict) else field
    if not isinstance(globs, list):
        return []
    found: list[str] = []
    for glob in globs:
        if not isinstance(glob, str):
            continue
        pattern = glob.strip().removeprefix("./").rstrip("/")
        if (
            not pattern
            or pattern.startswith("/")
            or ".." in PurePosixPath(pattern).parts
            or pattern[:1] == "!"
        ):
            if pattern[:1] != "!":
                refused.append(Refusal("package.json", None, f"workspace {glob!r} leaves the repository"))
            continue
        if UNREAD_GLOB & set(pattern):
            refused.append(
                Refusal(
                    "package.json",
                    None,
                    f"workspace {glob!r} uses glob syntax this tool does not read as npm does (braces, "
                    "extglobs, character classes, escapes); list the workspace folders, or use `*` and `**`",
                )
            )
            continue
        for folder in sorted(root.glob(pattern)):
            if len(found) >= MAX_WORKSPACES:
                refused.append(
                    Refusal("package.json", None, f"workspaces name over {MAX_WORKSPACES} packages")
                )
                return found
            relative = folder.relative_to(root).as_posix()
            if not folder.is_dir():
                continue
            link = _linked(root, relative)
            if link is not None:
                refused.append(
                    Refusal(
                        "package.json",
                        None,
                        f"workspace {glob!r}: {link} is a symlink; npm reads the package it leads to, which "
                        "this tool does not follow (make the workspace a folder of its own)",
                    )
                )
            elif _inside(root, f"{relative}/package.json", refused):
                found.append(f"{relative}/package.json")
    return found


def _linked(root: Path, relative: str) -> str | None:
    """The first folder on the way to `relative` (itself included) that is a symlink, or None."""
    parts = PurePosixPath(relative).parts
    for end in range(1, len(parts) + 1):
        step = "/".join(parts[:end])
        if (root / step).is_symlink():
            return step
    return None


def _file_references(root: Path, manifest: str) -> list[Refusal]:
    """`file:` / `link:` dependencies of one package.json that resolve outside the repository."""
    try:
        text = (root / manifest).read_text(encoding="utf-8")
        document = json_input.loads(text)
    except (OSError, ValueError):
        return []
    if not isinstance(document, dict):
        return []
    folder = (root / manifest).parent
    refusals = []
    for section in SECTIONS:
        entries = document.get(section)
        if not isinstance(entries, dict):
            continue
        for name, value in entries.items():
            if not isinstance(value, str) or not value.startswith(("file:", "link:")):
                continue
            target = (folder / value.split(":", 1)[1]).resolve()
            if not target.is_relative_to(root.resolve()):
                line = _line_of(text, json.dumps(name))
                refusals.append(
                    Refusal(
                        manifest,
                        line,
                        f"{section}.{name} {value.split(':', 1)[0]}: leads outside the repository",
                    )
                )
    return refusals


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None
