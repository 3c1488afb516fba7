"""What the verification environment installs for a repository (pure: reads files, runs nothing).

    runtime              the runtime requirements files (requirements.txt, requirements/base.txt,
                         prod, main, common, runtime, install ...; never test, dev, docs, lint, min,
                         constraints or lock files)  -r FILE
    the project          a pyproject.toml with [build-system], or a setup.py: -e . (with the test
                         extras whose contents cannot be read: -e .[testing]). A PEP 621 project without
                         a build system (an application) gets its [project] dependencies directly.
    test requirements    ONE source, the narrowest the project declares (test_requirements.py): the
                         task's or config's verification override, the tox testenv or nox session that
                         runs the tests, the PEP 735 test group, the test extra, a test requirements
                         file, dev as a last resort; lint-only packages left out.
    test runner          settings.python.extra_test_requirements (default: pytest) or stestr, when the test
                         command runs it and nothing above already declares it.

Poetry dependency groups are not installable by pip: a Poetry group chosen as the test source is
translated to PEP 508 requirement strings (poetry_groups.py), and what cannot be translated (git,
path, url) is left out and recorded.

Every dependency file is checked first (dependency_files.py), and so is every line a test source yields:
a refused one is an InputError naming the file (or source) and line, raised before pip is given anything.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomlkit
from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import Requirement

from agentic_codemod.adapters.python import (
    pep508,
    pyproject,
    ranges,
    requirement_options,
    requirements_file,
    roles,
    test_requirements,
    uv_workspace,
)
from agentic_codemod.adapters.python.dependency_files import (
    SCHEME_RE,
    check_requirement_lines,
    checked_dependency_files,
    file_url_path,
)
from agentic_codemod.adapters.python.requirement_options import Option
from agentic_codemod.adapters.python.test_command import detect_test_command
from agentic_codemod.config import Settings
from agentic_codemod.errors import CodemodError

# Words in a requirements file name that say "runtime" (test, dev, docs, lint, min ... do not).
RUNTIME_FILE_ROLES = frozenset(
    {"base", "common", "main", "prod", "production", "runtime", "install", "requirements"}
)
# Runner -> the requirement that provides it, when the plan does not declare it already.
RUNNER_PACKAGES = {"stestr": "stestr"}


@dataclass(frozen=True)
class InstallPlan:
    requirement_files: list[str] = field(default_factory=list)
    project: str | None = None  # ".", ".[test,dev]"
    groups: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)  # requirement strings given directly
    constraint_files: list[str] = field(default_factory=list)  # -c FILE of a tox/nox test source
    editables: list[str] = field(default_factory=list)  # -e PATH of a tox/nox test source
    test_source: str = ""  # where the test requirements came from ("" : none found)
    left_out: list[str] = field(default_factory=list)  # lint-only requirements not installed
    unread: list[str] = field(default_factory=list)  # the tests' install reads it, this one cannot
    # Names installed afresh even where the environment already holds a version that satisfies them:
    # the bump's pins, which must be the index's files, not what the baseline's build backend may have
    # left under their name. uv: --reinstall-package NAME. pip has no per-package form: the whole call
    # gets --force-reinstall --no-deps, so a plan with reinstall names only the pins (after a plain
    # install of them has brought what they require).
    reinstall: list[str] = field(default_factory=list)
    # The host writes the bytecode of what this install writes (the bump's: installed_files.fresh_bytecode
    # of every distribution it added or replaced), so the installer compiles nothing.
    host_compiles: bool = False

    @property
    def empty(self) -> bool:
        return not (
            self.requirement_files
            or self.project
            or self.groups
            or self.requirements
            or self.constraint_files
            or self.editables
        )

    def pip_args(self) -> list[str]:
        args = [arg for file in self.requirement_files for arg in ("-r", file)]
        args += [arg for file in self.constraint_files for arg in ("-c", file)]
        args += ["-e", self.project] if self.project else []
        args += [arg for path in self.editables for arg in ("-e", path)]
        args += [arg for group in self.groups for arg in ("--group", group)]
        # Requirement strings come from the repository: after `--`, pip reads none of them as an option.
        return args + (["--", *self.requirements] if self.requirements else [])


def plan_install(root: Path, settings: Settings) -> InstallPlan:
    checked_dependency_files(root)  # InputError when any dependency file is refused
    files = requirement_files(root)
    project = _pyproject(root)
    installable = ("build-system" in project and not _poetry_app(project)) or (root / "setup.py").is_file()
    source = test_requirements.choose(root, project, installable, settings)
    if source is not None and source.lines:
        check_requirement_lines(root, source.label, source.lines)
    test = _pip_lines(source.lines if source else [])
    extras = list(dict.fromkeys([*(source.extras if source else []), *test.project_extras]))
    direct = ([] if installable else _project_requirements(project, [])) + test.requirements
    files += [f for f in test.files if f not in files]
    declared = _declared_names(root, files, project, installable) | _names(direct)
    command = detect_test_command(root, settings)
    if command is not None and command.runner == "pytest":
        extra = settings.python.extra_test_requirements
        extra = list(test_requirements.EXTRA_TEST_REQUIREMENTS) if extra is None else extra
        direct += [r for r in extra if not _names([r]) <= declared]
    if command is not None and command.runner in RUNNER_PACKAGES:
        needed = RUNNER_PACKAGES[command.runner]
        direct += [] if _names([needed]) <= declared else [needed]
    return InstallPlan(
        requirement_files=files,
        project=(f".[{','.join(extras)}]" if extras else ".") if installable else None,
        requirements=direct,
        constraint_files=test.constraints,
        editables=test.editables,
        test_source=source.label if source else "",
        left_out=source.left_out if source else [],
        unread=source.unread if source else [],
    )


def asked_for(root: Path, settings: Settings, canonical: str) -> list[tuple[str, str, str | None]]:
    """(where, requirement as written, its specifier; None: a URL or path, whose version cannot be read)
    of every requirement on `canonical` the tests' install of this tree asks for, whose markers hold
    here: the plan's own requirement strings (a tox env's or nox session's, a project's that cannot be
    installed itself), the lines of the requirement and constraint files it reads, followed through `-r`
    and `-c` (files a tool compiled are left to their own tool, workflow/declarations.stale_locks), and
    what a local editable it installs declares (`-e ./plugin` in a tox env, a nox session or one of those
    files: its pyproject.toml, setup.cfg, setup.py)."""
    plan = plan_install(root, settings)
    where = plan.test_source or "the tests' install"
    found = [
        _asked(where, text, requirement)
        for text in plan.requirements
        if (requirement := pep508.parse(text)) is not None and _applies(requirement, canonical)
    ]
    files = [root / f for f in [*plan.requirement_files, *plan.constraint_files]]
    found += _asked_in_files(root, files, canonical)
    for editable in plan.editables:
        found += _asked_by_editable(root, editable, canonical)
    return found + _asked_by_resolver(root, _pyproject(root), canonical)


def _asked_by_resolver(
    root: Path, project: dict[str, Any], canonical: str
) -> list[tuple[str, str, str | None]]:
    """What uv, PDM and Hatch install for the project by their own tables, which the tool's own install
    does not read, so a pin there would pass here and hold the project's install on the old version:
    every SDK entry of [tool.uv] dev-, constraint- and override-dependencies, [tool.pdm.dev-dependencies]
    and [tool.hatch.envs.X] (with its overrides), whatever its marker (uv locks for every platform and
    Python at once); [tool.pdm.resolution.overrides]; a [tool.uv.sources] entry for the SDK other than an
    index (git, a path, a URL, a workspace member: no version that can be read, so off target); and what
    the in-repository projects uv installs with the project declare (path sources, workspace members:
    uv_workspace.py). The bump has edited the entries it can; a URL entry it never edits."""
    hatch = _hatch_toml(root)
    in_pyproject = [*pyproject.tool_arrays(project), *_hatch_overrides(project)]
    in_hatch = [*pyproject.hatch_env_arrays(hatch, ""), *uv_workspace.hatch_overrides(hatch, "")]
    arrays = [(_label("pyproject.toml", where), array) for where, array in in_pyproject]
    arrays += [(_label("hatch.toml", where), array) for where, array in in_hatch]
    found = uv_workspace.asked_in(arrays, canonical)
    tool = _table(project, "tool")
    overrides = _table(_table(_table(tool, "pdm"), "resolution"), "overrides")
    for name, value in overrides.items():
        if pep508.canonical(name) == canonical and isinstance(value, str):
            where = "pyproject.toml [tool.pdm.resolution.overrides]"
            found.append((where, f"{name} = {value!r}", _pdm(value)))
    uv = _table(tool, "uv")
    for name, source in _table(uv, "sources").items():
        if pep508.canonical(name) == canonical:
            off = not uv_workspace.index_only(source)
            found += [("pyproject.toml [tool.uv.sources]", f"{name} = {source}", None)] if off else []
            continue
        entries = source if isinstance(source, list) else [source]
        for path in [e["path"] for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)]:
            found += _asked_by_member(root, path, canonical)
    members = uv_workspace.members(root, _table(uv, "workspace"))
    found += [("pyproject.toml [tool.uv.workspace]", unread, None) for unread in members.unread]
    for member in members.folders:
        found += _asked_by_member(root, member, canonical)
    return found


def _asked_by_member(root: Path, folder: str, canonical: str) -> list[tuple[str, str, str | None]]:
    """A path source or workspace member: what its pyproject.toml asks for (every extra and group: uv
    locks them all), and where that is not all it declares (setup.py, setup.cfg, dynamic dependencies),
    what `-e` of it asks for; a wheel, its METADATA's Requires-Dist. One outside the repository, another
    file or a link: not read, off target."""
    path = PurePosixPath(folder)
    where = f"pyproject.toml [tool.uv.sources] path {folder[:200]}"
    if path.is_absolute() or ".." in path.parts:
        return [(where, "outside the repository, or through its parent: not read", None)]
    if path.suffix == ".whl":
        return uv_workspace.asked_by_wheel(root, path.as_posix(), canonical)
    try:
        folder_ok = uv_workspace.real_folder(root, path.as_posix())
    except OSError as exc:
        return [(where, f"cannot be read: {exc.strerror}", None)]
    if not folder_ok:
        return [(where, "not a folder of the repository (a file, a link, or missing): not read", None)]
    asked, complete = uv_workspace.asked_by_project(root, path.as_posix(), canonical)
    return asked if complete else asked + _asked_by_editable(root, path.as_posix(), canonical)


def _pdm(value: str) -> str | None:
    """A PDM override's value as a PEP 440 specifier ("" for `*`); None for a URL, or one not readable."""
    if pyproject.is_url(value):
        return None
    try:
        [admitted] = ranges.admitted(value, "poetry")
    except ValueError:
        return None
    return str(admitted)


