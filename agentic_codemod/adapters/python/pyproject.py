"""pyproject.toml: find and rewrite one dependency in every table that declares dependencies.

    [project] dependencies, [project.optional-dependencies]      PEP 621 requirement strings  (pep621)
    [dependency-groups]                                          PEP 735 requirement strings  (pep735)
    [tool.poetry.dependencies], [tool.poetry.dev-dependencies],
    [tool.poetry.group.<name>.dependencies]                      Poetry constraints           (poetry)
    [tool.uv] dev-, constraint-, override-dependencies,
    [tool.pdm.dev-dependencies], [tool.hatch.envs.<name>]
    dependencies and extra-dependencies                          PEP 508 requirement strings  (pep735)
    [tool.pdm.resolution.overrides]                              name = "specifier", a bare
                                                                 version or `*`               (pdm-override)
    [tool.flit.metadata] requires, requires-extra.<name>,
    dev-requires (flit_core's own metadata before PEP 621)       PEP 508 requirement strings  (pep621)
    any other array of strings holding a versioned requirement   read, never edited: the run stops
    of the dependency                                            where it would decide anything

The tool tables are what uv (`uv sync`, `uv run`), PDM and Hatch install for the project's own
environments: a pin there that the bump left would make the repository's install ask for the old version
while the tests here ran on the new one. Entries that are not PEP 508 strings (PDM's `-e file:///...`, a
Hatch matrix's `{matrix:...}`) declare nothing that can be read, as elsewhere.

tomlkit edits the document in place and keeps every other byte. A string is replaced by a string of
the same quoting whose source text differs only inside the specifier. Line numbers come from the same
edit: a declaration's value is swapped for a marker and the marker's line is read from the output.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import tomlkit
from tomlkit.items import String
from tomlkit.toml_document import TOMLDocument

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.pep508 import Bump, Declaration, Style

LINE_MARKER = "agentic-codemod-line-marker"
# A versioned requirement of the dependency in an array of a table not read as a dependency table: a
# declaration of some tool's the run can neither read nor bump (never "declared nowhere": helper-45, flit's
# legacy metadata was such a table, and the run ended "nothing to do" on a declaration excluding `to`).
READ_ELSEWHERE = ("tool.tox.",)  # tox_ini.find_in_pyproject reads [tool.tox]
UNREAD = "a table the tool does not read dependencies from (bump it by hand, or tell us the tool)"
# [tool.uv]'s requirement arrays: the legacy dev group `uv sync` installs, and the resolver's constraints
# and overrides, which apply to every uv install of the project.
UV_ARRAYS = ("dev-dependencies", "constraint-dependencies", "override-dependencies")


@dataclass(frozen=True)
class _Slot:
    """Where one declaration's value lives: `container[key]`."""

    container: Any  # a tomlkit Array, Table or InlineTable
    key: int | str
    name: str  # as written (the Poetry key, or the name inside the requirement string)
    kind: str
    style: Style
    section: str = ""  # "project.dependencies", "dependency-groups.test", "tool.poetry.group.dev" ...
    unread: str = ""  # why the tool does not edit it: a table it does not read dependencies from


def parse(content: str) -> TOMLDocument:
    """The document, or ValueError naming what is wrong with the TOML."""
    try:
        return tomlkit.parse(content)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ValueError(f"not valid TOML: {exc}") from exc


def declares_dependencies(content: str) -> bool:
    doc = parse(content)
    project, poetry = _table(doc, "project"), _table(_table(doc, "tool"), "poetry")
    return any(
        (
            "dependencies" in project,
            "optional-dependencies" in project,
            "dependency-groups" in doc,
            any(table for _, table in _poetry_tables(poetry)),
            any(array for _, array in tool_arrays(doc)),
            _pdm_overrides(doc),
        )
    )


SlotsOf = Callable[[TOMLDocument, str], list["_Slot"]]


def find(content: str, canonical: str, slots_of: SlotsOf | None = None) -> list[Declaration]:
    """Every declaration of the dependency, in line order (`slots_of`: where a TOML file of another name
    declares; hatch_toml.py)."""
    return sorted(_declarations(content, canonical, slots_of or _slots), key=lambda d: d.line)


def _declarations(content: str, canonical: str, slots_of: SlotsOf) -> list[Declaration]:
    """Every declaration of the dependency, in the order of `slots_of`."""
    slots = slots_of(parse(content), canonical)
    found = []
    for index, slot in enumerate(slots):
        value = str(slot.container[slot.key])
        line = _line(content, canonical, index, slots_of)
        why = slot.unread or _in_place(slot)
        found.append(
            Declaration(
                slot.name,
                _specifier(value, slot),
                line,
                slot.kind,
                slot.style,
                slot.section,
                f"line {line} ({slot.section}): {why}" if why else "",
            )
        )
    return found


