"""npm inside the real sandbox: the install box reaches the (local) registry, install scripts run only
in `npm rebuild`, never with the caller's credentials, and tests run with no network."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from fixtures_support import npm_registry

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.types import ProcessResult, VerificationEnv
from agentic_codemod.config import Settings
from agentic_codemod.tools import sandbox
from agentic_codemod.tools.verification import SandboxRunner, scrubbed_env

pytestmark = [
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]


def with_postinstall(root: Path, name: str, source: str) -> None:
    """The repository runs `node NAME` as its postinstall script (npm rebuild runs it); NAME holds source."""
    manifest = json.loads((root / "package.json").read_text())
    manifest["scripts"]["postinstall"] = f"node {name}"
    (root / "package.json").write_text(json.dumps(manifest))
    (root / name).write_text(source)


def install_runner(tmp_path: Path, root: Path) -> SandboxRunner:
    """The runner of a run's install box for `root`, its environment at tmp_path/env."""
    env = scrubbed_env({"PATH": "/usr/bin:/bin"}, ["PATH"], [], home=tmp_path / "h", tmp=tmp_path / "t")
    policy = sandbox.Policy("sandbox", tmp_path / "env", index_network=True)
    return SandboxRunner(env, 20_000).boxed(policy.for_install(root))


def test_install_and_tests_in_the_sandbox(
    tmp_path: Path, registry: str, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(tmp_path / "user.npmrc"))
    (tmp_path / "user.npmrc").write_text("//127.0.0.1/:_authToken=npm_SECRETTOKEN1234567890\n")
    root = app(tmp_path / "repo", "^1.0.0")
    # An install script that records what it saw: the credentials file must be gone by then.
    with_postinstall(
        root,
        "postinstall.js",
        "const fs=require('fs');fs.writeFileSync('seen.txt', String(fs.existsSync('.codemod-npmrc')) + "
        "' ' + (process.env.npm_config_userconfig||''))",
    )
    boxed = install_runner(tmp_path, root)
    result = ADAPTER.prepare_environment(root, tmp_path / "env", Settings(), boxed, ["acme-sdk^1.0.0"])
    assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail
    assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.1.0"}
    assert (tmp_path / "env/project/seen.txt").read_text().startswith("false")
    assert "SECRETTOKEN" not in "".join(r.output_tail for r in result.install_log)


PLANTER = """const fs = require("fs"), path = require("path");
const cache = path.resolve("..", "..", "install-cache");
let seen = "missing";
try { seen = fs.readdirSync(cache).join(","); } catch (e) {}
fs.writeFileSync("cache-seen.txt", seen);
fs.mkdirSync(path.join(cache, "_cacache"), { recursive: true });
fs.writeFileSync(path.join(cache, "_cacache", "planted"), "a package document of the script's own");
"""


def test_a_later_install_of_the_run_reads_what_its_first_one_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    """The sandbox gives npm an empty HOME for each call: npm's cache is the run's install cache instead,
    and the installs after the first (a pin, the bump) take the registry's documents and tarballs from it
    (--prefer-offline). Without a lockfile: npm install takes 1.1.0, the pin of `from` 1.0.0, the bump
    1.1.0 again; the registry is asked for acme-sdk's document once and for each tarball once. The
    repository's install script (npm rebuild) finds an empty folder where the cache is, and what it
    writes there is gone before the bump's install reads the cache."""
    requests: list[str] = []
    with npm_registry(tmp_path, monkeypatch, requests=requests):
        root = app(tmp_path / "repo", "^1.0.0")
        with_postinstall(root, "planter.js", PLANTER)
        boxed = install_runner(tmp_path, root)
        settings = Settings()
        result = ADAPTER.prepare_environment(
            root, tmp_path / "env", settings, boxed, ["acme-sdk>=1.0.0 <1.1.0"]
        )
        assert [r.argv[:2] for r in result.install_log] == [["npm", "install"]] * 2 + [["npm", "rebuild"]]
        assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail
        assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.0.0"}
        cache = sandbox.install_cache_of(tmp_path / "env")
        assert (tmp_path / "env/project/cache-seen.txt").read_text() == ""  # an empty folder in its place
        assert not (cache / "_cacache" / "planted").exists()
        assert any((cache / "_cacache").iterdir())  # what npm fetched is back
        bump = ADAPTER.install_dependencies(root, result, settings, boxed, ["acme-sdk==1.1.0"])
        assert bump.ok, bump.output_tail
        assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.1.0"}

    assert requests.count("acme-sdk") == 1, requests
    tarballs = [r for r in requests if r.startswith("acme-sdk/-/")]
    assert sorted(tarballs) == ["acme-sdk/-/acme-sdk-1.0.0.tgz", "acme-sdk/-/acme-sdk-1.1.0.tgz"], requests
    assert not (cache / "_cacache" / "planted").exists()  # nor after the bump's rebuild


