"""Configuration that makes the test run take the SDK from something other than the package the run
installs, read at recon from the base repository (the root and each workspace):

    found(root, files, sdk, mocks) -> [Dependency]    each uneditable (KIND_COMMITTED_COPY), role runtime

Why: the run proves the bump by the repository's own tests passing on the target. Where their
configuration sends `require("acme-sdk")` to a fake, a mock or a copy, they pass on any version, and a
green run proved nothing (red-team review: each of these ended exit 0). So each is an uneditable runtime
declaration that admits no version (adapters/npm/versioning.py): the run stops before any edit, naming the
file and what to do. Read as text, never run:

    jest         `moduleNameMapper` whose key matches the SDK's name (package.json `jest`, jest.config.json:
                 each key as the regular expression jest tests; jest.config.{js,ts,…}: each literal key
                 the same way, the name written in a value that cannot be split into entries), unless it
                 maps onto the installed package itself (node_modules/<sdk>, `<sdk>/dist/x.cjs`,
                 `require.resolve("<sdk>")`); also read where jest reads them: the file a script's
                 `jest --config`/`-c` names (or inline JSON), `--moduleNameMapper`/`--setupFiles` on the
                 command line, the files a JavaScript config requires, a local `preset`, `projects`
                 (objects, files, folders), a variable or a local module the option's value comes from;
                 `moduleDirectories` and `modulePaths` naming a folder that holds a copy of it; a manual
                 mock `__mocks__/<sdk>.js` anywhere outside node_modules (`mocks`, found by extract.py's
                 walk), which jest uses for every require of a node module without a jest.mock call, where
                 jest runs the tests
    aliases      vite's and vitest's `alias`, babel's module-resolver `alias`, webpack's `resolve.alias`
                 naming the SDK (the value written after `alias`)
    preloads     a file of the repository that every test loads first: `--require`/`-r`/`--import`/
                 `--loader`/`--experimental-loader` in a package.json script (NODE_OPTIONS too), mocha's
                 `require` (.mocharc.*, package.json `mocha`), jest's and vitest's `setupFiles` and
                 `setupFilesAfterEnv`, jest's `resolver`. Setup files are common and legitimate: one stops
                 the run only where it mocks the SDK for every test (`jest.mock("acme-sdk")`) or names the
                 SDK beside a module-resolution hook (_resolveFilename, `X._load`, prototype.require,
                 `require("module")`, require.cache, a loader's `resolve`/`load`, `register("./hooks.mjs")`,
                 mock-require, mockery), read with
                 the local files it requires, MAX_DEPTH levels deep (a jest.mock there counts too).

What stays allowed: `jest.mock("acme-sdk")` in one test file (the repository's own test code, whose
assertions are its own call), mappings, aliases and mocks of other modules, preloads that are packages
(`-r ts-node/register`). Files past MAX_IMPORT_SCAN_BYTES, links and paths outside the root are not read.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from agentic_codemod import json_input
from agentic_codemod.adapters.npm.versioning import KIND_COMMITTED_COPY
from agentic_codemod.config import MAX_IMPORT_SCAN_BYTES
from agentic_codemod.errors import UNPARSEABLE
from agentic_codemod.models import Dependency

MOCKS = "__mocks__"
CODE = ("", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx")
JS_CONFIG = ("js", "cjs", "mjs", "ts", "cts", "mts")
JEST_CONFIGS = tuple(f"jest.config.{e}" for e in JS_CONFIG)
ALIAS_CONFIGS = (
    *(f"{n}.config.{e}" for n in ("vite", "vitest", "babel", "webpack") for e in JS_CONFIG),
    *(f"vitest.{n}.{e}" for n in ("workspace", "projects") for e in JS_CONFIG),
    ".babelrc",
    ".babelrc.json",
    ".babelrc.js",
    ".babelrc.cjs",
    "babel.config.json",
)
MOCHA_CONFIGS = tuple(f".mocharc.{e}" for e in ("json", "jsonc", "yml", "yaml", "js", "cjs", "mjs"))
PRELOAD = re.compile(
    r"""(?<![\w-])(?:--require|-r|--import|--loader|--experimental-loader)(?:\s+|=)['"]?([^\s'"&|;)]+)"""
)
HOOKS = re.compile(
    r"_resolveFilename|\b\w+\._load\b|\bprototype\.require\b|\brequire\.cache\b|\bregisterHooks\s*\("
    r"|\brequire\s*\(\s*['\"`](?:node:)?module['\"`]|\bfrom\s*['\"`](?:node:)?module['\"`]"
    r"|\bexport\s+(?:async\s+)?function\s*\*?\s*(?:resolve|load)\b|\bexport\s+(?:const|let|var)\s+(?:resolve|load)\b"
    r"|\bregister\s*\(\s*['\"`]|\bmock-require\b|\bmockery\b|\bregisterMock\s*\(|\bmodule-alias\b|\baddAlias\s*\("
)
LOCAL_REQUIRE = re.compile(
    r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom\s|\bimport\s|\bregister\s*\()\s*['"`](\.{1,2}/[^'"`]+)"""
)
STRING = re.compile(r"""(['"`])((?:(?!\1)[^\\\n]|\\.){1,500})\1""")
RUNS_JEST = re.compile(r"(?<![\w-])(?:jest|react-scripts|craco)(?![\w-])")
# jest's command-line options that configure what the tests load (`jest --config config/jest.config.js`,
# `--config '{"moduleNameMapper": …}'`, `--setupFiles ./x.js`, `--moduleNameMapper '{…}'`).
JEST_CLI = ("--config", "-c", "--setupFiles", "--setupFilesAfterEnv", "--moduleNameMapper", "--preset")
SHELL_SEPARATORS = ("&&", "||", ";", "|", "&")
JEST_PRESETS = tuple(f"jest-preset.{e}" for e in ("json", "js", "cjs", "mjs"))
MAX_PATTERN = 1000  # a mapper key longer than this is read by the name written in it, never compiled
MAX_DEPTH = 3  # configs a config requires or names (preset, projects), files a preload requires
# `key: value` in an object literal: the key quoted, bare or computed (`[`^${name}$`]`)
ENTRY_KEY = re.compile(
    r"""(?:^|[{,])\s*(?:(['"`])((?:(?!\1)[^\\\n]|\\.){0,500})\1|([\w$]+)|\[([^\]\n]{0,500})\])\s*:"""
)
TODO = "so the tests would pass on any version of {sdk} and prove nothing about the target"


def found(root: Path, files: list[str], sdk: str, mocks: list[str]) -> list[Dependency]:
    """Every substitute of the SDK the tests of `root` are configured with (module docstring)."""
    substitutes: list[Dependency] = []
    folders = sorted(
        {PurePosixPath(f).parent.as_posix() for f in files if PurePosixPath(f).name == "package.json"}
    )
    for folder in folders:
        substitutes += _package(root, folder, sdk) + _configs(root, folder, sdk)
    if mocks and any(_runs_jest(root, folder) for folder in folders):
        substitutes += [_mock(path, sdk) for path in mocks]
    unique: dict[tuple[str, str, int | None], Dependency] = {}
    for d in substitutes:  # a preload several scripts name, an alias option read twice: named once
        unique.setdefault((d.file, d.section, d.line), d)
    return list(unique.values())


def _package(root: Path, folder: str, sdk: str) -> list[Dependency]:
    """What package.json's `jest`, `mocha` and `scripts` configure (module docstring)."""
    file = _join(folder, "package.json")
    document = _document(root, file)
    if not isinstance(document, dict):
        return []
    text = _text(root, file) or ""
    found = _jest(root, folder, file, text, document.get("jest"), sdk)
    found += _preloads(root, folder, f"{file} mocha", _strings(_get(document.get("mocha"), "require")), sdk)
    for name, script in _dict(document.get("scripts")).items():
        if isinstance(script, str):
            where = f"{file} scripts.{name}"
            found += _preloads(root, folder, where, [m[1] for m in PRELOAD.finditer(script)], sdk)
            found += _jest_cli(root, folder, where, script, sdk)
    return found


def _configs(root: Path, folder: str, sdk: str) -> list[Dependency]:
    found = []
    for name in ("jest.config.json", *JEST_CONFIGS, *ALIAS_CONFIGS, *MOCHA_CONFIGS):
        file = _join(folder, name)
        text = _text(root, file)
        if text is None:
            continue
        if name.startswith("jest.config."):
            found += _jest_config(root, file, text, sdk)
        elif name.startswith(".mocharc.") and name.endswith(("json", "yml", "yaml")):
            document = _parsed(text, yaml.safe_load)  # YAML reads JSON too; .jsonc comments fall back below
            listed = _strings(_get(document, "require")) if document is not None else _quoted(text)
            found += _preloads(root, folder, file, listed, sdk)
        elif name.startswith(".mocharc."):
            found += _preloads(root, folder, file, _quoted(text), sdk)
        else:
            found += _text_config(root, folder, file, text, sdk)
    return found


def _jest_cli(root: Path, folder: str, where: str, script: str, sdk: str) -> list[Dependency]:
    """jest's options on a script's command line (JEST_CLI): the configuration file `--config`/`-c` names
    (read like jest.config.*; helper-26's case A: `jest --config config/jest.config.js` with a mapper
    to a fake, green), an inline JSON configuration, setup files, a mapper given as JSON."""
    try:
        words = shlex.split(script)
    except ValueError:
        words = script.split()
    found: list[Dependency] = []
    running = False
    for index, word in enumerate(words):
        if word in SHELL_SEPARATORS:
            running = False
            continue
        if RUNS_JEST.search(word) and not word.startswith("-"):
            running = True
            continue
        name, equals, value = word.partition("=")
        if not running or name not in JEST_CLI:
            continue
        value = value if equals else (words[index + 1] if index + 1 < len(words) else "")
        if name in ("--config", "-c", "--moduleNameMapper") and value.lstrip().startswith("{"):
            config = _parsed(value, json_input.loads)
            config = {"moduleNameMapper": config} if name == "--moduleNameMapper" else config
            if not isinstance(config, dict) and sdk in value:  # not JSON jest reads, and it names the SDK
                found.append(_unread(where, f"jest's {name} {value[:100]!r}", sdk))
            found += _jest(root, folder, where, "", config, sdk)
        elif name in ("--config", "-c"):
            found += _jest_config_file(root, folder, value, sdk, where, 0)
        elif name == "--preset":
            found += _jest(root, folder, where, "", {"preset": value}, sdk)
        else:
            found += _preloads(root, folder, f"{where} {name}", [value], sdk)
    return found


def _jest_config_file(
    root: Path, folder: str, value: str, sdk: str, where: str, depth: int
) -> list[Dependency]:
    """The jest configuration file a path names (`--config`, a preset, a project, a config's require)."""
    file = _file(root, folder, value, (*CODE, ".json"))
    text = None if file is None else _text(root, file)
    if file is None or text is None or depth > MAX_DEPTH:
        return []
    return _jest_config(root, file, text, sdk, depth + 1)


def _jest_config(root: Path, file: str, text: str, sdk: str, depth: int = 0) -> list[Dependency]:
    """A jest configuration file: JSON as jest reads it, JavaScript as text, with the files it requires
    (`module.exports = require("./jest.base")`), its preset and its projects. Paths in it are read from its
    `rootDir` (its own folder by default)."""
    config = _parsed(text, json_input.loads) if file.endswith(".json") else None
    if isinstance(config, dict):
        written = _strings(config.get("rootDir"))
    else:
        written = [q for _, v, _ in _values(text, "rootDir") for q in _quoted(v)[:1]]
    own = PurePosixPath(file).parent.as_posix()
    rebased = _local(own, f"./{written[0].rstrip('/')}/_") if written else None
    base = PurePosixPath(rebased).parent.as_posix() if rebased else own
    if isinstance(config, dict):
        return _jest(root, base, file, text, config, sdk, depth)
    found = _text_config(root, base, file, text, sdk)
    for key in ("preset", "projects"):
        for _, value, _ in _values(text, key):
            found += _jest(root, base, file, "", {key: _quoted(value)}, sdk, depth)
    for required in _required(root, file, text, 1) if depth < MAX_DEPTH else []:
        found += _jest_config(root, required, _text(root, required) or "", sdk, depth + 1)
    return found


def _jest(
    root: Path, folder: str, file: str, text: str, config: Any, sdk: str, depth: int = 0
) -> list[Dependency]:
    """jest's options as JSON: moduleNameMapper keys tested as jest tests them, folders, setup files, a
    local preset and the projects (objects, or the configuration files or folders they name)."""
    if not isinstance(config, dict):
        return []
    found = []
    mapper = config.get("moduleNameMapper")
    for key, value in mapper.items() if isinstance(mapper, dict) else []:
        if _maps(str(key), sdk) and not _onto_installed(value, sdk):
            why = f"jest's moduleNameMapper maps {sdk} to {str(value)[:200]!r} (key {str(key)[:100]!r})"
            line = _line(text, json.dumps(key), text.find('"moduleNameMapper"')) if text else None
            found.append(_substitute(file, line, "moduleNameMapper", why, sdk))
    for key in ("moduleDirectories", "modulePaths"):
        found += _module_folders(root, folder, file, key, _strings(config.get(key)), sdk)
    setup = [*_strings(config.get("setupFiles")), *_strings(config.get("setupFilesAfterEnv"))]
    found += _preloads(root, folder, f"{file} setupFiles", setup, sdk)
    found += _preloads(
        root, folder, f"{file} jest.resolver", _strings(config.get("resolver")), sdk, resolver=True
    )
    if depth >= MAX_DEPTH:
        return found
    for preset in _strings(config.get("preset")):
        # jest reads a preset from <preset>/jest-preset.json|js; a path of the repository's is read here
        local = preset.startswith((".", "<rootDir>"))
        for candidate in [preset, *(f"{preset.rstrip('/')}/{n}" for n in JEST_PRESETS)] if local else []:
            found += _jest_config_file(root, folder, candidate, sdk, file, depth)
    projects = config.get("projects")
    for project in projects if isinstance(projects, list) else []:
        if isinstance(project, dict):
            found += _jest(root, folder, file, text, project, sdk, depth + 1)
        elif isinstance(project, str):
            found += _jest_config_file(root, folder, project, sdk, file, depth)
            path = _local(folder, project)
            for name in ("jest.config.json", *JEST_CONFIGS) if path and _is_dir(root / path) else ():
                found += _jest_config_file(root, path or ".", name, sdk, file, depth)
    return found


def _text_config(root: Path, folder: str, file: str, text: str, sdk: str) -> list[Dependency]:
    """A JavaScript config read as text: each mapping option's entries (a moduleNameMapper key tested as
    jest tests it, an alias key naming the SDK), unless it maps onto the installed package; where the
    entries cannot be told apart, the SDK's name written in the option's value."""
    found = []
    named = _named(sdk)
    for key, what in (("moduleNameMapper", "jest's moduleNameMapper names"), ("alias", "an alias names")):
        for start, value, source in _values(text, key, root, file):
            where, body = (file, text) if source is None else source
            at = start
            why = f"{what} {sdk} (the tests load what it points to)"
            entries = list(_entries(value))
            for offset, literal, raw, target in entries:
                taken = _maps(literal, sdk) if key == "moduleNameMapper" and literal is not None else False
                taken = taken or bool(named.search(raw)) or (literal == sdk)
                if taken and not _installed_text(target, sdk):
                    line = body.count("\n", 0, at + offset) + 1
                    found.append(_substitute(where, line, key, why, sdk))
            hit = None if entries else named.search(value)
            if hit and not re.search(rf"node_modules/{re.escape(sdk)}(?![\w.-])", value):
                line = body.count("\n", 0, at + hit.start()) + 1
                found.append(_substitute(where, line, key, why, sdk))
    for key in ("moduleDirectories", "modulePaths"):
        for _, value, _ in _values(text, key):
            found += _module_folders(root, folder, file, key, _quoted(value), sdk)
    for _, value, _ in _values(text, "setupFiles"):  # setupFilesAfterEnv too
        found += _preloads(root, folder, f"{file} setupFiles", _quoted(value), sdk)
    for _, value, _ in _values(text, "resolver"):
        found += _preloads(root, folder, f"{file} resolver", _quoted(value), sdk, resolver=True)
    return found


def _entries(value: str) -> Iterator[tuple[int, str | None, str, str]]:
    """The entries of an object literal at the top level of `value` ({...}): (offset of the key, the key as
    a string where it is a literal, the key as written, the value's text up to the next entry)."""
    if not value.startswith("{"):
        return
    depth, index, starts = 0, 0, []
    while index < len(value):  # the offsets of the top-level `{` and `,`: where each key starts
        char = value[index]
        if char in "'\"`":
            quoted = STRING.match(value, index)
            index = quoted.end() if quoted else index + 1
            continue
        if (char == "," and depth == 1) or (char == "{" and depth == 0):
            starts.append(index)
        depth += (char in "{[(") - (char in "}])")
        index += 1
    for number, begin in enumerate(starts):
        m = ENTRY_KEY.match(value, begin)
        if not m:
            continue
        end = starts[number + 1] if number + 1 < len(starts) else len(value) - 1
        literal = _unescaped(m[2]) if m[1] and (m[1] != "`" or "${" not in m[2]) else m[3]
        yield m.start(2) if m[1] else m.start(), literal, m[0], value[m.end() : end]


def _unescaped(text: str) -> str:
    """A JavaScript string literal's value (`"^acme\\\\-sdk$"` is `^acme\\-sdk$`)."""
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), text)


