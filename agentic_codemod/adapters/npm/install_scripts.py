"""The SDK's pins in the files that install packages outside package.json: container images, pre-commit hooks
and CI jobs (which files and lines: adapters/install_scripts.py; conda environments hold no npm package).

    found(root, sdk) -> [Dependency]    every pin of the SDK there, each uneditable

A pin is `name@range` in a command that names an installer (`RUN npm install -g acme-sdk@1.4.0`, `yarn add
acme-sdk@^1.4`, `npx acme-sdk@1.4.0`; quoted with spaces: `"acme-sdk@>=1.4 <2"`) or in a hook's list
(`additional_dependencies: ["acme-sdk@1.4.0"]`). A version from a variable is read through the file's own
literal assignments (adapters/install_scripts.py); one that stays a variable is a version nobody can read,
which counts as excluding the target. A dist-tag (`@latest`, `@next`) or no `@` is no pin.

As in the Python adapter (adapters/python/install_scripts.py): the tool never edits these files, so each pin
is uneditable; in an image or a hook (role dev) one that excludes the target stops the run before any edit
(requires_human), in a CI job (role constraint) it is left as it is and named in the merge request.
"""

from __future__ import annotations

import re
from pathlib import Path

from agentic_codemod.adapters import install_scripts
from agentic_codemod.adapters.install_scripts import BUILD, CI, HOOK, IMAGE, PACKAGE, Script
from agentic_codemod.adapters.npm import package_json, roles
from agentic_codemod.adapters.npm.dependency_files import read_dependency_files
from agentic_codemod.models import Dependency

KINDS = frozenset({IMAGE, HOOK, CI, BUILD, PACKAGE})  # a conda environment holds no npm package
TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec"})  # a package.json there is test data

_NAME = r"(?P<name>(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)"
_START = r"(?<![A-Za-z0-9._/@~-])"
# `name@range` bare (up to a space or a shell or YAML delimiter), or quoted whole with spaces inside.
PIN = re.compile(rf"{_START}{_NAME}@(?P<spec>\$\{{\{{[^}}\n]{{0,200}}\}}\}}|[^\s'\"`;&|)(\],]+)")
QUOTED_PIN = re.compile(rf"(?P<quote>['\"]){_NAME}@(?P<spec>[^'\"]+)(?P=quote)")
# What a range starts with: a comparator, a caret or tilde, a digit, `v`, `x`, `*`, or a variable.
RANGE_START = re.compile(r"\s*(?:[<>=~^*xX0-9]|v[0-9]|\$)")


def found(root: Path, sdk: str) -> list[Dependency]:
    """Every pin of `sdk` in the install scripts of `root`, in file then line order (RequiresHuman where one
    cannot be read for sure: adapters/install_scripts.py)."""
    scripts = install_scripts.scripts(root, KINDS, install_scripts.mentioning(re.escape(sdk)))
    pins = [d for script in scripts if script.kind != PACKAGE for d in _pins(script, sdk)]
    packages = [s for s in scripts if s.kind == PACKAGE and not _test_data(s.file)]
    read = set(read_dependency_files(root).files) if packages else set()  # the workspaces: declarations
    return pins + [d for script in packages if script.file not in read for d in _in_a_package(script, sdk)]


def _test_data(file: str) -> bool:
    return not TEST_FOLDERS.isdisjoint(part.lower() for part in Path(file).parts[:-1])


def _in_a_package(script: Script, sdk: str) -> list[Dependency]:
    """The SDK's declarations in a package.json below the root that is no workspace (a lerna package, an
    example): uneditable pins with their fields' roles (an override is kept and named); a file that is no
    package.json npm could read is no pin."""
    try:
        found = package_json.find(script.text, sdk) + package_json.aliases(script.text, sdk)
    except ValueError:
        return []
    return [
        install_scripts.declared(
            script,
            script.file,
            d.line,
            sdk,
            d.specifier,
            roles.role(d.section),
            f"{script.file} line {d.line}: {d.section}.{d.name} is {d.specifier[:200]!r}, in {script.kind} "
            "that is no workspace of the root's, which the bump does not edit",
        )
        for d in sorted(found, key=lambda d: d.start)
    ]


def _pins(script: Script, sdk: str) -> list[Dependency]:
    pins = []
    assignments = install_scripts.Assignments(script)
    for number, line in script.lines:
        if sdk not in line:
            continue
        values = assignments.at(number)
        for name, written, specifier in _on_line(line):
            if name != sdk:
                continue
            pins.append(
                install_scripts.pin(
                    script, number, name, written, install_scripts.resolved(specifier, values)
                )
            )
    return pins


def _on_line(line: str) -> list[tuple[str, str, str]]:
    """(name, the pin as written, its range) of each pin on one line."""
    quoted = [(m["name"], m[0].strip("'\""), m["spec"].strip()) for m in QUOTED_PIN.finditer(line)]
    spans = [m.span() for m in QUOTED_PIN.finditer(line)]
    bare = [
        (m["name"], m[0], m["spec"])
        for m in PIN.finditer(line)
        if not any(start <= m.start() < end for start, end in spans)
    ]
    return [(n, w, s) for n, w, s in quoted + bare if RANGE_START.match(s)]