def test_the_bump_reads_the_package_document_the_lockfile_refresh_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    """With a lockfile, `npm ci` fetches tarballs only; the lockfile's refresh for the bump asks the
    registry for the package's document, into the run's install cache, and the bump's install of the
    target reads it there instead of asking again."""
    requests: list[str] = []
    with npm_registry(tmp_path, monkeypatch, requests=requests):
        root = app(tmp_path / "repo", "^1.0.0")
        settings = Settings()
        cache = sandbox.install_cache_of(tmp_path / "env")
        locked = subprocess.run(  # the repository's own lockfile, made as its owner would
            ["npm", "install", "--package-lock-only", "--ignore-scripts"], cwd=root, capture_output=True
        )
        assert locked.returncode == 0, locked.stderr
        requests.clear()  # the repository's own lockfile is made: from here on, the run
        boxed = install_runner(tmp_path, root)
        result = ADAPTER.prepare_environment(root, tmp_path / "env", settings, boxed, ["acme-sdk^1.0.0"])
        assert [r.argv[:2] for r in result.install_log] == [["npm", "ci"], ["npm", "rebuild"]]
        assert "acme-sdk" not in requests, requests  # npm ci: the lock's tarball, no document

        [declared] = ADAPTER.extract_dependencies(root, ["package.json"], "acme-sdk")
        text = (root / "package.json").read_text()
        (root / "package.json").write_text(ADAPTER.update_dependency(text, declared, "2.0.0"))
        notices = ADAPTER.update_lockfiles(root, declared, "2.0.0", boxed, cache)
        assert notices is not None and notices[0].updated, notices
        asked = requests.count("acme-sdk")
        assert asked >= 1, requests
        bump = ADAPTER.install_dependencies(root, result, settings, boxed, ["acme-sdk==2.0.0"])
        assert bump.ok, bump.output_tail
        assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "2.0.0"}

    assert requests.count("acme-sdk") == asked, requests  # the bump asked for no document
    assert requests.count("acme-sdk/-/acme-sdk-2.0.0.tgz") == 1, requests


@pytest.mark.parametrize("own", ["", "save-exact=true\n"])
def test_an_install_script_cannot_point_the_bump_at_a_registry_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path], own: str
) -> None:
    """npm reads ENV/project/.npmrc in every call made there, and the baseline's install scripts run in
    ENV/project: one that writes `registry=` (where the caller configures none) or `@scope:registry=`
    there would have the bump install the target from a server of its own. The bump's install puts the
    repository's .npmrc back first (none, or the repository's own), then installs."""
    with npm_registry(tmp_path, monkeypatch):
        root = app(tmp_path / "repo", "^1.0.0")
        if own:
            (root / ".npmrc").write_text(own)
        planted = "registry=http://127.0.0.1:9/\n@acme:registry=http://127.0.0.1:9/\n"
        with_postinstall(root, "redirect.js", f'require("fs").writeFileSync(".npmrc", {json.dumps(planted)})')
        boxed = install_runner(tmp_path, root)
        settings = Settings()
        result = ADAPTER.prepare_environment(
            root, tmp_path / "env", settings, boxed, ["acme-sdk>=1.0.0 <1.1.0"]
        )
        assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail
        npmrc = tmp_path / "env" / "project" / ".npmrc"
        assert npmrc.read_text() == planted  # the script ran, in ENV/project

        bump = ADAPTER.install_dependencies(root, result, settings, boxed, ["acme-sdk==1.1.0"])
        assert bump.ok, bump.output_tail
        assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.1.0"}
        assert (npmrc.read_text() if npmrc.exists() else "") == own


