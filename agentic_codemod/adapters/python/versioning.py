"""PEP 440 versioning for the contract (adapters/types.py Versioning), over ranges.py and packaging.

`kind` is a Dependency.kind: "poetry" reads Poetry's syntax (`^1.4`, `~1.4`, `1.4.0`, `||`), every
other kind (and "", a task's `from`) reads PEP 440. `intersects` probes every version either range names
(and just above it): exact for the ranges declarations use (pins, bounds, compatible releases).
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import ranges
from agentic_codemod.adapters.types import Versioning


def style(kind: str) -> str:
    # PDM's overrides take what Poetry's syntax reads: a specifier, a bare version (exactly it), `*`
    return "poetry" if kind in ("poetry", "pdm-override") else "pep440"


def is_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def check(written: str, kind: str) -> None:
    ranges.admitted(written, style(kind))


def matches(version: str, written: str, kind: str) -> bool:
    try:
        return any(version in spec for spec in ranges.admitted(written, style(kind)))
    except ValueError:
        return False


def intersects(written: str, kind: str, other: str) -> bool:
    plain = SpecifierSet(other, prereleases=True)
    return any(overlaps(spec, plain) for spec in ranges.admitted(written, style(kind)))


def overlaps(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether two specifier sets share a version, probed at every version either names (and above)."""
    probes: set[Version] = set()
    for spec in [*a, *b]:
        try:
            v = Version(spec.version.rstrip(".*"))
        except InvalidVersion:
            continue
        probes |= {v, Version(f"{v.base_version}.post1"), Version(f"{v.base_version}.1")}
    return any(v in a and v in b for v in probes)


def pins(written: str, kind: str, version: str) -> bool:
    """`==2.1.0`, `==2.1`, Poetry `2.1.0`: admits `version` and nothing else."""
    try:
        sets = ranges.admitted(written, style(kind))
    except ValueError:
        return False
    return bool(written.strip()) and all(
        len(s) == 1
        and all(c.operator in ("==", "===") and not c.version.endswith(".*") for c in s)
        and version in s
        for s in sets
    )


def has_version(written: str, kind: str) -> bool:
    return bool(written.strip()) and written.strip() != "*"


def new_range(written: str, kind: str, target: str, strategy: str) -> str | None:
    return ranges.new_range(written, style(kind), target, strategy)


def exact(version: str) -> str:
    return f"=={version}"


def compare(a: str, b: str) -> int:
    """PEP 440 order of two versions; ValueError (InvalidVersion) when one cannot be read."""
    left, right = Version(a), Version(b)
    return (left > right) - (left < right)


def canonical_name(name: str) -> str:
    """PEP 503: 'Acme_SDK' -> 'acme-sdk'."""
    return str(canonicalize_name(name))


def requirement(name: str, written: str) -> str:
    """A PEP 508 requirement: the name, then the range ('acme-sdk>=1,<2', 'acme-sdk==2.0.0')."""
    return f"{name}{written}"


VERSIONING = Versioning(
    is_version=is_version,
    check=check,
    matches=matches,
    intersects=intersects,
    pins=pins,
    has_version=has_version,
    new_range=new_range,
    exact=exact,
    compare=compare,
    canonical_name=canonical_name,
    requirement=requirement,
)
