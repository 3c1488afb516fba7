"""Configuration that makes the test run take the SDK from something other than the installed package:
jest's moduleNameMapper, moduleDirectories and modulePaths, aliases (vite, vitest, babel, webpack), jest's
automatic manual mocks (`__mocks__/acme-sdk.js`), and preloads or setup files that hook module resolution
or mock the SDK for every test (red-team review: each ended green, exit 0, on tests that never loaded the
installed SDK). Each is an uneditable runtime declaration: the run stops before any edit naming the file.
What stays allowed: `jest.mock("acme-sdk")` in one test file, setup files and preloads that do not replace
the SDK, mappings of other modules."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ROOT, materialize

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.models import Dependency
from agentic_codemod.task import SdkSpec
from agentic_codemod.tools import sandbox
from tests.adapters.npm.test_npm_aliases import plan, write

SDK = SdkSpec.model_validate({"name": "acme-sdk", "ecosystem": "npm", "from": "^1.0.0", "to": "2.0.0"})
FAKE = "module.exports = { connect: (url) => ({ url }), VERSION: '1.0.0' };\n"
HOOK = """const Module = require("module");
const path = require("path");
const original = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === "acme-sdk") return path.join(__dirname, "fake-sdk.cjs");
  return original.call(this, request, ...rest);
};
"""
# acme-sdk 1.0.0's API, faked (helper-21's case 3): the fixture's tests pass on it.
FAKE_CLIENT = """class Client {
  constructor(url) { this.url = url; }
  fetch(path) { return { url: this.url + path, version: "1.0.0" }; }
}
module.exports = { Client, connect: (url) => new Client(url), VERSION: "1.0.0" };
"""
ORDERS = 'const { connect } = require("acme-sdk");\nmodule.exports = { order: (u) => connect(u) };\n'


def app(**package: Any) -> dict[str, Any]:
    """A small app on acme-sdk ^1.0.0 (the reproductions' shape), tested by `test`."""
    return {
        "package.json": {
            "name": "acme-app-js",
            "version": "1.0.0",
            "scripts": {"test": "node --test"},
            "dependencies": {"acme-sdk": "^1.0.0"},
            **package,
        },
        "src/orders.js": ORDERS,
        "test/orders.test.js": 'const { order } = require("../src/orders");\ntest("x", () => order("u"));\n',
    }


def jest_app(**package: Any) -> dict[str, Any]:
    return app(scripts={"test": "jest"}, devDependencies={"jest": "29.7.0"}, **package)


def substitutes(root: Path, files: dict[str, Any], sdk: str = "acme-sdk") -> list[Dependency]:
    write(root, files)
    found = ADAPTER.extract_dependencies(root, ADAPTER.find_dependency_files(root), sdk)
    return [d for d in found if d.uneditable]


def stops(found: list[Dependency], match: str) -> None:
    with pytest.raises(RequiresHuman, match=match):
        plan(SDK, found)


# jest's moduleNameMapper, moduleDirectories, modulePaths


@pytest.mark.parametrize("key", ["^acme-sdk$", "acme-sdk", "^acme-sdk(/.*)?$", "^acme\\-sdk/(.*)$"])
def test_a_jest_module_name_mapper_of_the_sdk_stops_the_run(tmp_path: Path, key: str) -> None:
    """helper-21's case 6: `"^acme-sdk$": "<rootDir>/test/fake-sdk.js"`: every test ran the fake, green."""
    files = jest_app(jest={"moduleNameMapper": {key: "<rootDir>/test/fake-sdk.js"}})
    found = substitutes(tmp_path, {**files, "test/fake-sdk.js": FAKE})
    assert [(d.file, d.line, d.role) for d in found] == [("package.json", 15, "runtime")]
    stops(
        found,
        r"package\.json line 15: jest's moduleNameMapper maps acme-sdk to '<rootDir>/test/fake-sdk\.js'",
    )


def test_a_jest_config_file_mapping_the_sdk_stops_the_run(tmp_path: Path) -> None:
    config = """module.exports = {
  testEnvironment: "node",
  moduleNameMapper: {
    "\\\\.(css|less)$": "identity-obj-proxy",
    "^acme-sdk$": "<rootDir>/test/fake-sdk.js",
  },
};
"""
    found = substitutes(tmp_path, {**jest_app(), "jest.config.js": config, "test/fake-sdk.js": FAKE})
    assert [(d.file, d.line) for d in found] == [("jest.config.js", 5)]
    stops(found, r"jest\.config\.js line 5: jest's moduleNameMapper names acme-sdk")
    json_config = {"moduleNameMapper": {"^acme-sdk$": "<rootDir>/test/fake-sdk.js"}}
    found = substitutes(tmp_path / "json", {**jest_app(), "jest.config.json": json_config})
    assert [d.file for d in found] == ["jest.config.json"]


@pytest.mark.parametrize(
    "mapper",
    [
        {"\\.(css|less)$": "identity-obj-proxy", "^@/(.*)$": "<rootDir>/src/$1"},
        {"^(\\.{1,2}/.*)\\.js$": "$1"},
        {"^acme-sdk$": "<rootDir>/node_modules/acme-sdk/dist/index.cjs"},  # the installed package itself
        {"^acme-sdk-mock$": "<rootDir>/test/mock.js"},  # another name
    ],
)
def test_mappings_of_other_modules_or_onto_the_installed_sdk_stop_nothing(
    tmp_path: Path, mapper: dict[str, str]
) -> None:
    assert substitutes(tmp_path, jest_app(jest={"moduleNameMapper": mapper})) == []


@pytest.mark.parametrize(
    ("key", "entry"),
    [("moduleDirectories", ["node_modules", "vendor"]), ("modulePaths", ["<rootDir>/vendor"])],
)
def test_jest_module_folders_holding_a_copy_of_the_sdk_stop_the_run(
    tmp_path: Path, key: str, entry: list[str]
) -> None:
    files = {**jest_app(jest={key: entry}), "vendor/acme-sdk/index.js": FAKE}
    found = substitutes(tmp_path, files)
    stops(found, rf"package\.json: jest's {key} has '[^']*vendor', which holds vendor/acme-sdk")
    assert substitutes(tmp_path / "no-copy", jest_app(jest={key: entry})) == []  # a folder of other modules


# aliases: vite, vitest, babel's module-resolver, webpack


@pytest.mark.parametrize(
    "config",
    [
        "vitest.config.ts",
        "vite.config.mjs",
        "babel.config.js",
        ".babelrc",
        "webpack.config.js",
    ],
)
def test_an_alias_of_the_sdk_stops_the_run(tmp_path: Path, config: str) -> None:
    text = """import { defineConfig } from "vitest/config";
export default defineConfig({
  resolve: {
    alias: {
      "@": "/src",
      "acme-sdk": new URL("./test/fake-sdk.js", import.meta.url).pathname,
    },
  },
});
"""
    found = substitutes(tmp_path, {**app(), config: text})
    assert [(d.file, d.line) for d in found] == [(config, 6)]
    stops(found, rf"{config} line 6: an alias names acme-sdk")


def test_aliases_of_other_modules_stop_nothing(tmp_path: Path) -> None:
    text = """export default {
  resolve: { alias: [{ find: "@", replacement: "/src" }] },
  optimizeDeps: { include: ["acme-sdk"] },
};
"""
    assert substitutes(tmp_path, {**app(), "vite.config.js": text}) == []


# jest's manual mocks of node modules


@pytest.mark.parametrize(
    ("sdk", "mock"),
    [
        ("acme-sdk", "__mocks__/acme-sdk.js"),
        ("acme-sdk", "src/__mocks__/acme-sdk.ts"),
        ("acme-sdk", "__mocks__/acme-sdk"),
        ("@acme/sdk", "__mocks__/@acme/sdk.js"),
    ],
)
def test_a_jest_manual_mock_of_the_sdk_stops_the_run(tmp_path: Path, sdk: str, mock: str) -> None:
    """helper-21's case 5: jest uses __mocks__/acme-sdk.js for every require("acme-sdk") without a jest.mock
    call: the tests ran the mock on both versions, green."""
    files = jest_app()
    files["package.json"]["dependencies"] = {sdk: "^1.0.0"}
    path = f"{mock}/index.js" if not mock.endswith((".js", ".ts")) else mock
    found = substitutes(tmp_path, {**files, path: FAKE}, sdk)
    assert [(d.file, d.section) for d in found] == [(mock, "__mocks__")]
    with pytest.raises(RequiresHuman, match=rf"{mock} is a manual mock of {sdk}: jest uses it"):
        plan(
            SdkSpec.model_validate({"name": sdk, "ecosystem": "npm", "from": "^1.0.0", "to": "2.0.0"}), found
        )


def test_a_mocks_folder_without_jest_or_of_other_modules_stops_nothing(tmp_path: Path) -> None:
    """vitest and mocha never apply __mocks__ on their own (vi.mock in a test file is the test's code)."""
    assert substitutes(tmp_path / "vitest", {**app(), "__mocks__/acme-sdk.js": FAKE}) == []
    assert substitutes(tmp_path / "other", {**jest_app(), "__mocks__/acme-sdk-extra.js": FAKE}) == []


def test_jest_mock_of_the_sdk_in_one_test_file_stays_allowed(tmp_path: Path) -> None:
    """helper-21's case 4 with a jest.mock: the repository's own test code, its call."""
    mocked = 'jest.mock("acme-sdk");\nconst sdk = require("acme-sdk");\ntest("x", () => sdk);\n'
    assert substitutes(tmp_path, {**jest_app(), "test/version.test.js": mocked}) == []


# preloads and setup files


@pytest.mark.parametrize(
    "script",
    [
        "node --require ./support/setup.cjs --test",
        "node -r ./support/setup.cjs --test",
        "node --require=./support/setup --test",
        "NODE_OPTIONS='--require ./support/setup.cjs' mocha",
    ],
)
def test_a_preload_that_hooks_resolution_of_the_sdk_stops_the_run(tmp_path: Path, script: str) -> None:
    """helper-21's case 3: `node --require ./support/setup.cjs --test`, the setup's Module._resolveFilename
    sends acme-sdk to a local fake: green on any version."""
    files = {**app(scripts={"test": script}), "support/setup.cjs": HOOK, "support/fake-sdk.cjs": FAKE}
    found = substitutes(tmp_path, files)
    assert [(d.file, d.section) for d in found] == [("support/setup.cjs", "preload")]
    stops(found, r"support/setup\.cjs \(preloaded by package\.json scripts\.test\) hooks module resolution")


def test_a_preload_several_scripts_name_is_named_once(tmp_path: Path) -> None:
    script = "node --require ./support/setup.cjs --test"
    files = {**app(scripts={"test": "npm run unit", "unit": script, "watch": f"{script} --watch"})}
    found = substitutes(tmp_path, {**files, "support/setup.cjs": HOOK, "support/fake-sdk.cjs": FAKE})
    assert [d.uneditable.split(")")[0] for d in found] == [
        "support/setup.cjs (preloaded by package.json scripts.unit"
    ]


def test_a_loader_registered_by_an_import_preload_stops_the_run(tmp_path: Path) -> None:
    register = 'import { register } from "node:module";\nregister("./hooks.mjs", import.meta.url);\n'
    hooks = (
        "export async function resolve(specifier, context, next) {\n"
        '  if (specifier === "acme-sdk") return { url: new URL("./fake.mjs", import.meta.url).href, '
        "shortCircuit: true };\n  return next(specifier, context);\n}\n"
    )
    files = {
        **app(scripts={"test": "node --import ./test/register.mjs --test"}),
        "test/register.mjs": register,
        "test/hooks.mjs": hooks,
    }
    assert [d.file for d in substitutes(tmp_path, files)] == ["test/register.mjs"]


@pytest.mark.parametrize(
    ("config", "text"),
    [
        (".mocharc.yml", "require:\n  - test/setup.js\nspec: test/**/*.test.js\n"),
        (".mocharc.json", json.dumps({"require": "./test/setup.js"})),
        (".mocharc.js", 'module.exports = { require: ["./test/setup.js"] };\n'),
    ],
)
def test_a_mocha_required_file_that_hooks_the_sdk_stops_the_run(
    tmp_path: Path, config: str, text: str
) -> None:
    setup = 'const mock = require("mock-require");\nmock("acme-sdk", "./fake-sdk");\n'
    files = {**app(scripts={"test": "mocha"}), config: text, "test/setup.js": setup}
    found = substitutes(tmp_path, files)
    assert [d.file for d in found] == ["test/setup.js"]
    stops(found, rf"test/setup\.js \(preloaded by {config}\)")


@pytest.mark.parametrize(
    ("where", "files"),
    [
        ("package.json", {"package.json": {"jest": {"setupFilesAfterEnv": ["<rootDir>/test/setup.js"]}}}),
        ("jest.config.js", {"jest.config.js": "module.exports = { setupFiles: ['./test/setup.js'] };\n"}),
        (
            "vitest.config.ts",
            {"vitest.config.ts": "export default { test: { setupFiles: 'test/setup.js' } };\n"},
        ),
    ],
)
def test_a_setup_file_that_mocks_the_sdk_for_every_test_stops_the_run(
    tmp_path: Path, where: str, files: dict[str, Any]
) -> None:
    base = jest_app()
    base["package.json"].update(files.pop("package.json", {}))
    setup = 'jest.mock("acme-sdk", () => ({ connect: () => ({}) }));\n'.replace(
        "jest", "vi" if where.startswith("vitest") else "jest"
    )
    found = substitutes(tmp_path, {**base, **files, "test/setup.js": setup})
    assert [d.file for d in found] == ["test/setup.js"]
    stops(found, rf"test/setup\.js \(preloaded by {where}[^)]*\) mocks acme-sdk for every test")


@pytest.mark.parametrize(
    ("script", "setup"),
    [
        ("node --require ./test/setup.js --test", 'process.env.TZ = "UTC";\nrequire("acme-sdk");\n'),
        ("node --require ./test/setup.js --test", 'delete require.cache[require.resolve("./db")];\n'),
        ("mocha -r ts-node/register -r dotenv/config", ""),  # packages, no file of the repository
        ("nyc -r lcov mocha && rm -r dist", ""),
        ("node --require ../outside.js --test", ""),
    ],
)
def test_preloads_that_do_not_replace_the_sdk_stop_nothing(tmp_path: Path, script: str, setup: str) -> None:
    files = {**app(scripts={"test": script}), "test/setup.js": setup}
    assert substitutes(tmp_path / "repo", files) == []


def test_the_reproductions_without_a_substitute_stop_nothing(tmp_path: Path) -> None:
    """helper-21's case 0 (node --test), case4 (jest), case9 (tests that branch on the SDK's version)."""
    branching = (
        'const sdk = require("acme-sdk");\nconst major = Number(sdk.VERSION.split(".")[0]);\n'
        'test.describe("on 2.x", { skip: major < 2 }, () => {});\n'
    )
    assert substitutes(tmp_path / "case0", app()) == []
    assert substitutes(tmp_path / "case4", jest_app()) == []
    assert substitutes(tmp_path / "case9", {**app(), "test/orders.test.js": branching}) == []


def test_a_workspace_s_own_jest_config_is_read(tmp_path: Path) -> None:
    files = {
        **jest_app(workspaces=["packages/*"]),
        "packages/web/package.json": {
            "name": "web",
            "dependencies": {"acme-sdk": "^1.0.0"},
            "jest": {"moduleNameMapper": {"^acme-sdk$": "<rootDir>/fake.js"}},
        },
    }
    assert [d.file for d in substitutes(tmp_path, files)] == ["packages/web/package.json"]


# end to end: the run stops before any install or edit


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
@pytest.mark.skipif(sandbox.probe() is not None, reason="bwrap cannot start here")
def test_a_preload_that_replaces_the_sdk_requires_a_human_end_to_end(
    tmp_path: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """helper-21's case 3 on the npm fixture: `node --require ./support/setup.cjs --test` sent acme-sdk to a
    local fake; the run bumped to 1.1.0, green on the fake, exit 0. Now it stops before any edit."""
    src = tmp_path / "preload-src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    manifest = json.loads((src / "package.json").read_text())
    manifest["scripts"]["test"] = "node --require ./support/setup.cjs --test"
    write(src, {"package.json": manifest, "support/setup.cjs": HOOK, "support/fake-sdk.cjs": FAKE_CLIENT})
    repo = tmp_path / "preload"
    materialize.materialize(src, repo)
    result = run_codemod(repo, ROOT / "fixtures" / "npm-tasks" / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert "support/setup.cjs (preloaded by package.json scripts.test) hooks module resolution" in m["reason"]
    assert not m["verifications"] and not m["environments"].get("baseline")
