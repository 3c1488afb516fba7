"""One declaration of a dependency, and where its version specifier sits in a PEP 508 string.

`packaging` parses and validates every requirement; it does not report positions, so the span of the
specifier is located by walking past the name and extras, then checked against what `packaging` parsed.
A span that does not parse back to the same `SpecifierSet` is refused (None), never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

# How the specifier is spelled: a PEP 440 specifier set, or a Poetry constraint (^1.4, ~1.4, 1.4.*).
Style = Literal["pep440", "poetry"]

NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


@dataclass(frozen=True)
class Declaration:
    """A dependency as written in one file: name and specifier verbatim, 1-based line."""

    name: str
    specifier: str  # "" when declared without a version (or by URL / path / git)
    line: int
    kind: str  # requirements | pep621 | pep735 | poetry | setup.cfg | setup.py | tox.ini | lockfile
    style: Style
    section: str = ""  # where in the file (roles.py reads it): "project.optional-dependencies.test" ...
    uneditable: str = ""  # why the tool cannot edit it (a computed setup.py value); "" when it can


# A bump maps a declaration to its new specifier text, or None to leave it as written.
Bump = Callable[[Declaration], str | None]


class DependencyFormat(Protocol):
    """A module that reads and rewrites one kind of dependency file (requirements_file, pyproject...)."""

    def find(self, content: str, canonical: str) -> list[Declaration]: ...

    def rewrite(self, content: str, canonical: str, bump: Bump) -> str: ...


def parse(text: str) -> Requirement | None:
    """The requirement in `text`, or None when it is not a PEP 508 requirement (a path, an option...)."""
    try:
        return Requirement(text.strip())
    except InvalidRequirement:
        return None


def canonical(name: str) -> str:
    """PEP 503 normalised name: `Acme_SDK` and `acme.sdk` are both `acme-sdk`."""
    return str(canonicalize_name(name))


def matches(requirement: Requirement, canonical_name: str) -> bool:
    return canonical(requirement.name) == canonical_name


def name_span(text: str) -> tuple[int, int]:
    """Where the distribution name is in `text` (leading whitespace skipped)."""
    start = len(text) - len(text.lstrip())
    end = start
    while end < len(text) and text[end] in NAME_CHARS:
        end += 1
    return start, end


def specifier_span(text: str, requirement: Requirement) -> tuple[int, int] | None:
    """Start and end of the version specifier in `text` (the string `requirement` was parsed from).

    Returns an empty span right after the name/extras when no version is declared, and None for a URL
    requirement or when the located text does not parse back to `requirement.specifier`.
    """
    if requirement.url:
        return None
    _, pos = name_span(text)
    pos = _skip_space(text, pos)
    if text.startswith("[", pos):
        close = text.find("]", pos)
        if close < 0:
            return None
        pos = _skip_space(text, close + 1)
    end = text.find(";", pos) if requirement.marker is not None else len(text)
    if end < 0:
        return None
    start, end = _strip_span(text, pos, end)
    if text.startswith("(", start) and text.endswith(")", 0, end):
        start, end = _strip_span(text, start + 1, end - 1)
    if start == end:
        return (start, end) if not requirement.specifier else None
    try:
        written = SpecifierSet(text[start:end])
    except InvalidSpecifier:
        return None
    return (start, end) if written == requirement.specifier else None


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# One requirement on one line of an ini-style file (setup.cfg, tox.ini): the line's index, where the
# requirement text starts on it, the text, the parsed requirement and the section it sits in.
LineRequirement = tuple[int, int, str, Requirement, str]


def find_on_lines(entries: Iterable[LineRequirement], kind: str) -> list[Declaration]:
    """The declarations of requirements found line by line (see LineRequirement)."""
    found = []
    for index, _offset, text, requirement, section in entries:
        start, end = name_span(text)
        span = specifier_span(text, requirement)
        specifier = text[span[0] : span[1]] if span else ""
        found.append(Declaration(text[start:end], specifier, index + 1, kind, "pep440", section))
    return found


def rewrite_on_lines(content: str, entries: Iterable[LineRequirement], kind: str, bump: Bump) -> str:
    """Replace only the specifier bytes of each requirement that `bump` gives a new range for."""
    lines = content.splitlines(keepends=True)
    for index, offset, text, requirement, section in entries:
        span = specifier_span(text, requirement)
        if span is None:
            continue
        start, end = name_span(text)
        new = bump(Declaration(text[start:end], text[span[0] : span[1]], index + 1, kind, "pep440", section))
        if new is not None:
            line = lines[index]
            lines[index] = line[: offset + span[0]] + new + line[offset + span[1] :]
    return "".join(lines)


def strip_comment(line: str) -> str:
    """A line without its comment as pip reads one (pip._internal.req.req_file.COMMENT_RE,
    `(^|\\s+)#.*$`): from a `#` at the line's start or after whitespace to the end, with the whitespace
    before it. In linear time: that pattern backtracks over a long run of spaces with no `#` after it
    (a 40,000-space line of a repository's requirements file took 9 s, 400,000 about 15 minutes)."""
    found = _COMMENT_START.search(line)
    return line if found is None else line[: found.start()].rstrip()


_COMMENT_START = re.compile(r"(?:^|(?<=\s))#")
