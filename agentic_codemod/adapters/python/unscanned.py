"""Python code that names the SDK where the loaded rules do not look (Adapter.unscanned_code).

    unscanned_code(root, languages, sdk, given, settings) -> [(path, why)]

Python's code files beyond `.py`: `.pyw`, `.pyi` (stubs a type checker reads), `.pyx` (Cython), `.ipynb`
(notebooks), and scripts whose `#!` line runs python or pypy. The SDK is named where one of its import
names (imports.import_names) stands as a module path's first word (`acme`, `acme.utils`; not `my_acme`
or `x.acme`). The listing and the bounds are the adapters' shared part (adapters/unscanned_code.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from agentic_codemod.adapters.python.imports import import_names
from agentic_codemod.adapters.python.test_facts import AST_GREP_LANGUAGES, SOURCE_SUFFIXES
from agentic_codemod.adapters.unscanned_code import unscanned
from agentic_codemod.config import Settings

CODE_SUFFIXES = (*SOURCE_SUFFIXES, ".pyw", ".pyi", ".pyx", ".ipynb")
INTERPRETERS = ("python", "pypy")


def unscanned_code(
    root: Path, languages: Iterable[str], sdk: str, given: Sequence[str], settings: Settings
) -> list[tuple[str, str]]:
    scanned = frozenset(s for language in languages for s in AST_GREP_LANGUAGES.get(language, ()))
    names = import_names(sdk, settings.packages.local, given)
    words = b"|".join(re.escape(n.encode()) for n in names)
    mention = re.compile(rb"(?<![\w.])(?:" + words + rb")\b")
    return unscanned(root, scanned, CODE_SUFFIXES, INTERPRETERS, mention)