def _hatch_overrides(project: dict[str, Any]) -> list[tuple[str, Any]]:
    return uv_workspace.hatch_overrides(_table(_table(project, "tool"), "hatch"), "tool.hatch.")


def _label(file: str, where: str) -> str:
    """`pyproject.toml [tool.uv] override-dependencies` for tool.uv.override-dependencies."""
    head, _, key = where.rpartition(".")
    return f"{file} [{head}] {key}"


def _hatch_toml(root: Path) -> dict[str, Any]:
    """hatch.toml's tables ({} when there is none or it does not parse: extraction names a broken one).
    Read only after the dependency-file walk has refused one that leads outside the repository."""
    try:
        return tomlkit.parse((root / "hatch.toml").read_text(encoding="utf-8")).unwrap()
    except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
        return {}


def _applies(requirement: Requirement, canonical: str) -> bool:
    return pep508.matches(requirement, canonical) and (
        requirement.marker is None or requirement.marker.evaluate()
    )


def _asked(where: str, text: str, requirement: Requirement) -> tuple[str, str, str | None]:
    return where, text.strip(), None if requirement.url else str(requirement.specifier)


def _asked_in_files(root: Path, paths: list[Path], canonical: str) -> list[tuple[str, str, str | None]]:
    found: list[tuple[str, str, str | None]] = []
    for path, content in _requirement_files(root, paths, _included_and_constraints, set()):
        if roles.is_compiled(content):
            continue
        rel = path.relative_to(root.resolve()).as_posix()
        found += [
            _asked(f"{rel} line {line}", text, requirement)
            for line, text, requirement in requirements_file.requirements(content, canonical)
            if _applies(requirement, canonical)
        ]
        for editable in _editables(root, content):  # `-e ./libs/helpers`: what it declares, too
            found += _asked_by_editable(root, editable, canonical)
    return found


