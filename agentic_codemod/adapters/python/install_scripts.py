"""The SDK's pins in the files that install packages outside the dependency files: container images, conda
environments, pre-commit hooks and CI jobs (which files and lines: adapters/install_scripts.py).

    found(root, canonical) -> [Dependency]    every pin of the SDK there, each uneditable

A pin is a requirement with a version in a command or a list: `RUN pip install acme-sdk==1.4.0`,
`additional_dependencies: ["acme-sdk>=1.4,<2"]`, a conda environment's `- acme-sdk=1.4`, `- acme-sdk 1.4.*`,
`- acme-sdk=1.4.0=py_0` or `- acme-sdk[version='>=1.4']`, `conda install acme-sdk=1.4` (conda's `=1.4` and
bare `1.4` mean every 1.4 release: read as `==1.4.*`). A version from a variable is read through the
file's own literal assignments (a Dockerfile's `ARG` / `ENV`, a CI file's `NAME: value`; `${NAME:-1.4}`
its default); one that stays a variable is a version nobody can read, which counts as excluding the target.
A requirement without a version admits every version and is not a pin.

The tool never edits these files (Dockerfiles and CI configuration are in config.DEFAULT_DENY_GLOBS; a
command is code), so each pin is uneditable, and what follows from it is by the kind of file:

  - a container image, a conda environment, a pre-commit hook (role dev): a pin that excludes the target
    stops the run before any edit (requires_human, workflow/declarations.py). The merged repository would
    otherwise build its image, environment or hook on the old version, with code migrated to the new one,
    while its tests here passed on the new one. A pin that admits the target proves nothing (the tests'
    install does not read it);
  - a CI job (role constraint): it may test an old version on purpose (a minimum-versions job). It is left
    as it is, and the merge request names it (declarations.kept_off_target).
"""

from __future__ import annotations

import re
from pathlib import Path

from agentic_codemod.adapters import install_scripts
from agentic_codemod.adapters.install_scripts import CONDA, Script
from agentic_codemod.adapters.python import pep508
from agentic_codemod.adapters.python.roles import Role
from agentic_codemod.models import SCRIPT_KIND, Dependency

ROLES: dict[str, Role] = {
    install_scripts.IMAGE: "dev",
    install_scripts.CONDA: "dev",
    install_scripts.HOOK: "dev",
    install_scripts.CI: "constraint",
}
SPECIFIER_MAX_CHARS = 200  # longer is cut, and so unreadable (it then counts as excluding the target)

_VAR = install_scripts.VARIABLE.pattern
_VERSION = rf"(?:[0-9]|{_VAR})(?:[A-Za-z0-9.*+!_-]|{_VAR})*"
_OP = r"(?:===|==|~=|!=|<=|>=|<|>)"
_NAME = r"(?<![A-Za-z0-9._/$-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
# PEP 508: name, extras, then one or more comparisons (`acme-sdk[x] >= 1.4, <2`), not inside a longer word.
PIN = re.compile(
    rf"{_NAME}(?P<extras>\[[A-Za-z0-9._,\s-]*\])?\s*(?P<spec>{_OP}\s*{_VERSION}(?:\s*,\s*{_OP}\s*{_VERSION})*)"
    r"(?![A-Za-z0-9.*+!_$-])"
)
# conda's match spec on a command line: `acme-sdk=1.4`, `acme-sdk=1.4.0=py_0` (a build string after it).
CONDA_PIN = re.compile(rf"{_NAME}=(?P<version>{_VERSION})(?:=[A-Za-z0-9_.*]+)?(?![=A-Za-z0-9.*+!_$-])")
CONDA_COMMAND = re.compile(r"(?<![\w-])(?:conda|mamba|micromamba)(?![\w-])")
# A conda environment's list item: `- [channel::]name` and the rest of the line.
CONDA_ITEM = re.compile(r"\s*-\s*(?:[A-Za-z0-9_.-]+::)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>.*)")
CONDA_BRACKET = re.compile(r"""\[\s*version\s*=\s*(['"])(?P<spec>[^'"]*)\1""")
# Literal assignments a version variable may take its value from.
ASSIGNMENT = (
    re.compile(
        r"""\s*(?:ARG|ENV)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=|\s+)["']?(?P<value>[^"'\s]+)["']?\s*"""
    ),
    re.compile(r"""\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*["']?(?P<value>[^"'\s]+)["']?\s*"""),
)
VARIABLE = re.compile(_VAR)


def found(root: Path, canonical: str) -> list[Dependency]:
    """Every pin of `canonical` in the install scripts of `root`, in file then line order (RequiresHuman
    where one cannot be read for sure: adapters/install_scripts.py)."""
    return [d for script in install_scripts.scripts(root) for d in _pins(script, canonical)]


def _pins(script: Script, canonical: str) -> list[Dependency]:
    values = install_scripts.assignments(script)
    pins = []
    for number, line in script.lines:
        for name, written, specifier in _on_line(line, script.kind):
            if pep508.canonical(name) != canonical:
                continue
            spec = install_scripts.resolved(specifier, values)[:SPECIFIER_MAX_CHARS]
            pins.append(
                Dependency(
                    name=name,
                    specifier=spec,
                    file=script.file,
                    kind=SCRIPT_KIND,
                    line=number,
                    role=ROLES[script.kind],
                    section=script.kind,
                    uneditable=f"{script.file} line {number} installs {written[:200]} in {script.kind}, "
                    "which the tool does not edit",
                )
            )
    return pins


def _on_line(line: str, kind: str) -> list[tuple[str, str, str]]:
    """(name, the pin as written, its specifier in PEP 440) of each pin on one line."""
    pins = [(m["name"], m[0].strip(), re.sub(r"\s+", "", m["spec"])) for m in PIN.finditer(line)]
    if kind == CONDA and not pins:
        item = CONDA_ITEM.fullmatch(line)
        spec = _conda_spec(item["rest"]) if item else None
        pins += [(item["name"], line.strip().lstrip("- "), spec)] if item and spec else []
    elif CONDA_COMMAND.search(line):
        pins += [(m["name"], m[0], _fuzzy(m["version"])) for m in CONDA_PIN.finditer(line)]
    return pins


def _conda_spec(rest: str) -> str | None:
    """A conda list item's version spec (after its name) in PEP 440; None where it names no version."""
    bracket = CONDA_BRACKET.match(rest.strip())
    if bracket:
        return re.sub(r"\s+", "", bracket["spec"]) or None
    text = rest.strip().split("=", 2) if rest.startswith("=") and not rest.startswith("==") else None
    if text is not None:  # `=1.4` or `=1.4=py_0`
        return _fuzzy(text[1].strip()) if len(text) > 1 and text[1].strip() else None
    words = rest.split()
    if not words:
        return None
    if re.match(_OP, words[0]):  # `>=1.4,<2` (a build string after a space is left out)
        return words[0]
    return _fuzzy(words[0]) if re.fullmatch(_VERSION, words[0]) else None


def _fuzzy(version: str) -> str:
    """conda's `=1.4` (every 1.4 release: 1.4.*) in PEP 440."""
    return f"=={version}" if version.endswith("*") else f"=={version}.*"
