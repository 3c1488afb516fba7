"""The dependency files of a repository, each checked before any tool reads it (the repository is input).

    read_dependency_files(root) -> DependencyFiles(files, refused)
    is_dependency_file(path) -> bool
    checked_dependency_files(root) -> files      (InputError naming every refusal)

The files: FILE_PATTERNS and LOCKFILES at the root (and its requirements/ folder), plus every file they
reach: `-r` / `-c` includes of requirements files, setup.cfg `file:` and pyproject.toml
`[tool.setuptools.dynamic]` dependency files; tox.ini deps lines are checked as requirement lines.
Refused, with the file and line, before pip sees them:

    a file, or a folder on its way, that is a symlink leading outside the repository
    -r / -c / -e, a path requirement, a `file:` URL, a Poetry `path`, a setuptools `file:` that
    resolves outside the repository (by `..`, an absolute path or a symlink); -r / -c from a URL
    --index-url, --extra-index-url, -i, --find-links, -f, --trusted-host: a repository may not choose
    where packages come from (the index is the tool's configuration: packages.index_url / local)
    ${VAR} (pip would expand the environment), unknown options, text that is not UTF-8

A refused file is never read: its contents reach no artifact.
"""

from __future__ import annotations

import glob
import os
import re
import urllib.parse
from pathlib import Path, PurePosixPath
from typing import Any

import tomlkit

from agentic_codemod.adapters.python import (
    FILE_PATTERNS,
    LOCKFILES,
    pep508,
    requirement_options,
    setup_cfg,
    tox_ini,
)
from agentic_codemod.adapters.types import DependencyFiles, Refusal
from agentic_codemod.config import CI_CONFIG_MAX_BYTES
from agentic_codemod.errors import InputError

# Options by which a requirements file would choose where packages come from.
INDEX_OPTIONS = frozenset(
    {"--index-url", "--pypi-url", "--extra-index-url", "--find-links", "--trusted-host"}
)
# Files that pip reads as requirements-file syntax (the rest are TOML, setup.cfg, Python or lockfiles).
REQUIREMENTS_SUFFIXES = (".txt", ".in", ".pip")
SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
PATH_MAX_BYTES, NAME_MAX_BYTES = 4096, 255  # Linux's PATH_MAX and NAME_MAX
HINT = (
    "keep every requirements, constraints, editable and file: path inside the repository (no symlink out "
    "of it), and leave package indexes to the tool's configuration (packages.index_url / packages.local)"
)


def is_dependency_file(path: str) -> bool:
    """Whether a path names a dependency, constraint or lock file (by name, at any depth, any case)."""
    pure = PurePosixPath(path.lower())
    return any(pure.match(pattern.lower()) for pattern in (*FILE_PATTERNS, *LOCKFILES))


def checked_dependency_files(root: Path) -> list[str]:
    """read_dependency_files, or an InputError naming each refused file and line."""
    found = read_dependency_files(root)
    if found.refused:
        listed = "; ".join(str(r) for r in found.refused[:10])
        more = f" (and {len(found.refused) - 10} more)" if len(found.refused) > 10 else ""
        raise InputError(f"dependency files refused before any tool reads them: {listed}{more}", hint=HINT)
    return found.files


def check_requirement_lines(root: Path, source: str, lines: list[str]) -> None:
    """Requirement lines from elsewhere (a tox testenv, a nox session, the task's verification) checked
    as a requirements file at the root would be; InputError naming `source` and each refusal."""
    walk = _Walk(root.resolve())
    options, problems = requirement_options.scan("\n".join(lines))
    for line, problem in problems:
        walk.refuse(source, line, problem)
    for option in options:
        walk.option(source, walk.root, option)
    if walk.refused:
        listed = "; ".join(str(r) for r in walk.refused[:10])
        raise InputError(f"test requirements refused before any tool reads them: {listed}", hint=HINT)


def read_dependency_files(root: Path) -> DependencyFiles:
    """Every dependency file the adapter reads in `root`, and every refusal (never raises)."""
    walk = _Walk(root.resolve())
    lockfiles_beside = [f"{folder}/{name}" for folder in ("requirements",) for name in LOCKFILES]
    for pattern in (*FILE_PATTERNS, *LOCKFILES, *lockfiles_beside):  # update_lockfiles looks there too
        for path in sorted(walk.root.glob(pattern)):
            walk.visit(path.relative_to(walk.root).as_posix())
        literal = walk.root / pattern  # glob passes over a dangling link of a plain name; a link is checked
        if not glob.has_magic(pattern) and literal.is_symlink() and not literal.exists():
            walk.visit(pattern)
    return DependencyFiles(files=sorted(walk.files), refused=walk.refused)