def _unread(where: str, what: str, sdk: str) -> Dependency:
    return _substitute(
        where, None, "unread", f"{where}: {what} cannot be read to tell whether it names {sdk}", sdk
    )


def _module_folders(
    root: Path, folder: str, file: str, key: str, entries: list[str], sdk: str
) -> list[Dependency]:
    """moduleDirectories / modulePaths entries under which a copy of the SDK sits."""
    found = []
    for entry in entries:
        if entry == "node_modules":
            continue
        path = _local(folder, entry)
        copies = [
            f"{path}/{sdk}{s}"
            for s in (*CODE, ".json", ".node")
            if path and _exists(root / f"{path}/{sdk}{s}")
        ]
        if copies:
            why = f"jest's {key} has {entry!r}, which holds {copies[0]} (the tests load that copy of {sdk})"
            found.append(_substitute(file, None, key, why, sdk))
    return found


def _preloads(
    root: Path, folder: str, where: str, values: list[str], sdk: str, resolver: bool = False
) -> list[Dependency]:
    """The repository's files among `values` that every test loads first and that replace the SDK."""
    found = []
    for value in values:
        file = _file(root, folder, value)
        if file is None:
            continue
        text = _text(root, file) or ""
        read = "\n".join([text, *(_text(root, f) or "" for f in _required(root, file, text, MAX_DEPTH))])
        # in the files it requires too (helper-26's review: `require("./mocks")`, mocks.js mocking the SDK)
        mocks = re.search(rf"\b(?:jest|vi)\.(?:mock|doMock)\s*\(\s*['\"`]{re.escape(sdk)}['\"`/]", read)
        named = _named(sdk).search(read)
        if mocks:
            what = f"mocks {sdk} for every test"
        elif named and (resolver or HOOKS.search(read)):
            what = f"hooks module resolution and names {sdk}: it can load something else for it in every test"
        else:
            continue
        found.append(_substitute(file, None, "preload", f"{file} (preloaded by {where}) {what}", sdk))
    return found


