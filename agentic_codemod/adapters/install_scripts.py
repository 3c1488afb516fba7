"""The files that install packages outside an ecosystem's dependency files, read for the adapters' readers of
the SDK's pins there (adapters/<ecosystem>/install_scripts.py).

    scripts(root, kinds) -> [Script(file, kind, lines, assignments)]   RequiresHuman where one cannot be
                                                      read for sure
    assignments(script) -> {NAME: value}              the file's own literal assignments (ARG, ENV, `NAME: v`)
    resolved(text, values) -> text                   its variables replaced where the file fixes them

Which files (KINDS, by file name; anywhere in the repository but in folders of other projects' code and
tools' state, SKIPPED_FOLDERS; a folder that is a link is not entered):

    a container image     Dockerfile, Containerfile, with any suffix (`Dockerfile.dev`, `dockerfile`),
                          `*.Dockerfile`, `*.Containerfile`
    a conda environment   a YAML file named environment* or env* (`environment-py311.yml`, `test_env.yaml`)
    a pre-commit hook     .pre-commit-config.yaml at the root
    a CI job              `*gitlab-ci*.yml` and YAML under .gitlab/, .github/workflows/*, and at the root
                          .circleci/config.yml, .travis.yml, azure-pipelines.yml, appveyor.yml, Jenkinsfile

How each is read: through tools/rooted.py, never through a link (a link to a regular file inside the
repository is read at its target); as logical lines (a line ending in `\\` goes on in the next), each
physical line with its number and its comment cut off (`#` at the start or after a space). Of a container
image or a CI job, only the logical lines that name an installer (INSTALLER: pip, uv, pipx, poetry, conda,
npm, yarn, pnpm ...) are kept, and every line besides for the assignments a version variable may take; of a
conda environment or a pre-commit hook (lists of packages), every line.

Fail closed: a file that is a link out of the repository (or to nothing), past CI_CONFIG_MAX_BYTES, holding
a NUL byte (UTF-16, binary), or a walk past INSTALL_SCRIPTS_MAX_ENTRIES entries ends the run
requires_human, naming it: a pin in what was not read would be missed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from agentic_codemod.config import CI_CONFIG_MAX_BYTES, INSTALL_SCRIPTS_MAX_ENTRIES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.tools.rooted import RootedFS

IMAGE, CONDA, HOOK, CI = "a container image", "a conda environment", "a pre-commit hook", "a CI job"
_YAML = r"\.ya?ml"
_ANYWHERE = r"(?:.+/)?"
# What a file named dockerfile_utils.py or Dockerfile.md is: code or documentation, no image.
_CODE = "py|pyi|js|mjs|cjs|ts|go|rs|java|rb|sh|md|rst|txt|json|toml|cfg|ini|html|j2|jinja|tpl|tmpl"
# (kind, a pattern the whole repository-relative path matches): the first that matches names the kind.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        IMAGE,
        re.compile(
            rf"(?i){_ANYWHERE}(?:(?:docker|container)file(?![^/]*\.(?:{_CODE})$)(?:[._-][^/]*)?"
            r"|[^/]+\.(?:docker|container)file)"
        ),
    ),
    (HOOK, re.compile(rf"\.pre-commit-config{_YAML}")),
    (
        CI,
        re.compile(
            rf"(?i){_ANYWHERE}[^/]*gitlab-ci[^/]*{_YAML}|\.gitlab/.+{_YAML}|\.github/workflows/[^/]+{_YAML}"
        ),
    ),
    (
        CI,
        re.compile(
            rf"\.circleci/config{_YAML}|\.travis{_YAML}|azure-pipelines{_YAML}|appveyor{_YAML}|Jenkinsfile"
        ),
    ),
    (CONDA, re.compile(rf"(?i){_ANYWHERE}(?:[^/]*[._-])?env(?:ironment)?(?:[._-][^/]*)?{_YAML}")),
)
LISTS = frozenset({CONDA, HOOK})  # files whose lines are lists of packages: every line is kept
# Folders of other projects' code and of tools' state, never the repository's own install scripts.
SKIPPED_FOLDERS = frozenset(
    {".git", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", "site-packages"}
)
INSTALLER = re.compile(
    r"(?i)(?<![\w.-])(?:pip[0-9.]*|uv|pipx|pipenv|poetry|pdm|conda|mamba|micromamba|easy_install|npm|npx|yarn"
    r"|pnpm|pnpx|bun|bunx)(?![\w-])"
)
COMMENT = re.compile(r"(?:^|(?<=\s))#.*")
# A variable in a version: `$NAME`, `${NAME}`, `${NAME:-default}`.
VARIABLE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*(?::?-[^}\s]*)?\}|[A-Za-z_][A-Za-z0-9_]*)")
# Literal assignments a version variable may take its value from: a Dockerfile's, a CI file's.
ASSIGNMENT = {
    IMAGE: re.compile(
        r"""\s*(?:ARG|ENV)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=|\s+)["']?(?P<value>[^"'\s]+)["']?\s*"""
    ),
    CI: re.compile(r"""\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*:\s*["']?(?P<value>[^"'\s]+)["']?\s*"""),
}


@dataclass(frozen=True)
class Script:
    file: str  # repository-relative POSIX path
    kind: str  # IMAGE, CONDA, HOOK or CI
    lines: list[tuple[int, str]]  # (1-based physical line number, its text without the comment)
    # Every line of a container image or CI job (where a version variable may be assigned), else none.
    assignments: list[tuple[int, str]]


def scripts(root: Path, kinds: frozenset[str] = frozenset({IMAGE, CONDA, HOOK, CI})) -> list[Script]:
    """Every install script of `root` of these kinds, with the lines a reader of pins looks at (module
    docstring)."""
    fs = RootedFS(root, CI_CONFIG_MAX_BYTES)
    found = []
    for file, kind in _listed(root):
        if kind not in kinds:
            continue
        physical = [
            (n, COMMENT.sub("", line.rstrip("\r")))
            for n, line in enumerate(_read(root, fs, file).split("\n"), 1)
        ]
        found.append(Script(file, kind, _lines(physical, kind), [] if kind in LISTS else physical))
    return found


def kind_of(file: str) -> str | None:
    """What installs with the file at this repository-relative path, or None: not an install script."""
    return next((kind for kind, pattern in KINDS if pattern.fullmatch(file)), None)


def _listed(root: Path) -> list[tuple[str, str]]:
    found, entries = [], 0
    for top, folders, names in os.walk(root, followlinks=False):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
        entries += len(folders) + len(names)
        if entries > INSTALL_SCRIPTS_MAX_ENTRIES:
            raise RequiresHuman(
                f"the repository has more than {INSTALL_SCRIPTS_MAX_ENTRIES} files and folders "
                "(config.INSTALL_SCRIPTS_MAX_ENTRIES), too many to look through for the files that install "
                "packages outside its dependency files (Dockerfiles, conda environments, CI jobs)",
                hint="check them for pins of the SDK by hand, or migrate this repository by hand",
            )
        rel_top = Path(top).relative_to(root).as_posix()
        for name in sorted(names):
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            kind = kind_of(rel)
            if kind is not None:
                found.append((rel, kind))
    return sorted(found)


def _read(root: Path, fs: RootedFS, file: str) -> str:
    """The file's text, read without following a link out of the repository; RequiresHuman otherwise."""
    path, target = root / file, file
    if path.is_symlink():
        real = path.resolve()
        if not real.is_relative_to(root.resolve()) or not real.is_file():
            raise _unread(file, "is a link out of the repository, or to nothing")
        target = real.relative_to(root.resolve()).as_posix()
    try:
        if (root / target).stat().st_size > CI_CONFIG_MAX_BYTES:
            raise _unread(file, f"is larger than {CI_CONFIG_MAX_BYTES} bytes (config.CI_CONFIG_MAX_BYTES)")
        data = fs.read_bytes(target)
    except (OSError, ValueError) as exc:  # tools/rooted.py refused it (a link on the way, swapped, grown)
        raise _unread(file, f"cannot be read ({exc})") from exc
    if b"\0" in data:
        raise _unread(file, "holds NUL bytes (UTF-16 or binary)")
    return data.decode("utf-8", errors="replace")


