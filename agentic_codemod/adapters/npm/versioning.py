"""npm's versioning (node-semver semantics), read with the `node-semver` package (module `nodesemver`).

    is_version(text) -> bool                        "2.0.0", "2.0.0-rc.1" (no range, no "v" prefix)
    is_range(text) -> bool                          "^1.2", "~1.2.3", "1.x", ">=1 <2", "^1 || ^2", "*"
    matches(version, range) -> bool                 prereleases admitted only as npm admits them
    intersects(a, b) -> bool                        some version lies in both ranges
    pins(range, version) -> bool                    the range admits exactly `version` ("2.0.0", "=2.0.0")
    has_version(range) -> bool                      a range with a version the bump can edit
    alias_of(value) -> str | None                   the package an `npm:NAME@range` value installs

A declaration's value that is not a semver range (a dist-tag such as `latest`, a URL, `git+…`, `file:`,
`link:`, `workspace:`) has no version: it admits every version, like a bare Python requirement. An
`npm:NAME@range` alias is read by its range: extract.py keeps it for the SDK only where NAME is the SDK.
Ranges are read strictly (not loose): what npm itself would reject is a ValueError, never a guess.

The contract's view (VERSIONING) reads every kind of declaration alike, except UNTRUSTED_KINDS: what
extract.py finds where the SDK's version would be but cannot take as one (an alias under the SDK's name
that installs another package, a lock entry whose tarball is another version than it says, a copy of the
SDK committed in a node_modules folder). Each has a version (it is never passed over as "admits every
version") that admits nothing: it counts as excluding the target, pins nothing, and proves nothing. A lock
entry from another source (KIND_UNINDEXED_LOCK: git, a path, a server whose tarball URLs are laid out
otherwise) is read as one without a version: it admits every version, so it stops nothing and proves
nothing (its version is what the source's package.json says, no registry's).
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

from agentic_codemod.adapters.types import Versioning

if TYPE_CHECKING:
    import nodesemver

NON_VERSION_PREFIXES = ("file:", "link:", "workspace:", "git+", "git:", "github:", "http:", "https:")
# A dist-tag: a word npm resolves at install time (latest, next, beta …), never a version.
DIST_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]*$")
ANY = ("", "*", "x", "X")

# Dependency kinds (extract.py) whose value is no version of the SDK the tool can trust (module docstring).
KIND_OTHER_PACKAGE = "package.json alias of another package"
KIND_UNVERIFIED_LOCK = "package-lock entry of another tarball"
KIND_COMMITTED_COPY = "committed node_modules"
UNTRUSTED_KINDS = frozenset({KIND_OTHER_PACKAGE, KIND_UNVERIFIED_LOCK, KIND_COMMITTED_COPY})
KIND_UNINDEXED_LOCK = "package-lock entry from another source"


def semver() -> ModuleType:
    """The `nodesemver` module, imported on first use: every run loads this adapter (the registry), only
    npm runs read a range, and its import compiles all its patterns (about 25 ms)."""
    import nodesemver

    return nodesemver


def range_text(written: str) -> str | None:
    """The semver range a declaration's value carries (an `npm:` alias reduced to its range), or None
    when it carries none (a dist-tag, URL, path, git or workspace reference)."""
    text = written.strip()
    if text.startswith("npm:"):
        text = _alias(text)[1]
    if text.startswith(NON_VERSION_PREFIXES) or "/" in text:
        return None
    if text not in ANY and DIST_TAG.match(text) and not re.match(r"^[vV]?[0-9]", text):
        return None
    return text


def alias_of(written: str) -> str | None:
    """The package an `npm:NAME@range` value installs (NAME, its scope included), or None: no alias."""
    text = written.strip()
    return _alias(text)[0] if text.startswith("npm:") else None


def _alias(text: str) -> tuple[str, str]:
    """(NAME, range) of `npm:NAME@range`; the range is "" where none is written (npm takes the latest)."""
    spec = text.removeprefix("npm:")
    at = spec.find("@", 1)  # past a scope's own leading `@`
    return (spec, "") if at < 0 else (spec[:at], spec[at + 1 :])


def has_version(written: str) -> bool:
    text = range_text(written)
    return text is not None and text not in ANY


def is_version(text: str) -> bool:
    """A plain semver version as written in a lockfile or a task's `to` (no `v`, no `=`, no spaces)."""
    found = semver().valid(text, False) if text and text == text.strip() else None
    return found is not None and str(found) == text


def is_range(written: str) -> bool:
    text = range_text(written)
    if text is None:
        return True  # a tag, path or URL: readable, admits every version
    return semver().valid_range(text, False) is not None


def _range(written: str) -> nodesemver.Range | None:
    text = range_text(written)
    if text is None or text in ANY:
        return None
    try:
        return semver().make_range(text, False)
    except ValueError as exc:
        raise ValueError(f"not an npm semver range: {written!r}") from exc


def check(written: str) -> None:
    """ValueError naming the value when it is not a range npm reads."""
    _range(written)


def matches(version: str, written: str) -> bool:
    """Whether `version` is admitted by `written` (npm semantics); an unreadable one never is."""
    if not is_version(version):
        return False
    try:
        parsed = _range(written)
    except ValueError:
        return False
    if parsed is None:
        return True
    return bool(semver().satisfies(version, parsed.range, False))


