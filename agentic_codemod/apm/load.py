"""load_context: verify the installed context (fail-closed), then compile it. One call before a run.

Order, each stage refusing before the next:
  1. apm.lock.yaml exists; apm.yml and apm-policy.yml parse  (lockfile-required, manifest, policy-required)
  2. sources: allow list, tag pins, lock agrees with apm.yml  (allow-list, tag-pin, lock-consistency, ...)
  3. with the `apm` CLI: a present apm_modules/ is checked first, so a hand edit is refused rather
     than silently repaired; then `apm install --frozen` and `apm audit --ci --policy apm-policy.yml`,
     unless a record says they passed on exactly these bytes (verified.py: once per lock, not per run)
  4. always: content hash of every installed package, hooks, symlinks, hidden Unicode (integrity.py)
  5. read primitives from .apm/ and apm_modules/, compile agent specs                 (compile.py)
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentic_codemod.apm.command import DEFAULT_TIMEOUT_S, audit, find_apm, install_frozen
from agentic_codemod.apm.compile import Context, PackageInfo, compile_agents
from agentic_codemod.apm.integrity import changed_files, content_hash, scan_package
from agentic_codemod.apm.lockfile import LOCKFILE, MODULES_DIR, LockedDependency, read_lockfile
from agentic_codemod.apm.manifest import MANIFEST, Manifest, read_manifest
from agentic_codemod.apm.policy import POLICY, check_sources, ordered_packages, read_policy
from agentic_codemod.apm.primitives import APM_DIR, PackagePrimitives, read_package
from agentic_codemod.apm.refusal import PROJECT, Violation, raise_if_any
from agentic_codemod.apm.verified import VerifiedCache, verification_key

_REINSTALL = "reinstall with `apm install --frozen`"


def load_context(
    project_root: Path,
    *,
    use_cli: bool | None = None,
    budget_bytes: int = 64_000,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    cache: VerifiedCache | bool | None = True,
) -> Context:
    """Verified, compiled context of the project at `project_root`; ContextRefused (exit 2) otherwise.

    use_cli: None runs `apm` when it is installed, True requires it, False skips it (the checks of
    stages 1, 2 and 4 run in every case).
    cache: True reads and writes the CLI's verdicts where VerifiedCache.from_environment() says (a record
    per key, verified.py), a VerifiedCache uses that one, False or None always runs the CLI.
    """
    if cache is True:
        cache = VerifiedCache.from_environment()
    elif cache is False:
        cache = None
    root = project_root.resolve()
    lock = read_lockfile(root / LOCKFILE)
    manifest = read_manifest(root / MANIFEST)
    policy = read_policy(root / POLICY)
    packages, violations = ordered_packages(manifest, lock)
    raise_if_any(violations + check_sources(root, manifest, lock, policy))

    apm = find_apm(use_cli)
    cached = False
    with _exclusive(root):  # runs sharing one context root must not install over each other's reads
        if apm is not None:
            if (root / MODULES_DIR).is_dir():
                raise_if_any(verify_installed(root, packages, require_present=False))
            cached = _verify_with_cli(root, manifest, lock.sha256, apm, cache, timeout_s=timeout_s)

        raise_if_any(verify_installed(root, packages) + verify_project(root))
        context = compile_context(root, manifest, lock.sha256, packages, budget_bytes=budget_bytes)
    return context.model_copy(update={"cli_checked": apm is not None, "cli_cached": cached})


def _verify_with_cli(
    root: Path,
    manifest: Manifest,
    lock_sha256: str,
    apm: str,
    cache: VerifiedCache | None,
    *,
    timeout_s: float,
) -> bool:
    """`apm install --frozen` + `apm audit`, unless the cache holds a pass for exactly these bytes (then
    True). Concurrent runs on the same bytes (a local fleet's copies) wait for one another: one verifies,
    the others find its record."""
    if cache is None:
        _run_cli(root, lock_sha256, apm, timeout_s=timeout_s)
        return False
    key = verification_key(root, manifest, apm)
    with _locked(cache.lock_path(key)):
        if cache.holds(key):
            return True
        _run_cli(root, lock_sha256, apm, timeout_s=timeout_s)
        after = verification_key(root, manifest, apm)  # what the CLI left installed is what passed
        cache.record(after, lock_sha256)
    return False


def _run_cli(root: Path, lock_sha256: str, apm: str, *, timeout_s: float) -> None:
    install_frozen(apm, root, timeout_s=timeout_s)
    audit(apm, root, POLICY, timeout_s=timeout_s)
    if read_lockfile(root / LOCKFILE).sha256 != lock_sha256:
        detail = "`apm install --frozen` rewrote the lockfile"
        hint = "commit the lockfile"
        raise_if_any([Violation(LOCKFILE, PROJECT, "lock-consistency", detail, hint)])


@contextmanager
def _locked(path: Path | None) -> Iterator[None]:
    if path is None:
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _exclusive(root: Path) -> Iterator[None]:
    """An advisory lock per context root, kept outside the checkout (in the temp dir)."""
    key = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"agentic-codemod-context-{key}.lock"
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def verify_installed(
    root: Path, packages: list[LockedDependency], *, require_present: bool = True
) -> list[Violation]:
    """Each installed package against the lockfile: present, same content hash, nothing executable."""
    out: list[Violation] = []
    modules = root / MODULES_DIR
    for dep in packages:
        where = dep.install_dir(modules)
        display = where.relative_to(root).as_posix()
        if not where.is_dir():
            if require_present:
                out.append(Violation(display, dep.name, "installed", "package is not installed", _REINSTALL))
            continue
        if content_hash(where) != dep.content_hash:
            out.extend(_hash_violations(root, dep, where, display))
        out.extend(scan_package(where, package=dep.name, display=display))
    return out


def verify_project(root: Path) -> list[Violation]:
    """The project's own .apm/: no hooks, no symlinks, no hidden Unicode."""
    out = scan_package(root / APM_DIR, package=PROJECT, display=APM_DIR)
    native_hooks = root / "hooks"
    if native_hooks.is_dir():
        out += [
            Violation(f"hooks/{p.name}", PROJECT, "no-hooks", "hooks primitive refused", "remove it")
            for p in sorted(native_hooks.glob("*.json"))
        ]
    return out


def compile_context(
    root: Path,
    manifest: Manifest,
    lock_sha256: str,
    packages: list[LockedDependency],
    *,
    budget_bytes: int,
) -> Context:
    """Read every primitive (project first, then packages in order) and compile the agents."""
    modules = root / MODULES_DIR
    reads: list[PackagePrimitives] = [read_package(root, package=manifest.name, display=".")]
    infos: list[PackageInfo] = []
    for dep in packages:
        where = dep.install_dir(modules)
        reads.append(read_package(where, package=dep.name, display=where.relative_to(root).as_posix()))
        infos.append(
            PackageInfo(
                name=dep.name,
                version=dep.version,
                source=dep.source_label,
                content_hash=dep.content_hash or "",
                path=where,
            )
        )
    instructions = [i for r in reads for i in r.instructions]
    docs = [d for r in reads for d in r.context]
    agents = compile_agents([a for r in reads for a in r.agents], docs, instructions, root=root)
    project = PackageInfo(
        name=manifest.name,
        version=manifest.version,
        source=".",
        content_hash=content_hash(root / APM_DIR),
        path=root,
    )
    return Context(
        project=project,
        lock_sha256=lock_sha256,
        packages=infos,
        agents=agents,
        instructions=instructions,
        context_docs=docs,
        skills=[s for r in reads for s in r.skills],
        budget_bytes=budget_bytes,
        cli_checked=False,
    )


def _hash_violations(root: Path, dep: LockedDependency, where: Path, display: str) -> list[Violation]:
    """Name the edited files when the local source still matches the lock; else name the package."""
    detail = f"content hash differs from {LOCKFILE}"
    source = (root / dep.identity) if dep.is_local else None
    if source is not None and source.is_dir() and content_hash(source) == dep.content_hash:
        files = changed_files(where, source)
        if files:
            return [Violation(f"{display}/{f}", dep.name, "content-hash", detail, _REINSTALL) for f in files]
    return [Violation(display, dep.name, "content-hash", detail, _REINSTALL)]