def _mock(path: str, sdk: str) -> Dependency:
    why = (
        f"{path} is a manual mock of {sdk}: jest uses it for every require({sdk!r}) in the tests without any "
        "jest.mock call"
    )
    todo = f"rename it out of __mocks__ and have the tests that want it call jest.mock({sdk!r}, factory)"
    return _substitute(path, None, MOCKS, why, sdk, todo)


def _substitute(file: str, line: int | None, section: str, why: str, sdk: str, todo: str = "") -> Dependency:
    where = f"{file} line {line}: " if line else ("" if why.startswith(file) else f"{file}: ")
    todo = todo or f"point the tests at the installed {sdk} (take it out of this configuration)"
    return Dependency(
        name=sdk,
        specifier="",
        file=file,
        kind=KIND_COMMITTED_COPY,
        line=line,
        role="runtime",
        section=section,
        uneditable=f"{where}{why}, {TODO.format(sdk=sdk)}; {todo}, or migrate this repository by hand",
    )


def _runs_jest(root: Path, folder: str) -> bool:
    """Whether jest runs tests here: a `jest` key or config, jest declared, or a script running it."""
    document = _document(root, _join(folder, "package.json"))
    if not isinstance(document, dict):
        return False
    declared = [
        name
        for section in ("dependencies", "devDependencies")
        if isinstance(document.get(section), dict)
        for name in document[section]
    ]
    scripts = _dict(document.get("scripts"))
    return (
        "jest" in document
        or any(n in ("jest", "react-scripts", "@craco/craco") for n in declared)
        or any(isinstance(s, str) and RUNS_JEST.search(s) for s in scripts.values())
        or any((root / _join(folder, name)).is_file() for name in ("jest.config.json", *JEST_CONFIGS))
    )


