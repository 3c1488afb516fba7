"""The repository's own modules that its tests would import in place of the installed SDK.

    top_level_modules(env_root, name) -> [str] | None   what distribution `name` installs at the top of
                                                         site-packages, or below a namespace it shares
                                                         (`zope/interface`; its RECORD, read on the
                                                         host); None: not installed, or unreadable
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
distribution ships by mistake (`tests`, `docs`, `conftest`: STRAY_NAMES) are never the SDK's. Where the
SDK sits in a namespace package it shares (no `__init__` of the namespace in its RECORD: zope.interface's
`zope/`), its own package in it is the name (`zope/interface`), and the repository's portion of the
namespace is no copy unless it is a plain package, which hides the whole namespace (one that extends its
`__path__`, as pkg_resources' and pkgutil's declarations do, shares it).

Not read: a PYTHONPATH a tox env or CI job sets, a `sys.path.insert` in conftest.py (the repository's own
test code, SECURITY.md); what the test process then imports is asked by the canary (test_facts.WHERE_SDK).
Walked: the whole tree but version control, other projects' installed code and tools' state, never
following a link, at most INSTALL_SCRIPTS_MAX_ENTRIES entries (past that, every name counts: the caller
cannot know).
"""

from __future__ import annotations

import ast
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
    """The repository-relative paths of modules named `names` (top_level_modules: `acme`, or
    `zope/interface` inside a namespace) in a folder a test run may put on sys.path (on_sys_path), in
    folder order; `[TOO_MANY]` past the walk's bound."""
    wanted: dict[str, set[str]] = {}  # the folder below a sys.path entry -> the names wanted in it
    for name in names:
        parent, _, last = name.rpartition("/")
        if name.partition("/")[0] not in STRAY_NAMES:
            wanted.setdefault(parent, set()).add(last)
    if not wanted:
        return []
    folders = on_sys_path(root)
    if folders is None:
        return [TOO_MANY]
    shadows: list[str] = []
    namespaces = sorted({"/".join(b.split("/")[:n]) for b in wanted if b for n in range(1, b.count("/") + 2)})
    for folder in folders:
        for namespace in namespaces:  # a package there that does not share the namespace hides the SDK
            rel = namespace if folder == "." else f"{folder}/{namespace}"
            if _real_folders(root, folder, namespace) and _is_package(root / rel) and not _shares(root / rel):
                shadows.append(f"{rel}/")
            if os.path.lexists(root / f"{rel}.pkg"):  # pkgutil.extend_path adds the folders it names
                shadows.append(f"{rel}.pkg")
        for below, names_here in sorted(wanted.items()):
            where = posixpath.join(folder, below) if below else folder
            if below and not _real_folders(root, folder, below):
                continue
            try:
                entries = sorted(os.listdir(root / where))
            except OSError:
                continue
            for entry in entries:
                rel = entry if where == "." else f"{where}/{entry}"
                path = root / rel
                if entry in names_here and path.is_dir() and not path.is_symlink() and _is_package(path):
                    shadows.append(f"{rel}/")
                elif _module_name(entry) in names_here and not path.is_dir():
                    shadows.append(rel)
    return shadows


def _shares(package: Path) -> bool:
    """Whether a package's `__init__.py` extends its `__path__` over every portion of its namespace
    (pkg_resources' declare_namespace, pkgutil's extend_path, called), as zope.schema's `src/zope/` does,
    and touches `__path__` no other way, with no other `__init__` module beside it; a plain package of that
    name is imported instead of the whole namespace (helper-48: the word in a comment, or `__path__` set
    to a folder of its own, passed a text search)."""
    try:
        others = [f for f in os.listdir(package) if _module_name(f) == "__init__" and f != "__init__.py"]
    except OSError:
        return False
    text = _small_text(package / "__init__.py")
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    nodes = list(ast.walk(tree))
    declares = any(
        isinstance(n, ast.Call) and _called(n) in ("declare_namespace", "extend_path") for n in nodes
    )
    kept: set[int] = set()  # the two `__path__`s of `__path__ = extend_path(__path__, __name__)`
    for n in nodes:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.Call):
            args = n.value.args
            if (
                _names_path(n.targets[0])
                and _called(n.value) == "extend_path"
                and args
                and _names_path(args[0])
            ):
                kept |= {id(n.targets[0]), id(args[0])}
    # any other use of `__path__` (an assignment, `.insert(0, ...)`, `globals()["__path__"]`) may put a
    # folder of the repository's first
    return declares and not others and all(id(n) in kept for n in nodes if _names_path(n))


def _names_path(node: ast.AST) -> bool:
    return (
        (isinstance(node, ast.Name) and node.id == "__path__")
        or (isinstance(node, ast.Attribute) and node.attr == "__path__")
        or (isinstance(node, ast.Constant) and node.value == "__path__")
    )


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _real_folders(root: Path, folder: str, below: str) -> bool:
    """Whether each folder of `below` (a namespace's parts) under `folder` is a folder, no link."""
    path = root / folder
    for part in below.split("/"):
        path = path / part
        if path.is_symlink() or not path.is_dir():
            return False
    return True


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
    """What the distribution's modules are imported by, as paths below site-packages: a module or a
    package (`acme`, `acme_compat`), or, inside a namespace package the distribution shares (no
    `__init__` of its own there: zope.interface installs `zope/interface/` beside zope.schema's), its own
    package or module in it (`zope/interface`). A repository's own portion of the namespace (zope.schema's
    `src/zope/`) is then no copy of the SDK; its `src/zope/interface/` would be (helper-45)."""
    inits = {path.parent for path in listed if _module_name(path.name) == "__init__"}
    roots: dict[str, None] = {}
    for path in sorted(listed):
        parts = path.parts
        if not parts or path.is_absolute() or ".." in parts:
            continue
        if parts[0].endswith((".dist-info", ".data")) or parts[0] == "__pycache__":
            continue
        for depth in range(1, len(parts) + 1):
            if depth == len(parts):  # a module file in a namespace (or at the top)
                name = _module_name(parts[-1])
                if name and name.isidentifier() and name != "__init__":
                    roots["/".join((*parts[:-1], name))] = None
                break
            if not parts[depth - 1].isidentifier() or parts[depth - 1] == "__pycache__":
                break
            if PurePosixPath(*parts[:depth]) in inits:  # a regular package: imported from here
                roots["/".join(parts[:depth])] = None
                break
    return list(roots)
