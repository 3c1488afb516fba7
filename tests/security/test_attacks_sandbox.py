"""The repository's own code is hostile: end-to-end runs of hostile fixture repositories through the CLI.

Each repository is the acme-app fixture with a conftest.py (or a test) that attacks the evidence, the
caller's secrets or the run's lifetime. Every test asserts the exit code (never 0 where the tests really
fail or the evidence was touched), the artifacts, and that the user's --repo is unchanged.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ACME_APP, FLIP_REPORTS, ROOT

from agentic_codemod.tools.sandbox import probe

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"bubblewrap cannot start here: {probe()}")

CONFTEST = (ACME_APP / "tests" / "conftest.py").read_text()
TASK = "acme-sdk-2-rules.yml"  # the rule-fixable task: a clean repository ends 0
# Assembled at runtime so no scanner mistakes this file for a leak.
ENV_SECRET = "sandbox-env-" + "Q7" * 9
HOME_SECRET = "sandbox-home-" + "w9" * 9

SWAP_MODULE = """
import atexit as _atexit
import os as _os
from pathlib import Path as _Path

_target = _Path(__file__).resolve().parents[1] / "src" / "acme_app" / "reports.py"
_original, _stat = _target.read_bytes(), _target.stat()
_target.write_bytes(_original + b"\\n\\nSTUBBED = True\\n")


def _restore():
    _target.write_bytes(_original)
    _os.utime(_target, ns=(_stat.st_atime_ns, _stat.st_mtime_ns))


_atexit.register(_restore)
"""


def _snoop(run_dir: Path, caller_home: Path, marker: str) -> str:
    """Test code that reads every environment it can see, the caller's HOME, tries to rewrite the trace
    and to plant a git filter, and leaves a daemon behind. Everything it finds goes to the output tail,
    base64-encoded (so the redactor would not recognise it)."""
    return f"""
import base64 as _b64
import glob as _glob
import os as _os
import subprocess as _sp
import sys as _sys

_found = []
for _path in [{str(caller_home / ".netrc")!r}] + _glob.glob("/proc/*/environ"):
    try:
        with open(_path, "rb") as _h:
            _found.append(_h.read())
    except OSError:
        pass
_found.append(repr(dict(_os.environ)).encode())
_line = ("SNOOP " + _b64.b64encode(b"|".join(_found)).decode() + "\\n").encode()
__import__("atexit").register(_os.write, 1, _line)  # after pytest's capture ends: into the output tail
for _name in ("trace.jsonl", "run.json", "changes.patch"):
    try:
        with open(_os.path.join({str(run_dir)!r}, _name), "w") as _h:
            _h.write("forged\\n")
    except OSError:
        pass
for _git in (".git", "../.git", "../../.git"):
    try:
        _os.makedirs(_os.path.join(_git, "info"), exist_ok=True)
        with open(_os.path.join(_git, "config"), "a") as _h:
            _h.write("[filter \\"x\\"]\\n\\tclean = touch {run_dir.parent / "FILTER_RAN"!s}\\n")
        with open(_os.path.join(_git, "info", "attributes"), "a") as _h:
            _h.write("* filter=x\\n")
    except OSError:
        pass
_sp.Popen([_sys.executable, "-c", "import time; time.sleep(120)", {marker!r}], start_new_session=True,
          stdout=_sp.DEVNULL, stderr=_sp.DEVNULL)