# A quantified group holding an alternation or a quantifier of its own (`(.|.|.)*!`, `(a+)+`): a key
# written to backtrack catastrophically on the SDK's name (helper-28's review: 18 s for 21 characters).
RISKY_PATTERN = re.compile(r"\([^()]*[|*+{][^()]*\)\s*[*+{?]")
MAX_VALUES = 50  # values of one option read in one file (each a scan to its closing bracket)
MAX_VALUE_CHARS = 100_000  # how far one value's closing bracket is looked for


def _maps(key: str, sdk: str) -> bool:
    """Whether jest's moduleNameMapper key (a regular expression jest tests with .test()) takes the SDK or a
    path inside it; one Python cannot compile is read by the name written in it."""
    if len(key) > MAX_PATTERN or RISKY_PATTERN.search(key):  # Python's engine could backtrack for hours
        return bool(_named(sdk).search(f'"{key}"'))
    try:
        pattern = re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", key))
        return any(pattern.search(name) for name in (sdk, f"{sdk}/"))
    except (re.error, OverflowError, RecursionError):  # `^a{4294967296}$`: too large for Python's engine
        return bool(_named(sdk).search(f'"{key}"'))


def _onto_installed(value: Any, sdk: str) -> bool:
    """A mapping onto the installed package itself: `<rootDir>/node_modules/acme-sdk/dist/index.cjs`, or
    the package's name with or without a path in it (`acme-sdk/dist/index.cjs`, the ESM workaround), which
    jest resolves from node_modules (helper-26's review: these were taken for substitutes)."""
    targets = _strings(value)
    name = re.escape(sdk)
    return bool(targets) and all(
        re.search(rf"node_modules/{name}(?:/|$)", t) or re.fullmatch(rf"{name}(?:/.*)?", t, re.S)
        for t in targets
    )