def rewrite(content: str, canonical: str, bump: Bump, slots_of: SlotsOf | None = None) -> str:
    slots_of = slots_of or _slots
    declarations = _declarations(content, canonical, slots_of)
    doc = parse(content)
    for slot, declaration in zip(slots_of(doc, canonical), declarations, strict=True):
        span = _span(str(slot.container[slot.key]), slot) if not slot.unread else None
        new = bump(declaration) if span is not None else None
        if span is not None and new is not None:
            _replace(slot, span, new)
    return tomlkit.dumps(doc)


def _slots(doc: TOMLDocument, canonical: str) -> list[_Slot]:
    project = _table(doc, "project")
    arrays = [("pep621", "project.dependencies", project.get("dependencies"))]
    arrays += [
        ("pep621", f"project.optional-dependencies.{name}", extra)
        for name, extra in _table(project, "optional-dependencies").items()
    ]
    groups = _table(doc, "dependency-groups")
    arrays += [("pep735", f"dependency-groups.{name}", group) for name, group in groups.items()]
    arrays += [("pep518", "build-system.requires", _table(doc, "build-system").get("requires"))]
    arrays += [("pep735", where, array) for where, array in tool_arrays(doc)]
    arrays += flit_arrays(doc)
    slots = [
        slot for kind, where, array in arrays for slot in requirement_slots(array, canonical, kind, where)
    ]
    read = {id(array) for _, _, array in arrays}
    slots += [
        _Slot(array, index, name, "pep735", "pep440", where, UNREAD)
        for where, array in _string_arrays(doc, "")
        if id(array) not in read and not where.startswith(READ_ELSEWHERE)
        for index, name in _versioned(array, canonical)
    ]
    for section, table in _poetry_tables(_table(_table(doc, "tool"), "poetry")):
        slots += _poetry_slots(table, canonical, section)
    overrides = _pdm_overrides(doc)
    slots += [
        _Slot(overrides, key, key, "pdm-override", "poetry", "tool.pdm.resolution.overrides")
        for key in overrides
        if pep508.canonical(key) == canonical and isinstance(overrides[key], str)
    ]
    return slots