"""


def _unchanged(repo: Path, before: tuple[str, str]) -> None:
    assert _repo_state(repo) == before, "the user's --repo changed"


def _repo_state(repo: Path) -> tuple[str, str]:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True).stdout

    return git("status", "--porcelain", "--ignored"), git("rev-parse", "HEAD")


def _artifact_text(result: Any) -> str:
    """Every file the run left (but the installed venv), plus what the CLI printed."""
    parts = [result.out, result.err]
    for path in result.run_dir.rglob("*"):
        if path.is_file() and "env" not in path.relative_to(result.run_dir).parts[:1]:
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def _encodings(secret: str) -> list[str]:
    raw = secret.encode()
    return [secret] + [base64.b64encode(b"x" * pad + raw).decode()[4:-4] for pad in range(3)]


def _alive(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_attack_report_flipping_hook_cannot_turn_red_into_green(make_repo, run_codemod) -> None:
    repo = make_repo(
        "flip",
        {
            "tests/conftest.py": CONFTEST + FLIP_REPORTS,
            "tests/test_really_fails.py": "def test_really_fails():\n    assert 1 == 2\n",
        },
    )
    before = _repo_state(repo)
    result = run_codemod(repo, TASK)
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert "canary test that must fail passed" in m["reason"]
    assert "tests/conftest.py: pytest_runtest_makereport" in m["reason"]
    assert m["verifications"][0]["canary"] == "passed" and not m["verifications"][0]["passed"]
    # the baseline's tests ran beside the bump: the run ends where the first verification joins them, with
    # the baseline's reason; the candidate's own result is not recorded, nothing is reviewed
    assert [v["phase"] for v in m["verifications"]] == ["baseline"]
    assert "review" not in [s["step"] for s in m["steps"] if s.get("result") != "not run"]
    _unchanged(repo, before)


def test_attack_module_swapped_during_the_run_and_restored_is_seen(make_repo, run_codemod) -> None:
    repo = make_repo("swap", {"tests/conftest.py": CONFTEST + SWAP_MODULE})
    before = _repo_state(repo)
    result = run_codemod(repo, TASK)
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert "writes its files: src/acme_app/reports.py (written or replaced)" in m["reason"]
    assert m["verifications"][0]["tampered"] == ["src/acme_app/reports.py (written or replaced)"]
    _unchanged(repo, before)


def test_attack_test_code_sees_no_secret_no_run_dir_and_leaves_no_daemon(
    make_repo, run_codemod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    caller_home = tmp_path / "caller-home"
    caller_home.mkdir()
    (caller_home / ".netrc").write_text(f"machine gitlab.example login ci password {HOME_SECRET}\n")
    monkeypatch.setenv("HOME", str(caller_home))
    monkeypatch.setenv("DEPLOY_PASSPHRASE_PLAIN", ENV_SECRET)  # a name no secret marker catches
    marker = f"codemod-daemon-{os.getpid()}-{tmp_path.name}"
    run_dir = tmp_path / "run-1"  # where run_codemod puts the first run: the attacker knows the path
    repo = make_repo("snoop", {"tests/conftest.py": CONFTEST + _snoop(run_dir, caller_home, marker)})
    before = _repo_state(repo)
    result = run_codemod(repo, TASK)
    m = result.manifest
    assert result.code == 0, m["reason"]  # the attack changes nothing the evidence says
    assert result.run_dir == run_dir
    assert all(v["isolation"] == "sandbox" and v["canary"] == "failed" for v in m["verifications"])
    assert "SNOOP" in m["verifications"][0]["output_tail"]  # the snooping code did run
    text = _artifact_text(result)
    for secret in (ENV_SECRET, HOME_SECRET):
        assert not any(form in text for form in _encodings(secret)), secret
    trace = result.trace()
    assert trace and all("forged" not in str(line) for line in trace)
    assert "forged" not in result.artifact("changes.patch").read_text()
    assert not (tmp_path / "FILTER_RAN").exists()
    clone_config = (run_dir / "worktree" / ".git" / "config").read_text()
    assert "filter" not in clone_config
    assert set(m["candidate"]["files"]) == {
        "requirements.txt",
        "src/acme_app/billing.py",
        "src/acme_app/clients.py",
        "src/acme_app/inventory.py",
        "src/acme_app/orders.py",
    }
    assert _alive(marker) == []  # the daemon died with the sandbox's pid namespace
    _unchanged(repo, before)


def test_without_the_sandbox_the_same_test_code_reads_the_callers_files(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    """What --isolation process gives up (SECURITY.md): test code reads whatever the runner's user can,
    here a credentials file in the caller's HOME."""
    caller_home = tmp_path / "caller-home"
    caller_home.mkdir()
    (caller_home / ".netrc").write_text(f"machine gitlab.example login ci password {HOME_SECRET}\n")
    marker = f"codemod-daemon-process-{os.getpid()}-{tmp_path.name}"
    snoop = _snoop(tmp_path / "x", caller_home, marker)
    repo = make_repo("snoop-process", {"tests/conftest.py": CONFTEST + snoop})
    try:
        result = run_codemod(repo, TASK, "--isolation", "process")
        m = result.manifest
        assert m["isolation"] == "process"
        assert all(v["isolation"] == "process" for v in m["verifications"])
        snooped = m["verifications"][0]["output_tail"].split("SNOOP ", 1)[1].split()[0]
        assert HOME_SECRET.encode() in base64.b64decode(snooped[:1200])
    finally:
        for pid in _alive(marker):
            os.kill(pid, 9)