def _installed_text(target: str, sdk: str) -> bool:
    """A JavaScript value onto the installed package: a string `_onto_installed` accepts, or
    `require.resolve('acme-sdk…')`; any other expression naming node_modules/acme-sdk."""
    expression = target.strip().rstrip(",").strip()
    literal = re.fullmatch(r"""(?:require\.resolve\s*\(\s*)?(['"`])([^'"`\n]*)\1\s*(\))?""", expression)
    if literal and (literal[3] is None) == (not expression.startswith("require")):
        return _onto_installed(literal[2], sdk)
    return bool(re.search(rf"node_modules/{re.escape(sdk)}(?:/|['\"`]|$)", expression))


def _named(sdk: str) -> re.Pattern[str]:
    """The SDK's name as written in a string or a regular expression (`"acme-sdk"`, `^acme\\-sdk$`,
    `/^acme-sdk$/`), never inside another name (`acme-sdk-mock`, `@x/acme-sdk`, node_modules/acme-sdk)."""
    name = "".join(re.escape(c) if c.isalnum() else r"\\{0,2}" + re.escape(c) for c in sdk)
    return re.compile(rf"(?:['\"`]\^?|/\^)\\{{0,2}}{name}(?![\w~-]|\\?\.[A-Za-z])")


def _values(
    text: str, key: str, root: Path | None = None, file: str | None = None
) -> Iterator[tuple[int, str, tuple[str, str] | None]]:
    """(offset, text, source) of the value after each `key:`, `key =` or shorthand `{ key }`: the bracketed
    or quoted one; for a variable, its definition in the same file (`const alias = {…}`), or what the
    local file it is required or imported from exports (source: that file and its text, the offset in
    it); for a call, its arguments. Never the rest of the file: a name written elsewhere in it
    (`optimizeDeps: {include: ['acme-sdk']}` beside `alias: alias`) is no value of the option (review
    helper-26's review: such files were flagged whole)."""
    matches = re.finditer(rf"(?<![\w$.])(?P<word>{key}\w*)['\"]?\s*(?:[:=]\s*|(?=[,}}]))", text)
    for m in itertools.islice(matches, MAX_VALUES):  # a file written to make each scan long (helper-28)
        shorthand = not m[0].rstrip().endswith((":", "="))
        yield from _value_at(text, m.end(), root, file, 0, m["word"] if shorthand else None)


