"""The modules a distribution ships, from the files its installer wrote (RECORD), read on the host.

    installed(env_root, name) -> Shipped | None      distribution `name` as an environment holds it: its
                                                     version and modules (None: not there, or its RECORD
                                                     cannot be read)
    all_installed(env_root) -> {module}             the modules every distribution the environment holds
                                                     ships (one whose RECORD cannot be read: none)
    in_wheels(folders, name, version) -> {module} | None
                                                     the modules of that version's wheel in local wheel
                                                     folders (None: no such wheel, or unreadable)
    modules_of(paths) -> {module}                    the dotted module names a list of installed paths
                                                     gives, with every package above them

A module is a source, bytecode or extension file whose path parts are all identifiers (`acme/utils.py` is
`acme.utils`, `acme/utils/__init__.py` too); every folder above one is a package of its own (a namespace
package has no `__init__`). What lies outside site-packages (`../../bin/...`), the dist-info and `.data`
folders, `__pycache__` and stubs (`.pyi`: nothing imports them) name no module. Nothing here runs code
of the distribution; the RECORD is read as installed_files.listed reads it (bounded, no link followed).
"""

from __future__ import annotations

import csv
import importlib.machinery
import io
import os
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python.installed_files import dist_name, listed, site_packages
from agentic_codemod.config import ENV_RECORD_MAX_BYTES

# Longest first, so `errors.cpython-311-x86_64-linux-gnu.so` loses its whole suffix, not `.so` only.
_SUFFIXES = sorted(
    {
        *importlib.machinery.SOURCE_SUFFIXES,
        *importlib.machinery.BYTECODE_SUFFIXES,
        *importlib.machinery.EXTENSION_SUFFIXES,
    },
    key=len,
    reverse=True,
)


@dataclass(frozen=True)
class Shipped:
    version: str  # as the dist-info folder's name says it
    modules: frozenset[str]


def installed(env_root: Path, name: str) -> Shipped | None:
    """Distribution `name` in the environment at `env_root`: None where it is not installed, where more
    than one dist-info names it (which one the imports see cannot be told) or where its RECORD is not a
    readable, bounded file."""
    wanted = canonicalize_name(name)
    try:
        found = [
            Path(entry.path)
            for site in site_packages(env_root)
            for entry in os.scandir(site)
            if entry.name.endswith(".dist-info") and dist_name(entry.name) == wanted
        ]
    except OSError:
        return None
    if len(found) != 1 or found[0].is_symlink():
        return None
    paths = listed(found[0] / "RECORD")
    if paths is None:
        return None
    version = found[0].name[: -len(".dist-info")].rpartition("-")[2]
    return Shipped(version, modules_of(paths))


def all_installed(env_root: Path) -> frozenset[str]:
    """The modules of every distribution installed in the environment at `env_root`, by their RECORDs: a
    module the SDK's target version moved to another distribution under the same import path (dbt-core
    1.8's `dbt.adapters`, now dbt-adapters') is still there. Fail closed: a dist-info that is a link or
    whose RECORD is not a readable, bounded file adds nothing (its modules count as not shipped), and an
    environment whose site-packages cannot be listed gives none."""
    modules: set[str] = set()
    try:
        records = [
            Path(entry.path) / "RECORD"
            for site in site_packages(env_root)
            for entry in sorted(os.scandir(site), key=lambda e: e.name)
            if entry.name.endswith(".dist-info") and entry.is_dir(follow_symlinks=False)
        ]
    except OSError:
        return frozenset()
    for record in records:
        paths = listed(record)
        if paths is not None:
            modules.update(modules_of(paths))
    return frozenset(modules)


def in_wheels(folders: Iterable[Path], name: str, version: str) -> frozenset[str] | None:
    """The modules of distribution `name` at `version` as its wheel in one of `folders` (a local
    wheelhouse) lists them; None where no wheel there is that version or none can be read."""
    wanted, at = canonicalize_name(name), _version(version)
    for folder in folders:
        for wheel in sorted(folder.glob("*.whl")) if folder.is_dir() else []:
            try:
                dist, found, _, _ = parse_wheel_filename(wheel.name)
            except (InvalidWheelFilename, InvalidVersion):
                continue
            if dist == wanted and at is not None and found == at:
                modules = _wheel_modules(wheel)
                if modules is not None:
                    return modules
    return None


def modules_of(paths: Iterable[PurePosixPath]) -> frozenset[str]:
    modules: set[str] = set()
    for path in paths:
        parts = path.parts
        if not parts or parts[0].endswith((".dist-info", ".data")) or "__pycache__" in parts:
            continue
        stem = _module_stem(parts[-1])
        if stem is None or not all(p.isidentifier() for p in (*parts[:-1], stem)):
            continue
        names = [*parts[:-1]] if stem == "__init__" else [*parts[:-1], stem]
        modules.update(".".join(names[:i]) for i in range(1, len(names) + 1))
    return frozenset(modules)


def _module_stem(filename: str) -> str | None:
    suffix = next((s for s in _SUFFIXES if filename.endswith(s) and len(filename) > len(s)), None)
    return filename[: -len(suffix)] if suffix else None


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _wheel_modules(wheel: Path) -> frozenset[str] | None:
    """The modules a wheel's RECORD lists (at most ENV_RECORD_MAX_BYTES of it); None: unreadable."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            records = [
                i
                for i in archive.infolist()
                if i.filename.count("/") == 1 and i.filename.endswith(".dist-info/RECORD")
            ]
            if len(records) != 1 or records[0].file_size > ENV_RECORD_MAX_BYTES:
                return None
            rows = list(csv.reader(io.StringIO(archive.read(records[0]).decode("utf-8"), newline="")))
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, csv.Error):
        return None
    return modules_of(PurePosixPath(row[0]) for row in rows if row and row[0])
