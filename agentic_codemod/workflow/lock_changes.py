"""What a refreshed lockfile changes besides the bumped package, and proof that the tests ran on exactly it.

    changed(adapter, sdk, before, after) -> Changes   entries the refresh moved, added or removed (and
                                          those it held, pinnable at one version)
    pins(state) -> [requirement]          the changed entries the baseline environment holds, as locked
    removed(state) -> [name]              entries the refresh removed that the environment still holds
    untested(state) -> [Mismatch]         changed or held entries the after environment holds at another
                                          version
    elsewhere(lock_changes, canonical, m) -> m, naming the other refreshed lockfiles that lock its name
                                          at other versions (two lock views no one environment can hold)

A lock tool resolves on its own terms (the project's whole requires-python range, its own constraints
and exclude-newer, the project's index), an installer on the environment's. Left alone, the two can pick
different versions of what the bump pulls along, and the candidate would ship a lockfile locking versions
no test ran. So the after environment gets the changed entries it already holds at their locked versions
(with the package at `to`, in one install) and loses what the lockfile no longer locks; afterwards every
changed entry the environment holds is compared with its lock (a new dependency the package pulled in,
too), and so is every entry the refresh left as it was in a lockfile the baseline was installed under
(`constrained`: the install may have taken a newer release of one the baseline did not hold, or
upgraded one an override held; an entry the baseline itself held at another version is left as the
baseline had it); a difference is installed once more at the locked version, and what still differs is
a human's (exit 3), never green. An entry the environment does not hold (a group the tests do not
install) is not installed: run.json `locked` records every changed entry, and every held one that
differed, with what the after environment held.

Compared exactly (a local version `1.1.0+cu1` is not `1.1.0`). Pinned only where the adapter says
`name==version` from the index is the entry (Locked.pinnable) and it is locked at one version for this
interpreter (the adapter keeps only the forks whose markers hold here): an npm alias or nested copy is
compared, never pinned; an entry still locked at several versions here, or from a git, path or URL
source (whose code no version number names), is a human's wherever the environment holds it. A
pinnable name or version that could not be a plain package on an installer's command line (an option, a
path, a URL) is a human's, as is a removed name of that kind.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from agentic_codemod.adapters.types import Adapter, Locked
from agentic_codemod.workflow.state import RunState, need

# A package name as both ecosystems write one (npm: an optional @scope/): never an option, a path, a URL
PLAIN_NAME = re.compile(r"(@[A-Za-z0-9][A-Za-z0-9._~-]*/)?[A-Za-z0-9][A-Za-z0-9._~-]*")


@dataclass
class Changes:
    entries: dict[str, Locked] = field(default_factory=dict)  # moved or added
    removed: list[str] = field(default_factory=list)  # locked before, not any more
    unreadable: list[str] = field(default_factory=list)  # "name versions" no installer can be given
    held: dict[str, Locked] = field(default_factory=dict)  # unchanged, pinnable at one version


@dataclass(frozen=True)
class Mismatch:
    file: str
    name: str
    locked: tuple[str, ...]  # empty: the lockfile no longer locks it
    installed: str
    undecidable: str = ""  # why no version number can tell whether the tests ran what it locks
    elsewhere: str = ""  # other refreshed lockfiles locking the name otherwise ("b.txt locks 2.0")

    @property
    def reason(self) -> str:
        if self.undecidable:
            return (
                f"{self.file} locks {self.name} {' or '.join(self.locked)} {self.undecidable}, and the tests "
                f"ran with {self.name} {self.installed}: the tool cannot tell they ran what it locks"
            )
        if not self.locked:
            return (
                f"{self.file} no longer locks {self.name}, but the tests ran with {self.name} "
                f"{self.installed} installed: the lockfile would ship without it"
            )
        disagree = f" ({self.elsewhere}: no one environment holds both)" if self.elsewhere else ""
        return (
            f"{self.file} locks {self.name} {' or '.join(self.locked)}, but the tests ran with {self.name} "
            f"{self.installed}: the lockfile would ship a version no test ran{disagree}"
        )


def changed(adapter: Adapter, sdk: str, before: str, after: str) -> Changes:
    """Entries of the refreshed lockfile (`after`) whose versions differ from the base one's (`before`),
    and those it no longer locks; the bumped package is left out (its own lock entry is held to `to` by
    declarations.stale_locks)."""
    old, new = adapter.locked_versions(before), adapter.locked_versions(after)
    canonical = adapter.versioning.canonical_name
    own = canonical(sdk)
    out = Changes()
    for name, locked in new.items():
        if canonical(name) == own:
            continue
        if name in old and old[name].versions == locked.versions:
            if locked.pinnable and len(locked.versions) == 1 and _plain(adapter, name, locked.versions):
                out.held[name] = locked
            continue
        if locked.pinnable and not _plain(adapter, name, locked.versions):
            out.unreadable.append(f"{name} {' '.join(sorted(locked.versions))}")
        else:
            out.entries[name] = locked
    for name in sorted(set(old) - set(new)):
        if canonical(name) == own:
            continue
        if PLAIN_NAME.fullmatch(name):
            out.removed.append(name)
        elif old[name].pinnable:  # a nested npm copy's path is not a plain name: npm prunes it itself
            out.unreadable.append(f"{name} (no longer locked)")
    return out


def pins(state: RunState) -> list[str]:
    """Requirements that install the changed entries the baseline environment holds at their locked
    versions (one per name: where two lockfiles lock it differently, neither is pinned here and the check
    afterwards names both)."""
    held = state.manifest.environments.get("baseline") or {}
    canonical = need(state.adapter).versioning.canonical_name
    return _requirements(state, {n: v for n, v in _wanted(state).items() if canonical(n) in held})


def reinstall(state: RunState, mismatches: list[Mismatch]) -> list[str]:
    """The second try: each mismatched pinnable entry at its locked version (an unchanged one too)."""
    wanted = _wanted(state, held=True)
    return _requirements(state, {m.name: wanted[m.name] for m in mismatches if m.name in wanted})


def removed(state: RunState) -> list[str]:
    """What no refreshed lockfile locks any more (and none still locks) that the after environment
    holds: uninstalled before the tests run."""
    canonical = need(state.adapter).versioning.canonical_name
    installed = state.manifest.environments.get("after") or {}
    changes = state.lock_changes.values()
    still = {canonical(n) for change in changes for n in [*change.entries, *change.held]}
    gone = {canonical(n) for change in changes for n in change.removed}
    return sorted(n for n in gone - still if n in installed)


def untested(state: RunState) -> list[Mismatch]:
    """Changed entries the after environment holds at a version the lockfile does not lock, and removed
    ones it still holds; records run.json `locked` ({file: {name: {"locked": [versions], "tested": version
    or null}}})."""
    adapter = need(state.adapter)
    canonical = adapter.versioning.canonical_name
    installed = state.manifest.environments.get("after") or {}
    baseline = state.manifest.environments.get("baseline") or {}
    found: list[Mismatch] = []
    for file, changes in sorted(state.lock_changes.items()):
        record: dict[str, dict[str, list[str] | str | None]] = {}
        wanted = [(n, tuple(sorted(locked.versions))) for n, locked in changes.entries.items()]
        for name, versions in [*wanted, *((n, ()) for n in changes.removed)]:
            have = installed.get(canonical(name))
            record[name] = {"locked": list(versions), "tested": have}
            locked = changes.entries.get(name)
            if have is None:
                continue
            if locked is not None and not locked.indexed:
                found.append(Mismatch(file, name, versions, have, "from a git, path or URL source"))
            elif len(versions) > 1:
                found.append(Mismatch(file, name, versions, have, "at several versions for this environment"))
            elif not any(same_version(adapter, have, v) for v in versions):
                found.append(Mismatch(file, name, versions, have))
        before = state.manifest.locked.get(file) or {}
        held = changes.held.items() if file in constrained(state) else ()
        for name, locked in sorted(held):  # what the after install took besides the lock's
            have, base = installed.get(canonical(name)), baseline.get(canonical(name))
            (version,) = locked.versions
            if base is not None and not same_version(adapter, base, version):
                continue  # the baseline's own difference (a seed, a name left to the resolver)
            drifted = have is not None and not same_version(adapter, have, version)
            if drifted or name in before:  # recorded once it drifted, and again after the second try
                record[name] = {"locked": [version], "tested": have}
            if drifted:
                found.append(Mismatch(file, name, (version,), str(have)))
        if record:
            state.manifest.locked[file] = record
    return [elsewhere(state.lock_changes, canonical, m) for m in found]


def elsewhere(
    lock_changes: dict[str, Changes], canonical: Callable[[str], str], mismatch: Mismatch
) -> Mismatch:
    """The mismatch, naming the other refreshed lockfiles that lock its name at other versions: two lock
    views of one project that disagree (a lockfile and a compiled requirements file) cannot both be
    tested, and the reader should see which two."""
    if mismatch.undecidable or not mismatch.locked:
        return mismatch
    own = canonical(mismatch.name)
    others = []
    for file, changes in sorted(lock_changes.items()):
        if file == mismatch.file:
            continue
        for name, locked in [*changes.entries.items(), *changes.held.items()]:
            if canonical(name) == own and set(locked.versions) != set(mismatch.locked):
                others.append(f"{file} locks {' or '.join(sorted(locked.versions))}")
    return replace(mismatch, elsewhere="; ".join(others)) if others else mismatch


def constrained(state: RunState) -> set[str]:
    """The lockfiles the baseline was installed under (run.json `installs.baseline.locked`, as the adapter
    wrote it: "uv.lock, pdm.lock: 72 version(s) as constraints"); only their unchanged entries are held
    after the bump. A compiled docs file or a subfolder's lockfile the environment is not installed from
    is not, nor is any file where the adapter installs under none (npm)."""
    locked = ((state.manifest.installs.get("baseline") or {}).get("locked") or "").partition(":")[0]
    return {name.strip() for name in locked.split(",") if name.strip()}


def same_version(adapter: Adapter, installed: str, locked: str) -> bool:
    """Exactly the locked version (`1.0` is `1.0.0`; a local `1.0.0+cu1` is not `1.0.0`)."""
    try:
        return adapter.versioning.compare(installed, locked) == 0
    except ValueError:
        return installed == locked


def _plain(adapter: Adapter, name: str, versions: frozenset[str]) -> bool:
    return bool(PLAIN_NAME.fullmatch(name)) and all(map(adapter.versioning.is_version, versions))


def _wanted(state: RunState, held: bool = False) -> dict[str, str]:
    """name -> locked version of every pinnable changed entry locked at one version, over every refreshed
    lockfile (`held`: the unchanged ones too); a name locked differently by two lockfiles is left out."""
    versions: dict[str, set[str]] = {}
    for changes in state.lock_changes.values():
        for name, locked in [*changes.entries.items(), *(changes.held.items() if held else ())]:
            if locked.pinnable and len(locked.versions) == 1:
                versions.setdefault(name, set()).update(locked.versions)
            else:
                versions.setdefault(name, set()).update(locked.versions | {""})  # never pinned
    return {name: next(iter(v)) for name, v in sorted(versions.items()) if len(v) == 1}


def _requirements(state: RunState, wanted: dict[str, str]) -> list[str]:
    versioning = need(state.adapter).versioning
    return [versioning.requirement(name, versioning.exact(version)) for name, version in wanted.items()]