# The baseline's install script leaves acme-sdk 1.0.0's code in node_modules under the target's version,
# and npm's record of what it installed there (node_modules/.package-lock.json, written last, so newer
# than every folder) says that folder is the registry's 1.1.0: its tarball URL and integrity, which the
# script can read from the registry (the rebuild box reaches it).
IMPOSTOR = """const fs = require("fs"), path = require("path");
const sdk = path.join("node_modules", "acme-sdk");
const manifest = JSON.parse(fs.readFileSync(path.join(sdk, "package.json"), "utf8"));
fs.writeFileSync(path.join(sdk, "package.json"), JSON.stringify({ ...manifest, version: "1.1.0" }));
fs.writeFileSync(path.join(sdk, "PLANTED"), "1.0.0's code under 1.1.0's version");
const hidden = path.join("node_modules", ".package-lock.json");
const record = JSON.parse(fs.readFileSync(hidden, "utf8"));
record.packages["node_modules/acme-sdk"] = { ...record.packages["node_modules/acme-sdk"], ...DIST };
fs.writeFileSync(hidden, JSON.stringify(record, null, 2));
"""


def test_the_bump_installs_the_registrys_target_whatever_the_baselines_scripts_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    """The bump's environment is what the baseline's scripts left: before the fix npm took the planted
    folder for acme-sdk 1.1.0 as its record says, installed nothing, and the listing said 1.1.0 over
    1.0.0's code. Now the packages the bump asks for are extracted afresh, without that record."""
    with npm_registry(tmp_path, monkeypatch) as url:
        with urllib.request.urlopen(url + "acme-sdk") as response:
            dist = json.load(response)["versions"]["1.1.0"]["dist"]
        found = {"version": "1.1.0", "resolved": dist["tarball"], "integrity": dist["integrity"]}
        root = app(tmp_path / "repo", "^1.0.0")
        with_postinstall(root, "impostor.js", IMPOSTOR.replace("DIST", json.dumps(found)))
        boxed = install_runner(tmp_path, root)
        settings = Settings()
        result = ADAPTER.prepare_environment(
            root, tmp_path / "env", settings, boxed, ["acme-sdk>=1.0.0 <1.1.0"]
        )
        assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail
        installed = tmp_path / "env" / "project" / "node_modules" / "acme-sdk"
        assert (installed / "PLANTED").is_file()  # the script ran

        bump = ADAPTER.install_dependencies(root, result, settings, boxed, ["acme-sdk==1.1.0"])
        assert bump.ok, bump.output_tail
        assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.1.0"}
        assert not (installed / "PLANTED").exists()
        assert '"1.1.0"' in (installed / "index.js").read_text()  # the registry's 1.1.0


def test_a_workspace_in_the_targets_place_is_not_the_registrys_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    """The repository's own workspace is called acme-sdk, at the target's version: npm links it in as
    node_modules/acme-sdk for the bump. The install fails (nothing is listed or tested) and says why."""
    with npm_registry(tmp_path, monkeypatch):
        root = app(tmp_path / "repo", "^1.0.0")
        manifest = json.loads((root / "package.json").read_text())
        (root / "package.json").write_text(json.dumps({**manifest, "workspaces": ["vendored"]}))
        (root / "vendored").mkdir()
        (root / "vendored" / "package.json").write_text('{"name": "acme-sdk", "version": "1.1.0"}')
        boxed = install_runner(tmp_path, root)
        settings = Settings()
        result = ADAPTER.prepare_environment(root, tmp_path / "env", settings, boxed, ["acme-sdk^1.0.0"])
        assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail

        bump = ADAPTER.install_dependencies(root, result, settings, boxed, ["acme-sdk==1.1.0"])
        assert not bump.ok
        assert "node_modules/acme-sdk is a link or missing after the install" in bump.output_tail, bump
        assert result.install_log[-1] is bump


def test_a_pin_that_is_not_a_package_name_removes_nothing(tmp_path: Path) -> None:
    """A lockfile's entry names what the bump pins: `@x/..` would be node_modules itself."""
    modules = tmp_path / "env" / "project" / "node_modules"
    (modules / "kept").mkdir(parents=True)
    env = VerificationEnv(Path("node"), tmp_path / "env", links={"node_modules": modules})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "package.json").write_text("{}")
    result = ADAPTER.install_dependencies(root, env, Settings(), _never, ["@x/..@1.0.0"])
    assert not result.ok and "is not a package name" in result.output_tail
    assert (modules / "kept").is_dir()