def flit_arrays(doc: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """(kind, section, array) of flit's own metadata table (flit_core before PEP 621: what it builds the
    package's metadata from): requires, requires-extra.X, dev-requires."""
    flit = _table(_table(_table(doc, "tool"), "flit"), "metadata")
    arrays = [("pep621", "tool.flit.metadata.requires", flit.get("requires"))]
    arrays += [
        ("pep621", f"tool.flit.metadata.requires-extra.{name}", extra)
        for name, extra in _table(flit, "requires-extra").items()
    ]
    return [*arrays, ("pep735", "tool.flit.metadata.dev-requires", flit.get("dev-requires"))]


def _string_arrays(table: Any, prefix: str) -> Iterator[tuple[str, Any]]:
    """(dotted section, array) of every array in the document that holds strings (arrays of tables too)."""
    items = table.items() if isinstance(table, dict) else enumerate(table)
    for key, value in items:
        where = f"{prefix}.{key}" if prefix and isinstance(key, str) else prefix or str(key)
        if isinstance(value, list) and any(isinstance(item, str) for item in value):
            yield where, value
        if isinstance(value, (dict, list)):
            yield from _string_arrays(value, where)


def _versioned(array: Any, canonical: str) -> list[tuple[int, str]]:
    """(index, name as written) of the strings in `array` that are a requirement of `canonical` with a
    version or a URL: a bare name (isort's known-third-party, a coverage source) declares nothing."""
    found = []
    for index, item in enumerate(array):
        requirement = pep508.parse(item) if isinstance(item, str) else None
        if requirement is None or not (requirement.specifier or requirement.url):
            continue
        if pep508.matches(requirement, canonical):
            start, end = pep508.name_span(item)
            found.append((index, item[start:end]))
    return found


def tool_arrays(doc: dict[str, Any]) -> list[tuple[str, Any]]:
    """(section, array) of the requirement-string arrays of uv's, PDM's and Hatch's own tables."""
    tool = _table(doc, "tool")
    uv, pdm = _table(tool, "uv"), _table(tool, "pdm")
    arrays = [(f"tool.uv.{key}", uv.get(key)) for key in UV_ARRAYS]
    arrays += [
        (f"tool.pdm.dev-dependencies.{name}", group)
        for name, group in _table(pdm, "dev-dependencies").items()
    ]
    return arrays + hatch_env_arrays(_table(tool, "hatch"), "tool.hatch.")


def hatch_env_arrays(hatch: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """(section, array) of each Hatch env's dependencies and extra-dependencies; `hatch`: the table
    holding `envs` ([tool.hatch] in pyproject.toml, the whole of hatch.toml)."""
    envs = _table(hatch, "envs")
    return [
        (f"{prefix}envs.{name}.{key}", _table(envs, name).get(key))
        for name in envs
        for key in ("dependencies", "extra-dependencies")
    ]


def _pdm_overrides(doc: TOMLDocument) -> dict[str, Any]:
    return _table(_table(_table(_table(doc, "tool"), "pdm"), "resolution"), "overrides")


def requirement_slots(array: Any, canonical: str, kind: str, section: str) -> list[_Slot]:
    if not isinstance(array, list):
        return []
    slots = []
    for index, item in enumerate(array):
        requirement = pep508.parse(item) if isinstance(item, str) else None
        if requirement is not None and pep508.matches(requirement, canonical):
            start, end = pep508.name_span(item)
            slots.append(_Slot(array, index, item[start:end], kind, "pep440", section))
    return slots


def _poetry_tables(poetry: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    tables = [
        ("tool.poetry.dependencies", _table(poetry, "dependencies")),
        ("tool.poetry.dev-dependencies", _table(poetry, "dev-dependencies")),
    ]
    tables += [
        (f"tool.poetry.group.{name}", _table(group, "dependencies"))
        for name, group in _table(poetry, "group").items()
    ]
    return tables


def _poetry_slots(table: dict[str, Any], canonical: str, section: str) -> list[_Slot]:
    """`name = "^1.4"`, `name = {version = "^1.4", ...}`, or a list of such tables (per-python)."""
    slots = []
    for key, value in table.items():
        if pep508.canonical(key) != canonical:
            continue
        optional = isinstance(value, dict) and value.get("optional") is True
        where = f"{section}.optional" if optional else section
        if isinstance(value, str):
            slots.append(_Slot(table, key, key, "poetry", "poetry", where))
        elif isinstance(value, dict):
            slots.append(_version_slot(table, key, value, key, where))
        elif isinstance(value, list):
            slots += [
                _version_slot(value, i, entry, key, section)
                for i, entry in enumerate(value)
                if isinstance(entry, dict)
            ]
    return slots


def _version_slot(parent: Any, key: int | str, entry: dict[str, Any], name: str, section: str) -> _Slot:
    """The `version` of a Poetry table, or the whole table when it has none (git, path, url)."""
    if isinstance(entry.get("version"), str):
        return _Slot(entry, "version", name, "poetry", "poetry", section)
    return _Slot(parent, key, name, "poetry", "poetry", section)


def _span(value: str, slot: _Slot) -> tuple[int, int] | None:
    """Span of the specifier inside the value, or None when there is no version to edit."""
    if not isinstance(slot.container[slot.key], str):
        return None  # a Poetry git/path/url table
    if slot.kind == "pdm-override":  # a specifier, or a URL (no version to edit)
        return None if is_url(value) else _strip(value)
    if slot.style == "poetry":
        return _strip(value)
    requirement = pep508.parse(value)
    return pep508.specifier_span(value, requirement) if requirement else None


def _specifier(value: str, slot: _Slot) -> str:
    span = _span(value, slot)
    return value[span[0] : span[1]] if span else ""


def _replace(slot: _Slot, span: tuple[int, int], new: str) -> None:
    """Put `new` in place of the span, keeping the string's quoting and every other source character."""
    item = slot.container[slot.key]
    delimiter = item.type.value
    raw = item.as_string()[len(delimiter) : -len(delimiter)]
    value = str(item)
    if raw[: span[1]] != value[: span[1]]:
        raise ValueError(f"cannot edit {value!r} in place: escape sequences before its version")
    slot.container[slot.key] = String(
        item.type,
        value[: span[0]] + new + value[span[1] :],
        raw[: span[0]] + new + raw[span[1] :],
        item.trivia,
    )


def _line(content: str, canonical: str, index: int, slots_of: SlotsOf) -> int:
    """1-based line of the `index`-th declaration, found by writing a marker in its place."""
    doc = parse(content)
    slot = slots_of(doc, canonical)[index]
    item = slot.container[slot.key]
    if isinstance(item, String):
        slot.container[slot.key] = String(item.type, LINE_MARKER, LINE_MARKER, item.trivia)
    else:
        slot.container[slot.key] = LINE_MARKER
    for number, line in enumerate(tomlkit.dumps(doc).splitlines(), start=1):
        if LINE_MARKER in line:
            return number
    raise AssertionError("line marker vanished from the TOML output")


def is_url(value: str) -> bool:
    """Whether a PDM override's value names where to get the package (file:, git+https:, https:)."""
    return "://" in value or value.strip().lower().startswith(("file:", "git+", "hg+", "svn+", "bzr+"))


def _in_place(slot: _Slot) -> str:
    """Why the declaration's string cannot be edited in place ("" when it can): an escape sequence
    before its version (`"acme\\u002Dsdk>=1.4"`) would move every offset the edit relies on."""
    item = slot.container[slot.key]
    if not isinstance(item, String):
        return ""
    delimiter = item.type.value
    raw, value = item.as_string()[len(delimiter) : -len(delimiter)], str(item)
    span = _span(value, slot)
    if span is None or raw[: span[1]] == value[: span[1]]:
        return ""
    return "an escape sequence before its version, which the tool does not edit"


def _table(parent: Any, key: str) -> dict[str, Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}


def _strip(value: str) -> tuple[int, int]:
    start, end = 0, len(value)
    while start < end and value[start].isspace():
        start += 1
    while end > start and value[end - 1].isspace():
        end -= 1
    return start, end
