"""The repository's own modules that its tests would import in place of the installed SDK.

    top_level_modules(env_root, name) -> [str] | None   what distribution `name` installs at the top of
                                                         site-packages (its RECORD, read on the host);
                                                         None: not installed, or unreadable
    found(root, names) -> [path]                         the repository's files and folders of those names
                                                         in a top-level position
    in_repository(root, env, name) -> [path]             the two together (the Adapter's `shadowing`)

A test run imports `acme` from the first sys.path entry that holds it, and several entries are the
repository's own: the root (`python -m pytest` puts the working folder first), `src/` or any folder a
`pythonpath` setting names, and the folder pytest inserts for each test file (the first one upwards
without an `__init__.py`). A copy of the SDK committed there (vendored, or planted: `src/acme/`,
`tests/acme.py`) is then what the tests run, while run.json names the installed version (before: green
on the copy's code, exit 0; the red-team's reproduction). Which folders a run puts on sys.path depends on
configuration and on the runner, so every folder of the repository that is not itself a package (no
`__init__`) counts as one that may be: a package `acme/` there (`__init__.py` or an `__init__` extension),
an extension module `acme.*.so`, or `acme.py` / `acme.pyc` is named. A folder without `__init__` named
`acme` is no shadow (Python takes a regular package anywhere on sys.path over a namespace portion).

Walked: the whole tree but version control, other projects' installed code and tools' state
(install_scripts.SKIPPED_FOLDERS less test data: a copy in `tests/fixtures/` is still importable), never
following a link, at most INSTALL_SCRIPTS_MAX_ENTRIES entries (past that, every name counts: the caller
cannot know).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_name

from agentic_codemod.adapters.python import installed_files
from agentic_codemod.adapters.types import VerificationEnv
from agentic_codemod.config import INSTALL_SCRIPTS_MAX_ENTRIES

NOT_WALKED = frozenset(
    {".git", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", "site-packages"}
)
TOO_MANY = "(the repository has too many files to look through: config.INSTALL_SCRIPTS_MAX_ENTRIES)"


def in_repository(root: Path, env: VerificationEnv, name: str) -> list[str]:
    """What of `root` the tests would import in place of distribution `name` as installed in `env`;
    one line saying so where what it installs cannot be read (fail closed: the caller stops)."""
    names = top_level_modules(env.root, name)
    if names is None:
        return [f"(what {name} installs cannot be read from its RECORD in the environment)"]
    return found(root, names)


def top_level_modules(env_root: Path, name: str) -> list[str] | None:
    """The names distribution `name` installs at the top of site-packages (its RECORD's first path parts:
    packages and modules; not its dist-info, scripts or data), or None where it is not installed or its
    RECORD cannot be read (a link, a FIFO, too large: untrusted_file.read_regular)."""
    wanted = canonicalize_name(name)
    try:
        sites = installed_files.site_packages(env_root)
    except OSError:
        return None
    for site in sites:
        for entry in sorted(os.scandir(site), key=lambda e: e.name):
            if not entry.name.endswith(".dist-info") or installed_files.dist_name(entry.name) != wanted:
                continue
            listed = installed_files.listed(Path(entry.path) / "RECORD")
            return None if listed is None else _top_level(listed)
    return None


def found(root: Path, names: list[str]) -> list[str]:
    """The repository-relative paths of modules named `names` in a top-level position (module docstring),
    in walk order; `[TOO_MANY]` past the walk's bound."""
    wanted = set(names)
    if not wanted:
        return []
    shadows: list[str] = []
    entries = 0
    for top, folders, files in os.walk(root, followlinks=False):
        folders[:] = sorted(f for f in folders if f not in NOT_WALKED)
        entries += len(folders) + len(files)
        if entries > INSTALL_SCRIPTS_MAX_ENTRIES:
            return [TOO_MANY]
        here = Path(top)
        if here != root and any(_module_name(f) == "__init__" for f in files):
            continue  # its children are submodules (`app.acme`), not top-level `acme`
        rel = here.relative_to(root)
        for folder in folders:
            if folder in wanted and _is_package(here / folder):
                shadows.append((rel / folder).as_posix() + "/")
        for file in files:
            if _module_name(file) in wanted:
                shadows.append((rel / file).as_posix())
    return shadows


def _is_package(folder: Path) -> bool:
    """A folder with an `__init__` module (for any interpreter: `__init__.cpython-312-...so` too)."""
    if any(os.path.lexists(folder / f"__init__{suffix}") for suffix in (".py", ".pyc", ".so", ".pyd")):
        return True
    try:
        return any(_module_name(name) == "__init__" for name in os.listdir(folder))
    except OSError:
        return False


def _module_name(file: str) -> str | None:
    """The module a file is, for any interpreter the tests may run with: `acme.py`, `acme.pyc`, and an
    extension of any ABI tag (`acme.cpython-312-x86_64-linux-gnu.so`, `acme.abi3.so`, `acme.pyd`)."""
    if file.endswith((".so", ".pyd")):
        return file.split(".", 1)[0] or None
    for suffix in (".py", ".pyc"):
        if file.endswith(suffix) and len(file) > len(suffix):
            return file[: -len(suffix)]
    return None


def _top_level(listed: set[PurePosixPath]) -> list[str]:
    names: dict[str, None] = {}
    for path in sorted(listed):
        if not path.parts or path.is_absolute() or ".." in path.parts:
            continue
        first = path.parts[0]
        if first.endswith((".dist-info", ".data")) or first == "__pycache__":
            continue
        name = first if len(path.parts) > 1 else _module_name(first)
        if name and name.isidentifier():
            names[name] = None
    return list(names)