def pins(written: str, version: str) -> bool:
    """Whether the range admits `version` and nothing else: a single exact comparator."""
    try:
        parsed = _range(written)
    except ValueError:
        return False
    if parsed is None or len(parsed.set) != 1 or len(parsed.set[0]) != 1:
        return False
    comparator = parsed.set[0][0]
    return (
        comparator.operator in ("", "=", None)
        and comparator.semver is not semver().ANY
        and (str(comparator.semver) == version)
    )


# An interval: (version or None for unbounded, inclusive) at each end.
_Bound: TypeAlias = "tuple[nodesemver.SemVer | None, bool]"


def intersects(a: str, b: str) -> bool:
    """Whether some version lies in both ranges (checked on the comparator intervals; npm's prerelease
    rule, which hides prereleases of other versions, is not applied, so this may say yes where npm would
    find only a prerelease). An unreadable range is a ValueError."""
    first, second = _range(a), _range(b)
    if first is None or second is None:
        return True
    return any(_overlap(_interval(x), _interval(y)) for x in first.set for y in second.set)


def _interval(comparators: list[nodesemver.Comparator]) -> tuple[_Bound, _Bound]:
    low: _Bound = (None, True)
    high: _Bound = (None, True)
    for c in comparators:
        if c.semver is semver().ANY:
            continue
        op = c.operator or "="
        if op in (">", ">=", "="):
            candidate = (c.semver, op != ">")
            if (
                low[0] is None
                or _cmp(candidate[0], low[0]) > 0
                or (_cmp(candidate[0], low[0]) == 0 and not candidate[1])
            ):
                low = candidate
        if op in ("<", "<=", "="):
            candidate = (c.semver, op != "<")
            if (
                high[0] is None
                or _cmp(candidate[0], high[0]) < 0
                or (_cmp(candidate[0], high[0]) == 0 and not candidate[1])
            ):
                high = candidate
    return low, high


def _overlap(x: tuple[_Bound, _Bound], y: tuple[_Bound, _Bound]) -> bool:
    low = max_low(x[0], y[0])
    high = min_high(x[1], y[1])
    if low[0] is None or high[0] is None:
        return True
    order = _cmp(low[0], high[0])
    return order < 0 or (order == 0 and low[1] and high[1])


def max_low(a: _Bound, b: _Bound) -> _Bound:
    if a[0] is None:
        return b
    if b[0] is None:
        return a
    order = _cmp(a[0], b[0])
    return a if order > 0 or (order == 0 and not a[1]) else b


def min_high(a: _Bound, b: _Bound) -> _Bound:
    if a[0] is None:
        return b
    if b[0] is None:
        return a
    order = _cmp(a[0], b[0])
    return a if order < 0 or (order == 0 and not a[1]) else b


def _cmp(a: nodesemver.SemVer | None, b: nodesemver.SemVer | None) -> int:
    assert a is not None and b is not None
    return int(semver().compare(str(a), str(b), False))


def compare(a: str, b: str) -> int:
    """semver order of two versions; ValueError when one is not a version."""
    if not (is_version(a) and is_version(b)):
        raise ValueError(f"not a version: {a if not is_version(a) else b!r}")
    return int(semver().compare(a, b, False))


def _new_range(written: str, kind: str, target: str, strategy: str) -> str | None:
    from agentic_codemod.adapters.npm.ranges import new_range  # ranges imports this module

    _trusted(written, kind)
    return new_range(written, target, strategy)


def _trusted(written: str, kind: str) -> None:
    """ValueError where `kind` is one of UNTRUSTED_KINDS: its value is no range of the SDK."""
    if kind in UNTRUSTED_KINDS:
        raise ValueError(f"{written!r} ({kind}) is no version of the package the tool can trust")


def _kind_check(written: str, kind: str) -> None:
    _trusted(written, kind)
    if kind != KIND_UNINDEXED_LOCK:
        check(written)


def _kind_intersects(written: str, kind: str, other: str) -> bool:
    _trusted(written, kind)
    return kind == KIND_UNINDEXED_LOCK or intersects(written, other)


# The contract's view (adapters/types.py Versioning): npm has one range syntax; `kind` is read only to
# tell UNTRUSTED_KINDS apart, which carry a version that admits nothing.
VERSIONING = Versioning(
    is_version=is_version,
    check=_kind_check,
    matches=lambda version, written, kind: (
        kind not in UNTRUSTED_KINDS and (kind == KIND_UNINDEXED_LOCK or matches(version, written))
    ),
    intersects=_kind_intersects,
    pins=lambda written, kind, version: (
        kind not in UNTRUSTED_KINDS and kind != KIND_UNINDEXED_LOCK and pins(written, version)
    ),
    has_version=lambda written, kind: (
        kind in UNTRUSTED_KINDS or (kind != KIND_UNINDEXED_LOCK and has_version(written))
    ),
    new_range=_new_range,
    exact=lambda version: version,  # a bare version is npm's exact range
    compare=compare,
    canonical_name=lambda name: name,  # npm names are compared as written (the registry refuses others)
    requirement=lambda name, written: f"{name}@{written}",
)
