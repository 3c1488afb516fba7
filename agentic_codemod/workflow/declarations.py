"""Which SDK declarations a run must bump, and when the run cannot know (requires_human).

    pending_declarations(state) -> [Dependency]     (the plan, the bump and the gates use the same list)
    pending(sdk, declarations) -> [Dependency]      (pure; publish re-derives the bump with it)

Bumped: declarations whose role is runtime, extra, test, dev or build (adapters/python/roles.py), and
constraint ones (test-minimum pins, constraints files) only in files the task names in `sdk.also_bump`;
lock entries never (their own tool refreshes them). Of those, by the task's range strategy:

    auto, bump   those that exclude `to`, or still admit `from`
    replace, widen  those that exclude `to`
    pin          those that are not already `==to`

A declaration without a version (`acme-sdk`, Poetry `*`, a URL) admits `to` and is never edited. Each
returned Dependency carries the task's `range_strategy`, so update_dependency rewrites it the same way in
the bump, the review gates and publish.

pending_declarations ends the run requires_human (exit 3), before anything is edited, when:
  - a computed setup.py install_requires may hold the runtime declaration and no other file declares it
    (or a computed value is the only place the SDK could be declared);
  - a declaration to bump has a range the tool cannot read;
  - no editable declaration exists but the code imports the SDK (import names from the task's
    `sdk.import_names`, the wheel's top_level.txt / RECORD, or the installed distribution);
  - nothing is left to bump, but a lockfile still locks another version than `to` (constraint files and
    test-minimum pins are left as they are: they pin an old version on purpose).
So `nothing_to_do` (plan) is left for the two proven cases: declared nowhere and imported nowhere, or
every declaration already admits `to` (and none that the strategy bumps still admits `from`).
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import imports
from agentic_codemod.adapters.python.ranges import admitted
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.scan import source_files
from agentic_codemod.workflow.state import RunState, need

BUMPED_ROLES = frozenset({"runtime", "extra", "test", "dev", "build"})


def pending_declarations(state: RunState) -> list[Dependency]:
    """Declarations to bump (see the module docstring); RequiresHuman when the run cannot know them."""
    sdk, declarations = state.task.sdk, need(state.profile).sdk_declarations
    found = pending(sdk, declarations)
    _check(state, sdk, declarations, found)
    return found


def pending(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    old = SpecifierSet(sdk.from_range, prereleases=True)
    return [
        d.model_copy(update={"range_strategy": sdk.range_strategy})
        for d in declarations
        if bumped(sdk, d) and _needs_bump(sdk, d, old)
    ]


def bumped(sdk: SdkSpec, declaration: Dependency) -> bool:
    """Whether the bump edits this declaration at all (by role; constraint files when the task names them)."""
    if declaration.uneditable or declaration.role == "lock":
        return False
    return declaration.role in BUMPED_ROLES or declaration.file in sdk.also_bump


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


def _needs_bump(sdk: SdkSpec, d: Dependency, old: SpecifierSet) -> bool:
    if not d.specifier.strip() or d.specifier.strip() == "*":
        return False
    try:
        ranges = admitted(d.specifier, _style(d))
    except ValueError:
        return True  # unreadable: _check stops the run naming it
    admits = any(sdk.to in r for r in ranges)
    if sdk.range_strategy in ("replace", "widen"):
        return not admits
    if sdk.range_strategy == "pin":
        return ranges != [SpecifierSet(f"=={sdk.to}", prereleases=True)]
    return not admits or any(overlaps(r, old) for r in ranges)


def _check(state: RunState, sdk: SdkSpec, declarations: list[Dependency], found: list[Dependency]) -> None:
    hint = "declare the SDK with a literal version in one of the dependency files, then run again"
    for d in found:
        try:
            admitted(d.specifier, _style(d))
        except ValueError as exc:
            raise RequiresHuman(
                f"{d.file} line {d.line}: {exc}", hint="bump this declaration by hand"
            ) from exc
    editable = [d for d in declarations if bumped(sdk, d)]
    computed = [d for d in declarations if d.uneditable]
    runtime = [d for d in editable if d.role == "runtime"]
    blocking = [d for d in computed if (d.role == "runtime" and not runtime) or not editable]
    if blocking:
        raise RequiresHuman(
            f"cannot tell how {sdk.name} is declared: " + "; ".join(d.uneditable for d in blocking),
            hint="make the value a literal list (or read it from a requirements file), or bump it by hand",
        )
    if not editable:
        where = _imported(state, sdk)
        if where is not None:
            listed = ", ".join(f"{d.file} line {d.line} ({d.role})" for d in declarations)
            raise RequiresHuman(
                f"{where[0]} line {where[1]} imports {sdk.name}, but no dependency file declares it in a "
                f"way the bump edits{': only ' + listed if listed else ''}",
                hint=hint,
            )
    if found:
        return
    stale = [d for d in declarations if d.role == "lock" and d.specifier and not _admits(d, sdk.to)]
    if stale:
        listed = "; ".join(f"{d.file} line {d.line} locks {d.specifier}" for d in stale)
        raise RequiresHuman(
            f"every declaration of {sdk.name} admits {sdk.to}, but {listed}",
            hint="refresh the lockfile with its own tool (the bump does when it edits a declaration)",
        )


def _imported(state: RunState, sdk: SdkSpec) -> tuple[str, int] | None:
    root = state.paths.worktree
    names = imports.import_names(sdk.name, state.settings.python.find_links, sdk.import_names)
    return imports.first_import(root, source_files(root, need(state.adapter).name), names)


def _admits(d: Dependency, to: str) -> bool:
    try:
        return any(to in r for r in admitted(d.specifier, _style(d)))
    except ValueError:
        return False


def _style(d: Dependency) -> str:
    return "poetry" if d.kind == "poetry" else "pep440"
