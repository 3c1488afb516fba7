"""Compiled requirements files (uv pip compile output): recompiled by uv after the bump, as their header says.

    compiled_files(root, dependency) -> [path]    requirements files whose header says uv or pip-compile
                                                  wrote them and that pin the dependency
    recompile_command(text, name, dependency, target) -> argv, or why not
                                                  the header's command for uv to run again (Renovate's
                                                  pip-compile manager): the header's options, if every one
                                                  is on the allowlist below, plus --upgrade-package
                                                  NAME==TARGET (every other pin stays: uv prefers the
                                                  output file's pins) and the header's own command line as
                                                  --custom-compile-command, so the header does not change

The header is repository text, so it is read as data: each option must be one uv takes without reaching
outside the file's folder (no index or find-links of the header's, no interpreter, no other output), each
input or constraint file a plain relative path to a regular file inside the repository, each value a plain
word; the output file must be this file (the header often names it by its absolute path on the author's
machine, which only has to end in its name). Anything else, and every pip-compile header (pip-tools is not
the tool's: its output would differ from pip-compile's own), comes back as why not: the file is then a
human's, with the command to run.
"""

from __future__ import annotations

import re
import shlex
import stat
from pathlib import Path, PurePosixPath

from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import pep508, requirements_file, roles
from agentic_codemod.adapters.python.extract import file_format
from agentic_codemod.models import Dependency

UV_HEADER = re.compile(r"^#\s+(uv pip compile\s.*?)\s*$")
OTHER_HEADER = re.compile(r"^#\s+(pip-compile[\w-]*(?:\s.*?)?)\s*$")  # pip-tools, pip-compile-multi
HEADER_LINES = 12
# uv pip compile options taken from a header: flags, and options with one value of the given kind
FLAGS = frozenset(
    {"--generate-hashes", "--no-annotate", "--no-header", "--all-extras", "--strip-extras",
     "--no-strip-extras", "--universal", "--emit-index-url", "--no-emit-index-url", "--emit-find-links",
     "--no-strip-markers", "--emit-index-annotation", "--no-deps", "--emit-build-options",
     "--emit-marker-expression", "--no-build", "-q", "--quiet", "--no-progress"}
)  # fmt: skip
VALUED = {
    "-o": "output",
    "--output-file": "output",
    "-c": "file",
    "--constraint": "file",
    "--constraints": "file",
    "--override": "file",
    "--overrides": "file",
    "--build-constraint": "file",
    "--extra": "word",
    "--group": "word",
    "--annotation-style": "word",
    "--python-version": "word",
    "--python-platform": "word",
    "--no-emit-package": "word",
    "--prerelease": "word",
    "--resolution": "word",
}
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._,:+*=<>!~-]*")
PINNED = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?==[^\s;]+\s*(;.*)?(\\)?$")
INPUT_NAMES = re.compile(r"[^/]+\.(in|txt)|pyproject\.toml|setup\.cfg|setup\.py")


def compiled_files(root: Path, files: list[str], dependency: Dependency, target: str) -> list[str]:
    """Those of `files` (the repository's dependency files) that are compiled requirements files pinning
    the dependency to another version than `target`."""
    canonical = pep508.canonical(dependency.name)
    found = []
    for file in files:
        if file_format(file) is not requirements_file:
            continue
        text = _text(root / file)
        if text is None or not roles.is_compiled(text):
            continue
        if roles.role(file, "requirements", "", constraints=frozenset(), compiled=True) != "lock":
            continue  # a compiled minimum-versions file pins an old version on purpose
        pins = requirements_file.find(text, canonical)
        if any(not _is_exactly(d.specifier, target) for d in pins):
            found.append(file)
    return found


def _is_exactly(specifier: str, target: str) -> bool:
    """Whether `specifier` pins exactly `target` (`==25.4` for 25.4.0 too; never a wildcard)."""
    written = specifier.strip()
    if not written.startswith("==") or written.startswith("===") or "*" in written:
        return False
    try:
        return Version(written[2:].strip()) == Version(target)
    except InvalidVersion:
        return False


