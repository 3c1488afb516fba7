"""Which SDK declarations a run must bump."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentic_codemod.models import Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.state import RunState, need


def pending_declarations(state: RunState) -> list[Dependency]:
    """Declarations to bump: those that exclude the target, or still admit the old range."""
    return pending(state.task.sdk, need(state.profile).sdk_declarations)


def pending(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    old = SpecifierSet(sdk.from_range, prereleases=True)
    return [
        d
        for d in declarations
        if sdk.to not in SpecifierSet(d.specifier, prereleases=True)
        or overlaps(SpecifierSet(d.specifier, prereleases=True), old)
    ]


def overlaps(a: SpecifierSet, b: SpecifierSet) -> bool:
    """Whether two ranges share a version, probed at every version either one names (and just above it).
    Exact for the ranges declarations use (pins, bounds, compatible releases)."""
    probes: set[Version] = set()
    for spec in [*a, *b]:
        try:
            v = Version(spec.version.rstrip(".*"))
        except InvalidVersion:
            continue
        probes |= {v, Version(f"{v.base_version}.post1"), Version(f"{v.base_version}.1")}
    return any(v in a and v in b for v in probes)