class _Walk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: set[str] = set()
        self.refused: list[Refusal] = []

    def visit(self, rel: str, *, requirements: bool = False) -> None:
        """Check one file and what it reaches; `requirements`: pip or setuptools reads it as requirement
        lines whatever its name (an include, a setuptools dependency file)."""
        if rel in self.files:
            return
        self.files.add(rel)
        path = self.root / rel
        real = path.resolve()
        if not self.inside(real):
            self.refuse(rel, None, f"resolves outside the repository through a symlink ({_link(path)})")
            return
        self.files.add(real.relative_to(self.root).as_posix() if real != self.root else rel)  # what is read
        name = PurePosixPath(rel).name
        if (requirements or name.endswith(REQUIREMENTS_SUFFIXES)) and path.is_file():
            self.requirements(rel, path)
        elif name == "pyproject.toml" and path.is_file():
            self.pyproject(rel, path)
        elif name == "setup.cfg" and path.is_file():
            self.setup_cfg(rel, path)
        elif name == "tox.ini" and path.is_file():
            self.tox_ini(rel, path)

    def requirements(self, rel: str, path: Path) -> None:
        try:
            text = requirement_options.decode(path.read_bytes())
        except (OSError, ValueError) as exc:
            self.refuse(rel, None, f"cannot be read safely: {exc}")
            return
        options, problems = requirement_options.scan(text)
        for line, problem in problems:
            self.refuse(rel, line, problem)
        for option in options:
            self.option(rel, path.parent, option)

    def option(self, rel: str, directory: Path, option: requirement_options.Option) -> None:
        name, value, line = option.name, option.value, option.line
        if name != "requirement" and (not_a_path := _not_a_path(file_url_path(value))) is not None:
            self.refuse(rel, line, f"{name} {value[:80]!r}: {not_a_path}")
        elif name in INDEX_OPTIONS:
            self.refuse(rel, line, f"{name}: a repository may not choose where packages come from")
        elif name in ("--requirement", "--constraint"):
            if SCHEME_RE.match(value) and not value.lower().startswith("file:"):
                self.refuse(rel, line, f"{name} {value}: includes a file from outside the repository")
                return
            target = self.location(file_url_path(value), directory)
            if target is None:
                self.refuse(rel, line, f"{name} {value}: resolves outside the repository")
            elif target.is_file():
                self.visit(target.relative_to(self.root).as_posix(), requirements=True)
        elif name == "--editable" or name == "requirement":
            path = _local_path(value, editable=name == "--editable")
            if path is not None and (not_a_path := _not_a_path(path)) is not None:
                self.refuse(rel, line, f"{_shown(name)} {value[:80]!r}: {not_a_path}")
            elif path is not None and self.location(path, self.root) is None:
                self.refuse(rel, line, f"{_shown(name)} {value}: resolves outside the repository")

    def pyproject(self, rel: str, path: Path) -> None:
        try:
            doc = tomlkit.parse(path.read_text(encoding="utf-8")).unwrap()
        except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
            return  # extraction reports a broken pyproject.toml, naming it
        project = _table(doc, "project")
        strings = list(_strings(project.get("dependencies")))
        strings += [s for extra in _table(project, "optional-dependencies").values() for s in _strings(extra)]
        strings += [s for group in _table(doc, "dependency-groups").values() for s in _strings(group)]
        strings += list(_strings(_table(doc, "build-system").get("requires")))
        for text in strings:
            self.option(rel, path.parent, requirement_options.Option(0, "requirement", text))
        poetry = _table(_table(doc, "tool"), "poetry")
        for table in _poetry_dependency_tables(poetry):
            for spec in table.values():
                for entry in spec if isinstance(spec, list) else [spec]:
                    if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                        self.file_reference(rel, "path", entry["path"], dependency=False)
        dynamic = _table(_table(_table(doc, "tool"), "setuptools"), "dynamic")
        for key, spec in dynamic.items():
            specs = spec.values() if key == "optional-dependencies" and isinstance(spec, dict) else [spec]
            for entry in specs:
                files = entry.get("file") if isinstance(entry, dict) else None
                for file in [files] if isinstance(files, str) else list(_strings(files)):
                    self.file_reference(rel, "file", file, dependency="dependencies" in key)

    def setup_cfg(self, rel: str, path: Path) -> None:
        try:
            parser = setup_cfg.read(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return  # extraction reports it
        for section in parser.sections():
            for key, value in parser.items(section, raw=True):
                installs = section == "options" and setup_cfg.option_key(section, key) == "install_requires"
                dependency = installs or section == "options.extras_require"  # `install-requires` too
                if value.strip().startswith("file:"):
                    for file in value.strip().removeprefix("file:").split(","):
                        self.file_reference(rel, "file:", file.strip(), dependency=dependency)
                elif dependency:
                    for text in setup_cfg.requirement_texts(value):
                        self.option(rel, path.parent, requirement_options.Option(0, "requirement", text))

    def tox_ini(self, rel: str, path: Path) -> None:
        """tox passes deps lines to pip as requirements-file lines: checked as such, at their own line; so
        are the files setenv, constraints and install_command add to every install (`PIP_CONSTRAINT=FILE`
        read as `-c FILE`, tox_ini.outside_deps_lines)."""
        try:
            if path.stat().st_size > CI_CONFIG_MAX_BYTES:  # as ci_config reads it: no reading is cut short
                limit = CI_CONFIG_MAX_BYTES
                self.refuse(rel, None, f"larger than {limit} bytes (config.CI_CONFIG_MAX_BYTES)")
                return
            content = path.read_text(encoding="utf-8")
        except (OSError, ValueError) as exc:
            self.refuse(rel, None, f"cannot be read safely: {exc}")
            return
        lines: list[list[str]] = [[] for _ in content.splitlines()]
        try:
            for number, text, _section in tox_ini.deps_lines(content):
                lines[number - 1].append(tox_ini.substituted(text))
            for number, text in tox_ini.outside_deps_lines(content):  # `-c a.txt -c b.txt`: one line
                lines[number - 1].append(text)
        except tox_ini.TooComplex as exc:  # its deps cannot be read within the budget: none is passed on
            self.refuse(rel, None, f"{exc}; simplify the file, or leave it out of the task")
            return
        options, problems = requirement_options.scan("\n".join(" ".join(texts) for texts in lines))
        for line, problem in problems:
            self.refuse(rel, line, problem)
        for option in options:
            self.option(rel, path.parent, option)

    def file_reference(self, rel: str, kind: str, value: str, *, dependency: bool) -> None:
        target = self.location(value, self.root)
        if target is None:
            self.refuse(rel, None, f"{kind} {value}: resolves outside the repository")
        elif dependency and target.is_file():
            self.visit(target.relative_to(self.root).as_posix(), requirements=True)

    def location(self, value: str, directory: Path) -> Path | None:
        """The path `value` names (relative to `directory`) when it stays inside the repository."""
        lexical = Path(os.path.normpath(directory / value))
        try:
            resolved = lexical.resolve()
        except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13): nowhere inside
            return None
        if not self.inside(lexical) or not self.inside(resolved):
            return None
        return lexical

    def inside(self, path: Path) -> bool:
        return path == self.root or path.is_relative_to(self.root)

    def refuse(self, rel: str, line: int | None, reason: str) -> None:
        self.refused.append(Refusal(rel, line or None, reason))


