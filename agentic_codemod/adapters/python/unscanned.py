"""Python code that names the SDK where the loaded rules do not look (Adapter.unscanned_code).

    unscanned_code(root, languages, sdk, given, settings) -> [UnscannedCode]

Python's code files beyond `.py`: `.pyw`, `.pyi` (stubs a type checker reads), `.pyx` (Cython), `.ipynb`
(notebooks), and scripts whose `#!` line runs python or pypy. The SDK is named where one of its import
names (imports.import_names) stands as a module path's first word (`acme`, `acme.utils`; not `my_acme`
or `x.acme`). The listing and the bounds are the adapters' shared part (adapters/unscanned_code.py).

What the rules can read as Python (`render`): a `.pyw`, a `.pyi`, a `#!` script, a link's target, as they
are; a notebook's code cells, one after another, IPython's `%`/`!` lines and cells of a `%%` magic blanked
(its lines are not the file's). A `.pyx` (Cython's own syntax) and a file that is not UTF-8 stay items.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python.imports import import_names
from agentic_codemod.adapters.python.test_facts import AST_GREP_LANGUAGES, SOURCE_SUFFIXES
from agentic_codemod.adapters.types import UnscannedCode
from agentic_codemod.adapters.unscanned_code import unscanned
from agentic_codemod.config import Settings

CODE_SUFFIXES = (*SOURCE_SUFFIXES, ".pyw", ".pyi", ".pyx", ".ipynb")
INTERPRETERS = ("python", "pypy")


def unscanned_code(
    root: Path, languages: Iterable[str], sdk: str, given: Sequence[str], settings: Settings
) -> list[UnscannedCode]:
    scanned = frozenset(s for language in languages for s in AST_GREP_LANGUAGES.get(language, ()))
    names = import_names(sdk, settings.packages.local, given)
    words = b"|".join(re.escape(n.encode()) for n in names)
    mention = re.compile(rb"(?<![\w.])(?:" + words + rb")\b")
    return unscanned(root, scanned, CODE_SUFFIXES, INTERPRETERS, mention, render)


def render(name: str, data: bytes) -> tuple[str, str] | None:
    """The file as Python source the rules can scan, or None (Cython, not UTF-8, a broken notebook)."""
    suffix = PurePosixPath(name).suffix
    if suffix == ".pyx":
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if suffix != ".ipynb":
        return "python", text
    try:
        cells = json.loads(text).get("cells")
    except (ValueError, AttributeError, RecursionError):
        return None
    if not isinstance(cells, list):
        return None
    code: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = (
            "".join(source)
            if isinstance(source, list) and all(isinstance(x, str) for x in source)
            else source
        )
        if not isinstance(source, str):
            return None
        if source.lstrip().startswith("%%"):
            continue  # a cell magic: another language, or Python the magic runs; not read as the file's
        code.append("\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in source.splitlines()))
    return "python", "\n\n".join(code) + "\n"