def _value_at(
    text: str, start: int, root: Path | None, file: str | None, depth: int, name: str | None = None
) -> Iterator[tuple[int, str, tuple[str, str] | None]]:
    if start >= len(text) or depth > MAX_DEPTH:
        return
    if name is None and text[start] in "{[":
        yield start, text[start : _closing(text, start)], None
        return
    if name is None and text[start] in "'\"`":
        end = text.find("\n", start)
        yield start, text[start : end if end >= 0 else len(text)], None
        return
    word = re.match(r"[\w$.]+", text[start:]) if name is None else None
    name = name or (word[0] if word else "")
    after = start + (len(word[0]) if word else 0)
    call = re.match(r"\s*\(", text[after:]) if word else None
    if call:  # `makeAliases(…)`, `require("./aliases")`: the arguments, and what a local file exports
        opening = after + call.end() - 1
        yield opening, text[opening : _closing(text, opening)], None
        required = re.match(r"""\(\s*['"`](\.{1,2}/[^'"`]+)['"`]\s*\)""", text[opening:])
        if name == "require" and required:
            yield from _exported(root, file, required[1], depth)
        return
    if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
        return  # `process.env.X`, `config.alias`: defined elsewhere, nothing here names the SDK for it
    defined = re.search(rf"(?<![\w$.])(?:const|let|var)\s+{re.escape(name)}\s*(?::[^=\n]+)?=\s*", text)
    if defined:
        yield from _value_at(text, defined.end(), root, file, depth + 1)
    imported = re.search(rf"""\bimport\s+{re.escape(name)}\s+from\s+['"](\.{{1,2}}/[^'"]+)['"]""", text)
    if imported:
        yield from _exported(root, file, imported[1], depth)


