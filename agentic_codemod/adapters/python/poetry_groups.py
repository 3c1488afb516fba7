"""Poetry dependency groups as requirement strings pip can install (pure: reads a parsed pyproject).

    groups(project) -> {name: [Entry, ...]}      [tool.poetry.group.<name>.dependencies], and the legacy
                                                 [tool.poetry.dev-dependencies] as the group "dev"
    requirement(name, value) -> str | None       one entry as PEP 508, None when pip cannot take it

pip cannot install a Poetry group; the test requirements of a Poetry project often live only there
(`[tool.poetry.group.dev.dependencies] pytest = "^7.1"`). Each entry is translated, and the result is
parsed back with packaging, so a string pip would misread is never produced:

    "^7.1.2"                               pytest>=7.1.2,<8
    "~1.4" / "1.4.0" / "*" / ">=2,<3"      >=1.4,<1.5 / ==1.4.0 / (no version) / >=2,<3
    {version, python, markers, extras}     name[extras]>=...; python_full_version ... and (markers)
    [{version, python}, ...]               one requirement per table (their python markers tell which)
    "^1.0 || ^2.0"                         the highest alternative (a requirement has no `or` of ranges)
    {git | path | url | file}              None: left out (recorded by the caller), never guessed
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import Specifier, SpecifierSet

from agentic_codemod.adapters.python import pep508, ranges

LEGACY_DEV = "dev"


@dataclass(frozen=True)
class Entry:
    name: str
    requirement: str | None  # None: not installable by pip (git, path, url, an unreadable range)
    written: str  # as declared, for the record: 'pytest = "^7.1.2"'


def groups(project: dict[str, Any]) -> dict[str, list[Entry]]:
    poetry = _table(_table(project, "tool"), "poetry")
    found: dict[str, list[Entry]] = {}
    legacy = _table(poetry, "dev-dependencies")
    if legacy:
        found[LEGACY_DEV] = _entries(legacy)
    for name, group in _table(poetry, "group").items():
        entries = _entries(_table(group, "dependencies"))
        found[name] = [*found.get(name, []), *entries] if name in found else entries
    return found


def _entries(table: dict[str, Any]) -> list[Entry]:
    entries = []
    for name, value in table.items():
        if pep508.canonical(name) == "python":
            continue
        for one in value if isinstance(value, list) else [value]:
            entries.append(Entry(name, requirement(name, one), f"{name} = {one!r}"))
    return entries


def requirement(name: str, value: Any) -> str | None:
    """One Poetry dependency as a PEP 508 requirement string, or None when pip cannot take it."""
    if isinstance(value, str):
        value = {"version": value}
    if not isinstance(value, dict) or any(k in value for k in ("git", "path", "url", "file")):
        return None
    specifier = _specifier(str(value.get("version", "*")))
    extras = [e for e in value.get("extras") or [] if isinstance(e, str)]
    python = _python_marker(value.get("python"))
    if specifier is None or python is None:
        return None
    markers = [m for m in (python, value.get("markers")) if isinstance(m, str) and m]
    text = name + (f"[{','.join(extras)}]" if extras else "") + specifier
    if markers:
        text += "; " + (markers[0] if len(markers) == 1 else " and ".join(f"({m})" for m in markers))
    try:
        Requirement(text)
    except InvalidRequirement:
        return None
    return text


def _specifier(constraint: str) -> str | None:
    try:
        alternatives = ranges.admitted(constraint, "poetry")
    except ValueError:
        return None
    best = max(alternatives, key=lambda s: max((_release(sp.version) for sp in s), default=()))
    return _ordered(best)


def _python_marker(constraint: Any) -> str | None:
    """`python = "^3.7"` as a marker; "" when there is none. Alternatives (`||`) are joined by `or`."""
    if constraint is None or constraint == "*":
        return ""
    try:
        alternatives = ranges.admitted(str(constraint), "poetry")
    except ValueError:
        return None
    joined = [
        " and ".join(f'python_full_version {s.operator} "{s.version}"' for s in _floor_first(spec))
        for spec in alternatives
    ]
    if any(not j for j in joined):
        return ""  # one alternative admits every Python
    return joined[0] if len(joined) == 1 else " or ".join(f"({j})" for j in joined)


def _ordered(spec: SpecifierSet) -> str:
    return ",".join(str(s) for s in _floor_first(spec))


def _floor_first(spec: SpecifierSet) -> list[Specifier]:
    return sorted(spec, key=lambda s: (not s.operator.startswith(">"), str(s)))


def _release(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        if not part.isdigit():
            break
        parts.append(int(part))
    return tuple(parts)


def _table(parent: Any, key: str) -> dict[str, Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}
