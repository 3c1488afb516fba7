"""What a refreshed lockfile changes besides the bumped package, and proof that the tests ran on exactly it.

    changed(adapter, sdk, before, after) -> {name: version}   entries the refresh moved or added
    pins(state) -> [requirement]          the changed entries the baseline environment holds, as locked
    untested(state) -> [Mismatch]         changed entries the after environment holds at another version

A lock tool resolves on its own terms (the project's whole requires-python range, its own constraints
and exclude-newer, the project's index), an installer on the environment's. Left alone, the two can pick
different versions of what the bump pulls along, and the candidate would ship a lockfile locking versions
no test ran. So the after environment gets the changed entries it already holds at their locked versions
(with the package at `to`, in one install); afterwards every changed entry the environment holds is
compared with its lock (a new dependency the package pulled in, too), a difference is installed once more
at the locked version, and what still differs is a human's (exit 3), never green. An entry the
environment does not hold (another platform's fork, a group the tests do not install) is not installed:
run.json `locked` records every changed entry and what the after environment held of it.

Only an entry locked at one version counts: where the refreshed lockfile forks a package by environment
marker, which version applies here is the lock tool's knowledge, not the tool's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentic_codemod.adapters.types import Adapter
from agentic_codemod.workflow.state import RunState, need

# A package name as both ecosystems write one (npm: an optional @scope/): never an option, a path, a URL
PLAIN_NAME = re.compile(r"(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*")


@dataclass(frozen=True)
class Mismatch:
    file: str
    name: str
    locked: str
    installed: str

    @property
    def reason(self) -> str:
        return (
            f"{self.file} locks {self.name} {self.locked}, but the tests ran with {self.name} "
            f"{self.installed}: the lockfile would ship a version no test ran"
        )


def changed(adapter: Adapter, sdk: str, before: str, after: str) -> tuple[dict[str, str], list[str]]:
    """Entries of the refreshed lockfile (`after`) whose versions differ from the base one's (`before`),
    each locked at exactly one version, and the changed entries that cannot go on an installer's command
    line ("name version", as the lockfile writes them: a name that is not a plain package name, a version
    the ecosystem cannot read; the lockfile is the repository's tool's output, so each is a human's). The
    bumped package is left out (its own lock entry is held to `to` by declarations.stale_locks)."""
    old, new = adapter.locked_versions(before), adapter.locked_versions(after)
    own = adapter.versioning.canonical_name(sdk)
    found: dict[str, str] = {}
    unreadable: list[str] = []
    for name, versions in new.items():
        if old.get(name) == versions or adapter.versioning.canonical_name(name) == own:
            continue
        if not PLAIN_NAME.fullmatch(name) or not all(map(adapter.versioning.is_version, versions)):
            unreadable.append(f"{name} {' '.join(sorted(versions))}")
        elif len(versions) == 1:
            found[name] = next(iter(versions))
    return found, unreadable


def pins(state: RunState) -> list[str]:
    """Requirements that install the changed entries the baseline environment holds at their locked
    versions (one per name: where two lockfiles lock it differently, neither is pinned here and the check
    afterwards names both)."""
    held = state.manifest.environments.get("baseline") or {}
    canonical = need(state.adapter).versioning.canonical_name
    return _requirements(state, {n: v for n, v in _wanted(state).items() if canonical(n) in held})


def reinstall(state: RunState, mismatches: list[Mismatch]) -> list[str]:
    """The second try: each mismatched entry at its locked version (names locked alike everywhere)."""
    wanted = _wanted(state)
    return _requirements(state, {m.name: wanted[m.name] for m in mismatches if m.name in wanted})


def untested(state: RunState) -> list[Mismatch]:
    """Changed entries the after environment holds at a version other than the locked one; records
    run.json `locked` ({file: {name: {"locked": v, "tested": v or null}}})."""
    adapter = need(state.adapter)
    installed = state.manifest.environments.get("after") or {}
    found: list[Mismatch] = []
    for file, entries in sorted(state.lock_changes.items()):
        record: dict[str, dict[str, str | None]] = {}
        for name, locked in entries.items():
            have = installed.get(adapter.versioning.canonical_name(name))
            record[name] = {"locked": locked, "tested": have}
            if have is not None and not adapter.version_matches(have, adapter.versioning.exact(locked)):
                found.append(Mismatch(file, name, locked, have))
        state.manifest.locked[file] = record
    return found


def _wanted(state: RunState) -> dict[str, str]:
    """name -> locked version, over every refreshed lockfile; a name locked differently by two lockfiles
    is left out."""
    versions: dict[str, set[str]] = {}
    for entries in state.lock_changes.values():
        for name, version in entries.items():
            versions.setdefault(name, set()).add(version)
    return {name: next(iter(v)) for name, v in sorted(versions.items()) if len(v) == 1}


def _requirements(state: RunState, wanted: dict[str, str]) -> list[str]:
    versioning = need(state.adapter).versioning
    return [versioning.requirement(name, versioning.exact(version)) for name, version in wanted.items()]
