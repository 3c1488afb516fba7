"""Which files declare npm dependencies, and where one named dependency is declared in them, with roles.

    find_dependency_files(root) -> ["package-lock.json", "package.json", "packages/a/package.json", ...]
    extract_dependencies(root, files, sdk) -> [Dependency(name, specifier, file, kind, line, role, ...)]

package.json files (the root and its workspaces): dependencies, devDependencies, peerDependencies,
optionalDependencies and overrides (roles.py). package-lock.json / npm-shrinkwrap.json: every installed
copy of the package (`packages["node_modules/…/<sdk>"].version`), role "lock", its exact version as the
specifier; refreshed by npm, never edited. A file that cannot be parsed stops extraction (InputError
naming the file): the dependency might be declared there. (The pins in Dockerfiles, hooks and CI jobs:
install_scripts.py.)

What npm installs under a name, not the name, decides (`npm:` aliases; versioning.py has the kinds):
  - `"acme-sdk": "npm:other@^1"` installs `other` as acme-sdk: uneditable, KIND_OTHER_PACKAGE (it counts
    as excluding the target: the run stops, requires_human, naming the line), and its lock entry (`name`
    other) is no lock of the SDK: left out;
  - `"acme": "npm:acme-sdk@^1"` installs the SDK as `acme`: a declaration of it, read by its range and
    uneditable (the bump does not rewrite aliases: one that excludes the target stops the run), and its
    lock entry (`node_modules/acme`, `name` acme-sdk) a lock entry of the SDK.
A lock entry's version is what its `resolved` tarball holds: a registry tarball of another version
(`…/acme-sdk/-/acme-sdk-1.0.0.tgz` under `"version": "1.1.0"`) is KIND_UNVERIFIED_LOCK (it counts as
excluding the target), one from another source (git, a path, another URL layout) KIND_UNINDEXED_LOCK
(no version: it proves nothing).

A copy of the SDK committed in a node_modules folder below the root (`src/node_modules/acme-sdk`) is what
node loads for the code beside it, never the version the run installs in the root's node_modules (npm's):
an uneditable runtime declaration, KIND_COMMITTED_COPY, so the run stops before any edit naming the path.
A file is a copy too: require() tries node_modules/acme-sdk as a file (itself, .js, .json, .node) before
the folder, and jest and vitest with their own extensions (COPY_SUFFIXES; `node_modules/@acme/sdk.js` for
a scoped name). So is a package.json named like the SDK that node or npm resolves the name to: below the
root, one with `exports` (node's self-reference: require("acme-sdk") in its folder is the package itself,
before any node_modules) or a workspace (npm links node_modules/acme-sdk to it); at the root, the SDK's own
repository (a bump onto itself is no migration a test run verifies). Package.json files in test data
(TEST_DATA: test/, fixtures/ …) are the repository's tests' inputs and stay out. The same walk notes the
SDK's jest manual mocks (`__mocks__/acme-sdk.js`) for sdk_substitutes.py, which reads the configuration that
points the test run elsewhere than the installed SDK. It enters no node_modules and no .git, and stops past
MAX_WALK_ENTRIES (requires_human, as the install scripts' walk does).

A node_modules folder committed at the root is no declaration: the install replaces it, so the run stops
there (requires_human naming it, with how to take it out of the repository), where its test run would
otherwise read as writing the repository's files.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from typing import Any

from agentic_codemod import json_input
from agentic_codemod.adapters.install_scripts import SKIPPED_FOLDERS
from agentic_codemod.adapters.npm import LOCKFILES, package_json, roles, sdk_substitutes
from agentic_codemod.adapters.npm.dependency_files import checked_dependency_files
from agentic_codemod.adapters.npm.install_scripts import TEST_FOLDERS
from agentic_codemod.adapters.npm.lockfile import tarball_version
from agentic_codemod.adapters.npm.versioning import (
    KIND_COMMITTED_COPY,
    KIND_OTHER_PACKAGE,
    KIND_UNINDEXED_LOCK,
    KIND_UNVERIFIED_LOCK,
    alias_of,
)
from agentic_codemod.config import INSTALL_SCRIPTS_MAX_ENTRIES, MAX_IMPORT_SCAN_BYTES
from agentic_codemod.errors import InputError, RequiresHuman
from agentic_codemod.models import Dependency

KIND_MANIFEST = "package.json"
KIND_LOCK = "package-lock"
MODULES = "node_modules"
MAX_WALK_ENTRIES = INSTALL_SCRIPTS_MAX_ENTRIES  # the committed copies' walk: the install scripts' bound
# What node_modules/<sdk> is loaded as: the folder, or a file (require()'s LOAD_AS_FILE tries X, X.js,
# X.json, X.node; jest's and vitest's resolvers add their module file extensions).
COPY_SUFFIXES = ("", ".js", ".json", ".node", ".cjs", ".mjs", ".jsx", ".ts", ".tsx", ".cts", ".mts")
# Folders of test data: a package.json there is an input of the repository's tests, never resolved to.
TEST_DATA = TEST_FOLDERS | (SKIPPED_FOLDERS & {"fixtures", "testdata", "test_data", "__fixtures__"})


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
    copies, mocks = _committed_copies(root, files, sdk)
    return found + copies + sdk_substitutes.found(root, files, sdk, mocks)


def _manifest(root: Path, file: str, sdk: str) -> list[Dependency]:
    text = _read(root, file)
    try:
        declarations = package_json.find(text, sdk)
        aliases = package_json.aliases(text, sdk)
    except ValueError as exc:
        raise InputError(f"{file}: {exc}", hint="fix the file, or leave it out of the task") from exc
    found = []
    for d in sorted([*declarations, *aliases], key=lambda d: d.start):
        where = f"{file} line {d.line}: {d.section}.{d.name} is {d.specifier!r}"
        other = alias_of(d.specifier)
        if d.name != sdk:
            kind, uneditable = KIND_MANIFEST, f"{where}, an npm alias of {sdk}, which the bump does not edit"
        elif other not in (None, sdk):
            kind = KIND_OTHER_PACKAGE
            uneditable = f"{where}, an npm alias: npm installs {other} under the name {sdk}, never {sdk}"
        else:
            kind, uneditable = KIND_MANIFEST, ""
        found.append(
            Dependency(
                name=sdk,
                specifier=d.specifier,
                file=file,
                kind=kind,
                line=d.line,
                role=roles.role(d.section),
                section=d.section,
                uneditable=uneditable,
            )
        )
    return found


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
        folder = _folder(key)
        named = entry.get("name", folder) if isinstance(entry, dict) else folder
        if folder is None or named != sdk:  # another package, or one installed under the SDK's name
            continue
        version = str(entry.get("version", "")) if isinstance(entry, dict) else ""
        kind, specifier = _lock_kind(sdk, version, entry.get("resolved") if isinstance(entry, dict) else None)
        found.append(
            Dependency(
                name=sdk,
                specifier=specifier,
                file=file,
                kind=kind,
                line=_line_of(text, json.dumps(key)),
                role="lock",
                section=key,
            )
        )
    return found


def _folder(key: str) -> str | None:
    """The folder a lock entry installs (`acme-sdk`, `@acme/sdk`) where its key is under a node_modules
    (`node_modules/acme-sdk`, `packages/web/node_modules/acme-sdk`); None for the root or a workspace."""
    head, marker, folder = key.rpartition(f"{MODULES}/")
    if not marker or (head and not head.endswith("/")) or not folder:
        return None
    return folder


def _lock_kind(sdk: str, version: str, resolved: Any) -> tuple[str, str]:
    """(kind, specifier) of the SDK's lock entry by what its `resolved` says (module docstring)."""
    if resolved is None or not version:
        return KIND_LOCK, version
    held = tarball_version(sdk, resolved) if isinstance(resolved, str) else None
    if held is None:
        return KIND_UNINDEXED_LOCK, version
    if held != version:
        tarball = f"{sdk.rpartition('/')[2]}-{held}.tgz"
        return KIND_UNVERIFIED_LOCK, f"{version} (but its resolved tarball is {tarball})"
    return KIND_LOCK, version


