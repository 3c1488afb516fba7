"""Which SDK declarations a run must bump, and when the run cannot know (requires_human).

    pending_declarations(state) -> [Dependency]     (the plan, the bump and the gates use the same list)
    pending(sdk, declarations) -> [Dependency]      (pure; publish re-derives the bump with it)
    stale_locks(sdk, declarations) -> [Dependency]  (after the bump: lock entries still off `to`, each a
                                                    human item: a compiled requirements file nobody
                                                    recompiled, a lock its tool moved past the tested `to`)
    stale_script_locks(sdk, declarations) -> [Dependency]  (the same, in compiled files the tool does not
                                                    edit: one below the root no dependency file reaches)
    kept_off_target(sdk, declarations) -> [Dependency]  (constraint declarations the bump leaves as they
                                                    are while they exclude `to`: the merge request names
                                                    each, so a reviewer sees what was kept on purpose;
                                                    a CI job's pin among them)

Bumped: declarations whose role is runtime, extra, test, dev or build (adapters/<ecosystem>/roles.py), and
constraint ones (test-minimum pins, constraints files) only in files the task names in `sdk.also_bump`;
lock entries never (their own tool refreshes them). Of those, by the task's range strategy:

    auto, bump   those that exclude `to`, or still admit `from`
    replace, widen  those that exclude `to`
    pin          those that are not already `==to`

Ranges are read by the ecosystem's versioning (the adapter's `versioning`, in the syntax of each
declaration's kind). A declaration without a version (`acme-sdk`, Poetry `*`, a URL, an npm dist-tag)
admits `to` and is never edited. Each
returned Dependency carries the task's `range_strategy`, so update_dependency rewrites it the same way in
the bump, the review gates and publish.

pending_declarations ends the run requires_human (exit 3), before anything is edited, when:
  - a declaration the bump would edit but cannot (a setup.py literal it cannot rewrite byte for byte, what
    the nox session the tests run in installs, a pin in a Dockerfile, a conda environment or a pre-commit
    hook) excludes `to`: the bump would leave it asking for `from`;
  - a computed setup.py install_requires may hold the runtime declaration and no other file declares it
    (or a computed value is the only place the SDK could be declared);
  - a declaration to bump has a range the tool cannot read;
  - no editable declaration exists but the code imports the SDK (the adapter's `first_import`, with the
    task's `sdk.import_names`);
  - nothing is left to bump, but a lockfile still locks another version than `to` (constraint files and
    test-minimum pins are left as they are: they pin an old version on purpose).

When nothing is left to bump, doubts(sdk, declarations) says why the declarations still prove nothing:

    doubts(sdk, declarations) -> [str]          (empty: the repository is proven to be on `to` already)

Proof is every declaration that decides the installed version (the roles the bump edits, lock entries,
computed values) admitting `to` and no version of `from`, and one of them pinning `to` exactly. A
declaration without a version, an open range the strategy keeps (`>=1` under replace), a computed value,
or ranges that admit `to` without pinning it prove nothing: the plan then marks the run verify only (both
versions are tested, nothing is edited). So `nothing_to_do` without a test run is left for one proven
case: every deciding declaration pins `to`. Declared nowhere the bump edits and imported nowhere proves
nothing on its own: the repository may get the SDK through another package (Flask 1.1.4's MarkupSafe
through Jinja2, the corpus' flask1-markupsafe21), which its tests load all the same and which `to` may
break. The plan then marks the run verify only `if_installed`: the baseline installs the repository's
dependencies alone first (environments.install_repository), and only an environment without the SDK ends
the run `nothing_to_do` untested.
"""

from __future__ import annotations

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.types import Versioning
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND, Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.state import RunState, need

BUMPED_ROLES = frozenset({"runtime", "extra", "test", "dev", "build"})


def pending_declarations(state: RunState) -> list[Dependency]:
    """Declarations to bump (see the module docstring); RequiresHuman when the run cannot know them."""
    sdk, declarations = state.task.sdk, need(state.profile).sdk_declarations
    found = pending(sdk, declarations)
    _check(state, sdk, declarations, found)
    return found