def test_a_sandbox_that_cannot_start_pauses_the_run(acme_repo, run_codemod, tmp_path: Path) -> None:
    config = tmp_path / "config.yml"
    config.write_text("bwrap: /nonexistent/bwrap\n")
    before = _repo_state(acme_repo)
    result = run_codemod(acme_repo, TASK, "--config", str(config))
    m = result.manifest
    assert result.code == 75 and m["status"] == "paused", m["reason"]
    assert "sandbox" in m["reason"] and "--isolation process" in m["reason"]
    assert m["verifications"] == []
    _unchanged(acme_repo, before)
    # it paused in intake after the clone: the (empty) candidate and the MR text still name the base
    assert m["candidate"] is not None and m["candidate"]["base_commit"] == m["base_commit"], m["candidate"]
    assert f"base `{m['base_commit'][:12]}`" in result.artifact("merge_request.md").read_text()


def test_isolation_process_is_stated_in_run_json_and_the_mr_text(acme_repo, run_codemod) -> None:
    result = run_codemod(acme_repo, TASK, "--isolation", "process")
    assert result.code == 0, result.manifest["reason"]
    assert result.manifest["isolation"] == "process"
    assert "process" in result.artifact("merge_request.md").read_text()


BYPRODUCTS = """

def pytest_sessionfinish(session, exitstatus):
    from pathlib import Path as _P

    root = _P(__file__).resolve().parents[1]
    (root / ".coverage").write_bytes(b"coverage data")
    (root / "coverage.xml").write_text("<coverage/>")
    (root / "src" / "acme_app.egg-info").mkdir(exist_ok=True)
    (root / "src" / "acme_app.egg-info" / "PKG-INFO").write_text("Name: acme-app")
"""


def test_install_and_test_byproducts_never_reach_the_candidate(make_repo, run_codemod) -> None:
    repo = make_repo("byproducts", {"tests/conftest.py": CONFTEST + BYPRODUCTS})
    before = _repo_state(repo)
    result = run_codemod(repo, TASK)
    m = result.manifest
    assert result.code == 0, m["reason"]  # ordinary byproducts: green, and not a scope violation
    files = m["candidate"]["files"]
    assert not any(".coverage" in f or "coverage.xml" in f or "egg-info" in f for f in files)
    patch = result.artifact("changes.patch").read_text()
    assert "coverage" not in patch and "egg-info" not in patch
    assert not (result.run_dir / "worktree" / ".coverage").exists()
    _unchanged(repo, before)


def test_attack_a_pip_package_in_the_callers_checkout_runs_nowhere_on_the_host(
    make_repo, tmp_path: Path, wheels: Path, context_root: Path
) -> None:
    """A project that migrates itself runs the tool from its own checkout (the CI template does). The tool
    reads the caller's pip configuration with pip, in its own unsandboxed process: a `pip` package at the
    checkout's root must not stand in for pip there (it did: `python -m pip` put the working directory
    first on sys.path)."""
    marker = tmp_path / "ran-on-the-host"
    repo = make_repo(
        "self-migrating",
        {"pip/__init__.py": "", "pip/__main__.py": f"open({str(marker)!r}, 'w').close()\n"},
    )
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\ntimeout = 30\n")  # pip has something to read: the tool starts it
    run_dir = tmp_path / "run"
    cli = Path(sys.executable).parent / "agentic-codemod"  # the console script, as the CI template runs it
    argv = [str(cli), "run", "--repo", ".", "--task", str(ROOT / "fixtures/tasks/acme-sdk-2-rules.yml")]
    argv += ["--offline", "--run-dir", str(run_dir), "--context", str(context_root), "--quiet"]
    argv += ["--find-links", str(wheels), "--no-index"]
    env = {**os.environ, "PIP_CONFIG_FILE": str(conf), "AGNO_TELEMETRY": "false"}
    proc = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True, check=False)
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] in ("succeeded", "requires_human", "rejected"), proc.stderr[-2000:]
    assert not marker.exists(), "the checkout's pip package ran in the tool's own process"
