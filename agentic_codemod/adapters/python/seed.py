"""What `python -m venv` seeds a new venv with: pip (and setuptools before Python 3.12), from the wheels
the interpreter ships for ensurepip, installed offline and not byte-compiled.

    find() -> Seed | None     this interpreter's own wheels, found as ensurepip finds them: the
                              distribution's WHEEL_PKG_DIR (Fedora, Debian's python3-pip-whl) when it
                              holds every one, else ensurepip/_bundled in the standard library; None
                              where neither does (Debian's python3 without python3-pip-whl)
    first_in(dirs, names)     the first directory holding a wheel of each name
    Seed.requirements         ["setuptools==65.5.0", "pip==23.2.1"]: what the installer is asked for
    Seed.label                "setuptools 65.5.0, pip 23.2.1": run.json installs[phase]["seed"]
    NONE                      the label recorded where there is no seed

A verification venv is made by `uv venv` or `python -m venv --without-pip`, which seed nothing; tox, nox
and a developer's `python -m venv` give a project pip, and test suites call it (`python -m pip list`).
The seed is installed from those wheels alone (`--no-index --find-links DIR`: no network, no index, the
same in local-only runs), before the install plan, which may upgrade or pin either package as it would in
a venv of `python -m venv`. Not byte-compiled (`Seed.uncompiled`): a test that calls pip compiles what
it imports, in memory (the tests run with PYTHONDONTWRITEBYTECODE), and the environment template every
run copies stays smaller (the acme-app fixture's: 15 MB unseeded, 28 MB seeded, 41 MB compiled). A
template compiles `_distutils_hack` all the same: setuptools' distutils-precedence.pth imports it in every
start of the venv's Python (3 ms from source, 0.5 ms compiled); a venv made without a template imports
it from source.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

NONE = "none: this Python ships no ensurepip wheels"


@dataclass(frozen=True)
class Seed:
    directory: Path
    wheels: tuple[tuple[str, str], ...]  # (name, version), in ensurepip's order

    @property
    def requirements(self) -> list[str]:
        return [f"{name}=={version}" for name, version in self.wheels]

    @property
    def label(self) -> str:
        return ", ".join(f"{name} {version}" for name, version in self.wheels)

    @property
    def uncompiled(self) -> tuple[str, ...]:
        """The seed's import packages a template leaves uncompiled: all but setuptools' small
        `_distutils_hack`, which its .pth file imports in every start of the venv's Python."""
        names = {"pip": ("pip",), "setuptools": ("setuptools", "pkg_resources")}
        return tuple(top for name, _ in self.wheels for top in names.get(name, (name,)))


def names() -> tuple[str, ...]:
    """ensurepip's packages: setuptools left it in Python 3.12."""
    return ("pip",) if sys.version_info >= (3, 12) else ("setuptools", "pip")


@functools.cache
def find() -> Seed | None:
    shared = sysconfig.get_config_var("WHEEL_PKG_DIR")
    bundled = Path(sysconfig.get_path("stdlib")) / "ensurepip" / "_bundled"
    return first_in([*([Path(shared)] if shared else []), bundled], names())


def first_in(directories: list[Path], wanted: tuple[str, ...]) -> Seed | None:
    """The first directory holding a wheel of every `wanted` name, as a Seed."""
    for directory in directories:
        found = _wheels(directory, wanted)
        if found is not None:
            return Seed(directory.resolve(), found)
    return None


def _wheels(directory: Path, wanted: tuple[str, ...]) -> tuple[tuple[str, str], ...] | None:
    """(name, version) of each wanted wheel in `directory` (the last in name order, as ensurepip takes
    it); None unless every one is there."""
    try:
        files = sorted(os.listdir(directory))
    except OSError:
        return None
    versions: dict[str, str] = {}
    for file in files:
        name, _, rest = file.partition("-")
        if file.endswith(".whl") and name in wanted and (directory / file).is_file():
            versions[name] = rest.partition("-")[0]
    if any(name not in versions for name in wanted):
        return None
    return tuple((name, versions[name]) for name in wanted)
