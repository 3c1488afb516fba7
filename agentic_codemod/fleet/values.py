"""What a fleet value may contain: data that reaches a shell, git, pip and GitLab, so none of them reads it.

    check_value(kind, value) -> value        raises ValueError saying what is wrong (pydantic validators)

The kinds, each an allowlist of characters plus its own shape:

    project     a GitLab project path: group[/subgroup...]/name; segments of letters, digits, '_', '.', '-'
    ref         a git branch name (`git check-ref-format` rules) of letters, digits and '_ . / + - @'
    url         an http, https or file URL                (index_url, or a find_links entry with '://')
    path        a file system path of letters, digits and '_ . / + - @ , ='   (a find_links entry)

Never allowed: whitespace and control characters (a newline ends a YAML value or a shell line), '$'
(GitLab and shells expand it), backticks, quotes, backslashes, ';&|<>(){}*!', a leading '-' (a value
would read as an option), and more than FLEET_MAX_VALUE_CHARS characters. The same check runs on every
value `fleet --emit-gitlab-pipeline` writes (emit.py), not only on what the fleet file says.
"""

from __future__ import annotations

import re
import string
from typing import Literal
from urllib.parse import urlsplit

from agentic_codemod.config import FLEET_MAX_VALUE_CHARS

Kind = Literal["project", "ref", "url", "path"]

_BASE = string.ascii_letters + string.digits + "_.-/"
ALLOWED: dict[Kind, frozenset[str]] = {
    "project": frozenset(_BASE),
    "ref": frozenset(_BASE + "+@"),
    "url": frozenset(_BASE + "+@:%?=,~#[]"),
    "path": frozenset(_BASE + "+@,="),
}
URL_SCHEMES = ("http", "https", "file")
_PROJECT_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_NAMED = {"\n": "a newline", "\r": "a carriage return", "\t": "a tab", " ": "a space", "$": "'$'"}


def check_value(kind: Kind, value: str) -> str:
    if not value:
        raise ValueError("is empty")
    if len(value) > FLEET_MAX_VALUE_CHARS:
        raise ValueError(f"is {len(value)} characters long; at most {FLEET_MAX_VALUE_CHARS}")
    bad = next((c for c in value if c not in ALLOWED[kind]), None)
    if bad is not None:
        raise ValueError(
            f"contains {_describe(bad)}: a fleet value is passed to git, pip and GitLab as data, so it "
            f"may hold only {_allowed_text(kind)}"
        )
    if value.startswith("-"):
        raise ValueError(f"starts with '-': {value!r} would read as an option")
    _SHAPES[kind](value)
    return value


def check_link(value: str) -> str:
    """A find_links entry: a URL when it has '://', else a path."""
    return check_value("url" if "://" in value else "path", value)


def _project(value: str) -> None:
    segments = value.split("/")
    if len(segments) < 2:
        raise ValueError(f"{value!r} is not a GitLab project path (group/name)")
    for segment in segments:
        if not _PROJECT_SEGMENT.fullmatch(segment):
            raise ValueError(
                f"{value!r}: every part of a project path starts with a letter, digit or '_' "
                f"(not {segment!r})"
            )
    if value.endswith((".git", ".atom")):
        raise ValueError(f"{value!r}: a project path does not end in '.git' or '.atom'")


def _ref(value: str) -> None:
    parts = value.split("/")
    if (
        ".." in value
        or "@{" in value
        or value == "@"
        or value.endswith((".", ".lock"))
        or any(not part or part.startswith(".") or part.endswith(".lock") for part in parts)
    ):
        raise ValueError(f"{value!r} is not a valid branch name (git check-ref-format)")


def _url(value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in URL_SCHEMES:
        raise ValueError(f"{value!r}: the URL scheme must be one of {', '.join(URL_SCHEMES)}")
    if parts.scheme != "file" and not parts.hostname:
        raise ValueError(f"{value!r}: the URL has no host")


def _path(value: str) -> None:
    return None  # the allowlist and the leading '-' rule are the whole check


_SHAPES = {"project": _project, "ref": _ref, "url": _url, "path": _path}


def _describe(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    if not char.isprintable() or char.isspace():
        return f"the control or space character {char!r}"
    return repr(char)


def _allowed_text(kind: Kind) -> str:
    extra = "".join(sorted(ALLOWED[kind] - set(string.ascii_letters + string.digits)))
    return f"letters, digits and {' '.join(extra)}"
