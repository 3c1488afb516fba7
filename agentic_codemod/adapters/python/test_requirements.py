"""Where a repository's test requirements come from: one source, the narrowest the project declares.

    choose(root, project, installable, settings) -> TestSource | None

Order of preference (first found wins; never several at once, never every requirements file):

    1. settings.verification.requirements / .extras    the task's or the config's override, as given
    2. the tox testenv that runs the tests             its deps, extras and what its install commands
                                                       name (pdm sync -G test, uv sync --group ...;
                                                       ci_config.py, install_commands.py)
    3. the nox session that runs the tests             its session.install() arguments
    4. group test / tests / testing                    its requirements: PEP 735 (include-group followed),
                                                       else Poetry's, translated to PEP 508
                                                       (poetry_groups.py), else PDM's dev group
                                                       (by name; `-e` and URL entries left out, recorded)
    5. extra test / tests / testing                    its requirements, when the extra is readable
                                                       (pyproject.toml, setup.cfg), else `.[extra]`
    6. a test requirements file                        test-requirements.txt, requirements-test.txt,
                                                       requirements-tests.txt, requirements/test.txt,
                                                       requirements/tests.txt, then requirements-test*.txt
                                                       and requirements/test*.txt (not *min*, *lock*)
    7. dev, as a last resort                           the dev group (PEP 735, Poetry's group or its legacy
                                                       dev-dependencies, PDM's, uv's legacy [tool.uv]
                                                       dev-dependencies), the dev extra, requirements-dev.txt,
                                                       requirements/dev.txt

Lint-only packages (LINT_PACKAGES: flake8, mypy, pytest-mypy, pytest-ruff, pytest-checkdocs ...)
are left out of 2-5 and 7 (recorded in `left_out`), so a style check cannot fail the baseline; an
override (1) and requirements files are taken as written. Every line a source yields is checked like a
requirements file before pip sees it (dependency_files.check_requirement_lines): a refusal is an
InputError naming the source.

    check_test_requirement(entry) -> None | why not   the contract's: an override entry this adapter reads
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_codemod.adapters.python import ci_config, install_commands, pep508, poetry_groups, setup_cfg
from agentic_codemod.config import Settings

# Packages that check style, types or docs rather than behaviour: left out of the test requirements the
# install plan takes from a repository's test extras, groups, tox deps and nox sessions (pytest plugins
# among them fail a baseline on code style, which says nothing about the bump).
LINT_PACKAGES: tuple[str, ...] = (
    *("flake8", "pytest-flake8", "pyflakes", "pycodestyle", "pytest-pycodestyle", "pydocstyle", "pylint"),
    *("pytest-pylint", "mypy", "pytest-mypy", "pytest-mypy-plugins", "black", "pytest-black", "ruff"),
    *("pytest-ruff", "isort", "pytest-isort", "pytest-checkdocs", "pytest-codestyle", "pre-commit"),
    *("bandit", "pyright", "pytype", "doc8", "sphinx", "codespell", "pytest-pep8", "hacking"),
)
# Installed beside the test requirements when the repository declares none of them and runs pytest
# (python.extra_test_requirements overrides it).
EXTRA_TEST_REQUIREMENTS: tuple[str, ...] = ("pytest",)


def check_test_requirement(entry: str) -> str | None:
    """None when `entry` of verification.requirements is a PEP 508 requirement or `-r FILE` / `-c FILE`
    (the file is checked inside the repository later, like any requirements file); else why not."""
    from packaging.requirements import InvalidRequirement, Requirement

    if re.fullmatch(r"-[rc] [^\s$]+", entry.strip()):
        return None
    try:
        Requirement(entry)
    except InvalidRequirement:
        return "neither a PEP 508 requirement nor -r/-c FILE"
    return None


TEST_NAMES = ("test", "tests", "testing")
UV_LEGACY_DEV = "[tool.uv] dev-dependencies"
TEST_FILES = (
    "test-requirements.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
)
TEST_FILE_GLOBS = ("requirements-test*.txt", "requirements/test*.txt", "requirements_test*.txt")
DEV_FILES = ("requirements-dev.txt", "requirements/dev.txt", "dev-requirements.txt")
# Words in a file name that say it pins old or locked versions, not what the tests need.
NOT_TEST_WORDS = ("min", "lock", "constraint", "oldest", "lowest")
LOCAL_PROJECT = (".", "./")


@dataclass(frozen=True)
class TestSource:
    label: str  # "tox.ini [testenv]", "extra [testing]", "test-requirements.txt" ...
    lines: list[str] = field(default_factory=list)  # requirements-file lines: strings, -r/-c/-e FILE
    extras: list[str] = field(default_factory=list)  # project extras installed as -e .[...]
    left_out: list[str] = field(default_factory=list)  # lint-only requirements not installed
    # what the repository's install takes through a substitution the tool does not resolve (tox.ini)
    unread: list[str] = field(default_factory=list)


def choose(root: Path, project: dict[str, Any], installable: bool, settings: Settings) -> TestSource | None:
    override = settings.verification
    if override.requirements is not None or override.extras is not None:
        return TestSource(
            "verification (task or config)", list(override.requirements or []), list(override.extras or [])
        )
    ci = ci_config.test_env(root)
    if ci is not None and (ci.requirement_lines or ci.extras or ci.groups or ci.all_groups):
        return _ci_source(root, project, ci)
    for names, kind in ((TEST_NAMES, "test"), (("dev",), "dev")):
        source = _group(project, names) or _extra(root, project, names, installable)
        if source is None:
            source = _test_file(root) if kind == "test" else _first_file(root, DEV_FILES)
        if source is None and kind == "dev" and "dev" in (tools := tool_groups(project)):
            source = _tool_group(*tools["dev"], project)  # uv's legacy list: after requirements-dev.txt
        if source is not None:
            return source
    return None


def _ci_source(root: Path, project: dict[str, Any], ci: ci_config.CiTestEnv) -> TestSource:
    """deps, extras, and the groups its install commands name: a PEP 735 group, else a Poetry group, else
    a PDM or uv dev group (tool_groups), else an extra of that name (pdm -G names either); ":all" is every
    extra."""
    lines, extras, unknown = list(ci.requirement_lines), [], []
    for extra in ci.extras:
        named = _declared_extras(root, project) if extra == install_commands.ALL else [extra]
        extras += [e for e in named if e not in extras]
    pep735 = _table(project, "dependency-groups")
    poetry = poetry_groups.groups(project)
    tools = tool_groups(project)
    names = [*pep735, *poetry, *tools] if ci.all_groups else ci.groups
    for name in dict.fromkeys(names):
        if name in pep735:
            lines += _group_items(pep735, name, 0)
        elif name in poetry:
            lines += [e.requirement for e in poetry[name] if e.requirement is not None]
            unknown += [e.written for e in poetry[name] if e.requirement is None]
        elif name in tools:
            named, rest = _named_requirements(tools[name][1])
            lines, unknown = lines + named, unknown + rest
        elif name in _declared_extras(root, project):
            extras += [] if name in extras else [name]
        else:
            unknown.append(f"group {name} (declared nowhere)")
    source = _linted(ci.source, lines, extras, project, root)
    unread = [f"{ci.source.split(' ', 1)[0]} {line}" for line in ci.unread]
    return TestSource(source.label, source.lines, source.extras, [*source.left_out, *unknown], unread)


def _linted(
    label: str, lines: list[str], extras: list[str], project: dict[str, Any], root: Path
) -> TestSource:
    """The lines without lint-only packages; extras whose contents are readable expanded likewise."""
    kept: list[str] = []
    dropped: list[str] = []
    expanded_extras: list[str] = []
    for line in lines:
        name = _name(line)
        if name in LINT_PACKAGES:
            dropped.append(line)
        else:
            kept.append(line)
    for extra in extras:
        contents = _extra_contents(root, project, extra)
        if contents is None:
            expanded_extras.append(extra)
            continue
        sub = _linted(label, contents, [], project, root)
        kept += sub.lines
        dropped += sub.left_out
    return TestSource(label, kept, expanded_extras, dropped)


def _group(project: dict[str, Any], names: tuple[str, ...]) -> TestSource | None:
    """The PEP 735 group, else the Poetry group (translated to PEP 508, poetry_groups.py), of that name."""
    groups = _table(project, "dependency-groups")
    for name in groups:
        if pep508.canonical(name) in names:
            return _linted(f"[dependency-groups] {name}", _group_items(groups, name, 0), [], project, Path())
    for name, entries in poetry_groups.groups(project).items():
        if pep508.canonical(name) in names:
            lines = [e.requirement for e in entries if e.requirement is not None]
            source = _linted(_poetry_label(project, name), lines, [], project, Path())
            unreadable = [e.written for e in entries if e.requirement is None]
            return TestSource(source.label, source.lines, [], [*source.left_out, *unreadable])
    for name, (label, items) in tool_groups(project).items():
        if pep508.canonical(name) in names and not label.startswith(UV_LEGACY_DEV):
            return _tool_group(label, items, project)
    return None


def _tool_group(label: str, items: list[str], project: dict[str, Any]) -> TestSource | None:
    """A PDM or uv dev group as a test source; None when it holds nothing but lint tools (a dev group
    of ruff and pre-commit says nothing of what the tests need: the next source is read)."""
    lines, unreadable = _named_requirements(items)
    source = _linted(label, lines, [], project, Path())
    if not source.lines:
        return None
    return TestSource(source.label, source.lines, [], [*source.left_out, *unreadable])


def tool_groups(project: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """The dev groups PDM and uv install for the project by their own tables (name: label, entries):
    `[tool.pdm.dev-dependencies] X` and uv's legacy `[tool.uv] dev-dependencies` (the group `dev`)."""
    tool = _table(project, "tool")
    found = {
        name: (f"[tool.pdm.dev-dependencies] {name}", [i for i in items if isinstance(i, str)])
        for name, items in _table(_table(tool, "pdm"), "dev-dependencies").items()
        if isinstance(items, list)
    }
    uv_dev = _table(tool, "uv").get("dev-dependencies")
    if isinstance(uv_dev, list) and "dev" not in found:
        found["dev"] = (UV_LEGACY_DEV, [i for i in uv_dev if isinstance(i, str)])
    return found