def _unread(file: str, why: str) -> RequiresHuman:
    return RequiresHuman(
        f"{file} installs packages outside the dependency files, and {why}: a pin of the SDK there "
        "would be missed",
        hint="make it a regular UTF-8 file inside the repository, or check it for pins of the SDK by hand",
    )


def _lines(physical: list[tuple[int, str]], kind: str) -> list[tuple[int, str]]:
    """The physical lines of the logical lines a reader looks at: every line of a list of packages, else
    those of the logical lines that name an installer."""
    if kind in LISTS:
        return physical
    kept: list[tuple[int, str]] = []
    logical: list[tuple[int, str]] = []
    for number, line in physical:
        logical.append((number, line))
        if line.rstrip().endswith("\\") and number < len(physical):
            continue
        if any(INSTALLER.search(part) for _, part in logical):
            kept += logical
        logical = []
    return kept


def assignments(script: Script) -> dict[str, str]:
    """NAME -> literal value of the file's own assignments (the last one wins; none in a list of packages)."""
    pattern = ASSIGNMENT.get(script.kind)
    values: dict[str, str] = {}
    for _, line in script.assignments if pattern else []:
        match = pattern.fullmatch(line) if pattern else None
        if match and not VARIABLE.search(match["value"]):
            values[match["name"]] = match["value"]
    return values


def resolved(text: str, values: dict[str, str]) -> str:
    """`text` with each variable the file fixes replaced by its value (or its `:-` default); any other
    variable stays as written: a version nobody can read."""

    def value(match: re.Match[str]) -> str:
        name, _, default = match[0].strip("${}").partition("-")
        return values.get(name.rstrip(":")) or default or match[0]

    return VARIABLE.sub(value, text)
