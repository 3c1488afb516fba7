"""What a requirements file makes pip do besides installing named requirements, read the way pip reads it.

pip (pip._internal.req.req_file) decodes the file (BOM, a PEP 263 `coding:` comment, else UTF-8 with a
fallback to the locale), joins lines ending in a backslash, strips comments, expands `${VAR}` from the
environment, splits each line at its first space-separated token starting with `-` into requirement
text and options, and parses the options with optparse — which also accepts any unambiguous prefix of a
long option (`--extra-index` is `--extra-index-url`). This module does the same, without pip:

    decode(data) -> text                  ValueError when pip could read other characters than we do
    lines(text) -> [(line number, logical line)]
    scan(text) -> [Option(line, name, value)], [(line, problem)]

`name` is pip's long option name (`--requirement` for `-r`), or "requirement" for the requirement text of
a line. What may be passed on to pip is decided by dependency_files.py.
"""

from __future__ import annotations

import codecs
import re
import shlex
from dataclasses import dataclass

from agentic_codemod.adapters.python.pep508 import strip_comment

# pip's own patterns (pip._internal.req.req_file; its comment pattern is pep508.strip_comment).
ENV_VAR_RE = re.compile(r"\$\{[A-Z0-9_]+\}")
PEP263_RE = re.compile(rb"coding[:=]\s*([-\w.]+)")
UTF8_NAMES = frozenset({"utf-8", "utf8", "ascii", "us-ascii"})
OTHER_BOMS = (codecs.BOM_UTF32_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF16_LE)

# The options pip accepts in a requirements file (pip 26, req_file.build_parser): long name -> takes a value.
LONG_OPTIONS: dict[str, bool] = {
    "--index-url": True,
    "--pypi-url": True,
    "--extra-index-url": True,
    "--no-index": False,
    "--constraint": True,
    "--requirement": True,
    "--editable": True,
    "--find-links": True,
    "--no-binary": True,
    "--only-binary": True,
    "--prefer-binary": False,
    "--require-hashes": False,
    "--no-require-hashes": False,
    "--pre": False,
    "--all-releases": True,
    "--only-final": True,
    "--trusted-host": True,
    "--use-feature": True,
    "--hash": True,
    "--config-settings": True,
}
SHORT_OPTIONS = {
    "-i": "--index-url",
    "-c": "--constraint",
    "-r": "--requirement",
    "-e": "--editable",
    "-f": "--find-links",
    "-C": "--config-settings",
}


@dataclass(frozen=True)
class Option:
    line: int
    name: str  # long option name, or "requirement"
    value: str  # "" for a flag


def decode(data: bytes) -> str:
    """The text pip reads from these bytes; ValueError when that is not plain UTF-8 (a UTF-16 BOM, a
    `coding:` comment naming another codec, or bytes pip would decode with the locale's codec)."""
    if data.startswith(OTHER_BOMS):
        raise ValueError("is not UTF-8 (a UTF-16/32 byte order mark)")
    data = data.removeprefix(codecs.BOM_UTF8)
    for line in data.split(b"\n")[:2]:
        match = PEP263_RE.search(line) if line.startswith(b"#") else None
        if match and match.group(1).decode("ascii", "replace").lower().replace("_", "-") not in UTF8_NAMES:
            raise ValueError("declares an encoding other than UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"is not UTF-8 (byte {exc.start})") from exc


def lines(text: str) -> list[tuple[int, str]]:
    """Logical lines as pip sees them: continuations joined, comments stripped, blanks dropped."""
    joined: list[tuple[int, str]] = []
    pending: list[str] = []
    first = 0
    for number, line in enumerate(text.splitlines(), start=1):
        comment_only = line.lstrip().startswith("#")
        if not line.endswith("\\") or comment_only:
            line = " " + line if comment_only else line
            joined.append((first, "".join([*pending, line])) if pending else (number, line))
            pending = []
        else:
            first = first if pending else number
            pending.append(line.strip("\\"))
    if pending:
        joined.append((first, "".join(pending)))
    stripped = [(number, strip_comment(line).strip()) for number, line in joined]
    return [(number, line) for number, line in stripped if line]


def scan(text: str) -> tuple[list[Option], list[tuple[int, str]]]:
    """Every option and requirement text of the file, and the lines that cannot be read safely."""
    options: list[Option] = []
    problems: list[tuple[int, str]] = []
    for number, line in lines(text):
        if ENV_VAR_RE.search(line):
            problems.append((number, "uses an environment variable (${...}), which pip would expand"))
            continue
        args, rest = _break_args_options(line)
        if args:
            options.append(Option(number, "requirement", args))
        try:
            tokens = shlex.split(rest)
        except ValueError:
            problems.append((number, "options that cannot be split (unbalanced quotes)"))
            continue
        found, problem = _options(number, tokens)
        options += found
        if problem:
            problems.append((number, problem))
    return options, problems


def _break_args_options(line: str) -> tuple[str, str]:
    """pip's break_args_options: split on single spaces at the first token starting with `-`."""
    tokens = line.split(" ")
    for index, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(tokens[:index]), " ".join(tokens[index:])
    return line, ""


def _options(number: int, tokens: list[str]) -> tuple[list[Option], str]:
    """optparse's reading of `tokens`; stops at `--` (the rest is positional, which pip ignores)."""
    found: list[Option] = []
    queue = list(tokens)
    while queue:
        token = queue.pop(0)
        if token == "--":
            break
        if token.startswith("--"):
            written, has_value, value = token.partition("=")
            name = _long_name(written)
            if name is None:
                return found, f"unknown or ambiguous option {written}"
            if LONG_OPTIONS[name] and not has_value:
                if not queue:
                    return found, f"{written} without a value"
                value = queue.pop(0)
            found.append(Option(number, name, value if LONG_OPTIONS[name] else ""))
        elif token.startswith("-") and len(token) > 1:
            name = SHORT_OPTIONS.get(token[:2])
            if name is None:
                return found, f"unknown option {token[:2]}"
            value = token[2:]
            if not value:
                if not queue:
                    return found, f"{token[:2]} without a value"
                value = queue.pop(0)
            found.append(Option(number, name, value))
    return found, ""


def _long_name(written: str) -> str | None:
    if written in LONG_OPTIONS:
        return written
    matches = [name for name in LONG_OPTIONS if name.startswith(written)]
    return matches[0] if len(matches) == 1 else None
