"""What a codemod rule's edit brings into a JavaScript/TypeScript file (workflow/rule_risk.py asks the
adapter whose ast-grep languages hold the rule's language).

    assess(before, after) -> (adds, requires_human)

Compared on the code without comments and string contents (so a word in a string or a comment counts for
nothing), like the Python assessor compares syntax trees:

    a require/import of a module the file already imported                         noted
    a require/import of a module the file did not import (or a dynamic import())   human
    a reference to a process, file, network or dynamic-code API (RISKY)             human
    a file whose brackets no longer balance (the edit broke it: it cannot be checked) human
"""

from __future__ import annotations

import re
from collections import Counter

# Node and browser APIs an SDK migration has no business adding.
RISKY = (
    "eval",
    "Function",
    "child_process",
    "execSync",
    "spawn",
    "execFile",
    "process.env",
    "process.exit",
    "process.binding",
    "require.cache",
    "Module._load",
    "fs",
    "net",
    "http",
    "https",
    "dgram",
    "vm",
    "worker_threads",
    "globalThis",
    "XMLHttpRequest",
    "WebSocket",
)
IMPORT = re.compile(
    r"""\brequire\s*\(\s*(['"`])([^'"`]+)\1|\bfrom\s+(['"])([^'"]+)\3|^\s*import\s+(['"])([^'"]+)\5""",
    re.MULTILINE,
)
DYNAMIC_IMPORT = re.compile(r"\bimport\s*\(")
NAMES = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*")
PAIRS = {")": "(", "]": "[", "}": "{"}


def assess(before: str, after: str) -> tuple[list[str], bool]:
    adds: list[str] = []
    human = False
    if _balanced(_code(before)) and not _balanced(_code(after)):
        return ["an edit that leaves the file's brackets unbalanced"], True
    old, new = _imports(before), _imports(after)
    old_roots = {_root(m) for m in old}
    for module in sorted(new - old):
        if _root(module) in old_roots:
            adds.append(f"import of {module}")
        else:
            adds.append(f"import of {module}, a module the file did not import")
            human = True
    if len(DYNAMIC_IMPORT.findall(_code(after))) > len(DYNAMIC_IMPORT.findall(_code(before))):
        adds.append("a dynamic import()")
        human = True
    for name in sorted(_risky(after) - _risky(before)):
        adds.append(f"use of {name}")
        human = True
    return adds, human


def _imports(text: str) -> set[str]:
    found = set()
    for match in IMPORT.finditer(_without_comments(text)):
        found.add(match.group(2) or match.group(4) or match.group(6))
    return found


def _root(module: str) -> str:
    parts = module.split("/")
    return "/".join(parts[:2]) if module.startswith("@") else parts[0]


def _risky(text: str) -> Counter[str]:
    names = Counter(NAMES.findall(_code(text)))
    out: Counter[str] = Counter()
    for name, count in names.items():
        for risky in RISKY:
            if name == risky or name.startswith(risky + "."):
                out[risky] += count
    return out


def _without_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|(?<![:\"'\\])//[^\n]*", "", text, flags=re.DOTALL)


def _code(text: str) -> str:
    """Comments removed and string contents blanked (quotes kept)."""
    text = _without_comments(text)
    return re.sub(r"""(['"`])(?:\\.|(?!\1).)*\1""", lambda m: m.group(1) * 2, text, flags=re.DOTALL)


def _balanced(code: str) -> bool:
    stack: list[str] = []
    for char in code:
        if char in "([{":
            stack.append(char)
        elif char in PAIRS and (not stack or stack.pop() != PAIRS[char]):
            return False
    return not stack