def _exported(
    root: Path | None, file: str | None, value: str, depth: int
) -> Iterator[tuple[int, str, tuple[str, str] | None]]:
    """What a local file a config requires exports (`module.exports = {…}`, `export default {…}`)."""
    if root is None or file is None or depth >= MAX_DEPTH:
        return
    path = _file(root, PurePosixPath(file).parent.as_posix(), value, (*CODE, ".json"))
    text = None if path is None else _text(root, path)
    if path is None or text is None:
        return
    if path.endswith(".json"):
        yield 0, text, (path, text)
        return
    for m in re.finditer(r"\b(?:module\.exports|export\s+default)\s*=?\s*", text):
        for offset, value_text, source in _value_at(text, m.end(), root, path, depth + 1):
            yield offset, value_text, source or (path, text)


def _closing(text: str, start: int) -> int:
    depth, index, stop = 0, start, min(len(text), start + MAX_VALUE_CHARS)
    while index < stop:
        char = text[index]
        if char in "'\"`":
            end = STRING.match(text, index)
            index = end.end() if end else index + 1
            continue
        depth += (char in "{[(") - (char in "}])")
        index += 1
        if depth == 0:
            break
    return index


def _required(root: Path, file: str, text: str, depth: int = 1) -> list[str]:
    """The repository's files a preload requires, imports or registers by a relative path, and what those
    require in turn, `depth` levels deep (at most 20 files)."""
    found: list[str] = []
    level = [(file, text)]
    for _ in range(depth):
        following = []
        for current, body in level:
            folder = PurePosixPath(current).parent.as_posix()
            for m in LOCAL_REQUIRE.finditer(body):
                path = _file(root, folder, m[1])
                if path is not None and path != file and path not in found and len(found) < 20:
                    found.append(path)
                    following.append((path, _text(root, path) or ""))
        level = following
    return found


