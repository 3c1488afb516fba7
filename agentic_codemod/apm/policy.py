"""Where context may come from: apm-policy.yml, tag pins, and apm.yml <-> apm.lock.yaml agreement.

`apm audit --ci --policy apm-policy.yml` checks the same file when the CLI is present; these checks run
always and are stricter where measurements showed APM to be lenient (apm-cli 0.35.0):

- the allow list is required and matched against the host-qualified identity, github.com included
  (APM matches host-blind: `acme/**` would also admit `evil.example/acme/x`); a remote source is
  therefore listed twice, `host/owner/**` for the runtime and `owner/**` for APM;
- a remote dependency must be pinned to a release tag (APM's `require_pinned_constraint` also counts
  semver ranges and bare SHAs as pinned);
- a local dependency must stay inside the project (a CI job has nothing else);
- MCP servers are refused: like hooks, they execute code on the runner.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agentic_codemod.apm.lockfile import LOCKFILE, LockedDependency, Lockfile
from agentic_codemod.apm.manifest import (
    MANIFEST,
    DeclaredDependency,
    Manifest,
    normalise_local,
    read_yaml_mapping,
)
from agentic_codemod.apm.refusal import PROJECT, ContextRefused, Violation

POLICY = "apm-policy.yml"

# A release tag: v1.2.3, 1.2.3, v1.2.3-rc.1, v1.2.3+build.5. Branch names, ranges (^1, ~1, >=1, 1.x),
# and commit SHAs do not match.
TAG_RE = re.compile(r"^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
COMMIT_RE = re.compile(r"^[0-9a-f]{40}$")
HASH_RE = re.compile(r"^sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class Policy:
    path: Path
    allow: tuple[str, ...]
    deny: tuple[str, ...]

    def verdict(self, identity: str) -> str | None:
        """None when allowed; otherwise why not."""
        for pattern in self.deny:
            if matches_pattern(identity, pattern):
                return f"denied by pattern {pattern!r}"
        if any(matches_pattern(identity, pattern) for pattern in self.allow):
            return None
        return "not in dependencies.allow"


def read_policy(path: Path) -> Policy:
    hint = f"add {POLICY} with dependencies.allow (see docs/context.md)"
    data = read_yaml_mapping(path, rule="policy-required", hint=hint)
    deps = data.get("dependencies")
    allow = deps.get("allow") if isinstance(deps, dict) else None
    if not isinstance(allow, list):
        detail = "dependencies.allow must be a list (an absent list would allow every source)"
        raise ContextRefused([Violation(POLICY, PROJECT, "policy-required", detail, hint)])
    deny = deps.get("deny") if isinstance(deps, dict) else None
    return Policy(path, tuple(map(str, allow)), tuple(map(str, deny or [])))


@lru_cache(maxsize=256)
def _pattern_regex(pattern: str) -> re.Pattern[str]:
    out = ""
    for part in re.split(r"(\*\*|\*)", pattern):
        out += ".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part)
    return re.compile(f"^{out}$")


def matches_pattern(identity: str, pattern: str) -> bool:
    """APM's glob semantics: `*` within one path segment, `**` across segments."""
    if pattern.endswith("/**") and identity == pattern[:-3]:
        return True
    return identity == pattern or bool(_pattern_regex(pattern).match(identity))


def ordered_packages(manifest: Manifest, lock: Lockfile) -> tuple[list[LockedDependency], list[Violation]]:
    """Direct dependencies in apm.yml order, then transitive ones in lockfile order."""
    violations: list[Violation] = []
    direct: list[LockedDependency] = []
    for declared in manifest.dependencies:
        locked = _find_locked(declared, lock)
        if locked is None:
            detail = f"dependency {declared.raw!r} has no entry in {LOCKFILE}"
            violations.append(Violation(MANIFEST, PROJECT, "lock-consistency", detail, _INSTALL))
        else:
            direct.append(locked)
    rest = [dep for dep in lock.dependencies if dep not in direct]
    for dep in rest:
        if dep.depth <= 1 and not dep.declaring_parent:
            detail = f"package {dep.name} is locked as a direct dependency but apm.yml does not declare it"
            violations.append(Violation(LOCKFILE, dep.name, "lock-consistency", detail, _INSTALL))
    return direct + rest, violations


def check_sources(root: Path, manifest: Manifest, lock: Lockfile, policy: Policy) -> list[Violation]:
    """Allow list, tag pins, local-path containment, hashes present, no MCP servers."""
    violations = [
        Violation(MANIFEST, PROJECT, "no-mcp", f"MCP server {name!r} declared", _NO_EXEC)
        for name in manifest.mcp
    ]
    for declared in manifest.dependencies:
        if declared.is_local:
            continue
        if not _is_tag(declared.ref):
            violations.append(_pin_violation(MANIFEST, PROJECT, declared.raw, declared.ref))
        locked = _find_locked(declared, lock)
        if locked is not None and locked.resolved_ref != declared.ref:
            detail = f"apm.yml pins {declared.ref!r} but the lockfile resolved {locked.resolved_ref!r}"
            violations.append(Violation(LOCKFILE, locked.name, "lock-consistency", detail, _INSTALL))
    for dep in lock.dependencies:
        violations.extend(_check_locked(root, dep, policy))
    return violations


def _check_locked(root: Path, dep: LockedDependency, policy: Policy) -> list[Violation]:
    out: list[Violation] = []
    why = policy.verdict(dep.identity)
    if why:
        detail = f"source {dep.identity!r} {why}"
        out.append(Violation(POLICY, dep.name, "allow-list", detail, f"allow it in {POLICY} or drop it"))
    if not dep.content_hash or not HASH_RE.match(dep.content_hash):
        detail = "no sha256 content_hash recorded"
        out.append(Violation(LOCKFILE, dep.name, "require-hashes", detail, _INSTALL))
    if dep.is_local:
        source = (root / dep.identity).resolve()
        if dep.identity.startswith(("/", "~")) or not source.is_relative_to(root.resolve()):
            detail = f"local path {dep.identity!r} points outside the project"
            out.append(Violation(LOCKFILE, dep.name, "local-path-escape", detail, "vendor it in the project"))
        return out
    if not _is_tag(dep.resolved_ref):
        out.append(_pin_violation(LOCKFILE, dep.name, dep.identity, dep.resolved_ref))
    if not dep.resolved_commit or not COMMIT_RE.match(dep.resolved_commit):
        detail = f"resolved_commit {dep.resolved_commit!r} is not a full commit SHA"
        out.append(Violation(LOCKFILE, dep.name, "lock-consistency", detail, _INSTALL))
    return out


def _find_locked(declared: DeclaredDependency, lock: Lockfile) -> LockedDependency | None:
    for dep in lock.dependencies:
        if dep.declaring_parent or dep.depth > 1:
            continue
        if declared.is_local and dep.is_local and dep.local_path:
            if normalise_local(dep.local_path) == declared.local_path:
                return dep
        elif not declared.is_local and not dep.is_local and dep.identity == declared.identity:
            return dep
    return None


def _is_tag(ref: str | None) -> bool:
    return bool(ref) and bool(TAG_RE.match(ref or ""))


def _pin_violation(path: str, package: str, what: str, ref: str | None) -> Violation:
    detail = f"{what!r} is pinned to {ref!r}, not a release tag (branches, ranges and bare SHAs are refused)"
    return Violation(path, package, "tag-pin", detail, "pin the dependency to a tag such as #v1.2.0")


_INSTALL = "run `apm install` and commit apm.lock.yaml"
_NO_EXEC = "the pipeline runs no executable context; remove it from apm.yml"
