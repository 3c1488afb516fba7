"""package.json read and rewritten as text: only the one string that holds a range changes.

    find(content, name) -> [Declaration]                 every declaration under the key `name`, with its
                                                         section (an `npm:` alias there included)
    aliases(content, name) -> [Declaration]              every `"other": "npm:NAME@range"`: `name` installed
                                                         under another key (Declaration.name: that key)
    rewrite(content, name, change) -> str                each declaration's value replaced by change(decl)
    load(content) -> dict                                the parsed document (ValueError when not an object)

Sections read: dependencies, devDependencies, peerDependencies, optionalDependencies, and overrides
(the npm form, at any depth: `{"acme-plugin": {"acme-sdk": "1.0.0"}}` forces acme-sdk under acme-plugin,
and a nested object's "." key is the version of the package it is under).
Names compare exactly, as npm compares them (package names are lower case; a scope is part of the name).
Every other byte of the file (indentation, key order, a trailing newline, CRLF) stays as written.

An alias is never rewritten: under the key `name`, `npm:other@range` installs another package (a bump of
its range would bump that package); under another key, `npm:name@range` is not found by `find`, so
neither the bump nor the lockfile's refresh by name reaches it (extract.py makes both uneditable).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentic_codemod import json_input
from agentic_codemod.adapters.npm.versioning import alias_of

SECTIONS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies", "overrides")

_WHITESPACE = re.compile(r"[ \t\r\n]*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"')


@dataclass(frozen=True)
class Declaration:
    name: str
    specifier: str  # the value as written, JSON-decoded
    section: str  # "dependencies", "devDependencies", … "overrides"
    line: int  # 1-based line of the value
    start: int  # offsets of the JSON string (quotes included) in the text
    end: int


def load(content: str) -> dict[str, Any]:
    try:
        document = json_input.loads(content)
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise ValueError("not a JSON object")
    return document


def find(content: str, name: str) -> list[Declaration]:
    return [d for d in _declarations(content) if d.name == name]


def aliases(content: str, name: str) -> list[Declaration]:
    """The declarations of other keys whose value is an `npm:` alias of `name` (what npm installs under
    that key is `name`); each named by its own key."""
    return [d for d in _declarations(content) if d.name != name and alias_of(d.specifier) == name]


def _declarations(content: str) -> list[Declaration]:
    """Every string value of a dependency section, named by its key (module docstring)."""
    load(content)  # a clear error before any offset is trusted
    try:
        strings = _strings(content)
    except RecursionError:  # json.loads of Python 3.12+ reads deeper than this walk recurses
        raise ValueError("not valid JSON: nested deeper than this tool reads") from None
    found: list[Declaration] = []
    for path, start, end in strings:
        if len(path) == 2 and path[0] in SECTIONS:
            section, name = path[0], path[1]
        elif len(path) >= 3 and path[0] == "overrides":  # nested: under another package, at any depth
            section, name = "overrides", path[-2] if path[-1] == "." else path[-1]
        else:
            continue
        value = json_input.loads(content[start:end])
        found.append(Declaration(name, value, section, content.count("\n", 0, start) + 1, start, end))
    return found


def rewrite(content: str, name: str, change: Callable[[Declaration], str | None]) -> str:
    """`content` with every declaration of `name` for which `change` returns a new value replaced.
    ValueError where that would rewrite an alias of another package (module docstring)."""
    out, pos = [], 0
    for declaration in find(content, name):
        new = change(declaration)
        if new is None or new == declaration.specifier:
            continue
        other = alias_of(declaration.specifier)
        if other not in (None, name):
            raise ValueError(
                f"line {declaration.line}: {declaration.section}.{name} is {declaration.specifier!r}, an "
                f"npm alias that installs {other}, not {name}; change it by hand"
            )
        out += [content[pos : declaration.start], json.dumps(new, ensure_ascii=False)]
        pos = declaration.end
    return "".join(out) + content[pos:]


def _strings(text: str) -> list[tuple[tuple[str, ...], int, int]]:
    """(key path, start, end) of every string value in a JSON document (already known to be valid)."""
    found: list[tuple[tuple[str, ...], int, int]] = []

    def value(pos: int, path: tuple[str, ...]) -> int:
        pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        char = text[pos]
        if char == "{":
            pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos] == "}":
                return pos + 1
            while True:
                key = _STRING.match(text, pos)
                assert key is not None
                name = json_input.loads(key.group())
                pos = _WHITESPACE.match(text, key.end()).end()  # type: ignore[union-attr]
                pos = value(pos + 1, (*path, name))  # past the ':'
                pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
                if text[pos] == "}":
                    return pos + 1
                pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        if char == "[":
            pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            if text[pos] == "]":
                return pos + 1
            while True:
                pos = _WHITESPACE.match(text, value(pos, (*path, "[]"))).end()  # type: ignore[union-attr]
                if text[pos] == "]":
                    return pos + 1
                pos += 1
        if char == '"':
            string = _STRING.match(text, pos)
            assert string is not None
            found.append((path, pos, string.end()))
            return string.end()
        for literal in ("true", "false", "null"):
            if text.startswith(literal, pos):
                return pos + len(literal)
        number = _NUMBER.match(text, pos)
        assert number is not None
        return number.end()

    start = 1 if text.startswith("\ufeff") else 0
    value(start, ())
    return found