def _not_a_path(value: str) -> str | None:
    """Why a file option's value (a `file:` URL decoded) names no file any file system holds (a NUL byte,
    a name past the limits), else None: refused at its line rather than failing the run where a path is
    made of it."""
    if "\0" in value:
        return "holds a NUL byte"
    if len(value.encode("utf-8", "surrogateescape")) > PATH_MAX_BYTES or any(
        len(part.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES for part in re.split(r"[\\/]", value)
    ):
        return f"longer than a path ({PATH_MAX_BYTES} bytes) or a name ({NAME_MAX_BYTES}) can be"
    return None


def _local_path(value: str, *, editable: bool) -> str | None:
    """The local path a requirement or `-e` value makes pip read, if any (URLs to other hosts: None)."""
    requirement = None if editable else pep508.parse(value)
    if requirement is not None:
        url = requirement.url or ""
        return file_url_path(url) if url.lower().startswith("file:") else None
    text = value.split(";")[0].strip()
    if SCHEME_RE.match(text) and not re.match(r"^[A-Za-z]:[\\/]", text):
        return file_url_path(text) if text.lower().startswith("file:") else None
    text = re.sub(r"\[[^\]]*\]$", "", text)
    if editable or "/" in text or "\\" in text or text.startswith((".", "~")):
        return text
    return None


def file_url_path(value: str) -> str:
    """The path a `file:` URL names as pip reads it (another host's: made absolute, so no repository path
    matches it); any other value as it is."""
    if not value.lower().startswith("file:"):
        return value
    from urllib.request import url2pathname  # here: it imports ssl and http.client

    try:
        parsed = urllib.parse.urlsplit(value)
    except ValueError:  # `file://[::1/x`: no URL, so no file any install reads; refused as outside
        return "/" + value
    return url2pathname(parsed.path) if parsed.netloc in ("", "localhost") else "/" + value


def _link(path: Path) -> str:
    return os.readlink(path) if path.is_symlink() else "a folder on its way is a symlink"


def _shown(name: str) -> str:
    return "requirement" if name == "requirement" else name


def _poetry_dependency_tables(poetry: dict[str, Any]) -> list[dict[str, Any]]:
    tables = [_table(poetry, "dependencies"), _table(poetry, "dev-dependencies")]
    return tables + [
        _table(g, "dependencies") for g in _table(poetry, "group").values() if isinstance(g, dict)
    ]


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _table(parent: Any, key: str) -> dict[str, Any]:
    value = parent.get(key) if isinstance(parent, dict) else None
    return value if isinstance(value, dict) else {}
