"""The files that install packages outside an ecosystem's dependency files, read for the adapters' readers of
the SDK's pins there (adapters/<ecosystem>/install_scripts.py, the Adapter's `install_script_pins`).

    scripts(root, kinds, mentions) -> [Script(file, kind, lines, assignments)]   RequiresHuman where one
                                                      that may pin the SDK cannot be read for sure
    mentioning(pattern) -> mentions                   a test of a file's bytes (UTF-8, or UTF-16) for the
                                                      SDK's name, a regular expression of the adapter's
    Assignments(script).at(line) -> {NAME: value}     the literal assignments in force at a line (read once,
                                                      going down the script)
    pin(script, line, name, written, specifier) -> Dependency   one pin, uneditable, with its role
    declared(script, file, line, name, specifier, role, why) -> Dependency   any declaration read through a
                                                      script, uneditable (the adapters' readers)
    resolved(text, values) -> text                    its variables replaced where the file fixes them

Which files (KINDS, by path; anywhere in the repository but in folders of other projects' code, tools'
state and test data (fixtures/, testdata/): SKIPPED_FOLDERS; a folder that is a link is not entered):

    a container image     Dockerfile, Containerfile, with any suffix (`Dockerfile.dev`, `dockerfile`),
                          `*.Dockerfile`, `*.Containerfile` (not `dockerfile_utils.py`, `Dockerfile.md`)
    a conda environment   a YAML file named environment*, env*, conda*, or in envs/ or environments/;
                          a conda recipe's meta.yaml
    a pre-commit hook     .pre-commit-config.yaml at the root
    a docs build          .readthedocs.yaml at the root (`build.jobs` / `build.commands` install lines)
    a CI job              `*gitlab-ci*.yml` and YAML under .gitlab/, .github/workflows/*, .github/actions/,
                          and at the root .circleci/config.yml, .travis.yml, azure-pipelines.yml,
                          appveyor.yml, Jenkinsfile
    a build script        Makefile, GNUmakefile, `*.mk`, `*.sh`, `*.bash` anywhere (`make install`,
                          `scripts/setup.sh`)
    a tox or nox env      the root's tox.ini (the install commands of its envs, `commands_pre = pip install
                          ...`) and noxfile.py (its sessions' `session.install(...)`, `conda_install`); the
                          env or session the tests run in is read as declarations too
                          (adapters/python/test_requirements.py)
    a project below       a pyproject.toml, setup.cfg, setup.py or hatch.toml below the root (a monorepo's
      the root            other packages, `examples/app/`): the bump edits the root project's only
    a Pipfile             the root's or one below it (pipenv reads it; its Pipfile.lock is a lockfile)
    a pixi environment    a pixi.toml anywhere (and the root pyproject.toml's [tool.pixi] tables: the
                          Python adapter's reader), conda and PyPI dependencies of its features
    a package below       an npm package.json below the root that is no workspace of the root's (a lerna
      the root            package, an example): npm's adapter only
    a requirements file   below the root, named as pip's are (`docs/requirements.txt`,
                          `examples/cli/requirements-dev.in`, `ci/constraints-min.txt`, `tools/lint.pip`,
                          `docs/requirements/base.txt`): a docs build, an example or a job installs it
                          (the root's own, and what they include, are the adapter's dependency files)

How each is read: through tools/rooted.py, never through a link (a link to a regular file inside the
repository is read at its target; one to nothing inside it is no file in the clone); only where its bytes
mention the SDK (`mentions`, the adapter's test: a file that does not name it cannot pin it). Its text
as logical lines: a line ending in `\\` goes on in the next, past blank and comment lines (as Docker
reads a RUN); each physical line keeps its number, its comment cut off (`#` at the start or after a
space, outside quotes). Of a container image or a CI job, the logical lines that name an installer
(INSTALLER: pip, uv, pipx, poetry, conda, npm, yarn, pnpm ...) and the assignments (`ARG`/`ENV`, a CI
file's `NAME: value`: a list of packages may sit in a variable) are kept; of a conda environment or a
pre-commit hook (lists of packages), every line.

Fail closed: a file that may pin the SDK and is a link out of the repository, past CI_CONFIG_MAX_BYTES, or
holds a NUL byte (UTF-16, binary), a folder that cannot be listed, or a walk past
INSTALL_SCRIPTS_MAX_ENTRIES entries ends the run requires_human, naming it: a pin in what was not read
would be missed.
"""