def _committed_copies(root: Path, files: list[str], sdk: str) -> tuple[list[Dependency], list[str]]:
    """Every copy of the SDK committed below the root and every package.json node resolves its name to
    (module docstring), uneditable runtime declarations; and the paths of its jest manual mocks."""

    def unlisted(exc: OSError) -> None:
        where = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "a folder"
        raise RequiresHuman(
            f"{where} cannot be listed ({exc.strerror}): a copy of {sdk} committed in a node_modules "
            "folder there would be what the code beside it loads",
            hint="make the folder readable, or check it for node_modules folders by hand",
        )

    if os.path.lexists(root / MODULES):  # the trees read here are clones and exports: committed
        raise RequiresHuman(
            f"{MODULES} is committed in the repository: the install of the tests' environment replaces "
            "what it holds, so no test run here could leave the repository's files as they are (and code "
            f"may load the committed packages, {sdk} among them, instead of what the run installs)",
            hint=f"take it out of the repository (`git rm -r --cached {MODULES}`, and add it to .gitignore), "
            "or migrate this repository by hand",
        )
    found, mocks, entries = [], [], 0
    for top, folders, names in os.walk(root, followlinks=False, onerror=unlisted):
        relative = Path(top).relative_to(root).as_posix()
        if relative != "." and MODULES in (*folders, *names):
            _no_links(root, f"{relative}/{MODULES}", sdk)
            found += [_copy(path, relative, sdk) for path in _present(root, f"{relative}/{MODULES}/{sdk}")]
        if "package.json" in names:
            found += _self_reference(root, relative, files, sdk)
        if Path(top).name == sdk_substitutes.MOCKS:
            mocks += _present(root, f"{relative}/{sdk}")
        folders[:] = sorted(f for f in folders if f not in (MODULES, ".git"))
        entries += len(folders) + len(names)
        if entries > MAX_WALK_ENTRIES:
            raise RequiresHuman(
                f"the repository has more than {MAX_WALK_ENTRIES} files and folders outside node_modules, "
                f"too many to look through for copies of {sdk} committed in a node_modules folder",
                hint=f"check for committed node_modules/{sdk} folders by hand, or migrate this repository "
                "by hand",
            )
    return found, mocks