def pending(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    v = _versioning(sdk)
    return [
        d.model_copy(update={"range_strategy": sdk.range_strategy})
        for d in declarations
        if bumped(sdk, d) and _needs_bump(sdk, d, v)
    ]


def bumped(sdk: SdkSpec, declaration: Dependency) -> bool:
    """Whether the bump edits this declaration at all (by role; constraint files when the task names them)."""
    if declaration.uneditable or declaration.role == "lock":
        return False
    return declaration.role in BUMPED_ROLES or declaration.file in sdk.also_bump


def _versioning(sdk: SdkSpec) -> Versioning:
    return get_adapter(sdk.ecosystem).versioning


def _needs_bump(sdk: SdkSpec, d: Dependency, v: Versioning) -> bool:
    if not v.has_version(d.specifier, d.kind):
        return False
    try:
        v.check(d.specifier, d.kind)
    except ValueError:
        return True  # unreadable: _check stops the run naming it
    admits = v.matches(sdk.to, d.specifier, d.kind)
    if sdk.range_strategy in ("replace", "widen"):
        return not admits
    if sdk.range_strategy == "pin":  # already spelled as the exact pin of `to` (==2.1.0, 2.1.0, =2.1.0)
        return not (v.pins(d.specifier, d.kind, sdk.to) and d.specifier.strip().lstrip("=") == sdk.to)
    return not admits or v.intersects(d.specifier, d.kind, sdk.from_range)


def _check(state: RunState, sdk: SdkSpec, declarations: list[Dependency], found: list[Dependency]) -> None:
    hint = "declare the SDK with a literal version in one of the dependency files, then run again"
    v = _versioning(sdk)
    for d in found:
        try:
            v.check(d.specifier, d.kind)
        except ValueError as exc:
            raise RequiresHuman(
                f"{d.file} line {d.line}: {exc}", hint="bump this declaration by hand"
            ) from exc
    stuck = [
        d
        for d in declarations
        if d.uneditable
        and (d.role in BUMPED_ROLES or d.file in sdk.also_bump)
        and v.has_version(d.specifier, d.kind)
        and _excludes(v, d, sdk.to)
    ]
    if stuck:  # the bump would leave them excluding `to`: green tests, and a repository that asks for both
        raise RequiresHuman(
            f"{sdk.name} is also declared where the bump cannot edit it, excluding {sdk.to}: "
            + "; ".join(d.uneditable for d in stuck),
            hint=f"change it by hand so that it admits {sdk.to}, or have it read a dependency file; "
            "then run again",
        )
    editable = [d for d in declarations if bumped(sdk, d)]
    computed = [d for d in declarations if d.uneditable and d.kind != SCRIPT_KIND]  # a pin is no computation
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
    others = _others_copies(declarations)
    stale = [
        d
        for d in declarations
        if d.role == "lock" and d not in others and d.specifier and not _admits(v, d, sdk.to)
    ]
    if stale:
        listed = "; ".join(f"{d.file} line {d.line} locks {d.specifier}" for d in stale)
        raise RequiresHuman(
            f"every declaration of {sdk.name} admits {sdk.to}, but {listed}",
            hint="refresh the lockfile with its own tool (the bump does when it edits a declaration)",
        )


def stale_locks(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    """After the bump: the lock entries that still lock a version other than `to`. A lockfile its tool
    refreshed locks `to`; a compiled requirements file (pip-compile, uv pip compile) nobody recompiled, or
    a lockfile whose tool picked a newer version than the one tested, does not, and the candidate would
    leave the repository's own installs unable to resolve (or shipping a version no test ran on)."""
    v, others = _versioning(sdk), _others_copies(declarations)
    return [
        d
        for d in declarations
        if d.role == "lock"
        and d not in others
        and not d.uneditable
        and v.has_version(d.specifier, d.kind)
        and not _pins(v, d, sdk.to)
    ]


def stale_script_locks(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    """The lock entries in files the tool does not edit (a compiled requirements file below the root that
    no dependency file reaches: adapters/python/install_scripts.py) that lock another version than `to`:
    whatever installs from them still gets the old version, until their tool recompiles them."""
    v = _versioning(sdk)
    return [
        d
        for d in declarations
        if d.kind == SCRIPT_KIND
        and d.role == "lock"
        and v.has_version(d.specifier, d.kind)
        and not _pins(v, d, sdk.to)
    ]


def kept_off_target(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    """Test-minimum pins and constraints files the bump leaves as they are (the task does not name their
    file in sdk.also_bump) although they exclude `to`: an install that reads them still gets the old
    version. The tests here did not read them (install_plan.asked_for stops the run where they do), so
    they change no verdict; the merge request names each, with how to have it bumped."""
    v = _versioning(sdk)
    return [
        d
        for d in declarations
        if d.role == "constraint"
        and (not d.uneditable or _ci_pin(d))
        and not bumped(sdk, d)
        and v.has_version(d.specifier, d.kind)
        and _excludes(v, d, sdk.to)
    ]


def _nested(d: Dependency) -> bool:
    head, _, _ = (d.section or "").rpartition("node_modules/")
    return "node_modules/" in head


def _others_copies(declarations: list[Dependency]) -> list[Dependency]:
    """Lock entries of other packages' own copies of the SDK (npm's `node_modules/a/node_modules/sdk`)
    in a lockfile that also locks the repository's copy (the root's or a workspace's: `node_modules/sdk`,
    `packages/x/node_modules/sdk`): those packages' ranges decide them, not the repository's
    declarations. A lockfile with no copy of the repository's keeps them all: what it installs for the
    repository is then unknown, and the nested entries are all it says."""
    own = {d.file for d in declarations if d.role == "lock" and not _nested(d)}
    return [d for d in declarations if d.role == "lock" and _nested(d) and d.file in own]


def _pins(v: Versioning, d: Dependency, to: str) -> bool:
    try:
        return v.pins(d.specifier, d.kind, to)
    except ValueError:
        return False  # unreadable proves nothing


def deciding(sdk: SdkSpec, declarations: list[Dependency]) -> list[Dependency]:
    """The declarations that decide which version gets installed: what the bump edits, lock entries, and
    computed values nobody can read. Constraint files and test-minimum pins stay as they are on purpose; a
    pin in a Dockerfile, a conda environment, a hook or a CI job (SCRIPT_KIND) is no part of the tests'
    install: one that excludes `to` has stopped the run already (or is a CI job's, kept on purpose), and
    one that pins `to` proves nothing about what the tests run on."""
    others = _others_copies(declarations)
    return [
        d
        for d in declarations
        if d.kind != SCRIPT_KIND
        and (d.uneditable or (d.role == "lock" and d not in others) or bumped(sdk, d))
    ]


def _ci_pin(d: Dependency) -> bool:
    """A CI job's pin, or one in a minimum-pins or constraints file below the root (install_scripts.py): it
    may keep an old version on purpose."""
    return d.kind == SCRIPT_KIND and d.role == "constraint"


def doubts(sdk: SdkSpec, declarations: list[Dependency]) -> list[str]:
    """Why the declarations do not prove the repository already runs on `to` (module docstring); empty
    when they do. Meant for when nothing is left to bump: every editable one then admits `to`."""
    v = _versioning(sdk)
    deciding_ = deciding(sdk, declarations)
    found: list[str] = []
    for d in deciding_:
        where = d.file + (f" line {d.line}" if d.line else "")
        if d.uneditable and not v.has_version(d.specifier, d.kind):  # computed: nobody can read it
            found.append(f"{where}: {d.uneditable}")
        elif not v.has_version(d.specifier, d.kind):
            found.append(f"{where}: `{d.name}` has no version, so it admits {sdk.from_range} too")
        elif not _admits(v, d, sdk.to):
            found.append(f"{where}: `{d.name}{d.specifier}` does not admit {sdk.to}")
        elif _admits_any(v, d, sdk.from_range):
            found.append(f"{where}: `{d.name}{d.specifier}` admits {sdk.from_range} too")
    if deciding_ and not found and not any(v.pins(d.specifier, d.kind, sdk.to) for d in deciding_):
        found.append(
            f"no declaration pins {sdk.to}: "
            + ", ".join(f"`{d.name}{d.specifier}` in {d.file}" for d in deciding_)
        )
    return found


def _admits_any(v: Versioning, d: Dependency, old: str) -> bool:
    try:
        return v.intersects(d.specifier, d.kind, old)
    except ValueError:
        return True  # unreadable proves nothing


def _imported(state: RunState, sdk: SdkSpec) -> tuple[str, int] | None:
    adapter = need(state.adapter)
    return adapter.first_import(state.paths.worktree, sdk.name, sdk.import_names, state.settings)


def _excludes(v: Versioning, d: Dependency, to: str) -> bool:
    try:
        return not _admits(v, d, to)
    except ValueError:
        return True  # unreadable: it may well exclude it


def _admits(v: Versioning, d: Dependency, to: str) -> bool:
    return v.matches(to, d.specifier, d.kind)
