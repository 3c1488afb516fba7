"""SDK pins in the files that install packages outside the dependency files: container images, conda
environments, pre-commit hooks and CI jobs.

    found(root, canonical) -> [Dependency]    every literal pin of the SDK there, each uneditable

A pin is a requirement written in a command or a list, with a literal version: `RUN pip install
acme-sdk==1.4.0`, `additional_dependencies: ["acme-sdk>=1.4,<2"]`, a conda environment's `- acme-sdk=1.4`
(conda's match spec: 1.4.*, read as `==1.4.*`). The tool never edits these files (Dockerfiles and CI
configuration are in config.DEFAULT_DENY_GLOBS; a command is code), so each pin is uneditable, and what
follows from it is by the file (SCRIPT_KINDS):

  - a container image, a conda environment, a pre-commit hook (role dev): a pin that excludes the target
    stops the run before any edit (requires_human, workflow/declarations.py). The merged repository would
    otherwise build its image, environment or hook on the old version, with code migrated to the new one,
    while its tests here passed on the new one;
  - a CI job (role constraint): it may test an old version on purpose (a minimum-versions job). It is left
    as it is, and the merge request names it (declarations.kept_off_target).

Not a literal pin, so not read: a requirement without a version (`pip install acme-sdk`), a version from a
variable (`acme-sdk==${VERSION}`), `-r requirements.txt` (the dependency file is read as such). A comment
line (`#` first) is passed over. Files: SCRIPT_KINDS' patterns, matched from the repository root (a
`*/` pattern one folder down); a link is never followed, a file past CI_CONFIG_MAX_BYTES is not read
(tools/rooted.py refuses both), and more than INSTALL_SCRIPTS_MAX_FILES such files stop the run
(requires_human: a pin among those not read would be missed).
"""

from __future__ import annotations

import re
from pathlib import Path

from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.roles import Role
from agentic_codemod.config import CI_CONFIG_MAX_BYTES, INSTALL_SCRIPTS_MAX_FILES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND, Dependency
from agentic_codemod.tools.rooted import RootedFS

# What installs with each kind of file, its role, and the files (globs from the repository root).
CONTAINER_FILES = ("Dockerfile", "Dockerfile.*", "*.Dockerfile", "*.dockerfile", "Containerfile")
CONDA_FILES = ("environment.yml", "environment.yaml", "environment-*.yml", "environment-*.yaml")
CI_FILES = (".gitlab-ci.yml", ".gitlab/ci/*.yml", ".github/workflows/*.yml", ".github/workflows/*.yaml")
OTHER_CI_FILES = (".circleci/config.yml", ".travis.yml", "azure-pipelines.yml", "appveyor.yml", "Jenkinsfile")
SCRIPT_KINDS: tuple[tuple[str, Role, tuple[str, ...]], ...] = (
    ("a container image", "dev", (*CONTAINER_FILES, "Containerfile.*", "*/Dockerfile*", "*/Containerfile")),
    ("a conda environment", "dev", (*CONDA_FILES, "*/environment.yml", "*/environment.yaml")),
    ("a pre-commit hook", "dev", (".pre-commit-config.yaml",)),
    ("a CI job", "constraint", (*CI_FILES, *OTHER_CI_FILES)),
)
CONDA = "a conda environment"

_OP = r"(?:===|==|~=|!=|<=|>=|<|>)"
_VERSION = r"[0-9][A-Za-z0-9.*+!_-]*"
# name, extras, then one or more comparisons: `acme-sdk[x] >= 1.4, <2`. Not inside a longer word or path.
PIN = re.compile(
    rf"(?<![A-Za-z0-9._/-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<extras>\[[A-Za-z0-9._,\s-]*\])?"
    rf"\s*(?P<spec>{_OP}\s*{_VERSION}(?:\s*,\s*{_OP}\s*{_VERSION})*)(?![A-Za-z0-9.*+!_$\{{-])"
)
# conda's own match spec in an environment file: `acme-sdk=1.4` (1.4.*).
CONDA_PIN = re.compile(
    rf"(?<![A-Za-z0-9._/-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)=(?P<version>{_VERSION})(?![=A-Za-z0-9.*+!_$\{{-])"
)


def found(root: Path, canonical: str) -> list[Dependency]:
    """Every literal pin of `canonical` in the install scripts of `root`, in file then line order;
    RequiresHuman past INSTALL_SCRIPTS_MAX_FILES files."""
    files = [(file, what, role) for what, role, patterns in SCRIPT_KINDS for file in _files(root, patterns)]
    if len(files) > INSTALL_SCRIPTS_MAX_FILES:
        raise RequiresHuman(
            f"{len(files)} files install packages outside the dependency files (Dockerfiles, conda "
            f"environments, CI jobs: {', '.join(f for f, _, _ in files[:5])} ...), more than the tool reads "
            f"for pins of the SDK ({INSTALL_SCRIPTS_MAX_FILES}, config.INSTALL_SCRIPTS_MAX_FILES)",
            hint="check those files for pins of the SDK by hand, or migrate this repository by hand",
        )
    fs = RootedFS(root, CI_CONFIG_MAX_BYTES)
    pins: list[Dependency] = []
    for file, what, role in files:
        try:
            text = fs.read_bytes(file).decode("utf-8", errors="replace")
        except (OSError, ValueError):  # a link, a folder on the way that is one, too large: not read
            continue
        pins += _pins(text, file, what, role, canonical)
    return pins


def _files(root: Path, patterns: tuple[str, ...]) -> list[str]:
    seen: dict[str, None] = {}
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root).as_posix()
            if not rel.startswith(".git/"):
                seen[rel] = None
    return list(seen)


def _pins(text: str, file: str, what: str, role: Role, canonical: str) -> list[Dependency]:
    pins = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        for name, written, specifier in _on_line(line, what):
            if pep508.canonical(name) != canonical:
                continue
            pins.append(
                Dependency(
                    name=name,
                    specifier=specifier,
                    file=file,
                    kind=SCRIPT_KIND,
                    line=number,
                    role=role,
                    section=what,
                    uneditable=f"{file} line {number} installs {written[:200]} in {what}, which the tool "
                    "does not edit",
                )
            )
    return pins


def _on_line(line: str, what: str) -> list[tuple[str, str, str]]:
    """(name, the pin as written, its specifier in PEP 440) of each pin on one line."""
    pins = [(m["name"], m[0], re.sub(r"\s+", "", m["spec"])) for m in PIN.finditer(line)]
    if what == CONDA:
        pins += [(m["name"], m[0], _conda(m["version"])) for m in CONDA_PIN.finditer(line)]
    return pins


def _conda(version: str) -> str:
    """conda's `=1.4` (every 1.4 release: 1.4.*) in PEP 440."""
    return f"=={version}" if version.endswith("*") else f"=={version}.*"
