"""setup.cfg: find and rewrite one dependency in `[options] install_requires`, `tests_require`,
`setup_requires`, `[options.extras_require]` and pbr's `[extras]`.

Lines are walked the way configparser reads them (a section header, `key = value` or `key: value` at
column 0, indented continuation lines, full-line `#`/`;` comments), so each requirement keeps its line
number and its exact position; each requirement itself is parsed by `packaging`. The value is then split
as setuptools splits it (setuptools/config/setupcfg.py `_parse_list_semicolon`, then `_reqs.parse`):

    a value on one line          split at every `;` (`install_requires = packaging; acme-sdk==1.4.0` is two
                                 requirements; a marker there is setuptools' error, never a marker)
    a value on several lines     one requirement a line, `;` starting its environment marker
    in each                      a comment from ` #` (jaraco.text.drop_comment), an item starting with `#`
                                 left out
    keys                         dash spellings as setuptools reads them in [options]
                                 (`install-requires`, `tests-require`, `setup-requires`), any case

A requirement whose line ends with `\\` (setuptools joins it with the next, eliding a character) is
found by what it joins to but cannot be rewritten in place: it comes back uneditable, naming the line.
"""

from __future__ import annotations

import configparser
from collections.abc import Iterator

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration

KIND = "setup.cfg"
# The [options] keys that hold requirements, as setuptools names them once it has read a key (dashes
# made underscores, lower case: Distribution._enforce_underscore, _enforce_option_lowercase).
OPTION_KEYS = ("install_requires", "tests_require", "setup_requires")
EXTRA_SECTIONS = ("options.extras_require", "extras")  # extras' names are kept as written


def read(content: str) -> configparser.ConfigParser:
    """The file as setuptools reads it, or ValueError naming what is wrong."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(content)
    except configparser.Error as exc:
        raise ValueError(f"not a valid setup.cfg: {exc}") from exc
    return parser


def option_key(section: str, key: str) -> str:
    """A key as setuptools reads it: in a setuptools section other than the extras', dashes become
    underscores; every key is compared without case."""
    key = key.strip().lower()
    return key if section in EXTRA_SECTIONS else key.replace("-", "_")


def holds_dependencies(section: str, key: str) -> bool:
    """Whether `section`'s `key` (as written) holds requirements setuptools reads."""
    return bool(key.strip()) and (
        (section == "options" and option_key(section, key) in OPTION_KEYS) or section in EXTRA_SECTIONS
    )


def declares_dependencies(content: str) -> bool:
    parser = read(content)
    installs = parser.has_section("options") and any(
        option_key("options", key) == "install_requires" for key in parser.options("options")
    )
    return installs or parser.has_section("options.extras_require")


def extras(content: str) -> list[str]:
    parser = read(content)
    return parser.options("options.extras_require") if parser.has_section("options.extras_require") else []


def find(content: str, canonical: str) -> list[Declaration]:
    found = pep508.find_on_lines(_editable(content, canonical), KIND)
    found += [
        Declaration(
            text[slice(*pep508.name_span(text))],
            str(requirement.specifier),
            index + 1,
            KIND,
            "pep440",
            where,
            f"line {index + 1} ({where}): a requirement continued with `\\` onto the next line, which "
            "setuptools joins and the tool does not rewrite",
        )
        for index, _offset, text, requirement, where in _continued(content, canonical)
    ]
    return sorted(found, key=lambda d: d.line)


def rewrite(content: str, canonical: str, bump: Bump) -> str:
    return pep508.rewrite_on_lines(content, _editable(content, canonical), KIND, bump)


def requirement_texts(value: str) -> list[str]:
    """The requirement strings setuptools takes from a value as configparser returns it (a setuptools
    `file:` aside): split at `;` when on one line, else by line; comments and `#` items left out."""
    items = value.splitlines() if "\n" in value else value.split(";")
    texts = [_uncommented(item).strip() for item in items if item.strip()]
    return [text for text in texts if text and not text.startswith("#")]


def _editable(content: str, canonical: str) -> Iterator[pep508.LineRequirement]:
    for entry in _requirements(content, canonical):
        if not _continues(entry[2]):
            yield entry


def _continued(content: str, canonical: str) -> Iterator[pep508.LineRequirement]:
    for entry in _requirements(content, canonical):
        if _continues(entry[2]):
            yield entry


def _continues(text: str) -> bool:
    return text.rstrip().endswith("\\")


def _requirements(content: str, canonical: str) -> Iterator[pep508.LineRequirement]:
    """(line index, offset of the requirement in the line, its text, requirement, section.key) per match;
    the text ends before its comment. A requirement continued with `\\` is read joined as setuptools
    joins it (jaraco.text.join_continuation), its text kept as written on its first line."""
    for index, offset, text, where, following in _items(content):
        joined = text
        if _continues(text):
            joined = _joined(text, following)
        requirement = pep508.parse(joined)
        if requirement is not None and pep508.matches(requirement, canonical):
            yield index, offset, text, requirement, where


def _joined(text: str, following: list[str]) -> str:
    """jaraco.text.join_continuation: `item[:-2].strip() + next` while the item ends with `\\`."""
    item, rest = text.strip(), list(following)
    while item.endswith("\\") and rest:
        item = item[:-2].strip() + rest.pop(0)
    return item


def _items(content: str) -> Iterator[tuple[int, int, str, str, list[str]]]:
    """Each requirement item of a dependency key: (line index, offset in the line, text without its
    comment, "section.key", the items after it in the same value)."""
    for key_line, where, lines in _dependency_values(content):
        one_line = len(lines) == 1 and lines[0][0] == key_line
        items: list[tuple[int, int, str]] = []
        for index, offset, text in lines:
            pieces = _pieces(text) if one_line else [(0, text)]
            for start, piece in pieces:
                kept = _uncommented(piece)
                if kept.strip() and not kept.strip().startswith("#"):
                    items.append((index, offset + start, kept))
        for position, (index, offset, text) in enumerate(items):
            yield index, offset, text, where, [t.strip() for _, _, t in items[position + 1 :]]


def _pieces(text: str) -> list[tuple[int, str]]:
    """`text` split at each `;`, with the offset of each piece."""
    pieces, start = [], 0
    for part in text.split(";"):
        pieces.append((start, part))
        start += len(part) + 1
    return pieces


def _uncommented(text: str) -> str:
    """jaraco.text.drop_comment: a comment starts at ` #` (a `#` after a space)."""
    return text.partition(" #")[0]


def _dependency_values(content: str) -> Iterator[tuple[int, str, list[tuple[int, int, str]]]]:
    """Each dependency key's value: (the key's line index, "section.key", [(line index, offset, text)] of
    its non-empty value lines, the key's own first when it holds text)."""
    section, key, key_line = "", "", -1
    lines: list[tuple[int, int, str]] = []
    for index, line in enumerate(content.splitlines()):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        if line[0].isspace():
            if key:
                lines.append((index, 0, line))
            continue
        if key and lines:
            yield key_line, f"{section}.{key}", lines
        key, lines = "", []
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped[1:-1].strip()
            continue
        positions = [p for p in (line.find("="), line.find(":")) if p >= 0]
        if not positions:
            continue
        offset = min(positions) + 1
        written = line[: offset - 1]
        if holds_dependencies(section, written):
            key, key_line = option_key(section, written), index
            if line[offset:].strip():
                lines.append((index, offset, line[offset:]))
    if key and lines:
        yield key_line, f"{section}.{key}", lines
