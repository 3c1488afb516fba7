"""pip requirements files (`requirements*.txt`, `requirements/*.txt`): find and rewrite one dependency.

Lines are read the way pip reads them: a `#` at the start or after whitespace starts a comment, a line
starting with `-` is an option (`-r`, `-e`, `--index-url`...), per-requirement options (`--hash=...`)
start at the first space-separated token beginning with `-`, and a trailing backslash continues the
line (the continuation lines hold options only). Every byte outside a specifier is left untouched.

A requirement carrying `--hash` options (pip-compile --generate-hashes, pdm export, poetry export, uv
export) is found but never rewritten: its hashes are those of the written version's files, which the tool
cannot compute for another, and pip refuses the new version against the old hashes. It comes back
uneditable, naming the line and the tool to regenerate the file with (a file whose header names its tool
is a lock, roles.py: its entries are a human's after the bump).
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.requirements import Requirement

from agentic_codemod.adapters.python import pep508, requirement_options
from agentic_codemod.adapters.python.pep508 import Bump, Declaration

KIND = "requirements"


def find(content: str, canonical: str) -> list[Declaration]:
    found = []
    hashed = hashed_lines(content)
    for index, text, requirement in _requirements(content, canonical):
        span = pep508.specifier_span(text, requirement)
        start, end = pep508.name_span(text)
        specifier = text[span[0] : span[1]] if span else ""
        why = _hashed(index + 1, text[start:end] + specifier) if index + 1 in hashed else ""
        found.append(Declaration(text[start:end], specifier, index + 1, KIND, "pep440", uneditable=why))
    return found


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    lines = content.splitlines(keepends=True)
    hashed = hashed_lines(content)
    for index, text, requirement in _requirements(content, canonical):
        span = pep508.specifier_span(text, requirement)
        if span is None or index + 1 in hashed:  # never a new version beside the old version's hashes
            continue
        start, end = pep508.name_span(text)
        new = bump(Declaration(text[start:end], text[span[0] : span[1]], index + 1, KIND, "pep440"))
        if new is not None:
            line = lines[index]
            lines[index] = line[: span[0]] + new + line[span[1] :]
    return "".join(lines)


def hashed_lines(content: str) -> set[int]:
    """The (1-based, first physical) lines whose requirement carries `--hash` options, read as pip reads
    them (continuations joined, optparse's prefixes: `--ha=` is `--hash`)."""
    options, _problems = requirement_options.scan(content)
    return {option.line for option in options if option.name == "--hash"}


def _hashed(line: int, pin: str) -> str:
    return (
        f"line {line}: {pin} carries --hash options, the hashes of that version's files, which the tool "
        "cannot compute for another version: regenerate the file with the tool that wrote it "
        "(pip-compile --generate-hashes, uv pip compile --generate-hashes, pdm export, poetry export, "
        "uv export)"
    )


def includes(content: str) -> list[str]:
    """Files named by `-r` / `--requirement` lines, as written (relative to the including file)."""
    names = []
    for line in content.splitlines():
        tokens = pep508.strip_comment(line).split()
        if len(tokens) == 2 and tokens[0] in ("-r", "--requirement"):
            names.append(tokens[1])
        elif len(tokens) == 1 and tokens[0].startswith(("-r", "--requirement=")) and tokens[0] != "-r":
            names.append(tokens[0].removeprefix("--requirement=").removeprefix("-r"))
    return names


def requirements(content: str, canonical: str) -> Iterator[tuple[int, str, Requirement]]:
    """(1-based line, requirement text, parsed requirement) of each requirement on `canonical`."""
    for index, text, requirement in _requirements(content, canonical):
        yield index + 1, text, requirement


def requirement_names(content: str) -> set[str]:
    """Canonical names of every requirement declared in the file (includes not followed)."""
    return {pep508.canonical(req.name) for _, _, req in _requirements(content, None)}


def _requirements(content: str, canonical: str | None) -> Iterator[tuple[int, str, Requirement]]:
    """(line index, requirement text, parsed requirement) for each requirement line.

    The requirement text is a prefix of the physical line, so its offsets are offsets in the line.
    """
    continued = False
    for index, line in enumerate(content.splitlines()):
        is_continuation, continued = continued, line.rstrip().endswith("\\")
        if is_continuation:
            continue
        text = line.rstrip()
        text = text[:-1] if text.endswith("\\") else text
        text = pep508.strip_comment(text)
        if text.lstrip().startswith("-"):
            continue
        text = _without_options(text)
        requirement = pep508.parse(text)
        if requirement is None or (canonical is not None and not pep508.matches(requirement, canonical)):
            continue
        yield index, text, requirement


def _without_options(text: str) -> str:
    """The part of a requirement line before its per-requirement options (pip's break_args_options)."""
    args = []
    for token in text.split(" "):
        if token.startswith("-"):
            break
        args.append(token)
    return " ".join(args)