def _editables(root: Path, content: str) -> list[str]:
    """The local projects a requirements file installs as `-e PATH` (not a URL or VCS spec), as paths from
    the root, where pip (and dependency_files' checks) take them from."""
    options, _problems = requirement_options.scan(content)
    found = []
    for option in options:
        if option.name != "--editable" or SCHEME_RE.match(option.value):
            continue
        where, _, extras = option.value.partition("[")
        if (root / where).is_dir():
            found.append(posixpath.normpath(where) + (f"[{extras}" if extras else ""))
    return found


def _included_and_constraints(content: str) -> list[str]:
    options, _problems = requirement_options.scan(content)
    return [o.value for o in options if o.name in ("--requirement", "--constraint")]


def _asked_by_editable(root: Path, editable: str, canonical: str) -> list[tuple[str, str, str | None]]:
    """What a local project the tests' install takes as `-e PATH` declares of the SDK (its own files, as
    the Python adapter reads a repository's); a path outside the repository or a URL reads nothing."""
    from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files

    path, _, extras = editable.partition("[")
    named = {pep508.canonical(e) for e in extras.rstrip("]").split(",") if e.strip()}
    folder = (root / path).resolve()
    if folder == root.resolve() or not folder.is_dir() or not folder.is_relative_to(root.resolve()):
        return []
    rel = folder.relative_to(root.resolve()).as_posix()
    try:
        declared = extract_dependencies(folder, find_dependency_files(folder), canonical)
    except CodemodError as exc:  # unread is unknown: off target for the caller (None)
        return [(rel, f"{editable} (its declarations cannot be read: {exc})", None)]
    return [
        (f"{rel}/{d.file} line {d.line}", f"{d.name}{d.specifier}", d.specifier)
        for d in declared  # what installing it asks for: its dependencies, and the extras named
        if d.role == "runtime" or (_is_extra(d.section) and _extra(d.section) in named)
    ]


