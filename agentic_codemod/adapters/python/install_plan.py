"""What the verification environment installs for a repository (pure: reads files, runs nothing).

    requirements files   every requirements file at the root or in requirements/ whose name says
                         runtime, dev or test (requirements.txt, requirements-dev.txt,
                         test-requirements.txt, requirements/test.txt ...)  -r FILE
    the project          a pyproject.toml with [build-system], or a setup.py: -e .[test,dev] with
                         the declared extras among PROJECT_EXTRAS; PEP 735 groups of the same names
                         as --group NAME. A PEP 621 project without a build system (an application)
                         gets its [project] dependencies installed directly.
    test runner          settings.python.extra_test_requirements when the test command runs pytest
                         and the things above do not already declare them.

Poetry dependency groups are not installable by pip; they are covered only through requirements
files or the extra test requirements.

Every dependency file is checked first (dependency_files.py): a refused one is an InputError naming the
file and line, raised before pip is given anything.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import tomlkit

from agentic_codemod.adapters.python import pep508, requirements_file, setup_cfg
from agentic_codemod.adapters.python.dependency_files import checked_dependency_files
from agentic_codemod.adapters.python.test_command import detect_test_command
from agentic_codemod.config import Settings

# Words in a requirements file name that say "install me for the tests" (docs, lint, typing... do not).
REQUIREMENT_FILE_ROLES = frozenset(
    {"base", "common", "main", "prod", "production", "runtime", "install", "ci"}
    | {"dev", "develop", "development", "test", "tests", "testing"}
)
# Extras and PEP 735 groups installed with the project.
PROJECT_EXTRAS = ("test", "tests", "testing", "dev")


@dataclass(frozen=True)
class InstallPlan:
    requirement_files: list[str] = field(default_factory=list)
    project: str | None = None  # ".", ".[test,dev]"
    groups: list[str] = field(default_factory=list)
    requirements: list[str] = field(default_factory=list)  # requirement strings given directly

    @property
    def empty(self) -> bool:
        return not (self.requirement_files or self.project or self.groups or self.requirements)

    def pip_args(self) -> list[str]:
        args = [arg for file in self.requirement_files for arg in ("-r", file)]
        args += ["-e", self.project] if self.project else []
        args += [arg for group in self.groups for arg in ("--group", group)]
        # Requirement strings come from the repository: after `--`, pip reads none of them as an option.
        return args + (["--", *self.requirements] if self.requirements else [])


def plan_install(root: Path, settings: Settings) -> InstallPlan:
    files = requirement_files(root)  # InputError when any dependency file is refused
    project = _pyproject(root)
    installable = ("build-system" in project and not _poetry_app(project)) or (root / "setup.py").is_file()
    extras = [e for e in _declared_extras(root, project) if pep508.canonical(e) in PROJECT_EXTRAS]
    groups = [g for g in _table(project, "dependency-groups") if pep508.canonical(g) in PROJECT_EXTRAS]
    direct = [] if installable else _project_requirements(project, extras)
    declared = _declared_names(root, files, project, extras, groups, installable) | {
        pep508.canonical(name) for name in _names(direct)
    }
    test_command = detect_test_command(root)
    if test_command is not None and test_command.runner == "pytest":
        direct += [r for r in settings.python.extra_test_requirements if not _names([r]) <= declared]
    return InstallPlan(
        requirement_files=files,
        project=(f".[{','.join(extras)}]" if extras else ".") if installable else None,
        groups=groups,
        requirements=direct,
    )


def requirement_files(root: Path) -> list[str]:
    """The runtime/dev/test requirements files (at the root and in requirements/), repository-relative."""
    return [f for f in checked_dependency_files(root) if _is_runtime_or_test(root, PurePosixPath(f))]


def _is_runtime_or_test(root: Path, path: PurePosixPath) -> bool:
    name = path.name.lower()
    if str(path.parent) not in (".", "requirements") or not name.endswith((".txt", ".pip")):
        return False
    if name.startswith("constraints") or not (root / path).is_file():
        return False
    if str(path.parent) == "." and "requirements" not in name and not name.endswith(".pip"):
        return False
    stem = path.stem.lower().replace("requirements", "")
    words = {w for w in stem.replace("_", "-").replace(".", "-").split("-") if w}
    return not words or bool(words & REQUIREMENT_FILE_ROLES)


def _declared_extras(root: Path, project: dict[str, Any]) -> list[str]:
    extras = list(_table(_table(project, "project"), "optional-dependencies"))
    extras += list(_table(_table(_table(project, "tool"), "poetry"), "extras"))
    cfg = root / "setup.cfg"
    if cfg.is_file():
        with contextlib.suppress(OSError, ValueError):
            extras += setup_cfg.extras(cfg.read_text(encoding="utf-8"))
    return list(dict.fromkeys(extras))


def _project_requirements(project: dict[str, Any], extras: list[str]) -> list[str]:
    """[project] dependencies (and the chosen extras) of a project that cannot be installed itself."""
    table = _table(project, "project")
    arrays = [table.get("dependencies")] + [_table(table, "optional-dependencies").get(e) for e in extras]
    return [
        str(item) for array in arrays if isinstance(array, list) for item in array if isinstance(item, str)
    ]


def _declared_names(
    root: Path,
    files: list[str],
    project: dict[str, Any],
    extras: list[str],
    groups: list[str],
    installable: bool,
) -> set[str]:
    """Canonical names of what the plan installs (requirements files followed through -r)."""
    names = _names_in_requirement_files(root, [root / f for f in files], set())
    table = _table(project, "project")
    arrays = [table.get("dependencies")] + [_table(table, "optional-dependencies").get(e) for e in extras]
    arrays += [_table(project, "dependency-groups").get(g) for g in groups]
    names |= _names(str(i) for a in arrays if isinstance(a, list) for i in a if isinstance(i, str))
    if installable:
        poetry = _table(_table(project, "tool"), "poetry")
        names |= {pep508.canonical(key) for key in _table(poetry, "dependencies")}
    return names


def _names_in_requirement_files(root: Path, paths: list[Path], seen: set[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        path = path.resolve()
        if path in seen or not path.is_file() or not path.is_relative_to(root.resolve()):
            continue
        seen.add(path)
        content = path.read_text(encoding="utf-8", errors="replace")
        names |= requirements_file.requirement_names(content)
        included = [path.parent / name for name in requirements_file.includes(content)]
        names |= _names_in_requirement_files(root, included, seen)
    return names


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