def _named_requirements(items: list[str]) -> tuple[list[str], list[str]]:
    """(requirements by name, the rest): PDM's `-e file:///${PROJECT_ROOT}/sub` and `x @ URL` entries are
    left out, recorded, as Poetry's git and path entries are (the tool installs no URL from a group)."""
    named: list[str] = []
    rest: list[str] = []
    for item in items:
        requirement = pep508.parse(item)
        (named if requirement is not None and not requirement.url else rest).append(item)
    return named, rest


def _poetry_label(project: dict[str, Any], name: str) -> str:
    poetry = _table(_table(project, "tool"), "poetry")
    labels = [f"[tool.poetry.group.{name}.dependencies]"] if name in _table(poetry, "group") else []
    if name == poetry_groups.LEGACY_DEV and _table(poetry, "dev-dependencies"):
        labels.insert(0, "[tool.poetry.dev-dependencies]")
    return " + ".join(labels)


def _group_items(groups: dict[str, Any], name: str, depth: int) -> list[str]:
    items: list[str] = []
    for item in groups.get(name) or []:
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, dict) and isinstance(item.get("include-group"), str) and depth < 10:
            items += _group_items(groups, item["include-group"], depth + 1)
    return items


def _extra(
    root: Path, project: dict[str, Any], names: tuple[str, ...], installable: bool
) -> TestSource | None:
    for extra in _declared_extras(root, project):
        if pep508.canonical(extra) not in names:
            continue
        contents = _extra_contents(root, project, extra)
        if contents is None:  # setup.py, Poetry extras: installed as declared
            return TestSource(f"extra [{extra}]", [], [extra]) if installable else None
        return _linted(f"extra [{extra}]", contents, [], project, root)
    return None


