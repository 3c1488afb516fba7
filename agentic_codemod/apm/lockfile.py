"""apm.lock.yaml, as written by `apm install` (lockfile_version '1', apm-cli 0.35.0).

The lockfile is the single record of what is installed: for every package its source, resolved ref
and commit, and `content_hash` over the installed tree. `install_dir` reproduces where `apm` puts a
package under apm_modules/ (apm_cli.models.dependency.materialization); the lockfile is never written
here, only by `apm` itself.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from agentic_codemod.apm.manifest import DEFAULT_HOST, normalise_local, read_yaml_mapping
from agentic_codemod.apm.refusal import PROJECT, ContextRefused, Violation

LOCKFILE = "apm.lock.yaml"
MODULES_DIR = "apm_modules"
_HINT = "regenerate it with `apm install` and commit it"
_FILE_SUFFIXES = (".md", ".json", ".yml", ".yaml")  # a virtual path naming one file, not a folder


@dataclass(frozen=True)
class LockedDependency:
    repo_url: str
    name: str
    version: str | None
    host: str | None
    source: str | None  # "local" or None (remote)
    local_path: str | None
    declaring_parent: str | None
    anchored_local_path: str | None
    resolved_ref: str | None
    resolved_commit: str | None
    virtual_path: str | None
    alias: str | None
    depth: int
    content_hash: str | None

    @property
    def is_local(self) -> bool:
        return self.source == "local"

    @property
    def identity(self) -> str:
        """What apm-policy.yml patterns are matched against (see manifest.remote_identity)."""
        if self.is_local:
            return normalise_local(self.anchored_local_path or self.local_path or self.repo_url)
        host = (self.host or DEFAULT_HOST).lower()
        path = f"{self.repo_url}/{self.virtual_path}" if self.virtual_path else self.repo_url
        return f"{host}/{path}"

    @property
    def source_label(self) -> str:
        """Human/audit form of where the package came from: local path, or identity#ref@commit."""
        if self.is_local:
            return self.identity
        return f"{self.identity}#{self.resolved_ref}@{(self.resolved_commit or '?')[:12]}"

    def install_dir(self, modules: Path) -> Path:
        """Directory of the installed copy; refused when it would leave apm_modules/."""
        if self.alias:
            parts: tuple[str, ...] = (self.alias,)
        elif self.is_local:
            leaf = PurePosixPath((self.local_path or self.repo_url).replace("\\", "/")).name
            if self.declaring_parent:
                anchor = self.anchored_local_path or self.local_path or ""
                parts = ("_local", hashlib.sha256(anchor.encode("utf-8")).hexdigest()[:12], leaf)
            else:
                parts = ("_local", leaf)
        elif self.virtual_path and self.virtual_path.endswith(_FILE_SUFFIXES):
            raise self._refuse("single-file virtual packages are not supported; depend on a folder")
        else:
            parts = (*self.repo_url.split("/"), *(self.virtual_path or "").split("/"))
        clean = [p for p in parts if p]
        if not clean or any(p in (".", "..") or "\\" in p for p in clean):
            raise self._refuse(f"unsafe install location {'/'.join(parts)!r}")
        return modules.joinpath(*clean)

    def _refuse(self, detail: str) -> ContextRefused:
        return ContextRefused([Violation(LOCKFILE, self.name, "lock-consistency", detail, _HINT)])


@dataclass(frozen=True)
class Lockfile:
    path: Path
    sha256: str  # of the exact bytes, recorded in run.json
    apm_version: str | None
    dependencies: tuple[LockedDependency, ...]


def read_lockfile(path: Path) -> Lockfile:
    """Parse apm.lock.yaml. A missing or malformed lockfile is a refusal (rule lockfile-required)."""
    if not path.is_file():
        raise ContextRefused(
            [Violation(LOCKFILE, PROJECT, "lockfile-required", "lockfile is missing", _HINT)]
        )
    raw = path.read_bytes()
    data = read_yaml_mapping(path, rule="lockfile-required", hint=_HINT)
    entries = data.get("dependencies") or []
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ContextRefused(
            [Violation(LOCKFILE, PROJECT, "lockfile-required", "'dependencies' must be a list", _HINT)]
        )
    return Lockfile(
        path=path,
        sha256=hashlib.sha256(raw).hexdigest(),
        apm_version=_opt(data.get("apm_version")),
        dependencies=tuple(_locked(entry) for entry in entries),
    )


def _locked(entry: dict[str, Any]) -> LockedDependency:
    repo_url = str(entry.get("repo_url") or "")
    return LockedDependency(
        repo_url=repo_url,
        name=str(entry.get("name") or PurePosixPath(repo_url).name or "?"),
        version=_opt(entry.get("version")),
        host=_opt(entry.get("host")),
        source=_opt(entry.get("source")),
        local_path=_opt(entry.get("local_path")),
        declaring_parent=_opt(entry.get("declaring_parent")),
        anchored_local_path=_opt(entry.get("anchored_local_path")),
        resolved_ref=_opt(entry.get("resolved_ref")),
        resolved_commit=_opt(entry.get("resolved_commit")),
        virtual_path=_opt(entry.get("virtual_path")),
        alias=_opt(entry.get("alias")),
        depth=int(entry.get("depth") or 1),
        content_hash=_opt(entry.get("content_hash")),
    )


def _opt(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)