EXTRA_SECTIONS = ("project.optional-dependencies.", "extras_require.", "options.extras_require.")


def _is_extra(section: str) -> bool:
    """Whether a declaration's section is an extra (whatever role its name gives it: `test` is a test
    extra, still installed by `-e ./plugin[test]`)."""
    return section.startswith(EXTRA_SECTIONS)


def _extra(section: str) -> str:
    """The extra a declaration's section names (`project.optional-dependencies.test`: test)."""
    return pep508.canonical(section.rpartition(".")[2])


def asked_extras(root: Path, plan: InstallPlan) -> dict[str, list[str]]:
    """The extras the plan's install asks of each distribution, outside any installed METADATA, for
    installed_files.capping (a cap in an extra counts only where something asks for the extra:
    `acme-widgets[sdk]` in requirements.txt asks for acme-widgets' `sdk`). Read from the plan's requirement
    strings and editables, its project (`.[test]`), and its requirements files as pip reads them
    (requirement_options: a byte order mark, continued lines, quoted values, options beside each other),
    followed through `-r`, and through `-c` to the `-r` files a constraints file names (pip installs those
    as requirements; their own lines ask for nothing). A named requirement is keyed by its canonical name
    (`#egg=NAME[x]` too); a local folder or archive, with or without `-e` or `file:` (an editable is never
    a name: `-e plugin[sdk]` is the folder), by where it lies (local_key: "." the project, "./plugin",
    "./wheels/x.whl"), relative to the root and to the file naming it (pip reads it from the one, uv from
    the other), and an archive by the name in its file name too; capping finds what was installed from
    there by its direct_url.json. An unnamed URL elsewhere with extras (`git+https://host/w[sdk]`, which uv
    reads) asks them of every distribution installed from a URL outside the repository (URL_KEY). A
    requirement whose marker does not hold here asks for nothing; one whose marker cannot be evaluated
    does (a cap read where none applies is a human's look, one missed is a false success)."""
    asked: dict[str, set[str]] = {}
    root = root.resolve()
    values = [(value, root, False) for value in plan.requirements]
    values += [(value, root, True) for value in plan.editables]
    values += [(plan.project, root, True)] if plan.project else []
    files = [(root / f, False) for f in plan.requirement_files]
    files += [(root / f, True) for f in plan.constraint_files]
    for path, options, constraints in _option_files(root, files, set()):
        if not constraints:
            values += [(o.value, path.parent, o.name == "--editable") for o in options if o.name in ASKING]
    for value, folder, editable in values:
        for key, extras in _asking(root, folder, value, editable):
            asked.setdefault(key, set()).update(pep508.canonical(e) for e in extras)
    return {key: sorted(extras) for key, extras in asked.items() if extras}


