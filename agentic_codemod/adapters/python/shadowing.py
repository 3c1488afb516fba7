"""The repository's own modules that its tests would import in place of the installed SDK.

    top_level_modules(env_root, name) -> [str] | None   what distribution `name` installs at the top of
                                                         site-packages (its RECORD, read on the host);
                                                         None: not installed, or unreadable
    found(root, names) -> [path]                         the repository's files and folders of those names
                                                         in a top-level position
    in_repository(root, env, name) -> [path]             the two together (the Adapter's `shadowing`)
    pytest_settings(root, key) -> [word]                 a pytest setting's words in every file pytest
                                                         may read it from (test_command.py reads them too)

A test run imports `acme` from the first sys.path entry that holds it, and several entries are the
repository's own: the root (`python -m pytest` puts the working folder first), `src/` or any folder a
`pythonpath` setting names, and the folder pytest inserts for each test file (the first one upwards
without an `__init__.py`). A copy of the SDK committed there (vendored, or planted: `src/acme/`,
`tests/acme.py`, `tests/support/acme/` with `pythonpath = ["tests/support"]`) is then what the tests run,
while run.json names the installed version (before: green on the copy's code, exit 0; the red-team's
reproduction). In those folders, a package `acme/` (`__init__.py` or an `__init__` extension), an extension
module `acme.*.so`, or `acme.py` / `acme.pyc` is named. A folder without `__init__` named `acme` is no
shadow (Python takes a regular package anywhere on sys.path over a namespace portion), and neither is a
module elsewhere (`examples/acme.py`, `app/vendors/acme.py`: no test run puts those folders first). Names a
distribution ships by mistake (`tests`, `docs`, `conftest`: STRAY_NAMES) are never the SDK's.

Not read: a PYTHONPATH a tox env or CI job sets, a `sys.path.insert` in conftest.py (the repository's own
test code, SECURITY.md); what the test process then imports is asked by the canary (test_facts.WHERE_SDK).
Walked: the whole tree but version control, other projects' installed code and tools' state, never
following a link, at most INSTALL_SCRIPTS_MAX_ENTRIES entries (past that, every name counts: the caller
cannot know).
"""

from __future__ import annotations

import configparser
import fnmatch
import os
import posixpath
import tomllib
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_name

from agentic_codemod.adapters.python import installed_files
from agentic_codemod.adapters.types import VerificationEnv
from agentic_codemod.config import INSTALL_SCRIPTS_MAX_ENTRIES

NOT_WALKED = frozenset(
    {".git", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", "site-packages"}
)
TOO_MANY = "(the repository has too many files to look through: config.INSTALL_SCRIPTS_MAX_ENTRIES)"
# Names a distribution sometimes ships at the top of site-packages by mistake (its own tests, docs,
# examples): the repository's folders of those names are its own, whatever the SDK installs.
STRAY_NAMES = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "example", "benchmarks", "scripts", "tools"}
    | {"conftest", "setup", "build"}
)
CONFIG_MAX_BYTES = 1_000_000


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
    """The repository-relative paths of modules named `names` in a folder a test run may put on sys.path
    (on_sys_path), in folder order; `[TOO_MANY]` past the walk's bound."""
    wanted = set(names) - STRAY_NAMES
    if not wanted:
        return []
    folders = on_sys_path(root)
    if folders is None:
        return [TOO_MANY]
    shadows: list[str] = []
    for folder in folders:
        try:
            entries = sorted(os.listdir(root / folder))
        except OSError:
            continue
        for entry in entries:
            rel = entry if folder == "." else f"{folder}/{entry}"
            path = root / rel
            if entry in wanted and path.is_dir() and not path.is_symlink() and _is_package(path):
                shadows.append(f"{rel}/")
            elif _module_name(entry) in wanted and not path.is_dir():
                shadows.append(rel)
    return shadows


def on_sys_path(root: Path) -> list[str] | None:
    """The repository's folders a test run may put first on sys.path (repository-relative, "." the root):
    the root (`python -m pytest`, the working folder), `src/`, each folder a pytest `pythonpath` setting
    names, and the folder pytest inserts for each test file or conftest.py (the first one upwards without
    an `__init__` module: pytest's default import mode); one that leads out of the repository through a
    link is never listed (a host folder's names would reach the reason). None past
    INSTALL_SCRIPTS_MAX_ENTRIES."""
    folders: dict[str, None] = {".": None, "src": None}
    folders.update(dict.fromkeys(_pythonpath_settings(root)))
    patterns = ("test*.py", "*_test.py", "conftest.py", *pytest_settings(root, "python_files"))
    entries = 0
    for top, subfolders, files in os.walk(root, followlinks=False):
        subfolders[:] = sorted(f for f in subfolders if f not in NOT_WALKED)
        entries += len(subfolders) + len(files)
        if entries > INSTALL_SCRIPTS_MAX_ENTRIES:
            return None
        if any(_is_test_file(f, patterns) for f in files):
            folders[_basedir(root, Path(top))] = None
    inside = root.resolve()
    return [f for f in folders if (root / f).is_dir() and (root / f).resolve().is_relative_to(inside)]


def _is_test_file(name: str, patterns: tuple[str, ...]) -> bool:
    """A file pytest collects by its name (its defaults, and the `python_files` the repository sets)."""
    return name.endswith(".py") and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def _basedir(root: Path, folder: Path) -> str:
    """The folder pytest inserts for a test file in `folder`: the first one upwards that is no package."""
    while folder != root and _is_package(folder):
        folder = folder.parent
    return folder.relative_to(root).as_posix()


def pytest_settings(root: Path, key: str) -> list[str]:
    """The words of pytest's setting `key` wherever pytest may read it: pyproject.toml's
    [tool.pytest.ini_options] and [tool.pytest] (a list, or one string of words), and the [pytest] /
    [tool:pytest] sections of pytest.ini, tox.ini and setup.cfg (an ini value of words over one or more
    lines). Every file counts, whichever pytest takes; one that cannot be read gives nothing."""
    words: list[str] = []
    pyproject = _small_text(root / "pyproject.toml")
    if pyproject:
        try:
            tool = tomllib.loads(pyproject).get("tool", {})
        except tomllib.TOMLDecodeError:
            tool = {}
        pytest = tool.get("pytest", {}) if isinstance(tool, dict) else {}
        for table in (pytest.get("ini_options", {}), pytest) if isinstance(pytest, dict) else ():
            value = table.get(key) if isinstance(table, dict) else None
            items = value if isinstance(value, list) else [value] if isinstance(value, str) else []
            words += [w for item in items if isinstance(item, str) for w in item.split()]
    for name in ("pytest.ini", "tox.ini", "setup.cfg"):
        text = _small_text(root / name)
        if not text:
            continue
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        for section in ("pytest", "tool:pytest"):
            if parser.has_option(section, key):
                words += parser.get(section, key).split()
    return words


def _pythonpath_settings(root: Path) -> list[str]:
    """The folders pytest's `pythonpath` setting names (pytest_settings), inside the repository."""
    found = [posixpath.normpath(w.rstrip("/")) for w in pytest_settings(root, "pythonpath")]
    return [f for f in found if not f.startswith(("/", "..")) and f != "."]


def _small_text(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > CONFIG_MAX_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


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
