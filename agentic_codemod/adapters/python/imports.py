"""Whether a repository imports a distribution: its import names, and the first import statement found.

    import_names(distribution, find_links, given) -> ["acme", ...]
    first_import(root, files, names) -> (file, line) | None

Import names come, in this order, from the task (`sdk.import_names`), the distribution's metadata in a
wheel of the local wheelhouse (`top_level.txt`, else the top-level entries of `RECORD`), the metadata of
an installed copy beside the tool, and last the distribution name itself (`acme-sdk` -> `acme_sdk`).
Sources are read with `ast` (never run); a file that does not parse is skipped, a source file over the
size limit too (config.MAX_IMPORT_SCAN_BYTES).
"""

from __future__ import annotations

import ast
import importlib.metadata
import zipfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python import pep508
from agentic_codemod.config import MAX_IMPORT_SCAN_BYTES, Settings
from agentic_codemod.errors import UNPARSEABLE


def import_names(distribution: str, find_links: Iterable[str], given: Iterable[str] = ()) -> list[str]:
    names = [n for n in given if n]
    if names:
        return names
    canonical = pep508.canonical(distribution)
    for folder in find_links:
        for wheel in sorted(Path(folder).glob("*.whl")) if Path(folder).is_dir() else []:
            if pep508.canonical(wheel.name.split("-")[0]) == canonical:
                found = _wheel_names(wheel)
                if found:
                    return found
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        dist = None
    if dist is not None:
        top = dist.read_text("top_level.txt")
        found = _top_level(top) if top else _record([str(f) for f in dist.files or []])
        if found:
            return found
    return [canonical.replace("-", "_")]


def first_import(root: Path, files: Iterable[str], names: Iterable[str]) -> tuple[str, int] | None:
    """The first `import X` / `from X import ...` of one of `names` (or a submodule), by file then line."""
    wanted = set(names)
    for file in files:
        path = root / file
        try:
            if path.stat().st_size > MAX_IMPORT_SCAN_BYTES:
                continue
            tree = ast.parse(path.read_bytes())
        except (OSError, *UNPARSEABLE):
            continue
        lines = sorted(
            node.lineno
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            and any(_matches(module, wanted) for module in _modules(node))
        )
        if lines:
            return file, lines[0]
    return None


def _modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module]
    return []


def _matches(module: str, wanted: set[str]) -> bool:
    parts = module.split(".")
    return any(".".join(parts[:i]) in wanted for i in range(1, len(parts) + 1))


def _wheel_names(wheel: Path) -> list[str]:
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = archive.namelist()
            top = next((m for m in members if m.endswith(".dist-info/top_level.txt")), None)
            if top is not None:
                return _top_level(archive.read(top).decode("utf-8", "replace"))
            record = next((m for m in members if m.endswith(".dist-info/RECORD")), None)
            text = archive.read(record).decode("utf-8", "replace") if record else ""
    except (OSError, zipfile.BadZipFile):
        return []
    return _record([line.split(",")[0] for line in text.splitlines()])


def _top_level(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().isidentifier()]


def _record(paths: list[str]) -> list[str]:
    names: dict[str, None] = {}
    for path in paths:
        first = PurePosixPath(path).parts[0] if path else ""
        if not first or first.endswith((".dist-info", ".data")) or first == "..":
            continue
        name = first.removesuffix(".py")
        if name.isidentifier():
            names[name] = None
    return list(names)


def first_sdk_import(
    root: Path, sdk: str, given: Iterable[str], settings: Settings
) -> tuple[str, int] | None:
    """The contract's first_import: the SDK's import names (import_names) in the tracked Python sources."""
    from agentic_codemod.workflow.scan import source_files  # the core's listing of tracked sources

    return first_import(root, source_files(root, "python"), import_names(sdk, settings.packages.local, given))
