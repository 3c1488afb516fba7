"""The bubblewrap box, run for real: what a process inside can see, reach and leave behind."""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER as NPM
from agentic_codemod.adapters.python import ADAPTER as PYTHON
from agentic_codemod.tools import repo_copy
from agentic_codemod.tools.sandbox import (
    REPO_MOUNT,
    REPORTS_MOUNT,
    Box,
    Mount,
    Policy,
    install_cache_of,
    probe,
)
from agentic_codemod.tools.verification import SandboxRunner

needs_bwrap = pytest.mark.skipif(probe() is not None, reason=f"bubblewrap cannot start here: {probe()}")
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}


def run_in(box: Box, code: str, *, cwd: Path | None = None, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    runner = SandboxRunner(env={**ENV, **(env or {})}, tail_bytes=20_000).boxed(box)
    return runner([sys.executable, "-c", code], cwd=cwd or box.repo, timeout_s=60)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    root.mkdir()
    (root / "mod.py").write_text("VALUE = 1\n")
    return root


@needs_bwrap
def test_the_repository_copy_is_the_working_directory_at_a_fixed_path(repo: Path) -> None:
    result = run_in(Box("sandbox", repo), "import os; print(os.getcwd()); print(open('mod.py').read())")
    assert result.ok, result.output_tail
    assert result.output_tail.splitlines()[:2] == [str(REPO_MOUNT), "VALUE = 1"]


@needs_bwrap
def test_the_run_dir_the_callers_home_and_its_files_are_not_there(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "run-dir" / "trace.jsonl"
    secret.parent.mkdir()
    secret.write_text("evidence\n")
    home = Path.home()
    code = (
        f"import os; print(os.path.exists({str(secret)!r}), os.path.exists({str(tmp_path)!r}), "
        f"os.path.isdir({str(home)!r}) and sorted(os.listdir({str(home)!r})))"
    )
    result = run_in(Box("sandbox", repo), code)
    assert result.ok, result.output_tail
    found, parent, listing = result.output_tail.split(None, 2)
    assert (found, parent) == ("False", "False")
    assert ".bashrc" not in listing and ".ssh" not in listing  # at most the Python installation's path


@needs_bwrap
def test_the_environment_is_cleared_to_the_allowlist_and_home_is_a_tmpfs(repo: Path) -> None:
    os.environ["CODEMOD_TEST_LEAK"] = "leaky-value"
    try:
        runner = SandboxRunner(env=ENV, tail_bytes=20_000).boxed(Box("sandbox", repo))
        code = "import os, json; print(json.dumps(dict(os.environ)))"
        result = runner([sys.executable, "-c", code], cwd=repo, timeout_s=60)
    finally:
        del os.environ["CODEMOD_TEST_LEAK"]
    assert result.ok, result.output_tail
    assert "leaky-value" not in result.output_tail
    assert '"HOME": "/codemod/home"' in result.output_tail and '"TMPDIR": "/tmp"' in result.output_tail


@needs_bwrap
def test_the_parent_and_other_processes_are_invisible(repo: Path) -> None:
    code = "import os; print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    result = run_in(Box("sandbox", repo), code)
    assert result.ok, result.output_tail
    pids = eval(result.output_tail.strip())  # a list of ints printed above
    assert os.getpid() not in pids and max(pids) < 10


@needs_bwrap
def test_tests_get_no_network_not_even_the_hosts_loopback(repo: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    try:
        code = (
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\n"
            "except OSError as exc:\n    print('REFUSED', exc)\n"
        )
        result = run_in(Box("sandbox", repo), code)
    finally:
        server.close()
    assert result.ok, result.output_tail
    assert result.output_tail.startswith("REFUSED")


@needs_bwrap
def test_the_venv_is_read_only_for_tests_and_writable_for_installs(repo: Path, tmp_path: Path) -> None:
    env_dir, reports = tmp_path / "env", tmp_path / "reports"
    policy = Policy("sandbox", env_dir)
    install_box = policy.for_install(repo)  # creates env_dir
    write = f"open({str(env_dir / 'planted.py')!r}, 'w').write('x')"
    assert run_in(install_box, write).ok
    reports.mkdir()
    test_box = policy.for_tests(repo, reports)
    result = run_in(test_box, write.replace("planted", "planted2"))
    assert not result.ok and "Read-only file system" in result.output_tail
    assert run_in(test_box, f"open('{REPORTS_MOUNT}/junit.xml', 'w').write('<x/>')").ok
    assert (reports / "junit.xml").read_text() == "<x/>"
    assert test_box.inside(reports / "junit.xml") == f"{REPORTS_MOUNT}/junit.xml"


@needs_bwrap
def test_a_daemon_dies_with_the_sandbox(repo: Path) -> None:
    marker = f"codemod-box-daemon-{os.getpid()}"
    code = (
        "import subprocess, sys\n"
        f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)', {marker!r}],"
        " start_new_session=True)\nprint('spawned')\n"
    )
    result = run_in(Box("sandbox", repo), code)
    assert result.ok and "spawned" in result.output_tail
    alive = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
    assert alive == []


@needs_bwrap
def test_memory_is_limited_per_process(repo: Path) -> None:
    box = Box("sandbox", repo, memory_bytes=256 * 1024**2)
    result = run_in(box, "b = bytearray(512 * 1024**2); print('allocated')")
    assert not result.ok and "MemoryError" in result.output_tail


def test_process_isolation_runs_the_command_as_it_is(repo: Path, tmp_path: Path) -> None:
    box = Box("process", repo, (Mount(tmp_path / "env"),), home=tmp_path / "h", tmp=tmp_path / "t")
    argv, cwd, env = box.wrap(["python", "-c", "pass"], repo, {"PATH": "/usr/bin"})
    assert argv == ["python", "-c", "pass"] and cwd == repo
    assert env["HOME"] == str(tmp_path / "h") and env["TMPDIR"] == str(tmp_path / "t")
    assert box.inside(repo / "x") == str(repo / "x")


def test_a_missing_bwrap_is_named() -> None:
    assert probe("/nonexistent/bwrap") == "/nonexistent/bwrap is not installed"


def test_a_restored_file_is_still_seen_as_touched(repo: Path, tmp_path: Path) -> None:
    worktree = repo
    (worktree / "pkg").mkdir()
    (worktree / "pkg" / "a.py").write_text("A = 1\n")
    (worktree / ".git").mkdir()
    (worktree / ".git" / "config").write_text("[core]\n")
    copy = tmp_path / "the-copy"
    stamp = repo_copy.fresh_copy(worktree, copy)
    assert not (copy / ".git").exists() and set(stamp) == {"mod.py", "pkg/a.py"}
    original = (copy / "mod.py").read_bytes()
    st = (copy / "mod.py").stat()
    (copy / "mod.py").write_bytes(b"VALUE = 2\n")
    (copy / "mod.py").write_bytes(original)
    os.utime(copy / "mod.py", ns=(st.st_atime_ns, st.st_mtime_ns))
    (copy / "pkg" / "a.py").unlink()
    (copy / "pkg" / "__pycache__").mkdir()
    (copy / "pkg" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"planted")
    (copy / "report.txt").write_text("a byproduct is fine\n")
    assert repo_copy.touched(copy, stamp, (".py", ".pyc"), shadowing=PYTHON.test_facts.shadowing) == [
        "mod.py (written or replaced)",
        "pkg/__pycache__/a.cpython-311.pyc (new code file)",
        "pkg/a.py (deleted)",
    ]


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_a_data_file_rewritten_with_its_own_bytes_is_only_listed(tmp_path: Path) -> None:
    worktree = tmp_path / "clone"
    (worktree / "tests" / "res").mkdir(parents=True)
    (worktree / "tests" / "res" / "page.html").write_text("<p>same</p>\n")
    (worktree / "tests" / "res" / "changed.json").write_text("{}\n")
    (worktree / "mod.py").write_text("VALUE = 1\n")
    copy = tmp_path / "copy"
    stamp = repo_copy.fresh_copy(worktree, copy)
    for rel in ("tests/res/page.html", "tests/res/changed.json", "mod.py"):  # rewritten, same bytes
        (copy / rel).write_bytes((worktree / rel).read_bytes())
    rewritten: list[str] = []
    found = repo_copy.touched(
        copy, stamp, (".py",), source=worktree, strict={"tests/res/changed.json"}, rewritten=rewritten
    )
    assert rewritten == ["tests/res/page.html"]
    assert found == ["mod.py (written or replaced)", "tests/res/changed.json (written or replaced)"]
    (copy / "tests" / "res" / "page.html").write_text("<p>other</p>\n")  # not the same bytes any more
    assert "tests/res/page.html (written or replaced)" in repo_copy.touched(
        copy, stamp, (".py",), source=worktree, rewritten=[]
    )


@needs_bwrap
def test_a_test_suite_can_commit_with_git_inside(repo: Path) -> None:
    code = (
        "import subprocess as s\n"
        "s.run(['git', 'init', '-q', '/tmp/r'], check=True)\n"
        "s.run(['git', '-C', '/tmp/r', 'commit', '-q', '--allow-empty', '-m', 'x'], check=True)\n"
        "log = s.run(['git', '-C', '/tmp/r', 'log', '--format=%an'], capture_output=True, text=True)\n"
        "print(log.stdout)\n"
    )
    result = run_in(Box("sandbox", repo), code)
    assert result.ok, result.output_tail
    assert "agentic-codemod sandbox" in result.output_tail


@needs_bwrap
def test_the_venv_is_activated_for_console_scripts(repo: Path, tmp_path: Path) -> None:
    env_dir, reports = tmp_path / "env", tmp_path / "reports"
    (env_dir / "bin").mkdir(parents=True)
    script = env_dir / "bin" / "hello-tool"
    script.write_text("#!/bin/sh\necho hello from the venv\n")
    script.chmod(0o755)
    reports.mkdir()
    box = Policy("sandbox", env_dir).for_tests(repo, reports)
    result = run_in(
        box, "import os, subprocess; subprocess.run(['hello-tool']); print(os.environ['VIRTUAL_ENV'])"
    )
    assert result.ok, result.output_tail
    assert "hello from the venv" in result.output_tail and str(env_dir) in result.output_tail


def test_new_code_is_flagged_only_where_it_can_shadow_the_candidate(tmp_path: Path) -> None:
    worktree = tmp_path / "clone"
    (worktree / "pkg").mkdir(parents=True)
    (worktree / "pkg" / "mod.py").write_text("A = 1\n")
    copy = tmp_path / "copy"
    stamp = repo_copy.fresh_copy(worktree, copy)
    for rel in ("pkg/mod/__init__.py", "pkg/extra.py", "_trial_temp/case/__init__.py", "_trial_temp/t.py"):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text("X = 2\n")
    assert repo_copy.touched(copy, stamp, (".py", ".pyc"), shadowing=PYTHON.test_facts.shadowing) == [
        "pkg/extra.py (new code file)",
        "pkg/mod/__init__.py (new code file)",
    ]


def test_a_new_module_named_like_a_candidate_folder_shadows_it_where_node_resolves_files_first(
    tmp_path: Path,
) -> None:
    """require("./client") loads client.js before client/index.js; Python imports the package first."""
    worktree = tmp_path / "clone"
    (worktree / "src" / "client").mkdir(parents=True)
    (worktree / "src" / "client" / "index.js").write_text("module.exports = 1;\n")
    (worktree / "src" / "client" / "__init__.py").write_text("")
    copy = tmp_path / "copy"
    stamp = repo_copy.fresh_copy(worktree, copy)
    (copy / "src" / "client.js").write_text("module.exports = 2;\n")
    (copy / "src" / "client.py").write_text("A = 2\n")
    (copy / "scratch").mkdir()
    (copy / "scratch" / "tool.js").write_text("module.exports = 3;\n")  # a folder of its own: harmless
    npm = NPM.test_facts
    assert repo_copy.touched(copy, stamp, npm.code_suffixes, shadowing=npm.shadowing) == [
        "src/client.js (new code file)"
    ]
    python = PYTHON.test_facts
    assert repo_copy.touched(copy, stamp, python.code_suffixes, shadowing=python.shadowing) == []


def test_a_package_a_test_run_adds_where_node_looks_packages_up_is_flagged_whatever_its_suffix(
    tmp_path: Path,
) -> None:
    """require("acme-sdk") from src/orders.js looks in src/node_modules before the root's (the stamped
    link to the environment): a package written there during the run, or in test/node_modules, is what
    the code loads. Its `main` may have any suffix (node loads it as code), and a link named node_modules
    may lead anywhere. node_modules/.cache (no package name) and a package.json in a scratch folder of its
    own change nothing; a new package.json above candidate code changes its scope. A package in a test's
    scratch project beside committed data reads as tampering too: any file can be code to node (an
    extensionless script; helper-40), so nothing tells that folder from one code looks packages up in."""
    worktree = tmp_path / "clone"
    candidate = ("src/orders.js", "lib/util.js", "bin/orders", "test/orders.test.js", "package.json")
    for rel in (*candidate, "test/fixtures/proj/settings.json"):
        (worktree / rel).parent.mkdir(parents=True, exist_ok=True)
        (worktree / rel).write_text("module.exports = 1;\n")
    environment = tmp_path / "env" / "node_modules"
    environment.mkdir(parents=True)
    copy = tmp_path / "copy"
    stamp = repo_copy.fresh_copy(worktree, copy)
    (copy / "node_modules").symlink_to(environment, target_is_directory=True)
    repo_copy.stamp_file(copy, stamp, "node_modules")
    planted = {
        "src/node_modules/acme-sdk/package.json": '{"main": "impl.data"}',
        "src/node_modules/acme-sdk/impl.data": "module.exports = {};",
        "test/node_modules/@acme/sdk/index.js": "module.exports = {};",
        "src/package.json": '{"name": "acme-sdk", "exports": "./orders.js"}',
        "src/node_modules/.cache/babel/x.json": "{}",
        "scratch/project/package.json": "{}",
        "test/fixtures/proj/node_modules/my-plugin/index.js": "module.exports = {};",
        "bin/node_modules/acme-sdk/index.js": "module.exports = {};",  # bin/orders: code, no suffix
        "test/fixtures/proj/package.json": "{}",
    }
    for rel, text in planted.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(text)
    (tmp_path / "elsewhere").mkdir()
    (copy / "lib" / "node_modules").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (copy / "test" / "node_modules" / "acme-sdk").symlink_to(tmp_path / "gone", target_is_directory=True)
    npm = NPM.test_facts
    assert repo_copy.touched(copy, stamp, npm.code_suffixes, shadowing=npm.shadowing) == [
        "bin/node_modules/acme-sdk/index.js (new file where modules are resolved)",
        "lib/node_modules (new link where packages are looked up)",
        "src/node_modules/acme-sdk/impl.data (new file where modules are resolved)",
        "src/node_modules/acme-sdk/package.json (new file where modules are resolved)",
        "src/package.json (new file where modules are resolved)",
        "test/fixtures/proj/node_modules/my-plugin/index.js (new file where modules are resolved)",
        "test/fixtures/proj/package.json (new file where modules are resolved)",
        "test/node_modules/@acme/sdk/index.js (new file where modules are resolved)",
        "test/node_modules/acme-sdk (new link where packages are looked up)",
    ]
    python = PYTHON.test_facts  # Python looks nothing up in node_modules
    assert repo_copy.touched(copy, stamp, python.code_suffixes, shadowing=python.shadowing) == []


def test_installs_see_the_runs_own_cache_and_template_builds_see_neither_the_venv_nor_it(
    tmp_path: Path,
) -> None:
    """The installer's cache of one run is writable for that run's installs only; a template build box
    keeps the install box's network and read-only wheel dirs but gets its own writable mounts."""
    wheels, repo, scratch = tmp_path / "wheels", tmp_path / "copy", tmp_path / "scratch"
    for d in (wheels, repo, scratch):
        d.mkdir()
    policy = Policy("sandbox", tmp_path / "run" / "env", wheel_dirs=(wheels,), index_network=True)
    cache = install_cache_of(policy.env_dir)
    install = policy.for_install(repo)
    assert cache == tmp_path / "run" / "install-cache" and cache.is_dir()
    assert set(install.mounts) == {
        Mount(policy.env_dir, writable=True),
        Mount(cache, writable=True),
        Mount(wheels),
    }
    tests = policy.for_tests(repo, tmp_path / "reports")
    assert all(m.source != cache for m in tests.mounts)
    shared = tmp_path / "shared"
    build = install.for_template(scratch, [shared])
    assert build.repo == scratch and build.network and build.venv is None
    assert set(build.mounts) == {Mount(shared, writable=True), Mount(wheels)}


@needs_bwrap
@pytest.mark.parametrize("uses_cache", [True, False], ids=["npm", "python"])
def test_a_lock_tool_sees_the_venv_read_only_and_the_runs_cache_only_where_it_keeps_its_fetches_there(
    tmp_path: Path, repo: Path, uses_cache: bool
) -> None:
    """A lock tool may run the project's build backend (uv lock, pdm, Poetry on a dynamic project):
    repository code, in the bump's step. Before, its box was the install box, the environment writable:
    a backend could leave a package under the target's name there, which the bump's install keeps."""
    policy = Policy("sandbox", tmp_path / "run" / "env", index_network=True)
    policy.env_dir.mkdir(parents=True)
    cache = install_cache_of(policy.env_dir)
    box = policy.for_lock(repo, cache if uses_cache else None)
    assert box.network and box.venv == policy.env_dir
    planted = run_in(box, f"open({str(policy.env_dir / 'planted.pth')!r}, 'w').write('x')")
    assert not planted.ok and "Read-only file system" in planted.output_tail
    kept = run_in(box, f"open({str(cache / 'fetched')!r}, 'w').write('x')")
    assert kept.ok == uses_cache, kept.output_tail
    assert (cache / "fetched").is_file() == uses_cache
    assert NPM.lock_cache and not PYTHON.lock_cache


@needs_bwrap
def test_what_a_box_says_it_sees_is_what_a_process_inside_finds(tmp_path: Path, repo: Path) -> None:
    """Box.sees decides which lock tool a box can start (python/update.lock_tool): checked against a real
    box, path by path, so the two cannot drift apart."""
    policy = Policy("sandbox", tmp_path / "run" / "env", index_network=True)
    (policy.env_dir / "bin").mkdir(parents=True)
    in_env = policy.env_dir / "bin" / "tool"
    outside = tmp_path / "home" / ".cargo" / "bin" / "uv"  # a tool of the caller's HOME
    beside_env = tmp_path / "run" / "other"  # next to a mount: bwrap makes its parent, not its siblings
    for path in (in_env, outside, beside_env):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/bin/sh\n")
    box = policy.for_lock(repo, None)
    paths = [Path(sys.executable), Path("/usr/bin/env"), in_env, outside, beside_env]
    said = [box.sees(p) for p in paths]
    found = run_in(box, f"import os; print([os.path.exists(p) for p in {[str(p) for p in paths]!r}])")
    assert found.ok, found.output_tail
    assert found.output_tail.strip().splitlines()[-1] == str(said)
    assert said == [True, True, True, False, False]
    link = tmp_path / "home" / "bin" / "python"  # outside every mount, leading into a seen place
    link.parent.mkdir(parents=True)
    link.symlink_to(sys.executable)
    assert not box.sees(link)  # the box would start `link`, which is not there
    assert Policy("process", policy.env_dir).for_lock(repo, None).sees(outside)


@needs_bwrap
@pytest.mark.skipif(not Path("/etc/ssl/private").is_dir(), reason="no /etc/ssl/private on this machine")
def test_the_machines_private_keys_folder_is_an_empty_tmpfs_inside(repo: Path) -> None:
    """The sandbox's uid maps to the caller's: run as root (a CI container), root's 0600 keys under
    /etc/ssl/private were the sandbox user's own (the red-team listed the folder from a conftest)."""
    code = (
        "import os; print(sorted(os.listdir('/etc/ssl/private')));"
        "print([l.split()[4] for l in open('/proc/self/mountinfo') if ' - tmpfs ' in l])"
    )
    result = run_in(Box("sandbox", repo), code)
    assert result.ok, result.output_tail
    listing, tmpfs = result.output_tail.splitlines()[:2]
    assert listing == "[]" and "'/etc/ssl/private'" in tmpfs
    if Path("/etc/ssl/certs").is_dir():  # the rest of /etc/ssl is still there (certificates)
        certs = run_in(Box("sandbox", repo), "import os; print(os.path.isdir('/etc/ssl/certs'))")
        assert certs.output_tail.strip() == "True"


def read_in_box(repo: Path, folder: Path, hidden: tuple[Path, ...]) -> list[str]:
    """What each file of `folder` (mounted) reads as from inside a box that hides `hidden`, by name."""
    box = Box("sandbox", repo, (Mount(folder),), hidden=hidden)
    read = "[open(os.path.join(d, f)).read() for f in sorted(os.listdir(d))]"
    code = f"import json, os; d = {str(folder)!r}; print(json.dumps({read}))"
    result = run_in(box, code)
    assert result.ok, result.output_tail
    return list(json.loads(result.output_tail.strip().splitlines()[-1]))


@needs_bwrap
def test_the_callers_secret_files_are_empty_wherever_a_box_shows_them(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-43: a client key kept under a folder every box mounts (/opt, /usr, the tool's venv, a wheel
    dir) was readable by the build backend, and npm's global npmrc under /usr by the install scripts.
    Each adapter names the caller's secret files (the client certificate, pip's and npm's configuration
    files); the box binds an empty file over each it shows, through a link too, and is not disturbed by
    one it does not show."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "client.pem").write_text("-----BEGIN PRIVATE KEY-----\nKEY\n")
    (wheels / "link.pem").symlink_to(wheels / "client.pem")
    (wheels / "ok.whl").write_text("a wheel\n")
    monkeypatch.setenv("PIP_CLIENT_CERT", str(wheels / "link.pem"))
    (wheels / "npmrc").write_text("//registry.example/:_authToken=npm_T0KEN\n")
    (tmp_path / "plain-npmrc").write_text("cafile=/etc/ssl/ca.pem\n")  # nothing secret: npm may need it
    monkeypatch.setenv("NPM_CONFIG_GLOBALCONFIG", str(wheels / "npmrc"))
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(tmp_path / "plain-npmrc"))
    hidden = [Path(f) for a in (PYTHON, NPM) if a.secret_files for f in a.secret_files(dict(os.environ))]
    assert wheels / "link.pem" in hidden and wheels / "npmrc" in hidden
    assert tmp_path / "plain-npmrc" not in hidden
    assert read_in_box(repo, wheels, tuple(hidden)) == ["", "", "", "a wheel\n"]


@needs_bwrap
def test_npms_client_key_is_empty_wherever_a_box_shows_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-47: npm takes a registry's client certificate as `//HOST/:keyfile=` and `certfile=` (or an
    inline `key=`); an npmrc holding no token was no secret file, and the key file it names was none: both
    were readable in every box, Python runs' too (adapters.secret_files is every box's)."""
    shared = tmp_path / "shared"  # a folder every box shows, as /opt or /usr are
    shared.mkdir()
    (shared / "client.key").write_text("-----BEGIN PRIVATE KEY-----\nKEYFILE-SECRET\n")
    (shared / "client.crt").write_text("-----BEGIN CERTIFICATE-----\nCERT\n")
    (shared / "npmrc").write_text(
        f"//registry.corp.example/:certfile={shared / 'client.crt'}\n"
        f"//registry.corp.example/:keyfile={shared / 'client.key'}\n"
        'key="-----BEGIN PRIVATE KEY-----\\nINLINE-SECRET\\n-----END PRIVATE KEY-----"\n'
    )
    monkeypatch.setenv("NPM_CONFIG_GLOBALCONFIG", str(shared / "npmrc"))
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(tmp_path / "none"))
    hidden = tuple(Path(f) for f in NPM.secret_files(dict(os.environ)))  # type: ignore[misc]
    assert read_in_box(repo, shared, hidden) == ["", "", ""]


@needs_bwrap
def test_a_secret_file_in_a_masked_folder_does_not_stop_the_box(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """helper-44: a client key in /etc/ssl/private (already an empty read-only tmpfs in every box) made
    bwrap fail to bind over it: no box started. A file in a masked folder needs nothing more."""
    from agentic_codemod.tools import sandbox

    private = tmp_path / "private"
    private.mkdir()
    (private / "client.pem").write_text("KEY\n")
    monkeypatch.setattr(sandbox, "MASKED_PATHS", (str(private),))
    box = Box("sandbox", repo, hidden=(private / "client.pem",))
    assert box._shown(box.hidden) == []
    result = run_in(box, "print('started')")
    assert result.ok and "started" in result.output_tail, result.output_tail