from __future__ import annotations

import os
import re
from collections import ChainMap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agentic_codemod.config import CI_CONFIG_MAX_BYTES, INSTALL_SCRIPTS_MAX_ENTRIES
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import SCRIPT_KIND, Dependency
from agentic_codemod.tools.rooted import RootedFS

Role = Literal["runtime", "extra", "test", "dev", "constraint", "lock", "build"]  # Dependency.role

IMAGE, CONDA, HOOK, CI = "a container image", "a conda environment", "a pre-commit hook", "a CI job"
BUILD, ENVS, REQUIREMENTS = "a build script", "a tox or nox env", "a requirements file"
DOCS, PIXI = "a docs build", "a pixi environment"
PROJECT, PIPFILE, PACKAGE = "a project below the root", "a Pipfile", "a package below the root"
ALL_KINDS = frozenset({IMAGE, CONDA, HOOK, CI, BUILD, ENVS, REQUIREMENTS, PROJECT, PIPFILE, DOCS, PIXI})
# A pin's role by the kind of file: what an image, environment, hook or build script installs must admit
# the target (dev: workflow/declarations.py stops the run); a CI job may test an old version on purpose
# (constraint), and so may a build script whose path says so (`ci/test-oldest-deps.sh`: MINIMUM_WORDS).
# A requirements file's pins take the role its name gives (the adapter's reader: python/install_scripts.py).
ROLES: dict[str, Literal["dev", "constraint"]] = {
    IMAGE: "dev",
    CONDA: "dev",
    HOOK: "dev",
    CI: "constraint",
    BUILD: "dev",
    ENVS: "dev",
    DOCS: "dev",
}
# (not "minimal": `install-minimal.sh` builds a minimal image, not the oldest versions)
MINIMUM_WORDS = frozenset({"min", "minimum", "mins", "oldest", "lowest", "floor"})
SPECIFIER_MAX_CHARS = 200  # longer is cut, and so unreadable (it then counts as excluding the target)
_YAML = r"\.ya?ml"
_ANYWHERE = r"(?:.+/)?"
# What a file named dockerfile_utils.py, Dockerfile.md or dockerfile-layers.png is: no image.
_NOT_IMAGE = (
    "py|pyi|js|mjs|cjs|ts|go|rs|java|rb|c|h|sh|md|rst|txt|json|toml|cfg|ini|html|j2|jinja|tpl|tmpl|ya?ml"
    "|png|jpe?g|gif|svg|pdf|ico|zip|gz|tgz|bz2|xz|whl|tar"
)
# (kind, a pattern the whole repository-relative path matches): the first that matches names the kind.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        IMAGE,
        re.compile(
            rf"(?is){_ANYWHERE}(?:(?:docker|container)file(?![^/]*\.(?:{_NOT_IMAGE})$)(?:[._-][^/]*)?"
            r"|[^/]+\.(?:docker|container)file)"
        ),
    ),
    (HOOK, re.compile(rf"\.pre-commit-config{_YAML}")),
    (DOCS, re.compile(rf"\.?readthedocs{_YAML}")),  # Read the Docs: build.jobs, build.commands
    (
        CI,
        re.compile(
            rf"(?is){_ANYWHERE}[^/]*gitlab-ci[^/]*{_YAML}|\.gitlab/.+{_YAML}"
            rf"|\.github/workflows/[^/]+{_YAML}|\.github/actions/.+{_YAML}"
        ),
    ),
    (
        CI,
        re.compile(
            rf"\.circleci/config{_YAML}|\.travis{_YAML}|azure-pipelines{_YAML}|appveyor{_YAML}|Jenkinsfile"
        ),
    ),
    (
        CONDA,
        re.compile(
            rf"(?is){_ANYWHERE}(?:(?:[^/]*[._-])?(?:env|environment|conda)(?:[._-][^/]*)?{_YAML}"
            rf"|(?:envs|environments)/[^/]+{_YAML}|(?:[^/]*recipe[^/]*)/meta{_YAML})"
        ),
    ),
    (
        BUILD,
        re.compile(rf"(?is){_ANYWHERE}(?:(?:GNU)?makefile|[^/]+\.(?:mk|sh|bash))"),
    ),
    (ENVS, re.compile(r"tox\.ini|noxfile\.py")),  # a deps line is no install line: the adapter reads it
    (PROJECT, re.compile(r"(?s).+/(?:pyproject\.toml|setup\.cfg|setup\.py|hatch\.toml)")),
    (PIPFILE, re.compile(rf"(?s){_ANYWHERE}Pipfile")),
    (PIXI, re.compile(rf"(?s){_ANYWHERE}pixi\.toml")),
    (PACKAGE, re.compile(r"(?s).+/package\.json")),
    (
        REQUIREMENTS,  # below the root only: `.+/`
        re.compile(
            r"(?is).+/(?:[^/]*requirements[^/]*\.(?:txt|in|pip|lock)|constraints?[^/]*\.(?:txt|in)|[^/]+\.pip"
            r"|requirements/[^/]+\.(?:txt|in))"
        ),
    ),
)
# Files whose lines are lists of packages (every line is kept), or that the adapter parses whole.
LISTS = frozenset({CONDA, HOOK, REQUIREMENTS, PROJECT, PIPFILE, PACKAGE, PIXI})
PARSED = frozenset(
    {PROJECT, PIPFILE, PACKAGE, PIXI}
)  # files the adapter's own readers parse (TOML, setup.cfg, setup.py)
# Folders of other projects' code, tools' state and test data, never the repository's own installs.
SKIPPED_FOLDERS = frozenset(
    {".git", "node_modules", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache", "site-packages"}
    | {"fixtures", "testdata", "test_data", "__fixtures__"}
)
INSTALLER = re.compile(
    r"(?i)(?<![\w.-])(?:pip[0-9.]*|uvx?|pipx|pipenv|poetry|pdm|conda|mamba|micromamba|easy_install|npm|npx"
    r"|yarn|pnpm|pnpx|bun|bunx)(?![\w-])"
)
# A variable in a version: `$NAME`, `${NAME}`, `${NAME:-default}`, GitHub's `${{ matrix.acme }}`.
VARIABLE = re.compile(
    r"\$(?:\{\{[^}\n]{0,200}\}\}|\{[A-Za-z_][A-Za-z0-9_]{0,64}(?::?-[^}\s]{0,100})?\}|[A-Za-z_][A-Za-z0-9_]{0,64}"
    r"|\([A-Za-z_][A-Za-z0-9_]{0,64}\))"  # make's $(NAME)
)
# Literal assignments a variable may take its value from: a Dockerfile's, a CI file's (an upper-case key).
ASSIGNMENT = {
    IMAGE: re.compile(
        r"""\s*(?:ARG|ENV)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:=|\s+)(?P<quote>["']?)(?P<value>.*?)(?P=quote)\s*"""
    ),
    CI: re.compile(r"""\s*(?P<name>[A-Z_][A-Z0-9_]*)\s*:\s*(?P<quote>["']?)(?P<value>.*?)(?P=quote)\s*"""),
    # a shell's `NAME=value` (`export` too), make's `NAME = value`, `:=`, `?=`
    BUILD: re.compile(
        r"""\s*(?:export\s+)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?:[:?]?=)\s*(?P<quote>["']?)(?P<value>.*?)(?P=quote)\s*"""
    ),
}
# What a nox session installs with: `session.install("acme-sdk==1.4.0")` (no installer's name on the line).
NOX_INSTALL = re.compile(r"\.(?:conda_)?install\s*\(")  # session.conda_install(...) too
HEADER_LINES = 12  # Script.header: as many first lines as roles.is_compiled reads
STAGE = re.compile(r"(?i)\s*FROM\s")  # a Dockerfile's stage starts here: its ARGs and ENVs start afresh


@dataclass(frozen=True)
class Script:
    file: str  # repository-relative POSIX path
    kind: str  # IMAGE, CONDA, HOOK or CI
    lines: list[tuple[int, str]]  # (1-based physical line number, its text without the comment)
    # Every line of a container image or CI job (for the assignments a variable may take), else none.
    assignments: list[tuple[int, str]]
    header: str = ""  # the file's first lines as written, comments kept (a compiled file says so there)
    text: str = ""  # the whole text as written, of a file the adapter parses whole (PARSED)


def scripts(root: Path, kinds: frozenset[str], mentions: Callable[[bytes], bool]) -> list[Script]:
    """Every install script of `root` of these kinds whose bytes `mentions` the SDK, with the lines a
    reader of pins looks at (module docstring)."""
    fs = RootedFS(root, CI_CONFIG_MAX_BYTES)
    found = []
    for file, kind in _listed(root):
        if kind not in kinds:
            continue
        text = _read(root, fs, file, mentions)
        if text is None:
            continue
        physical = [(n, _uncommented(line.rstrip("\r"))) for n, line in enumerate(text.split("\n"), 1)]
        header = "\n".join(text.split("\n", HEADER_LINES)[:HEADER_LINES])
        whole = text if kind in PARSED else ""
        found.append(
            Script(file, kind, _lines(physical, kind), [] if kind in LISTS else physical, header, whole)
        )
    return found


def mentioning(pattern: str) -> Callable[[bytes], bool]:
    """Whether a file's bytes name the SDK (`pattern`, case-insensitive), in UTF-8 or UTF-16: a file that
    does not cannot pin it."""
    compiled = re.compile(pattern, re.IGNORECASE)

    def mentions(data: bytes) -> bool:
        texts = [data.decode("utf-8", errors="ignore")]
        if b"\0" in data:
            texts += [data.decode(codec, errors="ignore") for codec in ("utf-16-le", "utf-16-be")]
        return any(compiled.search(text) for text in texts)

    return mentions


def kind_of(file: str) -> str | None:
    """What installs with the file at this repository-relative path, or None: not an install script."""
    return next((kind for kind, pattern in KINDS if pattern.fullmatch(file)), None)


def _listed(root: Path) -> list[tuple[str, str]]:
    def unlisted(exc: OSError) -> None:
        where = Path(exc.filename).relative_to(root).as_posix() if exc.filename else "a folder"
        raise RequiresHuman(
            f"{where} cannot be listed ({exc.strerror}): a Dockerfile, conda environment or CI job there "
            "could pin the SDK",
            hint="make the folder readable, or check it for pins of the SDK by hand",
        )

    found, entries = [], 0
    for top, folders, names in os.walk(root, followlinks=False, onerror=unlisted):
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
        for name in names:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            kind = kind_of(rel)
            if kind is not None:
                found.append((rel, kind))
    return sorted(found)


def _read(root: Path, fs: RootedFS, file: str, mentions: Callable[[bytes], bool]) -> str | None:
    """The file's text, or None where it cannot pin the SDK (it does not name it, or it is a link to
    nothing inside the repository); RequiresHuman where it may and cannot be read for sure."""
    path, target = root / file, file
    if path.is_symlink():
        try:
            real, inside = path.resolve(), root.resolve()
        except (RuntimeError, OSError) as exc:  # a loop of links (3.11 raises RuntimeError)
            raise _unread(file, "is a link that cannot be followed (a loop)") from exc
        if real.is_relative_to(inside) and not real.exists():
            return None  # a link to a file the clone does not hold (a generated one): nothing installs it
        if not real.is_relative_to(inside) or not real.is_file():
            raise _unread(file, "is a link out of the repository, or to no regular file")
        target = real.relative_to(inside).as_posix()
    try:
        size = (root / target).stat().st_size
        if size > CI_CONFIG_MAX_BYTES:
            with open(root / target, "rb") as stream:  # only to look for the SDK's name
                if not mentions(stream.read(CI_CONFIG_MAX_BYTES * 32)) and size <= CI_CONFIG_MAX_BYTES * 32:
                    return None
            raise _unread(file, f"is larger than {CI_CONFIG_MAX_BYTES} bytes (config.CI_CONFIG_MAX_BYTES)")
        data = fs.read_bytes(target)
    except (OSError, ValueError) as exc:  # tools/rooted.py refused it (a link on the way, swapped, grown)
        raise _unread(file, f"cannot be read ({exc})") from exc
    if not mentions(data):
        return None
    if b"\0" in data:
        raise _unread(file, "holds NUL bytes (UTF-16 or binary)")
    return data.decode("utf-8", errors="replace")


def _unread(file: str, why: str) -> RequiresHuman:
    return RequiresHuman(
        f"{file} installs packages outside the dependency files and may name the SDK, and {why}: a pin of "
        "the SDK there would be missed",
        hint="make it a regular UTF-8 file inside the repository, or check it for pins of the SDK by hand",
    )


def _uncommented(line: str) -> str:
    """The line without its comment: from a `#` at its start or after a space, outside quotes."""
    quote = ""
    for i, char in enumerate(line):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def _lines(physical: list[tuple[int, str]], kind: str) -> list[tuple[int, str]]:
    """The physical lines a reader looks at: every line of a list of packages; else those of the logical
    lines that name an installer, and the assignments."""
    if kind in LISTS:
        return physical
    assignment = ASSIGNMENT.get(kind)
    kept: list[tuple[int, str]] = []
    logical: list[tuple[int, str]] = []
    for number, line in physical:
        if logical and not line.strip():  # a blank or comment line inside a continuation: passed over
            continue
        logical.append((number, line))
        if line.rstrip().endswith("\\") and number < len(physical):
            continue
        if kind == ENVS and _open_call(logical) and len(logical) < CALL_MAX_LINES and number < len(physical):
            continue  # `session.install(` spread over lines, as black writes a long call
        if any(INSTALLER.search(part) or NOX_INSTALL.search(part) for _, part in logical) or (
            assignment is not None and assignment.fullmatch(logical[0][1])
        ):
            kept += logical
        logical = []
    if any(INSTALLER.search(part) for _, part in logical):  # the file ended inside a continuation
        kept += logical
    return kept


CALL_MAX_LINES = 200  # a call of a noxfile's read as one logical line up to this many lines
PY_STRING = re.compile(r""""(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""")


def _open_call(logical: list[tuple[int, str]]) -> bool:
    """Whether the lines so far leave a parenthesis open (a Python call goes on in the next line); what
    strings hold (`session.run("echo", "(")`) is no parenthesis. The lines come without comments."""
    text = PY_STRING.sub("", "".join(line for _, line in logical))
    return text.count("(") > text.count(")")


class Assignments:
    """The literal assignments in force at each line of a script, read once as a reader goes down its
    lines (`at`, for line numbers that never decrease): a Dockerfile's in their stage, over those before its
    first FROM (each stage may take them again); the last one wins."""

    def __init__(self, script: Script) -> None:
        self._pattern = ASSIGNMENT.get(script.kind)
        self._stages = script.kind == IMAGE
        self._lines = iter(script.assignments if self._pattern is not None else [])
        self._next: tuple[int, str] | None = next(self._lines, None)
        self._before_any_stage: dict[str, str] = {}
        self._in_a_stage = False
        self._values: dict[str, str] = {}

    def at(self, before: int) -> Mapping[str, str]:
        """NAME -> value in force at line `before` (the assignments on the lines above it)."""
        while self._next is not None and self._next[0] < before:
            self._take(self._next[1])
            self._next = next(self._lines, None)
        return ChainMap(self._values, self._before_any_stage)

    def _take(self, line: str) -> None:
        if self._stages and STAGE.match(line):
            if not self._in_a_stage:  # the first FROM: what came before it holds for every stage
                self._before_any_stage, self._in_a_stage = self._values, True
            self._values = {}  # each stage starts afresh
            return
        match = self._pattern.fullmatch(line) if self._pattern is not None else None
        if match and not VARIABLE.search(match["value"]):
            self._values[match["name"]] = match["value"]


def resolved(text: str, values: Mapping[str, str]) -> str:
    """`text` with each variable the file fixes replaced by its value (or its `:-` default); any other
    variable stays as written: a version nobody can read."""

    def value(match: re.Match[str]) -> str:
        if match[0].startswith("${{"):
            return match[0]
        name, _, default = match[0].strip("${}()").partition("-")
        return values.get(name.rstrip(":")) or default or match[0]

    return VARIABLE.sub(value, text)


def role_of(script: Script, line: int = 0) -> Literal["dev", "constraint"]:
    """The role of a pin in `script` at `line`: by its kind; a build script whose path names the oldest
    or minimum versions (`ci/install-min-deps.sh`), or a tox env or nox session whose name does
    (`[testenv:py311-oldest]`, `def tests_oldest_supported(session)`), keeps them on purpose, as a CI job
    may."""
    if script.kind not in (BUILD, ENVS):
        return ROLES[script.kind]
    named = script.file if script.kind == BUILD else _env_or_session(script, line)
    words = {w.lower() for w in re.findall(r"[A-Za-z]+", named)}
    return "constraint" if words & MINIMUM_WORDS else ROLES[script.kind]


# A tox.ini section header (`[testenv:NAME]`; any other section names no env) or a noxfile's top-level
# function (a session; a nested `def` is a helper inside one).
ENV_OR_SESSION = re.compile(r"(?:\s*\[(?:testenv:(?P<env>[^\]]+)|[^\]]*)\]|def\s+(?P<session>\w+)\s*\()")


def _env_or_session(script: Script, line: int) -> str:
    """The name of the tox env (`[testenv:NAME]`) or nox session (`def NAME(`) a line of tox.ini or
    noxfile.py is in: the nearest above it ("" where none is)."""
    name = ""
    for number, text in script.assignments or script.lines:
        if number > line:
            break
        match = ENV_OR_SESSION.match(text)
        if match:
            name = match["env"] or match["session"] or ""
    return name


def pin(script: Script, number: int, name: str, written: str, specifier: str) -> Dependency:
    """One pin of the SDK in `script` at line `number`: uneditable, with the role its kind of file gives."""
    why = (
        f"{script.file} line {number} installs {written[:200]} in {script.kind}, which the tool does not edit"
    )
    return declared(script, script.file, number, name, specifier, role_of(script, number), why)


def declared(
    script: Script, file: str, line: int, name: str, specifier: str, role: Role, uneditable: str
) -> Dependency:
    """A declaration of the SDK read through `script` (in `file`: the script's own, or a file it installs),
    which the bump never edits: its specifier cut to SPECIFIER_MAX_CHARS, its section the kind of script."""
    return Dependency(
        name=name,
        specifier=specifier[:SPECIFIER_MAX_CHARS],
        file=file,
        kind=SCRIPT_KIND,
        line=line,
        role=role,
        section=script.kind,
        uneditable=uneditable,
    )
