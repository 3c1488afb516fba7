"""apm.yml: the project's name, version and declared APM dependencies.

Only the subset the runtime needs is parsed. A dependency entry is one of (APM 0.35 syntax):

    ./packages/x                         local path (also ../x, /abs, ~/x)
    owner/repo#v1.2.0                    github.com shorthand
    host.tld/owner/repo[/sub/path]#ref   host-qualified
    https://host/owner/repo.git#ref      URL forms (https, ssh, git@host:owner/repo)
    {path: ./packages/x}                 object, local
    {git: <url>, path: sub, ref: v1.2.0} object, remote (path = subdirectory)

The identity of a remote dependency is always host-qualified (`gitlab.example.com/acme/pkg`,
`github.com/acme/pkg`): allow-list patterns without a host never match a remote source.
Marketplace and registry entries are not supported: they cannot be verified offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

from agentic_codemod.apm.refusal import PROJECT, ContextRefused, Violation
from agentic_codemod.yaml_input import safe_load

MANIFEST = "apm.yml"
DEFAULT_HOST = "github.com"

_LOCAL_PREFIXES = ("./", "../", "/", "~/")
_SCP_RE = re.compile(r"^[\w.-]+@(?P<host>[\w.-]+):(?P<path>.+)$")  # git@host:owner/repo.git
_URL_RE = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")


@dataclass(frozen=True)
class DeclaredDependency:
    raw: str  # the entry as written, for messages
    local_path: str | None  # normalised "./x/y" for local entries
    identity: str  # local path, or host-qualified remote identity without ref
    ref: str | None  # remote only

    @property
    def is_local(self) -> bool:
        return self.local_path is not None


@dataclass(frozen=True)
class Manifest:
    path: Path
    name: str
    version: str
    dependencies: tuple[DeclaredDependency, ...]
    mcp: tuple[str, ...]  # declared MCP servers (refused: they execute code)


def read_manifest(path: Path) -> Manifest:
    """Parse apm.yml; a malformed file or entry is a refusal naming the file and field."""
    data = read_yaml_mapping(path, rule="manifest", hint="fix apm.yml")
    for field in ("name", "version"):
        if not isinstance(data.get(field), str) or not data[field].strip():
            _refuse(path, f"field '{field}' must be a non-empty string")
    deps: list[DeclaredDependency] = []
    mcp: list[str] = []
    for section in ("dependencies", "devDependencies"):
        block = data.get(section) or {}
        if not isinstance(block, dict):
            _refuse(path, f"field '{section}' must be a mapping")
        for index, entry in enumerate(block.get("apm") or []):
            deps.append(parse_dependency(entry, where=f"{section}.apm[{index}]", manifest=path))
        mcp.extend(str(item) for item in block.get("mcp") or [])
    return Manifest(path, data["name"], str(data["version"]), tuple(deps), tuple(mcp))


def parse_dependency(entry: Any, *, where: str, manifest: Path) -> DeclaredDependency:
    if isinstance(entry, dict):
        return _parse_object(entry, where=where, manifest=manifest)
    if not isinstance(entry, str) or not entry.strip():
        _refuse(manifest, f"field '{where}' must be a string or a mapping")
    raw = entry.strip()
    if raw.startswith(_LOCAL_PREFIXES):
        local = normalise_local(raw)
        return DeclaredDependency(raw, local, local, None)
    base, _, ref = raw.partition("#")
    return DeclaredDependency(raw, None, remote_identity(base), ref or None)


def _parse_object(entry: dict[str, Any], *, where: str, manifest: Path) -> DeclaredDependency:
    if "git" in entry:
        base = remote_identity(str(entry["git"]))
        sub = str(entry.get("path") or "").strip("/")
        identity = f"{base}/{sub}" if sub else base
        ref = entry.get("ref")
        return DeclaredDependency(str(entry), None, identity, str(ref) if ref else None)
    if "path" in entry and str(entry["path"]).startswith(_LOCAL_PREFIXES):
        local = normalise_local(str(entry["path"]))
        return DeclaredDependency(str(entry), local, local, None)
    _refuse(manifest, f"field '{where}': only local paths and git sources are supported, got {entry}")


def normalise_local(raw: str) -> str:
    """'./a//b/' -> './a/b'; '../x' stays relative; absolute and ~ paths are kept as written."""
    if raw.startswith(("/", "~")):
        return raw.rstrip("/")
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    joined = "/".join(parts)
    return joined if joined.startswith("..") else f"./{joined}"


def remote_identity(base: str) -> str:
    """Host-qualified identity without scheme, user, '.git' or ref; shorthand means github.com."""
    text = base.strip()
    match = _URL_RE.match(text) or _SCP_RE.match(text)
    if match:
        host, path = match["host"].lower(), match["path"]
    else:
        first, _, rest = text.partition("/")
        host, path = (first.lower(), rest) if "." in first and rest else (DEFAULT_HOST, text)
    return f"{host}/{path.strip('/').removesuffix('.git')}"


def read_yaml_mapping(path: Path, *, rule: str, hint: str) -> dict[str, Any]:
    """A YAML mapping from a project file; anything else is a refusal under `rule`."""
    try:
        data = safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContextRefused([Violation(path.name, PROJECT, rule, "file is missing", hint)]) from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ContextRefused([Violation(path.name, PROJECT, rule, f"cannot read: {exc}", hint)]) from exc
    if not isinstance(data, dict):
        raise ContextRefused([Violation(path.name, PROJECT, rule, "must be a YAML mapping", hint)])
    return data


def _refuse(path: Path, detail: str) -> NoReturn:
    raise ContextRefused([Violation(path.name, PROJECT, "manifest", detail, "fix apm.yml")])