def recompile_command(text: str, file: str, dependency: Dependency, target: str) -> list[str] | str:
    """uv's argv that recompiles `file` (repository-relative; run in its folder) with the dependency at
    exactly `target`, or why the header's command cannot be run again."""
    head = text.splitlines()[:HEADER_LINES]
    command = next((m.group(1) for line in head if (m := UV_HEADER.match(line))), None)
    upgrade = f"--upgrade-package {dependency.name}=={target}"
    if command is None:
        other = next((m.group(1) for line in head if (m := OTHER_HEADER.match(line))), None)
        tool = other.split()[0] if other else "pip-compile"
        shown = f"`{other} {upgrade}`" if other else f"its own tool with `{upgrade}`"
        return f"{file} is compiled by {tool}, which the tool does not run: recompile it with {shown}"
    try:
        words = shlex.split(command)[3:]
    except ValueError:
        return f"{file}: its header's command cannot be read ({command[:120]!r})"
    folder = PurePosixPath(file).parent
    kept: list[str] = []
    output = False
    index = 0
    while index < len(words):
        word = words[index]
        option, equals, value = word.partition("=") if word.startswith("--") else (word, "", "")
        if option in FLAGS and not equals:
            kept.append(option)
        elif option in VALUED:
            if not equals:
                index += 1
                if index == len(words):
                    return f"{file}: its header's option {option} has no value"
                value = words[index]
            kind = VALUED[option]
            if kind == "output":
                if PurePosixPath(value).name != PurePosixPath(file).name:
                    return f"{file}: its header writes another file ({value[:120]!r})"
                output = True
            elif kind == "file":
                problem = _plain_path(value, folder)
                if problem:
                    return f"{file}: its header's {option} {problem}"
                kept += [option, value]
            elif not WORD.fullmatch(value):
                return f"{file}: its header's {option} value is not a plain word ({value[:60]!r})"
            else:
                kept += [option, value]
        elif word.startswith("-"):
            return f"{file}: its header has the option {option[:60]!r}, which the tool does not pass on"
        else:
            problem = _plain_path(word, folder, inputs=True)
            if problem:
                return f"{file}: its header's input {problem}"
            kept.append(word)
        index += 1
    if not output:
        return f"{file}: its header's command names no output file"
    name = PurePosixPath(file).name
    return [
        "uv",
        "pip",
        "compile",
        *kept,
        "--output-file",
        name,
        "--upgrade-package",
        f"{dependency.name}=={target}",
        "--custom-compile-command",
        command,
        "--quiet",
        "--no-progress",
    ]


def _plain_path(value: str, folder: PurePosixPath, *, inputs: bool = False) -> str | None:
    """Why `value` is not a plain relative path inside the repository (from `folder`), else None.
    Existence is checked where the command runs (unsafe_paths)."""
    path = PurePosixPath(value)
    if (
        not value
        or path.is_absolute()
        or ".." in path.parts
        or value.startswith("-")
        or set(value) & set("\\:")
    ):
        return f"{value[:120]!r} is not a plain relative path"  # `:`: never a URL (uv would fetch it)
    if inputs and not INPUT_NAMES.fullmatch(path.name):
        return f"{value[:120]!r} is not a requirements, pyproject.toml, setup.cfg or setup.py file"
    return None


def unsafe_paths(argv: list[str], cwd: Path, root: Path) -> str | None:
    """The first file argument of `argv` (run in `cwd`) that is not a regular file inside `root` reached
    without a symbolic link, else None."""
    files = [a for i, a in enumerate(argv) if i >= 3 and _is_file_argument(argv, i)]
    for value in files:
        current = cwd
        for part in PurePosixPath(value).parts:
            current = current / part
            try:
                info = current.lstat()
            except OSError:
                return f"{value!r} does not exist"
            if stat.S_ISLNK(info.st_mode):
                return f"{value!r} is or lies behind a symbolic link"
        if not stat.S_ISREG(info.st_mode) or not current.resolve().is_relative_to(root.resolve()):
            return f"{value!r} is not a regular file inside the repository"
    return None


def _is_file_argument(argv: list[str], i: int) -> bool:
    word, before = argv[i], argv[i - 1]
    if word.startswith("-"):
        return False
    if before in VALUED:
        return VALUED[before] == "file"
    return before not in ("--upgrade-package", "--custom-compile-command", "--output-file")


def _text(path: Path) -> str | None:
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def recompiled_problem(
    text: str, file: str, dependency: Dependency, target: str, before: str = ""
) -> str | None:
    """Why the recompiled `text` cannot be taken, else None: the package must be pinned, at exactly
    `target` (a `no-emit-package` of the project's uv configuration drops it), and every requirement
    line must be a `name==version` pin (a URL, a path or an editable locks code no version names), or a
    line the file held before the recompile as it is (the project itself: `name @ file:.`)."""
    pins = requirements_file.find(text, pep508.canonical(dependency.name))
    if not pins or not all(_is_exactly(d.specifier, target) for d in pins):
        return f"{file} recompiled does not pin {dependency.name} at exactly {target}"
    kept = {line.strip() for line in before.splitlines()}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in kept or stripped.startswith(("#", "-")):
            continue
        if stripped and not PINNED.match(stripped):
            return (
                f"{file} recompiled holds a requirement that is not a name==version pin: {stripped[:120]!r}"
            )
    return None