def _file(root: Path, folder: str, value: str, suffixes: tuple[str, ...] = CODE) -> str | None:
    """The regular file inside the root a config's path names (with the extensions node and jest try).
    A name no file can have (a NUL in it, longer than the system allows) names none: never an error."""
    path = _local(folder, value)
    for suffix in suffixes if path else ():
        candidate = root / f"{path}{suffix}"
        try:
            real, inside = candidate.resolve(), root.resolve()
            if candidate.is_file() and not candidate.is_symlink() and real.is_relative_to(inside):
                return f"{path}{suffix}"
        except (OSError, RuntimeError, ValueError):
            continue
    return None


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir() and not path.is_symlink()
    except (OSError, ValueError):
        return False


def _local(folder: str, value: str) -> str | None:
    """`value` as a path relative to the root, where it names one inside it (`<rootDir>/x`, `./x`, `x/y.js`);
    None for a package (`ts-node/register`), an absolute path or one that leaves the root."""
    value = value.strip().removeprefix("<rootDir>/")
    if (
        not value
        or "\0" in value
        or len(value) > 4096
        or value.startswith(("/", "~", "node:", "file:"))
        or "<" in value
    ):
        return None
    if not value.startswith(".") and "/" in value and not re.search(r"\.(?:[cm]?[jt]sx?|json)$", value):
        return None  # `ts-node/register`, `@babel/register`: a package
    parts: list[str] = [] if folder == "." else folder.split("/")
    for part in PurePosixPath(value).parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts) or None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _quoted(text: str) -> list[str]:
    return [m[2] for m in STRING.finditer(text)]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _get(document: Any, key: str) -> Any:
    return document.get(key) if isinstance(document, dict) else None


def _parsed(text: str, parse: Any) -> Any:
    try:
        return parse(text)
    except (*UNPARSEABLE, yaml.YAMLError):  # a document nested past the parser's depth too
        return None


def _document(root: Path, file: str) -> Any:
    text = _text(root, file)
    return _parsed(text, json_input.loads) if text is not None else None


def _text(root: Path, file: str) -> str | None:
    path = root / file
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_IMPORT_SCAN_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _line(text: str, needle: str, after: int = 0) -> int | None:
    index = text.find(needle, max(after, 0))
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"
