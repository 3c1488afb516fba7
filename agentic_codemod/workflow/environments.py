"""The two verification environments of a run, and proof of what each holds.

    install_baseline(state)     the repository's own requirements + the bumped package pinned to the
                                task's `from` range: the highest version both allow (or the repository's
                                own pin or lock) — never a fresh resolve that already runs the new major
    install_target(state)       the baseline environment plus the change the bump makes: the package at
                                exactly `to`, with what it requires, and what the refreshed lockfiles
                                changed at their locked versions (lock_changes.py); nothing else is
                                upgraded

    install_repository(state)   before install_baseline where the plan is `if_installed` (the repository
                                neither declares nor imports the package): its requirements alone, and
                                Stop (nothing to do) when they bring no copy of the package in; else
                                install_baseline puts that package on `from` in this environment

Each install runs in the sandbox's install box on a disposable copy; run.json `installs` says which
installer ran (uv, or pip where uv could not start) and the environment template the baseline came
from. Afterwards the environment's own interpreter lists what is installed (in the test box); the list
goes to run.json `environments`, and a baseline outside `from`, or an after-environment that does not
hold exactly `to`, ends the run with the reason — never green.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentic_codemod.adapters import get_adapter
from agentic_codemod.adapters.types import Adapter, ProcessResult, Runner, VerificationEnv
from agentic_codemod.config import MR_ITEM_MAX_CHARS
from agentic_codemod.errors import CandidateRejected, RequiresHuman
from agentic_codemod.models import HumanItem
from agentic_codemod.tools import repo_copy
from agentic_codemod.workflow import lock_changes
from agentic_codemod.workflow.state import RunState, Stop, need

# An environment the adapter could not list (installed_versions None): Python's listing runs the
# environment's own interpreter, in which code an install left (a .pth, sitecustomize) runs too; npm's reads
# node_modules, which an install script can remove or fill past the listing's bound.
UNLISTED = "the listing of what is installed failed or read nothing it could use"
UNLISTED_HINT = (
    "code the install ran may have broken the environment or its listing (a Python .pth file or "
    "sitecustomize, an npm script that removes node_modules); trace.jsonl has the install's and the "
    "listing's output"
)


def install_repository(state: RunState) -> None:
    """The repository's dependencies alone, none added (a plan `if_installed`: the repository neither
    declares nor imports the SDK): Stop, nothing to do, when they bring no SDK into the environment; else
    the environment stays for install_baseline to put the SDK on `from` in it."""
    adapter, sdk, key = need(state.adapter), state.task.sdk, sdk_key(state)
    _prepare(state, [])
    _record(state, "baseline")
    versions = state.manifest.environments["baseline"]
    if versions is None:
        raise RequiresHuman(
            f"the environment of the repository's dependencies cannot be listed ({UNLISTED}): whether they "
            f"install {sdk.name} is not known",
            hint=UNLISTED_HINT,
        )
    held = {k: v for k, v in versions.items() if k == key or k.endswith("/" + key)}  # a nested copy too
    state.trace.record(
        actor="baseline",
        tool="installed_versions",
        arguments={"requirements": "the repository's own, none added"},
        result=f"{sdk.name}: " + (", ".join(f"{k} {v}" for k, v in held.items()) or "not installed"),
        decision="allowed",
    )
    if held:
        return
    unread = need(state.env).install.get("unread")
    if unread:  # lines the install left out may be what brings it in
        raise RequiresHuman(
            f"the repository neither declares nor imports {sdk.name}, and whether its dependencies install "
            f"it is not known: the install left out what it cannot read ({unread})"[:MR_ITEM_MAX_CHARS],
            hint="name the tests' requirements in the task or config (verification.requirements), then run "
            "again",
        )
    if adapter.holding is None:
        raise RequiresHuman(
            f"the listing says the repository's dependencies install no {sdk.name}, and the "
            f"{adapter.name} adapter has no other way to tell",
            hint="check by hand whether the repository's install brings it in",
        )
    evidence = adapter.holding(need(state.env), sdk.name, sdk.import_names, state.settings)
    if evidence:  # the listing says no, the files say yes: whatever happened, nobody may call it absent
        raise RequiresHuman(
            f"the listing of the repository's dependencies holds no {sdk.name}, but the environment does: "
            f"{'; '.join(evidence[:5])}"[:MR_ITEM_MAX_CHARS],
            hint="code the install ran may have taken its metadata away (trace.jsonl: the install)",
        )
    raise Stop(
        f"the repository neither declares {sdk.name} where a bump edits it nor imports it, and its "
        f"dependencies installed alone bring no {sdk.name} in ({len(versions)} package(s) listed in "
        "run.json environments.baseline): nothing to change or test"
    )


def install_baseline(state: RunState) -> None:
    adapter, sdk = need(state.adapter), state.task.sdk
    pin = adapter.versioning.requirement(sdk.name, sdk.from_range)
    if need(state.plan).if_installed:  # install_repository left the repository's own install: the SDK
        # another package brought in goes on `from` in it, as a pin of the repository's would have
        installed = _install(state, [pin], actor="baseline")
        if not installed.ok:
            raise RequiresHuman(
                f"cannot install {sdk.name}{sdk.from_range} beside the repository's dependencies, which "
                "bring it in without declaring it",
                hint=installed.output_tail[-400:].strip(),
            )
    else:
        _prepare(state, [pin])
    version = _record(state, "baseline")
    if state.manifest.environments["baseline"] is None:
        raise RequiresHuman(
            f"the baseline environment cannot be listed ({UNLISTED}): the baseline would not be known to "
            f"test {sdk.name}{sdk.from_range}",
            hint=UNLISTED_HINT,
        )
    if version is None or not adapter.version_matches(version, sdk.from_range):
        raise RequiresHuman(
            f"the baseline environment holds {sdk.name} {version or '(not installed)'}, "
            f"outside the task's from range {sdk.from_range}: the baseline would not test the old version",
            hint="check the repository's pins and locks against the task's sdk.from",
        )
    shadows = shadowing(state)
    if shadows:
        raise RequiresHuman(
            f"the repository holds its own copy of what {sdk.name} installs, which its tests may import "
            f"in place of the installed version: {', '.join(shadows[:5])}",
            hint=f"remove the copy (or rename it) so that the tests import {sdk.name} from the environment; "
            "a vendored SDK is migrated by hand",
        )


def _prepare(state: RunState, pins: list[str]) -> None:
    """state.env: a fresh environment of the repository's requirements and `pins`, installed on a
    disposable copy; RequiresHuman when the install fails."""
    adapter, sdk, paths, policy = need(state.adapter), state.task.sdk, state.paths, need(state.policy)
    repo_copy.fresh_copy(paths.worktree, paths.copy)  # the install (setup.py, build backends) runs here
    try:
        state.env = adapter.prepare_environment(
            paths.copy,
            paths.env_dir,
            state.settings,
            need(state.runner).boxed(policy.for_install(paths.copy)),
            pins,
        )
    finally:
        repo_copy.discard(paths.copy)
    failed = [r for r in state.env.install_log if not r.ok]
    if failed:
        state.manifest.installs["baseline"] = _install_record(state, "baseline")
        locked = state.env.install.get("locked", "").partition(":")[0]
        under = f", under the versions locked by {locked}" if locked else ""
        why = f"{locked} may lock a version this interpreter or index cannot install: " if locked else ""
        pinned = f" with {sdk.name}{sdk.from_range}" if pins else ""
        raise RequiresHuman(
            f"cannot install the repository's dependencies{pinned}{under} for verification",
            hint=why + failed[-1].output_tail[-400:].strip(),
        )


def shadowing(state: RunState) -> list[str]:
    """The worktree's own files the tests would import in place of the SDK as the environment holds it
    (the adapter's `shadowing`; none where the adapter has no such check)."""
    adapter = need(state.adapter)
    if adapter.shadowing is None:
        return []
    return adapter.shadowing(state.paths.worktree, need(state.env), state.task.sdk.name)


def install_target(state: RunState) -> ProcessResult:
    adapter, sdk = need(state.adapter), state.task.sdk
    target = adapter.versioning.requirement(sdk.name, adapter.versioning.exact(sdk.to))
    locked = lock_changes.pins(state)
    install = _install(state, [target, *locked])
    if not install.ok and locked:  # the locked versions do not fit here: the package alone (checked below)
        install, locked = _install(state, [target]), []
    if not install.ok:
        how = (
            f": {install.error}"
            if install.exit_code is None and install.error
            else f" (exit {install.exit_code})"
        )
        raise CandidateRejected(
            f"installing {sdk.name} {sdk.to} failed{how}", hint=install.output_tail[-400:].strip()
        )
    _check_target(state)
    gone = lock_changes.removed(state)
    if gone:  # installers add, never remove: what the lockfile no longer locks goes before the tests
        _uninstall(state, gone)
        _check_target(state)
    mismatches = lock_changes.untested(state)
    if mismatches:  # what the package pulled in, at the installer's choice: once more, as locked, with
        # the first install's pins repeated (an installer need not remember them: npm's --no-save)
        _install(state, list(dict.fromkeys([target, *locked, *lock_changes.reinstall(state, mismatches)])))
        _check_target(state)  # listed again whatever the install did: the tests run on what is there
        mismatches = lock_changes.untested(state)
    need(state.plan).requires_human.extend(HumanItem(reason=m.reason, file=m.file) for m in mismatches)
    need(state.plan).requires_human.extend(HumanItem(reason=c) for c in capping(state))
    return install


def capping(state: RunState) -> list[str]:
    """Each package of the after environment that requires the SDK in a range excluding `to` (the
    adapter's `capping`), as a human's item: the tests ran on a set the repository's own install would
    never resolve, whatever they say."""
    adapter, sdk = need(state.adapter), state.task.sdk
    if adapter.capping is None:
        return []
    declared = [d.specifier for d in need(state.profile).sdk_declarations]
    return [
        f"{found}, which excludes {sdk.name} {sdk.to}: the tests ran on a set of packages the repository's "
        f"own install would not resolve; move it to a version that admits {sdk.to} (or drop it) with the bump"
        for found in adapter.capping(need(state.env), sdk_key(state), sdk.to, declared)
    ]


def _check_target(state: RunState) -> None:
    adapter, sdk = need(state.adapter), state.task.sdk
    version = _record(state, "after")
    if state.manifest.environments["after"] is None:
        raise CandidateRejected(
            f"the environment after the bump cannot be listed ({UNLISTED}): the tests would not be known "
            f"to run on {sdk.name} {sdk.to}",
            hint=UNLISTED_HINT,
        )
    if version is None or not _exactly(adapter, version, sdk.to):
        raise CandidateRejected(
            f"the environment after the bump holds {sdk.name} {version or '(not installed)'}, not {sdk.to}",
            hint="a run must test exactly the target version",
        )


def _uninstall(state: RunState, names: list[str]) -> None:
    adapter, settings = need(state.adapter), state.settings
    _in_install_box(
        state, "uninstall", lambda root, env, box: adapter.uninstall(root, env, settings, box, names)
    )


def _install(state: RunState, pins: list[str], actor: str = "bump") -> ProcessResult:
    adapter, settings = need(state.adapter), state.settings
    return _in_install_box(
        state,
        "install_dependencies",
        lambda root, env, box: adapter.install_dependencies(root, env, settings, box, pins),
        actor,
    )


def _in_install_box(
    state: RunState,
    tool: str,
    step: Callable[[Path, VerificationEnv, Runner], ProcessResult],
    actor: str = "bump",
) -> ProcessResult:
    """One change to the environment, run in the install box on a disposable copy, traced."""
    paths, policy = state.paths, need(state.policy)
    repo_copy.fresh_copy(paths.worktree, paths.copy)
    try:
        result = step(paths.copy, need(state.env), need(state.runner).boxed(policy.for_install(paths.copy)))
    finally:
        repo_copy.discard(paths.copy)
    state.trace.record(
        actor=actor,
        tool=tool,
        arguments={"argv": result.argv},
        result=f"exit {result.exit_code}",
        decision="allowed",
    )
    return result


def _record(state: RunState, phase: str) -> str | None:
    """List the environment into run.json `environments[phase]`; the bumped package's version."""
    adapter, paths, policy = need(state.adapter), state.paths, need(state.policy)
    paths.copy.mkdir(parents=True, exist_ok=True)
    reports = paths.reports / f"{phase}-environment"
    reports.mkdir(parents=True, exist_ok=True)
    try:
        box = policy.for_tests(paths.copy, reports)
        versions = adapter.installed_versions(paths.copy, need(state.env), need(state.runner).boxed(box))
    finally:
        repo_copy.discard(paths.copy)
    state.manifest.environments[phase] = versions
    state.manifest.installs[phase] = _install_record(state, phase)
    return (versions or {}).get(sdk_key(state))


def _install_record(state: RunState, phase: str) -> dict[str, str]:
    """run.json `installs[phase]`: how the environment was installed. `locked` (the lockfiles the baseline
    installed under), `locked_unread`, `left_out` and `unread` (what the repository's own install of its
    tests would take that this one did not) are the baseline's: the after install is the bump's change,
    checked by lock_changes."""
    install = dict(need(state.env).install)
    if phase != "baseline":
        for key in ("locked", "locked_unread", "left_out", "unread"):
            install.pop(key, None)
    return install


def sdk_key(state: RunState) -> str:
    """The bumped package's name as an environment listing names it (the adapter's canonical name)."""
    return get_adapter(state.task.sdk.ecosystem).versioning.canonical_name(state.task.sdk.name)


def _exactly(adapter: Adapter, version: str, target: str) -> bool:
    """`version` is `target` (a local build `2.0.0+cu1` is not 2.0.0), and inside its exact range."""
    exact = adapter.version_matches(version, adapter.versioning.exact(target))
    return exact and lock_changes.same_version(adapter, version, target)
