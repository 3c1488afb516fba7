"""Whether a repository's code imports a package: the first `require`, `import` or `export … from` of it.

    first_import(root, sdk, given, settings) -> (file, line) | None

The names looked for are the package name (and its subpaths, `acme-sdk/client`) or the task's
`sdk.import_names`. Sources are the JavaScript/TypeScript files of the tree (test_files.SOURCE_SUFFIXES),
node_modules, hidden and build folders left out; read as text (never run); a file over the size limit
(config.MAX_IMPORT_SCAN_BYTES) is skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from agentic_codemod.adapters.npm.test_facts import SOURCE_SUFFIXES
from agentic_codemod.config import MAX_IMPORT_SCAN_BYTES, Settings

SKIPPED_DIRS = frozenset({"node_modules", "dist", "build", "coverage", "vendor"})


def first_import(root: Path, sdk: str, given: Sequence[str], settings: Settings) -> tuple[str, int] | None:
    names = [n for n in given if n] or [sdk]
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(
        rf"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|^\s*import\s+)(['"`])(?:{alternatives})(?:/[^'"`]*)?\1""",
        re.MULTILINE,
    )
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            path = Path(directory, name)
            if not name.endswith(SOURCE_SUFFIXES) or path.is_symlink():
                continue
            try:
                if path.stat().st_size > MAX_IMPORT_SCAN_BYTES:
                    continue
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            found = pattern.search(text)
            if found:
                return path.relative_to(root).as_posix(), text.count("\n", 0, found.start()) + 1
    return None