URL_KEY = "url:"  # asked_extras: asked of every distribution installed from a URL outside the repository
ASKING = ("requirement", "--editable")  # the options of a requirements file that install something
ARCHIVES = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar")


def local_key(path: str) -> str:
    """The key asked_extras gives what lies at `path` in the repository (from its root): "." or
    "./sub/folder"."""
    normal = posixpath.normpath(path.replace(os.sep, "/")).removeprefix("./")
    return "." if normal in ("", ".") else f"./{normal}"


EXTRAS_RE = re.compile(r"^(.+?)\[([^\]]*)\]$")  # pip's _strip_extras: `path[a,b]`


def _asking(root: Path, folder: Path, value: str, editable: bool) -> list[tuple[str, list[str]]]:
    """(key, extras) of one requirement or `-e` value read from `folder` (a file's own, or the root)."""
    value = value.strip()
    requirement = None if editable else pep508.parse(value)
    if requirement is not None and not requirement.name.lower().endswith(ARCHIVES):  # NAME[x] (@ URL)
        holds = _marker_holds(requirement)
        return [(pep508.canonical(requirement.name), sorted(requirement.extras))] if holds else []
    if requirement is not None and _marker_holds(requirement):  # `w-1.0-py3-none-any.whl[x]`: a file
        as_name = [(pep508.canonical(requirement.name), sorted(requirement.extras))]  # or a name ending so
        return as_name + _asking(root, folder, value, editable=True)
    where, _, marker = value.partition("; " if SCHEME_RE.match(value) else ";")  # as pip splits them
    where = where.strip()
    if marker.strip() and not _marker_text_holds(marker.strip()):
        return []
    base, fragment = where.split("#", 1) if "#" in where else (where, "")
    egg = re.search(r"(?:^|&)egg=([^&]+)", fragment)
    if egg is not None:  # `git+https://...#egg=NAME[x]`, `file:./x#egg=NAME[x]`
        named = pep508.parse(egg.group(1))
        return [(pep508.canonical(named.name), sorted(named.extras))] if named is not None else []
    split = EXTRAS_RE.match(base)
    if split is None:
        return []
    location, extras = split.group(1), [e.strip() for e in split.group(2).split(",") if e.strip()]
    keys = [_archive_name(location)] if location.lower().endswith(ARCHIVES) else []
    if location.lower().startswith("file:"):
        location = file_url_path(location)
    elif SCHEME_RE.match(location):  # a URL elsewhere: whatever was installed from one
        return [(key, extras) for key in [*keys, URL_KEY]]
    for start in dict.fromkeys([root, folder]):  # pip from the working folder, uv from the file's
        lexical = Path(os.path.normpath(start / location))
        if lexical == root or lexical.is_relative_to(root):
            keys.append(local_key(lexical.relative_to(root).as_posix()))
    return [(key, extras) for key in dict.fromkeys(keys)]


def _archive_name(location: str) -> str:
    """The canonical distribution name in an archive's file name: a wheel's up to its first `-`, an
    sdist's up to its last (`acme-widgets-1.0.tar.gz`: acme-widgets)."""
    name = location.rstrip("/").rsplit("/", 1)[-1]
    stem = name[: -len(next(s for s in ARCHIVES if name.lower().endswith(s)))]
    return pep508.canonical(
        stem.split("-", 1)[0] if name.lower().endswith(".whl") else stem.rsplit("-", 1)[0]
    )


def _option_files(
    root: Path, files: list[tuple[Path, bool]], seen: set[tuple[Path, bool]]
) -> Iterator[tuple[Path, list[Option], bool]]:
    """(path, options as pip reads them, whether pip reads it as constraints) of each requirements or
    constraints file among `files` inside the repository, once, and of those its `-r` and `-c` options
    name (relative to its folder), depth first: a `-r` file is read as requirements even inside a
    constraints file (pip's nested_constraint)."""
    for path, constraints in files:
        try:
            path = path.resolve()
            if (path, constraints) in seen or not path.is_file() or not path.is_relative_to(root):
                continue
            seen.add((path, constraints))
            options, _problems = requirement_options.scan(requirement_options.decode(path.read_bytes()))
        except (OSError, RuntimeError, ValueError):  # a loop, unreadable: dependency_files refused it
            continue
        yield path, options, constraints
        named = [
            (path.parent / file_url_path(o.value), o.name == "--constraint")
            for o in options
            if o.name in ("--requirement", "--constraint")
        ]
        yield from _option_files(root, named, seen)


