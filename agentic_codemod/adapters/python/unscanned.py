"""Python code that names the SDK where the loaded rules do not look (Adapter.unscanned_code).

    unscanned_code(root, languages, sdk, given, settings) -> [UnscannedCode]

Python's code files beyond `.py`: `.pyw`, `.pyi` (stubs a type checker reads), `.pyx` (Cython), `.ipynb`
(notebooks), and scripts whose `#!` line runs python or pypy. The SDK is named where one of its import
names (imports.import_names) stands as a module path's first word (`acme`, `acme.utils`; not `my_acme`
or `x.acme`). The listing and the bounds are the adapters' shared part (adapters/unscanned_code.py).

What the rules can read as Python (`render`): a `.pyw`, a `.pyi`, a `#!` script, a link's target, as they
are; a notebook's code cells (of a Python kernel), one after another, as code_imports reads them (IPython's
`%`/`!` lines as `pass`, Python cell magics such as `%%time` kept, other cell magics left out). A `.pyx`
(Cython's own syntax), a file that is not UTF-8, and one of which any part does not parse stay items.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters.python import code_imports
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
    """The file as Python source the rules can scan, or None where the rules could not read it whole
    (Cython, not UTF-8, a broken notebook, any part that does not parse: tree-sitter would match in what
    it recovers and say nothing of the rest), so the file stays an item."""
    suffix = PurePosixPath(name).suffix
    if suffix == ".pyx":
        return None
    if suffix == ".ipynb":
        cells = code_imports.code_cells(data)
        if isinstance(cells, str):
            return None
        parts = [code for _, source in cells if (code := code_imports.without_magics(source)) is not None]
    else:
        try:
            parts = [data.decode("utf-8")]
        except UnicodeDecodeError:
            return None
    if not all(_parses(part) for part in parts):
        return None
    return "python", "\n\n".join(parts) + "\n" if suffix == ".ipynb" else parts[0]


def _parses(code: str) -> bool:
    """Whether Python parses `code` and it can be written back as UTF-8 (no lone surrogate)."""
    try:
        code.encode("utf-8")
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeEncodeError):
        return False
    return True
