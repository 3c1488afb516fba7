"""The SDK's pins in the files that install packages outside the dependency files: container images, conda
environments, pre-commit hooks, CI jobs and requirements files below the root that no dependency file
reaches (which files and lines: adapters/install_scripts.py).

    found(root, canonical) -> [Dependency]    every pin of the SDK there, each uneditable

A pin is a requirement with a version in a command or a list: `RUN pip install acme-sdk==1.4.0`,
`additional_dependencies: ["acme-sdk>=1.4,<2"]`, a conda environment's `- acme-sdk=1.4`, `- acme-sdk 1.4.*`,
`- acme-sdk=1.4.0=py_0` or `- acme-sdk[version='>=1.4']`, `conda install acme-sdk=1.4` (conda's `=1.4` and
bare `1.4` mean every 1.4 release: read as `==1.4.*`). A version from a variable is read through the
file's own literal assignments (a Dockerfile's `ARG` / `ENV`, a CI file's `NAME: value`; `${NAME:-1.4}`
its default); one that stays a variable is a version nobody can read, which counts as excluding the target.
A requirement without a version admits every version and is not a pin.

The tool never edits these files (Dockerfiles and CI configuration are in config.DEFAULT_DENY_GLOBS; a
command is code), so each pin is uneditable, and what follows from it is by the kind of file:

  - a container image, a conda environment, a pre-commit hook (role dev): a pin that excludes the target
    stops the run before any edit (requires_human, workflow/declarations.py). The merged repository would
    otherwise build its image, environment or hook on the old version, with code migrated to the new one,
    while its tests here passed on the new one. A pin that admits the target proves nothing (the tests'
    install does not read it);
  - a CI job (role constraint): it may test an old version on purpose (a minimum-versions job). It is left
    as it is, and the merge request names it (declarations.kept_off_target);
  - a requirements file below the root (`docs/requirements.txt`, `examples/cli/requirements.txt`) that no
    dependency file reaches and no install line above names: the role its path gives (roles.py: docs ->
    dev, examples/cli -> runtime, `ci/constraints-min.txt` -> constraint). A docs build or an example
    installs it beside the migrated code, so one that excludes the target stops the run like an image's;
    a minimum-pins or constraints file is kept and named, like a CI job's. A pip-compile or uv pip compile
    output (its header says so: referencing's docs/requirements.txt, Flask's examples/celery) is a lock:
    one that locks another version than the target is a human's job after the bump, as a compiled file at
    the root is (recompile it: workflow/steps.py _stale_locks), and the tests still run. The bump does not
    edit these files: it would change what no test here installs.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from agentic_codemod.adapters import install_scripts
from agentic_codemod.adapters.install_scripts import CONDA, PIPFILE, PIXI, PROJECT, REQUIREMENTS, Script
from agentic_codemod.adapters.python import (
    hatch_toml,
    pep508,
    pyproject,
    requirements_file,
    roles,
    setup_cfg,
    setup_py,
)
from agentic_codemod.adapters.python.dependency_files import read_dependency_files
from agentic_codemod.config import CI_CONFIG_MAX_BYTES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import Dependency
from agentic_codemod.tools.rooted import RootedFS

_VAR = install_scripts.VARIABLE.pattern
_VERSION = rf"(?:[0-9]|{_VAR})(?:[A-Za-z0-9.*+!_-]|{_VAR})*"
_OP = r"(?:===|==|~=|!=|<=|>=|<|>)"
_NAME = r"(?<![A-Za-z0-9._/$-])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)"
# PEP 508: name, extras, then one or more comparisons (`acme-sdk[x] >= 1.4, <2`), not inside a longer word.
PIN = re.compile(
    rf"{_NAME}(?P<extras>\[[A-Za-z0-9._,\s-]*\])?\s*(?P<spec>{_OP}\s*{_VERSION}(?:\s*,\s*{_OP}\s*{_VERSION})*)"
    r"(?![A-Za-z0-9.*+!_$-])"
)
# conda's match spec on a command line: `acme-sdk=1.4`, `acme-sdk=1.4.0=py_0` (a build string after it).
CONDA_PIN = re.compile(rf"{_NAME}=(?P<version>{_VERSION})(?:=[A-Za-z0-9_.*]+)?(?![=A-Za-z0-9.*+!_$-])")
CONDA_COMMAND = re.compile(r"(?<![\w-])(?:conda|mamba|micromamba)(?![\w-])")
# A conda environment's list item: `- [channel::]name` and the rest of the line.
CONDA_ITEM = re.compile(r"\s*-\s*(?:[A-Za-z0-9_.-]+::)?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?P<rest>.*)")
POETRY_ADD = re.compile(r"(?<![\w-])poetry\s+add(?![\w-])")
AT_PIN = re.compile(rf"{_NAME}@(?P<spec>[^\s'\"`;&|]+)")
# An install line's requirement or constraint file: `-r X`, `--requirement=X`, `-c X`, `--constraint X`.
REQUIREMENT_FILE = re.compile(
    r"(?<![\w-])(?:(?:-r|-c)(?:=|\s*)|(?:--requirement|--constraints?)(?:=|\s+))(?P<path>[^\s;&|)=-][^\s;&|)]*)"
)
# What makes a file worth reading besides the SDK's name: a requirements or constraints file it installs.
NAMES_A_FILE = r"(?:-r|-c|--requirement|--constraints?)[=\s]*[^\s;&|)]+\.(?:txt|in|pip|lock)"
CONDA_BRACKET = re.compile(r"""\[\s*version\s*=\s*(['"])(?P<spec>[^'"]*)\1""")
# A requirement by URL (`acme-sdk @ git+https://...@v1.4.0`, a wheel's URL) or a VCS URL naming it by
# `#egg=`: no version anybody can read, so it counts as excluding the target (specifier `@ URL`).
URL_PIN = re.compile(
    rf"{_NAME}(?:\[[A-Za-z0-9._,\s-]*\])?\s*@\s*(?P<url>[A-Za-z][A-Za-z0-9+.-]*:[^\s'\"`;,)\]]+)"
)
EGG_PIN = re.compile(r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"`;,)\]]*#egg=(?P<name>[A-Za-z0-9._-]+))")
# `pip download` and `pip wheel` fetch packages and install none.
FETCH_ONLY = re.compile(r"(?<![\w-])(?:pip[0-9.]*|uv\s+pip)\s+(?:download|wheel)(?![\w-])")


def found(root: Path, canonical: str) -> list[Dependency]:
    """Every pin of `canonical` in the install scripts of `root`, in file then line order, those of the
    requirements files below the root last (RequiresHuman where one that may pin it cannot be read for
    sure: adapters/install_scripts.py)."""
    canonical = pep508.canonical(canonical)
    name = name_pattern(canonical)
    mentions = install_scripts.mentioning(f"{name}|{NAMES_A_FILE}")  # the SDK, or a file that may name it
    scripts = install_scripts.scripts(root, install_scripts.ALL_KINDS, mentions)
    read = set(read_dependency_files(root).files) if scripts else set()  # only where a script may name one
    fs = RootedFS(root, CI_CONFIG_MAX_BYTES)
    pins = [
        d
        for script in scripts
        if script.kind not in (REQUIREMENTS, PROJECT, PIPFILE, PIXI)  # parsed whole, below
        for d in _pins(root, fs, script, canonical, re.compile(name, re.I), read)
    ]
    installed = read | {d.file for d in pins}  # a requirements file an install line names is read there
    for script in scripts:
        if script.kind == REQUIREMENTS and script.file not in installed:
            pins += _in_a_requirements_file_below_the_root(script, canonical)
        elif script.kind == PIPFILE or (script.kind == PROJECT and script.file not in read):
            # (a Pipfile is a dependency file by name, for the manifest gate, but no reader of the bump's)
            pins += [] if _test_data(script.file) else _in_a_project(script, canonical)
        elif script.kind == PIXI and not _test_data(script.file):
            pins += _in_pixi(script, script.text, canonical, ())
    return pins + _root_pixi(root, canonical)


def _root_pixi(root: Path, canonical: str) -> list[Dependency]:
    """The root pyproject.toml's `[tool.pixi]` tables (a dependency file, whose other tables the bump
    reads and edits): pixi's own, read as a pixi.toml is."""
    path = root / "pyproject.toml"
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > CI_CONFIG_MAX_BYTES:
            return []  # the dependency files' reader refuses such a file (InputError) before this runs
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    if "tool.pixi" not in text and "[tool]" not in text:
        return []
    script = Script("pyproject.toml", PIXI, [], [], text=text)
    return _in_pixi(script, text, canonical, ("tool", "pixi"))


# pixi's tables of packages (conda's in `dependencies`, PyPI's in `pypi-dependencies`), at the top, in a
# feature (`[feature.min-versions.dependencies]`) or for a platform (`[target.linux-64.dependencies]`).
PIXI_TABLES = ("dependencies", "pypi-dependencies", "host-dependencies", "build-dependencies")


def _in_pixi(script: Script, text: str, canonical: str, prefix: tuple[str, ...]) -> list[Dependency]:
    """The SDK's pins in a pixi manifest (dask's, xarray's: helper-22's survey), each uneditable. The default
    environment's tables (the top's, a platform target's) are what `pixi run` installs: dev, so one that
    excludes the target stops the run. A feature's are a matrix of versions tested on purpose (dask's
    `py310` numpy 1.26, xarray's `minimal`, `mindeps-*`): constraint, kept and named in the merge request,
    as a CI job's. conda's `=1.4` and bare `1.4` are every 1.4 release; a table value's `version`; git, a
    path or a URL: a version nobody can read."""
    try:
        data: object = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    for key in prefix:
        data = data.get(key) if isinstance(data, dict) else None
    if not isinstance(data, dict):
        return []
    pins = []
    for where, table in _pixi_tables(data):
        for key, value in table.items():
            if pep508.canonical(key) != canonical:
                continue
            spec = _pixi_spec(value)
            if spec is None:
                continue
            role: install_scripts.Role = "constraint" if "feature" in where else "dev"
            line = _pixi_line(text, (*prefix, *where), key)
            named = ".".join([*prefix, *where])
            why = (
                f"{script.file} line {line} pins {key} {spec[:200]} ([{named}]), in {script.kind}, which the "
                "tool does not edit"
            )
            pins.append(install_scripts.declared(script, script.file, line, key, spec, role, why))
    return pins


def _pixi_tables(data: dict[str, object]) -> list[tuple[tuple[str, ...], dict[str, object]]]:
    """(where, table) of every package table: the top's, each feature's and each target's (a feature's
    targets too)."""
    found: list[tuple[tuple[str, ...], dict[str, object]]] = []

    def tables(node: object, where: tuple[str, ...], depth: int) -> None:
        if not isinstance(node, dict) or depth > 3:
            return
        for name in PIXI_TABLES:
            if isinstance(node.get(name), dict):
                found.append(((*where, name), node[name]))
        for group in ("feature", "target"):
            for key, inner in (node.get(group) or {}).items() if isinstance(node.get(group), dict) else ():
                tables(inner, (*where, group, key), depth + 1)

    tables(data, (), 0)
    return found


def _pixi_spec(value: object) -> str | None:
    """A pixi entry's version as PEP 440 (None: every version)."""
    if isinstance(value, dict):
        source = next((value[k] for k in ("git", "path", "url") if k in value), None)
        if isinstance(source, str):
            return f"@ {source}"
        value = value.get("version", "*")
    if not isinstance(value, str) or value.strip() in ("", "*"):
        return None
    text = value.strip()
    if re.match(_OP, text):  # `>=1.4,<2`, `==1.4.0`: as written
        return re.sub(r"\s+", "", text)
    return _conda_spec(text if text.startswith("=") else f" {text}")


def _pixi_line(text: str, table: tuple[str, ...], key: str) -> int:
    """The 1-based line of `key =` under the header `[table]` (1 where it cannot be told: a table
    written inline or under a parent header)."""
    pattern = re.compile(rf"""\s*["']?{re.escape(key)}["']?\s*=""")
    current: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        header = re.fullmatch(r"\s*\[([^\[\]]+)\]\s*(?:#.*)?", line)
        if header:
            current = tuple(part.strip().strip("\"'") for part in header[1].split("."))
        elif current == table and pattern.match(line):
            return number
    return 1


TEST_FOLDERS = frozenset({"tests", "test", "testing"})


def _test_data(file: str) -> bool:
    """A project file inside a tests folder is what the tests read (tomlkit's tests/examples/pyproject.toml
    pins pytest ^3.4 as a TOML sample), never a project the repository installs."""
    return not TEST_FOLDERS.isdisjoint(part.lower() for part in PurePosixPath(file).parts[:-1])


PARSERS = {
    "pyproject.toml": pyproject,
    "setup.cfg": setup_cfg,
    "setup.py": setup_py,
    "hatch.toml": hatch_toml,
}


def _in_a_project(script: Script, canonical: str) -> list[Dependency]:
    """The SDK's pins in a project below the root (its pyproject.toml, setup.cfg, setup.py, hatch.toml, read
    by the adapter's own readers), or a Pipfile's: each with the role its section gives, uneditable (the
    bump edits the root project's declarations only). A file its reader cannot read is no pin: a project
    below the root may well be test data."""
    name = PurePosixPath(script.file).name
    try:
        found = (
            _pipfile(script.text, canonical)
            if script.kind == PIPFILE
            else PARSERS[name].find(script.text, canonical)
        )
    except (ValueError, KeyError):
        return []
    pins = []
    for d in _with_urls(found, script):
        if not d.specifier:  # no version (or a computed value's marker): admits every version
            continue
        role = roles.role(script.file, d.kind, d.section, constraints=frozenset(), compiled=False)
        why = (
            f"{script.file} line {d.line} pins {d.name}{d.specifier[:200]} ({d.section or name}), in "
            f"{script.kind}, which the bump does not edit"
        )
        pins.append(install_scripts.declared(script, script.file, d.line, d.name, d.specifier, role, why))
    return pins


PIPFILE_ROLES = {"packages": "runtime", "dev-packages": "dev"}


def _pipfile(text: str, canonical: str) -> list[pep508.Declaration]:
    """The SDK's entries of a Pipfile's package tables (`acme-sdk = "==1.4.0"`, `{version = ">=1.4"}`;
    `*` admits every version), each as a PEP 440 declaration of the table's section."""
    data = tomllib.loads(text)
    found = []
    for section, table in data.items():
        if section in ("source", "requires", "scripts", "pipenv") or not isinstance(table, dict):
            continue
        for key, value in table.items():
            if pep508.canonical(key) != canonical:
                continue
            version = value.get("version", "") if isinstance(value, dict) else value
            source = (
                next((value[k] for k in ("git", "path", "file") if k in value), None)
                if isinstance(value, dict)
                else None
            )
            if isinstance(source, str):  # from git, a path or a file: a version nobody can read
                version = f"@ {source}"
            if not isinstance(version, str) or version.strip() in ("", "*"):
                continue
            role_section = {"packages": "project.dependencies"}.get(section, f"dependency-groups.{section}")
            line = _line_of(text, section, key)
            found.append(pep508.Declaration(key, version.strip(), line, "pipfile", "pep440", role_section))
    return found


def _line_of(text: str, section: str, key: str) -> int:
    """The 1-based line of `key =` inside `[section]` (1 where it cannot be told)."""
    current = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            current = stripped.strip("[]").strip()
        elif current == section and re.match(rf"""["']?{re.escape(key)}["']?\s*=""", stripped):
            return number
    return 1


def name_pattern(canonical: str) -> str:
    """The name as any spelling PEP 503 folds to `canonical` writes it: `acme-sdk`, `Acme_SDK`, `acme.sdk`."""
    return "[-_.]+".join(re.escape(part) for part in canonical.split("-"))


def _pins(
    root: Path, fs: RootedFS, script: Script, canonical: str, name: re.Pattern[str], read: set[str]
) -> list[Dependency]:
    pins = []
    assignments = install_scripts.Assignments(script)
    for number, line in script.lines:
        if not name.search(line) and not REQUIREMENT_FILE.search(line):
            continue
        if FETCH_ONLY.search(line) and "install" not in line:  # `pip download`: installs nothing
            continue
        values = assignments.at(number)
        for found_name, written, specifier in _on_line(line, script.kind):
            if pep508.canonical(found_name) != canonical:
                continue
            pins.append(
                install_scripts.pin(
                    script, number, found_name, written, install_scripts.resolved(specifier, values)
                )
            )
        for file in _requirement_files(root, script, line, values, read):
            pins += _in_requirements_file(fs, file, script, number, canonical)
    return pins


def _requirement_files(
    root: Path, script: Script, line: str, values: Mapping[str, str], read: set[str]
) -> list[str]:
    """The requirement and constraint files an install line names (`pip install -r X`, `-c X`) that the
    adapter does not read as dependency files, as repository-relative paths: X from the script's folder
    or the root (the usual build contexts), an absolute path in the image by its name there."""
    found = []
    folder = PurePosixPath(script.file).parent
    for match in REQUIREMENT_FILE.finditer(line):
        written = install_scripts.resolved(match["path"].strip("'\""), values)
        path = PurePosixPath(written)
        names = [path.name] if path.is_absolute() else [path.as_posix()]
        for candidate in [(folder / n).as_posix() for n in names] + names:
            normal = posixpath.normpath(candidate)
            if normal.startswith("../") or normal in read or normal in found:
                continue
            try:
                exists = (root / normal).is_file() or (root / normal).is_symlink()
            except OSError:  # a path no file system holds (too long): no file of the repository
                continue
            if exists:
                found.append(normal)
                break
    return found


def _in_requirements_file(
    fs: RootedFS, file: str, script: Script, number: int, canonical: str
) -> list[Dependency]:
    """The SDK's pins in a requirements file an install script names, which no dependency file reaches."""
    try:
        text = fs.read_bytes(file).decode("utf-8", errors="replace")
        declarations = requirements_file.find(text, canonical)
    except (OSError, ValueError) as exc:  # a link, too large, or no requirements text: read nowhere else
        raise RequiresHuman(
            f"{file}, which {script.file} line {number} installs in {script.kind}, cannot be read ({exc}): "
            "a pin of the SDK there would be missed",
            hint="make it a regular requirements file inside the repository under "
            f"{CI_CONFIG_MAX_BYTES} bytes, or check it for pins of the SDK by hand",
        ) from exc
    # a pip-compile output keeps its role whoever installs it (referencing's docs build installs its
    # compiled docs/requirements.txt): a lock to recompile after green tests, as one below the root is
    compiled = roles.is_compiled("\n".join(text.splitlines()[: install_scripts.HEADER_LINES]))
    role = "lock" if compiled else install_scripts.role_of(script, number)
    return [
        install_scripts.declared(
            script,
            file,
            d.line,
            d.name,
            d.specifier,
            role,
            f"{file} line {d.line} pins {d.name}{d.specifier[:200]}, installed by {script.file} line "
            f"{number} in {script.kind}, which the tool does not edit",
        )
        for d in declarations
        if d.specifier
    ]


def _in_a_requirements_file_below_the_root(script: Script, canonical: str) -> list[Dependency]:
    """The SDK's pins in a requirements file below the root that no dependency file reaches, with the role
    its path gives; a pip-compile output's are lock entries (its header says so)."""
    text = "\n".join(line for _, line in script.lines)
    compiled = roles.is_compiled(script.header)
    role = roles.role(script.file, requirements_file.KIND, "", constraints=frozenset(), compiled=compiled)
    return [
        install_scripts.declared(
            script,
            script.file,
            d.line,
            d.name,
            d.specifier,
            role,
            f"{script.file} line {d.line} pins {d.name}{d.specifier[:200]}, in {script.kind} below the root "
            "that no dependency file reaches (a docs build, an example or a job installs it), which the bump "
            "does not edit",
        )
        for d in _with_urls(requirements_file.find(text, canonical), script)
        if d.specifier
    ]


def _with_urls(found: list[pep508.Declaration], script: Script) -> list[pep508.Declaration]:
    """`found`, each declaration without a version that is a requirement by URL on its line given the
    specifier `@ URL` (a version nobody can read: it counts as excluding the target)."""
    lines = script.text.split("\n") if script.text else [text for _, text in script.lines]
    out = []
    for d in found:
        line = lines[d.line - 1] if not d.specifier and 0 < d.line <= len(lines) else ""
        urls = [u for n, _, u in _url_pins(line) if pep508.canonical(n) == pep508.canonical(d.name)]
        out.append(dataclasses.replace(d, specifier=urls[0]) if urls else d)
    return out


def _on_line(line: str, kind: str) -> list[tuple[str, str, str]]:
    """(name, the pin as written, its specifier in PEP 440) of each pin on one line."""
    pins = [(m["name"], m[0].strip(), re.sub(r"\s+", "", m["spec"])) for m in PIN.finditer(line)]
    if kind == CONDA and not pins:
        item = CONDA_ITEM.fullmatch(line)
        spec = _conda_spec(item["rest"]) if item else None
        pins += [(item["name"], line.strip().lstrip("- "), spec)] if item and spec else []
    elif CONDA_COMMAND.search(line):
        pins += [(m["name"], m[0], _fuzzy(m["version"])) for m in CONDA_PIN.finditer(line)]
    if POETRY_ADD.search(line):  # `poetry add acme-sdk@1.4.0` (a bare version is that version)
        pins += [(m["name"], m[0], _poetry(m["spec"])) for m in AT_PIN.finditer(line)]
    return pins + _url_pins(line)


def _url_pins(line: str) -> list[tuple[str, str, str]]:
    """(name, as written, `@ URL`) of each requirement by URL on a line: a version nobody can read."""
    found = [(m["name"], m[0].strip(), f"@ {m['url']}") for m in URL_PIN.finditer(line)]
    return found + [(m["name"], m[0], f"@ {m['url']}") for m in EGG_PIN.finditer(line)]


def _poetry(spec: str) -> str:
    return f"=={spec}" if re.fullmatch(r"[0-9][A-Za-z0-9.+!_-]*", spec) else spec


def _conda_spec(rest: str) -> str | None:
    """A conda list item's version spec (after its name) in PEP 440; None where it names no version."""
    bracket = CONDA_BRACKET.match(rest.strip())
    if bracket:
        return re.sub(r"\s+", "", bracket["spec"]) or None
    text = rest.strip().split("=", 2) if rest.startswith("=") and not rest.startswith("==") else None
    if text is not None:  # `=1.4` or `=1.4=py_0`
        return _fuzzy(text[1].strip()) if len(text) > 1 and text[1].strip() else None
    words = rest.split()
    if not words:
        return None
    if re.match(_OP, words[0]):  # `>=1.4,<2` (a build string after a space is left out)
        return words[0]
    return _fuzzy(words[0]) if re.fullmatch(_VERSION, words[0]) else None


def _fuzzy(version: str) -> str:
    """conda's `=1.4` (every 1.4 release: 1.4.*) in PEP 440."""
    return f"=={version}" if version.endswith("*") else f"=={version}.*"
