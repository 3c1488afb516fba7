"""Configuration that makes the test run take the SDK from something other than the package the run
installs, read at recon from the base repository (the root and each workspace):

    found(root, files, sdk, mocks) -> [Dependency]    each uneditable (KIND_COMMITTED_COPY), role runtime

Why: the run proves the bump by the repository's own tests passing on the target. Where their
configuration sends `require("acme-sdk")` to a fake, a mock or a copy, they pass on any version, and a
green run proved nothing (red-team review: each of these ended exit 0). So each is an uneditable runtime
declaration that admits no version (adapters/npm/versioning.py): the run stops before any edit, naming the
file and what to do. Read as text, never run:

    jest         `moduleNameMapper` whose key matches the SDK's name (package.json `jest`, jest.config.json:
                 each key as the regular expression jest tests; jest.config.{js,ts,…}: the name written in
                 its value), unless it maps onto node_modules/<sdk> itself; `moduleDirectories` and
                 `modulePaths` naming a folder that holds a copy of it; a manual mock `__mocks__/<sdk>.js`
                 anywhere outside node_modules (`mocks`, found by extract.py's walk), which jest uses for
                 every require of a node module without a jest.mock call, where jest runs the tests
    aliases      vite's and vitest's `alias`, babel's module-resolver `alias`, webpack's `resolve.alias`
                 naming the SDK (the value written after `alias`)
    preloads     a file of the repository that every test loads first: `--require`/`-r`/`--import`/
                 `--loader`/`--experimental-loader` in a package.json script (NODE_OPTIONS too), mocha's
                 `require` (.mocharc.*, package.json `mocha`), jest's and vitest's `setupFiles` and
                 `setupFilesAfterEnv`, jest's `resolver`. Setup files are common and legitimate: one stops
                 the run only where it mocks the SDK for every test (`jest.mock("acme-sdk")`) or names the
                 SDK beside a module-resolution hook (Module._resolveFilename, Module._load, require.cache,
                 a loader's `resolve`/`load`, `register("./hooks.mjs")`, mock-require, mockery), read with
                 the local files it requires, one level deep.

What stays allowed: `jest.mock("acme-sdk")` in one test file (the repository's own test code, whose
assertions are its own call), mappings, aliases and mocks of other modules, preloads that are packages
(`-r ts-node/register`). Files past MAX_IMPORT_SCAN_BYTES, links and paths outside the root are not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from agentic_codemod import json_input
from agentic_codemod.adapters.npm.versioning import KIND_COMMITTED_COPY
from agentic_codemod.config import MAX_IMPORT_SCAN_BYTES
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
    r"_resolveFilename|Module\._load\b|\brequire\.cache\b|\bregisterHooks\s*\("
    r"|\bexport\s+(?:async\s+)?function\s*\*?\s*(?:resolve|load)\b|\bexport\s+(?:const|let|var)\s+(?:resolve|load)\b"
    r"|\bregister\s*\(\s*['\"`]|\bmock-require\b|\bmockery\b|\bregisterMock\s*\(|\bmodule-alias\b|\baddAlias\s*\("
)
LOCAL_REQUIRE = re.compile(
    r"""(?:\brequire\s*\(|\bimport\s*\(|\bfrom\s|\bimport\s|\bregister\s*\()\s*['"`](\.{1,2}/[^'"`]+)"""
)
STRING = re.compile(r"""(['"`])((?:(?!\1)[^\\\n]|\\.){1,500})\1""")
RUNS_JEST = re.compile(r"(?<![\w-])(?:jest|react-scripts|craco)(?![\w-])")
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
    return found


def _configs(root: Path, folder: str, sdk: str) -> list[Dependency]:
    found = []
    for name in ("jest.config.json", *JEST_CONFIGS, *ALIAS_CONFIGS, *MOCHA_CONFIGS):
        file = _join(folder, name)
        text = _text(root, file)
        if text is None:
            continue
        if name == "jest.config.json":
            found += _jest(root, folder, file, text, _parsed(text, json_input.loads), sdk)
        elif name.startswith(".mocharc.") and name.endswith(("json", "yml", "yaml")):
            document = _parsed(text, yaml.safe_load)  # YAML reads JSON too; .jsonc comments fall back below
            listed = _strings(_get(document, "require")) if document is not None else _quoted(text)
            found += _preloads(root, folder, file, listed, sdk)
        elif name.startswith(".mocharc."):
            found += _preloads(root, folder, file, _quoted(text), sdk)
        else:
            found += _text_config(root, folder, file, text, sdk)
    return found


def _jest(root: Path, folder: str, file: str, text: str, config: Any, sdk: str) -> list[Dependency]:
    """jest's options as JSON: moduleNameMapper keys tested as jest tests them, folders, setup files."""
    if not isinstance(config, dict):
        return []
    found = []
    mapper = config.get("moduleNameMapper")
    for key, value in mapper.items() if isinstance(mapper, dict) else []:
        if _maps(str(key), sdk) and not _onto_installed(value, sdk):
            why = f"jest's moduleNameMapper maps {sdk} to {str(value)[:200]!r} (key {str(key)[:100]!r})"
            line = _line(text, json.dumps(key), text.find('"moduleNameMapper"'))
            found.append(_substitute(file, line, "moduleNameMapper", why, sdk))
    for key in ("moduleDirectories", "modulePaths"):
        found += _module_folders(root, folder, file, key, _strings(config.get(key)), sdk)
    setup = [*_strings(config.get("setupFiles")), *_strings(config.get("setupFilesAfterEnv"))]
    found += _preloads(root, folder, f"{file} setupFiles", setup, sdk)
    found += _preloads(
        root, folder, f"{file} jest.resolver", _strings(config.get("resolver")), sdk, resolver=True
    )
    return found


def _text_config(root: Path, folder: str, file: str, text: str, sdk: str) -> list[Dependency]:
    """A JavaScript config read as text: the SDK's name written in the value of a mapping option."""
    found = []
    named = _named(sdk)
    for key, what in (("moduleNameMapper", "jest's moduleNameMapper names"), ("alias", "an alias names")):
        for start, value in _values(text, key):
            hit = named.search(value)
            if hit and not re.search(rf"node_modules/{re.escape(sdk)}(?![\w.-])", value):
                line = text.count("\n", 0, start + hit.start()) + 1
                why = f"{what} {sdk} (the tests load what it points to)"
                found.append(_substitute(file, line, key, why, sdk))
    for key in ("moduleDirectories", "modulePaths"):
        for _, value in _values(text, key):
            found += _module_folders(root, folder, file, key, _quoted(value), sdk)
    for _, value in _values(text, "setupFiles"):  # setupFilesAfterEnv too
        found += _preloads(root, folder, f"{file} setupFiles", _quoted(value), sdk)
    for _, value in _values(text, "resolver"):
        found += _preloads(root, folder, f"{file} resolver", _quoted(value), sdk, resolver=True)
    return found


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
            if path and (root / f"{path}/{sdk}{s}").exists()
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
        read = "\n".join([text, *(_text(root, f) or "" for f in _required(root, file, text))])
        mocks = re.search(rf"\b(?:jest|vi)\.(?:mock|doMock)\s*\(\s*['\"`]{re.escape(sdk)}['\"`/]", text)
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


def _maps(key: str, sdk: str) -> bool:
    """Whether jest's moduleNameMapper key (a regular expression jest tests with .test()) takes the SDK or a
    path inside it; one Python cannot compile is read by the name written in it."""
    try:
        pattern = re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", key))
    except re.error:
        return bool(_named(sdk).search(f'"{key}"'))
    return any(pattern.search(name) for name in (sdk, f"{sdk}/"))


def _onto_installed(value: Any, sdk: str) -> bool:
    """A mapping onto the installed package itself (`<rootDir>/node_modules/acme-sdk/dist/index.cjs`)."""
    targets = _strings(value)
    return bool(targets) and all(re.search(rf"node_modules/{re.escape(sdk)}(?:/|$)", t) for t in targets)


def _named(sdk: str) -> re.Pattern[str]:
    """The SDK's name as written in a string or a regular expression (`"acme-sdk"`, `^acme\\-sdk$`,
    `/^acme-sdk$/`), never inside another name (`acme-sdk-mock`, `@x/acme-sdk`, node_modules/acme-sdk)."""
    name = "".join(re.escape(c) if c.isalnum() else r"\\{0,2}" + re.escape(c) for c in sdk)
    return re.compile(rf"(?:['\"`]\^?|/\^)\\{{0,2}}{name}(?![\w~-]|\\?\.[A-Za-z])")


def _values(text: str, key: str) -> Iterator[tuple[int, str]]:
    """(offset, text) of the value after each `key:` or `key =`: the bracketed one, or the rest of the file
    where the value is a variable (it may be defined anywhere)."""
    for m in re.finditer(rf"(?<![\w$.]){key}\w*['\"]?\s*[:=]\s*", text):
        start = m.end()
        if start < len(text) and text[start] in "{[":
            yield start, text[start : _closing(text, start)]
        elif start < len(text) and text[start] in "'\"`":
            end = text.find("\n", start)
            yield start, text[start : end if end >= 0 else len(text)]
        else:
            yield 0, text


def _closing(text: str, start: int) -> int:
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char in "'\"`":
            end = STRING.match(text, index)
            index = end.end() if end else index + 1
            continue
        depth += (char in "{[") - (char in "}]")
        index += 1
        if depth == 0:
            break
    return index


def _required(root: Path, file: str, text: str) -> list[str]:
    """The repository's files a preload requires, imports or registers by a relative path."""
    folder = PurePosixPath(file).parent.as_posix()
    return [f for m in LOCAL_REQUIRE.finditer(text) if (f := _file(root, folder, m[1])) is not None][:20]


def _file(root: Path, folder: str, value: str) -> str | None:
    """The regular file inside the root a config's path names (with the extensions node and jest try)."""
    path = _local(folder, value)
    for suffix in CODE if path else ():
        candidate = root / f"{path}{suffix}"
        try:
            real, inside = candidate.resolve(), root.resolve()
        except (OSError, RuntimeError):
            continue
        if candidate.is_file() and not candidate.is_symlink() and real.is_relative_to(inside):
            return f"{path}{suffix}"
    return None


def _local(folder: str, value: str) -> str | None:
    """`value` as a path relative to the root, where it names one inside it (`<rootDir>/x`, `./x`, `x/y.js`);
    None for a package (`ts-node/register`), an absolute path or one that leaves the root."""
    value = value.strip().removeprefix("<rootDir>/")
    if not value or value.startswith(("/", "~", "node:", "file:")) or "<" in value:
        return None
    if not value.startswith(".") and "/" in value and not re.search(r"\.[cm]?[jt]sx?$", value):
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
    except (ValueError, yaml.YAMLError):
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
    except OSError:
        return None


def _line(text: str, needle: str, after: int = 0) -> int | None:
    index = text.find(needle, max(after, 0))
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def _join(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"