def _never(
    argv: Sequence[str], *, cwd: Path, timeout_s: float, env: dict[str, str] | None = None
) -> ProcessResult:
    raise AssertionError(f"nothing may run: {argv}")


@pytest.mark.parametrize("where", ["node_modules", "node_modules/@acme"])
def test_nothing_is_removed_through_a_link_an_install_script_put_in_node_modules(
    tmp_path: Path, where: str
) -> None:
    """An install script replaces node_modules (or a scope folder) with a link to a host folder: the
    bump's removal of the target would follow it and delete the host's files."""
    host = tmp_path / "host"
    (host / "sdk").mkdir(parents=True)
    (host / ".package-lock.json").write_text("the host's")
    env_root = tmp_path / "env"
    modules = env_root / "project" / "node_modules"
    modules.parent.mkdir(parents=True)
    if where == "node_modules":
        modules.symlink_to(host)
    else:
        modules.mkdir()
        (modules / "@acme").symlink_to(host)
    env = VerificationEnv(Path("node"), env_root, links={"node_modules": modules})
    result = ADAPTER.install_dependencies(tmp_path, env, Settings(), _never, ["@acme/sdk@1.0.0"])
    expected = "is not a folder" if where == "node_modules" else "is a link"
    assert not result.ok and expected in result.output_tail, result
    assert (host / "sdk").is_dir() and (host / ".package-lock.json").read_text() == "the host's"


def test_an_uninstall_after_the_bump_keeps_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    """`npm uninstall` rebuilds the tree from ENV/project's package.json and lockfile. With the baseline's
    there (^1.0.0, 1.1.0 locked) it put acme-sdk 1.1.0 back after the bump (the second review's
    reproduction); the candidate's (^2.0.0, 2.0.0 locked) keep 2.0.0."""
    with npm_registry(tmp_path, monkeypatch):
        root = app(tmp_path / "repo", "^1.0.0")
        settings = Settings()
        locked = subprocess.run(
            ["npm", "install", "--package-lock-only", "--ignore-scripts"], cwd=root, capture_output=True
        )
        assert locked.returncode == 0, locked.stderr
        boxed = install_runner(tmp_path, root)
        env = ADAPTER.prepare_environment(root, tmp_path / "env", settings, boxed, ["acme-sdk^1.0.0"])
        assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
        [declared] = ADAPTER.extract_dependencies(root, ["package.json"], "acme-sdk")
        text = (root / "package.json").read_text()
        (root / "package.json").write_text(ADAPTER.update_dependency(text, declared, "2.0.0"))
        cache = sandbox.install_cache_of(tmp_path / "env")
        notices = ADAPTER.update_lockfiles(root, declared, "2.0.0", boxed, cache)
        assert notices is not None and notices[0].updated, notices
        bump = ADAPTER.install_dependencies(root, env, settings, boxed, ["acme-sdk==2.0.0"])
        assert bump.ok, bump.output_tail
        gone = ADAPTER.uninstall(root, env, settings, boxed, ["left-pad"])  # not installed: nothing to do
        assert gone.ok, gone.output_tail
        assert ADAPTER.installed_versions(root, env, boxed) == {"acme-sdk": "2.0.0"}


def test_the_listing_reads_no_host_file_through_a_link_and_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    """The third review's reproduction: a postinstall made node_modules/leak/package.json a link to a host
    file, and run.json showed that file's "version"; a FIFO there blocked the host's read."""
    host = tmp_path / "host-secret.json"
    host.write_text('{"name": "leak", "version": "SECRET-FROM-HOST"}')
    modules = tmp_path / "env" / "project" / "node_modules"
    for name in ("acme-sdk", "leak", "fifo"):
        (modules / name).mkdir(parents=True)
    (modules / "acme-sdk" / "package.json").write_text('{"name": "acme-sdk", "version": "2.0.0"}')
    (modules / "leak" / "package.json").symlink_to(host)
    os.mkfifo(modules / "fifo" / "package.json")
    env = VerificationEnv(Path("node"), tmp_path / "env", links={"node_modules": modules})
    found: list[object] = []
    listing = threading.Thread(target=lambda: found.append(ADAPTER.installed_versions(tmp_path, env, _never)))
    listing.start()
    listing.join(timeout=30)
    assert not listing.is_alive(), "the listing blocked on the FIFO"
    assert found == [{"acme-sdk": "2.0.0"}]
