"""JavaScript and TypeScript code that names the SDK where the loaded rules do not look
(Adapter.unscanned_code).

    unscanned_code(root, languages, sdk, given, settings) -> [UnscannedCode]

npm's code files: every suffix of the ast-grep languages (`.ts` where the rules are `javascript` only,
and the other way round), components that hold script blocks (`.vue`, `.svelte`, `.astro`, `.mdx`), and
scripts whose `#!` line runs node, deno, bun, tsx or ts-node. The SDK is named where its package name (or
the task's import names) is a quoted module specifier (`"acme-sdk"`, `'acme-sdk/lib/x'`). The listing and
the bounds are the adapters' shared part (adapters/unscanned_code.py). Each stays a human's item: no
file is given to the rules as another language (TypeScript read by JavaScript rules loses what the types
hide; a component's script blocks are not the file).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from agentic_codemod.adapters.npm.test_facts import AST_GREP_LANGUAGES, SOURCE_SUFFIXES
from agentic_codemod.adapters.types import UnscannedCode
from agentic_codemod.adapters.unscanned_code import unscanned
from agentic_codemod.config import Settings

CODE_SUFFIXES = (*SOURCE_SUFFIXES, ".vue", ".svelte", ".astro", ".mdx")
INTERPRETERS = ("node", "nodejs", "deno", "bun", "tsx", "ts-node")


def unscanned_code(
    root: Path, languages: Iterable[str], sdk: str, given: Sequence[str], settings: Settings
) -> list[UnscannedCode]:
    scanned = frozenset(s for language in languages for s in AST_GREP_LANGUAGES.get(language, ()))
    names = b"|".join(re.escape(n.encode()) for n in ([n for n in given if n] or [sdk]))
    mention = re.compile(rb"""(['"`])(?:""" + names + rb""")(?:/[^'"`\r\n]*)?\1""")
    return unscanned(root, scanned, CODE_SUFFIXES, INTERPRETERS, mention, lambda _name, _data: None)