def _marker_holds(requirement: Requirement) -> bool:
    try:
        return requirement.marker is None or requirement.marker.evaluate()
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def _marker_text_holds(text: str) -> bool:
    try:
        return Marker(text).evaluate()
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return True


def requirement_files(root: Path) -> list[str]:
    """The runtime requirements files (at the root and in requirements/), repository-relative."""
    return [f for f in checked_dependency_files(root) if _is_runtime(root, PurePosixPath(f))]


def _is_runtime(root: Path, path: PurePosixPath) -> bool:
    name = path.name.lower()
    if str(path.parent) not in (".", "requirements") or not name.endswith((".txt", ".pip")):
        return False
    if not (root / path).is_file() or (str(path.parent) == "." and "requirements" not in name):
        return False
    words = {w for w in path.stem.lower().replace("_", "-").replace(".", "-").split("-") if w}
    return words <= RUNTIME_FILE_ROLES or (str(path.parent) == "requirements" and not words)


@dataclass
class _PipLines:
    files: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    editables: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)
    project_extras: list[str] = field(default_factory=list)


def _pip_lines(lines: list[str]) -> _PipLines:
    """Requirements-file lines (already checked) as pip arguments; the project itself ('.', '.[test]',
    '-e .[test]') becomes extras of the one `-e .`."""
    options, _problems = requirement_options.scan("\n".join(lines))
    out = _PipLines()
    for option in options:
        local = test_requirements.is_local_project(option.value)
        if option.name in ("--editable", "requirement") and local is not None:
            out.project_extras += [e.strip() for e in local.split(",") if e.strip()]
        elif option.name == "--requirement":
            out.files.append(os.path.normpath(option.value))
        elif option.name == "--constraint":
            out.constraints.append(os.path.normpath(option.value))
        elif option.name == "--editable":
            out.editables.append(option.value)
        elif option.name == "requirement":
            out.requirements.append(option.value)
    return out


def _project_requirements(project: dict[str, Any], extras: list[str]) -> list[str]:
    """[project] dependencies (and the chosen extras) of a project that cannot be installed itself."""
    table = _table(project, "project")
    arrays = [table.get("dependencies")] + [_table(table, "optional-dependencies").get(e) for e in extras]
    return [
        str(item) for array in arrays if isinstance(array, list) for item in array if isinstance(item, str)
    ]


def _declared_names(root: Path, files: list[str], project: dict[str, Any], installable: bool) -> set[str]:
    """Canonical names of what the plan installs (requirements files followed through -r)."""
    names = _names_in_requirement_files(root, [root / f for f in files], set())
    names |= _names(i for i in _table(project, "project").get("dependencies") or [] if isinstance(i, str))
    if installable:
        poetry = _table(_table(project, "tool"), "poetry")
        names |= {pep508.canonical(key) for key in _table(poetry, "dependencies")}
    return names


def _names_in_requirement_files(root: Path, paths: list[Path], seen: set[Path]) -> set[str]:
    names: set[str] = set()
    for _path, content in _requirement_files(root, paths, requirements_file.includes, seen):
        names |= requirements_file.requirement_names(content)
    return names


def _requirement_files(
    root: Path, paths: list[Path], follow: Callable[[str], list[str]], seen: set[Path]
) -> Iterator[tuple[Path, str]]:
    """(resolved path, text) of each requirements file among `paths` inside the repository, once, and of
    those `follow` names in it (relative to its folder), depth first."""
    for path in paths:
        path = path.resolve()
        if path in seen or not path.is_file() or not path.is_relative_to(root.resolve()):
            continue
        seen.add(path)
        content = path.read_text(encoding="utf-8", errors="replace")
        yield path, content
        yield from _requirement_files(root, [path.parent / name for name in follow(content)], follow, seen)


def _names(requirements: Any) -> set[str]:
    parsed = (pep508.parse(r) for r in requirements)
    return {pep508.canonical(r.name) for r in parsed if r is not None}


def _poetry_app(project: dict[str, Any]) -> bool:
    return _table(_table(project, "tool"), "poetry").get("package-mode") is False


def _pyproject(root: Path) -> dict[str, Any]:
    try:
        return tomlkit.parse((root / "pyproject.toml").read_text(encoding="utf-8")).unwrap()
    except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
        return {}


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}
