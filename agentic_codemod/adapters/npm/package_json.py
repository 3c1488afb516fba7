"""package.json read and rewritten as text: only the one string that holds a range changes.

    find(content, name) -> [Declaration]                 every declaration of `name`, with its section
    rewrite(content, name, change) -> str                each declaration's value replaced by change(decl)
    load(content) -> dict                                the parsed document (ValueError when not an object)

Sections read: dependencies, devDependencies, peerDependencies, optionalDependencies, and overrides
(the npm form; a nested override object is read at its "." key only when it names `name` directly).
Names compare exactly, as npm compares them (package names are lower case; a scope is part of the name).
Every other byte of the file (indentation, key order, a trailing newline, CRLF) stays as written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentic_codemod import json_input

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
    load(content)  # a clear error before any offset is trusted
    try:
        strings = _strings(content)
    except RecursionError:  # json.loads of Python 3.12+ reads deeper than this walk recurses
        raise ValueError("not valid JSON: nested deeper than this tool reads") from None
    found: list[Declaration] = []
    for path, start, end in strings:
        if len(path) == 2 and path[0] in SECTIONS and path[1] == name:
            section = path[0]
        elif len(path) == 3 and path[0] == "overrides" and path[1] == name and path[2] == ".":
            section = "overrides"
        else:
            continue
        value = json_input.loads(content[start:end])
        found.append(Declaration(name, value, section, content.count("\n", 0, start) + 1, start, end))
    return found


def rewrite(content: str, name: str, change: Callable[[Declaration], str | None]) -> str:
    """`content` with every declaration of `name` for which `change` returns a new value replaced."""
    out, pos = [], 0
    for declaration in find(content, name):
        new = change(declaration)
        if new is None or new == declaration.specifier:
            continue
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
