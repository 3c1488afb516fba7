"""Bump one dependency's version declaration (pure text in, text out) and refresh lockfiles.

Policy, applied to every declaration of the dependency in the file (so applying it twice is a no-op):

    exact pin         ==1.4.0 / === 1.4.0 / Poetry 1.4.0   ->  same operator and spacing, target version
    Poetry caret/tilde ^1.4 / ~1.4                          ->  ^<target> / ~<target>
    any other range   >=1.2,<2 / ~=1.4 / ==1.* / 1.4.*      ->  >=<target>,<next major of target>
    no version        acme-sdk / Poetry "*" / URL, git, path  ->  left as written

Only the specifier changes: name, extras, markers, comments, quoting and every other line stay byte for
byte. Lockfiles are refreshed by the ecosystem's own tool, run in the lockfile's directory after the
pipeline has written the bumped file; a missing tool or a failing tool comes back as an ArtifactNotice.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import LOCKFILES, pep508, pyproject, requirements_file, setup_cfg
from agentic_codemod.adapters.python.extract import file_format
from agentic_codemod.adapters.python.pep508 import Declaration, DependencyFormat
from agentic_codemod.adapters.types import ArtifactNotice, ProcessResult, Runner, refreshed_message
from agentic_codemod.config import Budgets
from agentic_codemod.models import Dependency

LOCK_TOOLS = {"poetry.lock": "poetry", "uv.lock": "uv", "pdm.lock": "pdm", "Pipfile.lock": "pipenv"}

# The adapter contract passes no Settings to update_lockfiles: lock tools get the configured default.
LOCK_TIMEOUT_S = float(Budgets.model_fields["install_timeout_s"].default)

FORMATS_BY_KIND: dict[str, DependencyFormat] = {
    "requirements": requirements_file,
    "pep621": pyproject,
    "pep735": pyproject,
    "poetry": pyproject,
    "setup.cfg": setup_cfg,
}


def update_dependency(content: str, dependency: Dependency, target: str) -> str:
    """`content` with every declaration of `dependency` bumped to `target` by the policy above.

    ValueError when the target is not a version, the dependency is not declared in the text, or none
    of its declarations carries a version that can be edited.
    """
    version = _version(target)
    module = file_format(dependency.file) or FORMATS_BY_KIND.get(dependency.kind)
    if module is None:
        raise ValueError(f"{dependency.file}: unknown kind of dependency file ({dependency.kind!r})")
    canonical = pep508.canonical(dependency.name)
    try:
        declarations = module.find(content, canonical)
    except ValueError as exc:
        raise ValueError(f"{dependency.file}: {exc}") from exc
    if not declarations:
        raise ValueError(f"{dependency.name!r} is not declared in {dependency.file}")
    if all(bump_specifier(d, target, version) is None for d in declarations):
        lines = ", ".join(str(d.line) for d in declarations)
        raise ValueError(
            f"{dependency.file} declares {dependency.name!r} without a version this tool can edit "
            f"(line {lines}: unpinned, URL, git or path); change it by hand"
        )
    return module.rewrite(content, canonical, lambda d: bump_specifier(d, target, version))


def bump_specifier(declaration: Declaration, target: str, version: Version) -> str | None:
    """The new specifier text for one declaration, or None to leave it as written."""
    written = declaration.specifier.strip()
    if not written or written == "*":
        return None
    if declaration.style == "poetry":
        return _bump_poetry(written, target, version)
    return _bump_pep440(written, target, version)


def _bump_pep440(written: str, target: str, version: Version) -> str:
    specifiers = list(SpecifierSet(written))
    if len(specifiers) == 1 and specifiers[0].operator in ("==", "===") and "*" not in specifiers[0].version:
        old = specifiers[0].version
        at = written.rfind(old)
        return written[:at] + target + written[at + len(old) :]
    return f">={target},<{version.major + 1}"


def _bump_poetry(written: str, target: str, version: Version) -> str:
    if written[0] == "^" or (written[0] == "~" and not written.startswith("~=")):
        return written[0] + target
    try:
        Version(written)
        return target  # a bare Poetry version is an exact pin
    except InvalidVersion:
        pass
    try:
        return _bump_pep440(written, target, version)
    except InvalidSpecifier:
        return f">={target},<{version.major + 1}"  # Poetry-only syntax: "1.4.*", ">=1.2 <2", "a || b"


def update_lockfiles(
    root: Path, dependency: Dependency, target: str, runner: Runner
) -> list[ArtifactNotice] | None:
    """Refresh each known lockfile beside the dependency file (and at the root); None when there is none."""
    directories = dict.fromkeys([(root / dependency.file).parent, root])
    present = [d / name for d in directories for name in LOCKFILES if (d / name).is_file()]
    if not present:
        return None
    return [_refresh(root, lockfile, dependency, runner) for lockfile in present]


def lock_command(lockfile: str, dependency: Dependency, tool_version: str = "") -> list[str]:
    """The ecosystem's own command that refreshes `lockfile` after the bump, keeping other pins."""
    tool = LOCK_TOOLS[lockfile]
    if tool == "poetry":
        # Poetry 2 dropped --no-update: plain `poetry lock` no longer upgrades what it need not.
        return ["poetry", "lock"] if _major(tool_version) >= 2 else ["poetry", "lock", "--no-update"]
    if tool == "uv":
        return ["uv", "lock", "--upgrade-package", dependency.name]
    if tool == "pdm":
        return ["pdm", "lock", "--update-reuse"]
    return ["pipenv", "lock"]


def _refresh(root: Path, lockfile: Path, dependency: Dependency, runner: Runner) -> ArtifactNotice:
    name = lockfile.relative_to(root).as_posix()
    tool = LOCK_TOOLS[lockfile.name]
    if shutil.which(tool) is None:
        command = " ".join(lock_command(lockfile.name, dependency))
        return ArtifactNotice(name, False, f"{tool} is not on PATH: {name} not refreshed; run `{command}`")
    version = ""
    if tool == "poetry":
        probe = runner(["poetry", "--version"], cwd=lockfile.parent, timeout_s=LOCK_TIMEOUT_S)
        version = probe.output_tail if probe.ok else ""
    argv = lock_command(lockfile.name, dependency, version)
    before = lockfile.read_bytes()
    result = runner(argv, cwd=lockfile.parent, timeout_s=LOCK_TIMEOUT_S)
    command = " ".join(argv)
    if not result.ok:
        return ArtifactNotice(name, False, f"`{command}` failed: {_failure(result)}")
    if lockfile.is_file() and lockfile.read_bytes() == before:
        return ArtifactNotice(name, False, f"`{command}` left {name} unchanged")
    digest = hashlib.sha256(lockfile.read_bytes()).hexdigest() if lockfile.is_file() else ""
    return ArtifactNotice(name, True, refreshed_message(command, digest), sha256=digest)


def _failure(result: ProcessResult) -> str:
    if result.timed_out:
        return f"timed out after {result.duration_s:.0f}s\n{result.output_tail}"
    if result.error:
        return result.error
    return f"exit {result.exit_code}\n{result.output_tail}"


def _major(tool_version: str) -> int:
    match = re.search(r"(\d+)\.\d+", tool_version)
    return int(match.group(1)) if match else 0


def _version(target: str) -> Version:
    try:
        return Version(target)
    except InvalidVersion as exc:
        raise ValueError(f"target {target!r} is not a PEP 440 version") from exc