def _extra_contents(root: Path, project: dict[str, Any], extra: str, depth: int = 0) -> list[str] | None:
    """The requirements of one extra, a self-reference (`project[other]`) expanded; None when unknown."""
    table = _table(_table(project, "project"), "optional-dependencies")
    raw: list[str] | None = None
    for name, value in table.items():
        if pep508.canonical(name) == pep508.canonical(extra) and isinstance(value, list):
            raw = [v for v in value if isinstance(v, str)]
    if raw is None and (root / "setup.cfg").is_file():
        with contextlib.suppress(OSError, ValueError):
            parser = setup_cfg.read((root / "setup.cfg").read_text(encoding="utf-8"))
            for name in setup_cfg.extras((root / "setup.cfg").read_text(encoding="utf-8")):
                if pep508.canonical(name) == pep508.canonical(extra):
                    value = parser.get("options.extras_require", name, raw=True)
                    raw = [t for t in setup_cfg.requirement_texts(value) if not t.startswith(";")]
    if raw is None:
        return None
    own = pep508.canonical(str(_table(project, "project").get("name") or ""))
    contents: list[str] = []
    for item in raw:
        requirement = pep508.parse(item)
        if requirement is not None and own and pep508.canonical(requirement.name) == own and depth < 5:
            for other in requirement.extras:
                contents += _extra_contents(root, project, other, depth + 1) or []
        else:
            contents.append(item)
    return contents


def _declared_extras(root: Path, project: dict[str, Any]) -> list[str]:
    extras = list(_table(_table(project, "project"), "optional-dependencies"))
    extras += list(_table(_table(_table(project, "tool"), "poetry"), "extras"))
    if (root / "setup.cfg").is_file():
        with contextlib.suppress(OSError, ValueError):
            extras += setup_cfg.extras((root / "setup.cfg").read_text(encoding="utf-8"))
    return list(dict.fromkeys(extras))


def _test_file(root: Path) -> TestSource | None:
    found = _first_file(root, TEST_FILES)
    if found is not None:
        return found
    candidates = sorted({p.relative_to(root).as_posix() for g in TEST_FILE_GLOBS for p in root.glob(g)})
    usable = [c for c in candidates if not any(w in c.lower().rsplit("/", 1)[-1] for w in NOT_TEST_WORDS)]
    return _first_file(root, tuple(usable))


def _first_file(root: Path, names: tuple[str, ...]) -> TestSource | None:
    for name in names:
        if (root / name).is_file():
            return TestSource(name, [f"-r {name}"])
    return None


def _name(line: str) -> str:
    requirement = pep508.parse(line) if not line.startswith("-") else None
    return pep508.canonical(requirement.name) if requirement is not None else ""


def _table(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def is_local_project(value: str) -> str | None:
    """The extras of a requirement naming the project itself ('.', '.[test]', './'), else None."""
    base, _, rest = value.strip().partition("[")
    if base not in LOCAL_PROJECT:
        return None
    return rest.rstrip("]") if rest else ""
