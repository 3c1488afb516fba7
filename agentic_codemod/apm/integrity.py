"""Integrity of installed context: the checks `apm` itself does not make (measured on apm-cli 0.35.0).

- content hash of every installed package, recomputed and compared with apm.lock.yaml
  (`apm audit` does not notice a hand edit inside apm_modules/, the copy this runtime reads);
- no hooks primitive anywhere (APM parks hooks behind its trust gate but no policy key refuses them);
- no symlinks (APM's hash skips them, so a symlink could change content without changing the hash);
- no hidden or bidirectional Unicode in any text file of a primitive (APM scans deployed files only,
  not the project's own .apm/ nor apm_modules/).

`content_hash` reproduces apm_cli.utils.content_hash.compute_package_hash: sha256 over the sorted
POSIX relative paths of all regular files, each path's UTF-8 bytes followed by the file's raw bytes;
directories named `.git` or `__pycache__` at any depth and a root-level `.apm-pin` are left out,
symlinks are skipped; an empty tree hashes as sha256(b"").
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from agentic_codemod import json_input
from agentic_codemod.apm.refusal import Violation
from agentic_codemod.visible import hidden

HASH_EXCLUDED_DIRS = frozenset({".git", "__pycache__"})
HASH_EXCLUDED_ROOT_FILES = frozenset({".apm-pin"})

# Where APM looks for hooks (apm_cli.integration.hook_integrator.find_hook_files) plus plugin manifests
# that carry a "hooks" key; any file below these folders counts.
HOOK_DIRS = (".apm/hooks", "hooks")
HOOK_FILE_NAMES = ("hooks.json",)
HOOK_FILE_SUFFIXES = (".hooks.json",)
PLUGIN_MANIFESTS = ("plugin.json", ".claude-plugin/plugin.json", ".github/plugin/plugin.json")

_ALLOWED_CONTROLS = frozenset("\t\n\r")
_NOT_PRINTABLE_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")


def package_files(root: Path) -> list[str]:
    """Sorted POSIX paths of the files that make up a package, as APM hashes them."""
    found: list[str] = []
    for current, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in HASH_EXCLUDED_DIRS]
        for name in files:
            path = Path(current, name)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or rel in HASH_EXCLUDED_ROOT_FILES:
                continue
            found.append(rel)
    return sorted(found)


def content_hash(root: Path) -> str:
    """`sha256:<hex>` of a package tree, byte-for-byte what `apm install` records."""
    hasher = hashlib.sha256()
    files = package_files(root) if root.is_dir() else []
    for rel in files:
        hasher.update(rel.encode("utf-8"))
        hasher.update((root / rel).read_bytes())
    return "sha256:" + (hasher.hexdigest() if files else hashlib.sha256(b"").hexdigest())


def changed_files(installed: Path, source: Path) -> list[str]:
    """Relative paths that differ between two package trees (added, removed or edited)."""
    left, right = set(package_files(installed)), set(package_files(source))
    changed = left ^ right
    changed.update(r for r in left & right if (installed / r).read_bytes() != (source / r).read_bytes())
    return sorted(changed)


def find_hooks(root: Path) -> list[str]:
    """Relative paths of hooks primitives in a package (or the project)."""
    hits: list[str] = []
    for rel in _walk_all(root):
        name = rel.rsplit("/", 1)[-1]
        in_hook_dir = any(rel.startswith(f"{d}/") for d in HOOK_DIRS)
        hook_file = name in HOOK_FILE_NAMES or name.endswith(HOOK_FILE_SUFFIXES)
        if in_hook_dir or hook_file or (rel in PLUGIN_MANIFESTS and _declares_hooks(root / rel)):
            hits.append(rel)
    return hits


def find_symlinks(root: Path) -> list[str]:
    return [rel for rel in _walk_all(root, include_links=True) if (root / rel).is_symlink()]


def hidden_characters(text: str) -> Iterator[tuple[int, int, str]]:
    """(line, column, description) of every invisible or direction-changing character.

    Refused: Unicode format characters (Cf: bidi overrides and isolates, zero-width characters, tag
    characters, soft hyphen, ...), variation selectors other than the emoji one, and control
    characters other than tab and newlines (e.g. ANSI escapes). A leading byte-order mark is allowed.
    """
    for found in _NOT_PRINTABLE_ASCII.finditer(text):  # printable ASCII is never hidden: not looked at
        char, index = found.group(), found.start()
        if _is_hidden(char) and not (index == 0 and char == "\ufeff"):
            line = text.count("\n", 0, index) + 1
            col = index - text.rfind("\n", 0, index)
            yield line, col, f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"


def scan_package(root: Path, *, package: str, display: str) -> list[Violation]:
    """Hooks, symlinks and hidden Unicode in one package tree; `display` prefixes reported paths."""
    out = [
        Violation(f"{display}/{rel}", package, "no-hooks", "hooks primitive refused", _HOOKS_HINT)
        for rel in find_hooks(root)
    ]
    out += [
        Violation(f"{display}/{rel}", package, "no-symlinks", "symlink in installed context", _LINK_HINT)
        for rel in find_symlinks(root)
    ]
    for rel in package_files(root):
        try:
            text = (root / rel).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary assets are hashed, not read as prompt text
        for line, col, what in hidden_characters(text):
            detail = f"hidden Unicode {what} at line {line}, column {col}"
            out.append(Violation(f"{display}/{rel}", package, "hidden-unicode", detail, _UNICODE_HINT))
            break  # one finding per file is enough to refuse it
    return out


def _is_hidden(char: str) -> bool:
    return char not in _ALLOWED_CONTROLS and hidden(char)


def _walk_all(root: Path, *, include_links: bool = False) -> Iterator[str]:
    for current, dirs, files in os.walk(root, followlinks=False):
        names = files + [d for d in dirs if Path(current, d).is_symlink()] if include_links else files
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            yield Path(current, name).relative_to(root).as_posix()


def _declares_hooks(path: Path) -> bool:
    try:
        data = json_input.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):  # nesting past json's depth included
        return True  # an unreadable plugin manifest is not given the benefit of the doubt
    return isinstance(data, dict) and bool(data.get("hooks"))


_HOOKS_HINT = "hooks execute code on the runner; the package must ship without them"
_LINK_HINT = "replace the symlink with the file it points to"
_UNICODE_HINT = "remove the character (`apm audit --strip` can do it) and release a new version"