def _no_links(root: Path, modules: str, sdk: str) -> None:
    """RequiresHuman where a node_modules folder below the root is a committed link, or holds one (a
    package, or a scope's package): node looks packages up through it wherever it leads, a folder the
    tests can write as they run (helper-39: `src/node_modules -> /tmp`, the tests writing an old copy of
    the SDK there, was green on the breaking bump)."""
    path = root / modules
    try:
        linked = [modules] if path.is_symlink() else _links_in(path, modules)
    except OSError as exc:
        raise RequiresHuman(
            f"{modules} cannot be listed ({exc.strerror}): a link committed in it would be where node "
            f"looks {sdk} up",
            hint="make the folder readable, or check it for links by hand",
        ) from None
    if linked:
        raise RequiresHuman(
            f"{linked[0]} is a link committed in the repository where node looks packages up: code below "
            f"{PurePosixPath(modules).parent}/ could load {sdk} from wherever it leads, not what the run "
            "installs",
            hint="replace the link with the files it stands for, or take it out of the repository",
        )


def _links_in(path: Path, modules: str) -> list[str]:
    """The links among a node_modules folder's packages and its scopes' packages (none in a file)."""
    if not path.is_dir():
        return []
    found = []
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_symlink():
            found.append(f"{modules}/{entry.name}")
        elif entry.name.startswith("@") and entry.is_dir(follow_symlinks=False):
            found += sorted(
                f"{modules}/{entry.name}/{e.name}" for e in os.scandir(entry.path) if e.is_symlink()
            )
    return found


def _present(root: Path, path: str) -> list[str]:
    """`path` as a folder or a file with each of COPY_SUFFIXES, where one is in the tree."""
    return [path + suffix for suffix in COPY_SUFFIXES if os.path.lexists(root / (path + suffix))]


def _copy(path: str, relative: str, sdk: str) -> Dependency:
    return Dependency(
        name=sdk,
        specifier="",
        file=path,
        kind=KIND_COMMITTED_COPY,
        role="runtime",
        section=MODULES,
        uneditable=f"{path} is a copy of {sdk} committed in the repository: node loads it for "
        f"the code under {relative}/ instead of the version the run installs, so the tests "
        "there would not run on the target; remove it (or update it) by hand",
    )


def _self_reference(root: Path, relative: str, files: list[str], sdk: str) -> list[Dependency]:
    """The package.json of this folder where node or npm resolves the SDK's name to it (module docstring)."""
    file = "package.json" if relative == "." else f"{relative}/package.json"
    if not TEST_DATA.isdisjoint(part.lower() for part in PurePosixPath(relative).parts):
        return []
    path = root / file
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_IMPORT_SCAN_BYTES:
            return []  # a link (to /dev/zero, out of the tree) or a file no package.json is this large
        text = path.read_text(encoding="utf-8")
        document = json_input.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return []  # no package npm reads (the root's and the workspaces' are read, and refused, above)
    if not isinstance(document, dict) or document.get("name") != sdk:
        return []
    resolved = f"require({sdk!r}) in the code under {relative}/"
    if relative == ".":
        why = (
            f"package.json names the repository's own package {sdk}: this repository is the SDK itself, "
            f"whose own code require({sdk!r}) loads where package.json sets `exports` (node's "
            "self-reference), and a bump of it onto itself is no migration a test run verifies; migrate a "
            "repository that uses the SDK, or this one by hand"
        )
    elif "exports" in document:
        why = (
            f"{file} names its package {sdk} and sets `exports`: node resolves {resolved} to that package "
            "itself (a self-reference), before any node_modules, never to the version the run installs; "
            "rename the package (or remove `exports`) by hand"
        )
    elif file in files:
        why = (
            f"{file} is a workspace named {sdk}: npm links node_modules/{sdk} to it, so the code loads it "
            "instead of the version the run installs; rename the workspace by hand"
        )
    else:
        return []
    return [
        Dependency(
            name=sdk,
            specifier="",
            file=file,
            kind=KIND_COMMITTED_COPY,
            line=_line_of(text, '"name"'),
            role="runtime",
            section="name",
            uneditable=why,
        )
    ]


def _line_of(text: str, needle: str) -> int | None:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _read(root: Path, file: str) -> str:
    try:
        return (root / file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{file}: cannot read: {exc}", hint="check the file exists and is UTF-8") from exc
