"""The second hostile review of sdk_substitutes.py (helper-26): configuration that swaps
the SDK where the first reading did not look (a jest config `--config` names, an inline one, setup files
on jest's command line, a config that requires another, a local preset, `projects`, a regular expression
key in a JavaScript config, a mock in a file the setup file requires, `Module.prototype.require`), each
green on any version; false alarms on mappings onto the installed package and on files naming the SDK
beside an option whose value is a variable; and inputs that crashed recon (a NUL in a path, a name longer
than the system allows, a mapper key Python cannot compile)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.npm.test_npm_sdk_substitutes import FAKE, app, jest_app, stops, substitutes

MAPPER = {"^acme-sdk$": "<rootDir>/test/fake.js"}
MOCK = "jest.mock('acme-sdk', () => require('./fake'));\n"
UP_A_FOLDER = f'module.exports = {{ rootDir: "..", moduleNameMapper: {json.dumps(MAPPER)} }};\n'
REGEX_KEY = (
    'module.exports = {\n  moduleNameMapper: {\n    "^acme-(sdk|client)$": "<rootDir>/f.js",\n  },\n};\n'
)
IN_A_VARIABLE = (
    "const map = {\n  '^acme-sdk$': '<rootDir>/f.js',\n};\nmodule.exports = { moduleNameMapper: map };\n"
)
PROTOTYPE = (
    "const Module = require('module');\nconst orig = Module.prototype.require;\n"
    "Module.prototype.require = function (id) {\n"
    "  return id === 'acme-sdk' ? {} : orig.apply(this, arguments);\n};\n"
)
RESOLVED = (
    "module.exports = {\n  moduleNameMapper: {\n    '^acme-sdk$': require.resolve('acme-sdk'),\n  },\n};\n"
)
ENTRY = "module.exports = {\n  moduleNameMapper: { '^acme-sdk$': 'acme-sdk/dist/index.cjs' },\n};\n"
TS_JEST = (
    "const { pathsToModuleNameMapper } = require('ts-jest');\nmodule.exports = {\n"
    "  moduleNameMapper: pathsToModuleNameMapper({ '@/*': ['src/*'] }, { prefix: '<rootDir>/' }),\n"
    "  transformIgnorePatterns: ['/node_modules/(?!acme-sdk)'],\n"
    "  globals: { SDK_NAME: 'acme-sdk' },\n};\n"
)
VITE = (
    "import path from 'path';\n"
    "const alias = { '@': path.resolve(__dirname, 'src') };\n"
    "export default {\n  resolve: { alias: alias },\n"
    "  optimizeDeps: { include: ['acme-sdk'] },\n};\n"
)
WEBPACK = (
    "const path = require('path');\nmodule.exports = {\n"
    "  resolve: { alias: makeAliases(path.join(__dirname, 'src')) },\n"
    "  externals: ['acme-sdk'],\n};\n"
    "function makeAliases(d) { return { '@': d }; }\n"
)


def jest_script(script: str, **package: Any) -> dict[str, Any]:
    files = jest_app(**package)
    files["package.json"]["scripts"] = {"test": script}
    return {**files, "test/fake.js": FAKE}


@pytest.mark.parametrize(
    ("files", "named"),
    [
        (  # helper-26's case A: rootDir "..", a mapper to a fake, green on any version
            jest_script(
                "jest --config config/jest.config.js",
                **{},
            )
            | {"config/jest.config.js": UP_A_FOLDER},
            "config/jest.config.js line 1",
        ),
        (
            jest_script("jest -c config/jest.json")
            | {"config/jest.json": json.dumps({"rootDir": "..", "moduleNameMapper": MAPPER})},
            "config/jest.json line 1",
        ),
        (
            jest_script(f"jest --config '{json.dumps({'moduleNameMapper': MAPPER})}'"),
            "package.json scripts.test",
        ),
        (jest_script(f"jest --moduleNameMapper='{json.dumps(MAPPER)}'"), "package.json scripts.test"),
        (
            jest_script("jest --setupFiles ./support/s.js") | {"support/s.js": MOCK, "support/fake.js": FAKE},
            "support/s.js (preloaded by package.json scripts.test --setupFiles)",
        ),
        (  # a config that is another one
            jest_script("jest")
            | {
                "jest.config.js": 'module.exports = require("./jest.base");\n',
                "jest.base.js": f"module.exports = {{ moduleNameMapper: {json.dumps(MAPPER)} }};\n",
            },
            "jest.base.js line 1",
        ),
        (
            jest_script("jest", jest={"preset": "<rootDir>"})
            | {"jest-preset.json": json.dumps({"moduleNameMapper": MAPPER})},
            "jest-preset.json line 1",
        ),
        (
            jest_script("jest", jest={"projects": ["<rootDir>/test/unit.config.js"]})
            | {"test/unit.config.js": UP_A_FOLDER},
            "test/unit.config.js line 1",
        ),
        (  # F: a project inline in package.json
            jest_script("jest", jest={"projects": [{"displayName": "unit", "moduleNameMapper": MAPPER}]}),
            "package.json line",
        ),
        (  # a regular expression key in a JavaScript config, tested as jest tests it
            jest_script("jest") | {"jest.config.js": REGEX_KEY},
            "jest.config.js line 3",
        ),
        (  # the mapper in a variable of the same file
            jest_script("jest") | {"jest.config.js": IN_A_VARIABLE},
            "jest.config.js line 2",
        ),
    ],
)
def test_jest_configuration_found_where_jest_reads_it_stops_the_run(
    tmp_path: Path, files: dict[str, Any], named: str
) -> None:
    found = substitutes(tmp_path, files)
    assert found, named
    stops(found, named.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)"))


@pytest.mark.parametrize(
    ("script", "files", "what"),
    [
        (  # E: the setup file requires the file that mocks the SDK
            "jest",
            {"test/setup.js": "require('./mocks');\n", "test/mocks.js": MOCK},
            "mocks acme-sdk for every test",
        ),
        (  # B: Module.prototype.require patched
            "node --require ./test/setup.js --test",
            {"test/setup.js": PROTOTYPE},
            "hooks module resolution",
        ),
        (  # B: `M._load` on any name, two files down
            "node --require ./test/setup.js --test",
            {
                "test/setup.js": "require('./hooks/index.js');\n",
                "test/hooks/index.js": "require('./swap');\n",
                "test/hooks/swap.js": "const M = require('node:module');\nconst o = M._load;\n"
                "M._load = (r, ...a) => (r === 'acme-sdk' ? {} : o(r, ...a));\n",
            },
            "hooks module resolution",
        ),
    ],
)
def test_setup_files_that_replace_the_sdk_through_what_they_load_stop_the_run(
    tmp_path: Path, script: str, files: dict[str, Any], what: str
) -> None:
    base = (
        jest_app(jest={"setupFiles": ["<rootDir>/test/setup.js"]})
        if script == "jest"
        else app(scripts={"test": script})
    )
    found = substitutes(tmp_path, {**base, **files})
    assert [d.file for d in found] == ["test/setup.js"]
    stops(found, rf"test/setup\.js \(preloaded by package\.json [^)]*\) {what}")


@pytest.mark.parametrize(
    "files",
    [
        # G: onto the installed package's own entry (the ESM workaround)
        jest_app(jest={"moduleNameMapper": {"^acme-sdk$": "acme-sdk/dist/index.cjs"}}),
        jest_app(jest={"moduleNameMapper": {"^acme-sdk$": "acme-sdk"}}),
        {**jest_app(), "jest.config.js": RESOLVED},
        {**jest_app(), "jest.config.js": ENTRY},
        # the option's value a variable or a call that does not name the SDK; the SDK named elsewhere
        {**jest_app(), "jest.config.js": TS_JEST},
        {**app(scripts={"test": "vitest run"}), "vite.config.js": VITE},
        {**app(), "webpack.config.js": WEBPACK},
        # the name of another module in a jest.mock of the setup file's own requires
        {
            **jest_app(jest={"setupFiles": ["./test/setup.js"]}),
            "test/setup.js": "require('./m');\n",
            "test/m.js": "jest.mock('acme-sdk-extra');\n",
        },
    ],
)
def test_mappings_onto_the_installed_sdk_and_unrelated_mentions_stop_nothing(
    tmp_path: Path, files: dict[str, Any]
) -> None:
    assert substitutes(tmp_path, files) == []


@pytest.mark.parametrize(
    "package",
    [
        {"jest": {"setupFiles": ["./a\u0000b.js"]}},
        {"scripts": {"test": "node --require ./a\u0000b.js --test"}},
        {"jest": {"moduleDirectories": ["node_modules", "sr\u0000c"]}},
        {"jest": {"moduleNameMapper": {"^a{4294967296}$": "x"}}},
        {"jest": {"moduleNameMapper": {"^a" + "(b" * 200 + ")" * 200 + "$": "x"}}},
        {"jest": {"setupFiles": ["./" + "a" * 5000 + ".js"]}},
        {"scripts": {"test": "node --require ./support/" + "a" * 300 + ".js --test"}},
        {"scripts": {"test": "jest --config ./" + "c" * 300 + ".json"}},
        {"jest": {"setupFiles": ["<rootDir>/../../etc/passwd"]}},
    ],
)
def test_paths_and_patterns_no_file_or_engine_can_take_are_skipped_never_a_crash(
    tmp_path: Path, package: dict[str, Any]
) -> None:
    files = jest_app()
    files["package.json"].update(package)
    assert substitutes(tmp_path, files) == []
