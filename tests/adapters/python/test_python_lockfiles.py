"""Lockfiles are refreshed by the ecosystem's own tool; a missing or failing tool comes back as data.

The tools are stand-in scripts on PATH that record their argv, run for real by the test runner, so the
tests assert the exact command without needing poetry or uv installed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from fixtures_support import POETRY, POETRY_MISSING, poetry_source, simple_index

from agentic_codemod.adapters.python import update
from agentic_codemod.adapters.python.lockfile import locked_versions
from agentic_codemod.adapters.python.update import lock_command, update_dependency, update_lockfiles
from agentic_codemod.adapters.types import ArtifactNotice, Runner, refreshed_message, refreshed_sha256
from agentic_codemod.models import Dependency
from agentic_codemod.tools.sandbox import Policy, probe
from agentic_codemod.tools.verification import SandboxRunner

DEP = Dependency(name="acme-sdk", specifier="==1.4.0", file="pyproject.toml", kind="pep621", line=5)


def tool(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> "{bin_dir}/calls.log"\n{body}\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def calls(bin_dir: Path) -> list[str]:
    return [line.split(" ", 1)[1] for line in (bin_dir / "calls.log").read_text().splitlines()]


@pytest.fixture
def only_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH holding only the stand-in tools (plus /bin for sh)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/bin", "/usr/bin"]))
    return bin_dir


def test_no_lockfile_returns_none(tmp_path: Path, runner: Runner) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert update_lockfiles(tmp_path, DEP, "2.0.0", runner) is None


def test_tool_not_on_path_is_a_notice(tmp_path: Path, runner: Runner, only_bin: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Pipfile.lock").write_text("{}\n")  # pipenv: a tool the set-up does not install
    assert update_lockfiles(repo, DEP, "2.0.0", runner) == [
        ArtifactNotice(
            "Pipfile.lock",
            False,
            "pipenv is not on PATH: Pipfile.lock not refreshed; run `pipenv lock`",
        )
    ]
    assert (repo / "Pipfile.lock").read_text() == "{}\n"


@pytest.mark.parametrize(("version", "argv"), [("1.8.3", "lock --no-update"), ("2.1.2", "lock")])
def test_poetry_lock_command_follows_the_poetry_version(
    tmp_path: Path, runner: Runner, only_bin: Path, version: str, argv: str
) -> None:
    tool(
        only_bin,
        "poetry",
        f'[ "$1" = "--version" ] && echo "Poetry (version {version})" && exit 0\necho new >> poetry.lock',
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "poetry.lock").write_text("# locked\n")
    notices = update_lockfiles(repo, DEP, "2.0.0", runner)
    digest = sha256(repo / "poetry.lock")
    assert notices == [
        ArtifactNotice("poetry.lock", True, refreshed_message(f"poetry {argv}", digest), sha256=digest)
    ]
    assert refreshed_sha256(notices[0].message) == digest
    assert calls(only_bin) == ["--version", argv]


def test_uv_upgrades_only_the_bumped_package(tmp_path: Path, runner: Runner, only_bin: Path) -> None:
    tool(only_bin, "uv", "echo new >> uv.lock")
    (tmp_path / "uv.lock").write_text("version = 1\n")
    [notice] = update_lockfiles(tmp_path, DEP, "2.0.0", runner) or []
    assert (notice.updated, notice.sha256) == (True, sha256(tmp_path / "uv.lock"))
    assert notice.message.startswith("refreshed by `uv lock --upgrade-package acme-sdk==2.0.0` (sha256 ")
    assert calls(only_bin) == ["lock --upgrade-package acme-sdk==2.0.0"]


def test_tool_failure_is_data_with_its_stderr(tmp_path: Path, runner: Runner, only_bin: Path) -> None:
    tool(only_bin, "uv", "echo 'error: No solution found when resolving dependencies' >&2\nexit 1")
    (tmp_path / "uv.lock").write_text("version = 1\n")
    [notice] = update_lockfiles(tmp_path, DEP, "2.0.0", runner) or []
    assert (notice.file, notice.updated) == ("uv.lock", False)
    assert "exit 1" in notice.message and "No solution found" in notice.message


def test_lockfile_left_unchanged_is_not_reported_as_updated(
    tmp_path: Path, runner: Runner, only_bin: Path
) -> None:
    tool(only_bin, "pdm", "true")
    (tmp_path / "pdm.lock").write_text("# pdm\n")
    command = "pdm update --no-sync --update-reuse --override .agentic-codemod-pdm-override.txt acme-sdk"
    assert update_lockfiles(tmp_path, DEP, "2.0.0", runner) == [
        ArtifactNotice("pdm.lock", False, f"`{command}` left pdm.lock unchanged")
    ]
    [call] = calls(only_bin)
    assert (
        call
        == f"update --no-sync --update-reuse --override {tmp_path}/.agentic-codemod-pdm-override.txt acme-sdk"
    )
    assert (tmp_path / ".agentic-codemod-pdm-override.txt").read_text() == "acme-sdk==2.0.0\n"


def test_lock_commands() -> None:
    assert lock_command("poetry.lock", DEP) == ["poetry", "lock"]  # version unknown: today's Poetry
    assert lock_command("poetry.lock", DEP, "Poetry (version 1.8.3)") == ["poetry", "lock", "--no-update"]
    assert lock_command("uv.lock", DEP) == ["uv", "lock", "--upgrade-package", "acme-sdk"]
    assert lock_command("uv.lock", DEP, target="2.0.0") == [
        "uv",
        "lock",
        "--upgrade-package",
        "acme-sdk==2.0.0",
    ]
    assert lock_command("pdm.lock", DEP) == ["pdm", "lock", "--update-reuse"]
    assert lock_command("pdm.lock", DEP, target="2.0.0")[:5] == [
        "pdm",
        "update",
        "--no-sync",
        "--update-reuse",
        "--override",
    ]
    assert lock_command("Pipfile.lock", DEP) == ["pipenv", "lock"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


WHEELHOUSE = Path(__file__).resolve().parents[3] / "fixtures" / ".wheelhouse"


@pytest.mark.skipif(
    not (Path(sys.executable).parent / "uv").is_file(), reason="uv is not installed beside python"
)
def test_real_uv_locks_exactly_the_target_where_the_range_admits_a_newer_one(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The range admits 2.1.0 (the newest in the wheelhouse); the lock holds exactly the target 2.0.0."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), "/bin", "/usr/bin"]))
    monkeypatch.setenv("UV_NO_INDEX", "1")  # the local wheelhouse only: acme-sdk 1.4.0, 2.0.0, 2.1.0
    monkeypatch.setenv("UV_FIND_LINKS", str(WHEELHOUSE))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    project = "[project]\nname = 'app'\nversion = '0.1'\nrequires-python = '>=3.11'\n"
    project += "dependencies = ['acme-sdk>=1.4']\n"
    (repo / "pyproject.toml").write_text(project)
    (repo / "pyproject.toml").write_text(project.replace("acme-sdk>=1.4", "acme-sdk>=1.4,<2"))
    first = runner(["uv", "lock"], cwd=repo, timeout_s=120)
    assert first.ok, first.output_tail
    assert 'version = "1.4.0"' in (repo / "uv.lock").read_text()
    (repo / "pyproject.toml").write_text(project)  # the bump: the range now admits 2.0.0 and 2.1.0
    dep = Dependency(name="acme-sdk", specifier=">=1.4", file="pyproject.toml", kind="pep621", line=5)
    [notice] = update_lockfiles(repo, dep, "2.0.0", runner) or []
    assert notice.updated, notice.message
    lock = (repo / "uv.lock").read_text()
    assert (
        'name = "acme-sdk"\nversion = "2.0.0"' in lock and "2.1.0" not in lock.split("[package.metadata]")[0]
    )


POETRY_PROJECT = """\
[project]
name = "app"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["acme-sdk>=1.4,<2"]
"""


@pytest.mark.skipif(POETRY_MISSING, reason="poetry is not installed beside python (the lock extra)")
def test_real_poetry_locks_exactly_the_target_where_the_range_admits_a_newer_one(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Poetry alone locks the newest version the bumped range admits (2.1.0, shown on a copy); the refresh
    locks the target 2.0.0, leaves the bumped pyproject.toml as it was, and writes a lockfile that
    `poetry check --lock` accepts (its content-hash is the bumped file's)."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(POETRY.parent), "/bin", "/usr/bin"]))
    monkeypatch.setenv("POETRY_CACHE_DIR", str(tmp_path / "poetry-cache"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with simple_index(WHEELHOUSE, tmp_path / "index") as url:
        repo = tmp_path / "repo"
        repo.mkdir()
        (repo / "pyproject.toml").write_text(POETRY_PROJECT + poetry_source(url))
        first = runner([str(POETRY), "lock"], cwd=repo, timeout_s=120)
        assert first.ok, first.output_tail
        assert locked_versions((repo / "poetry.lock").read_text())["acme-sdk"].versions == {"1.4.0"}
        dep = Dependency(name="acme-sdk", specifier=">=1.4,<2", file="pyproject.toml", kind="pep621", line=5)
        bumped = update_dependency((repo / "pyproject.toml").read_text(), dep, "2.0.0")
        assert '"acme-sdk>=2.0.0,<3"' in bumped
        (repo / "pyproject.toml").write_text(bumped)
        alone = tmp_path / "alone"
        shutil.copytree(repo, alone)
        assert runner([str(POETRY), "lock"], cwd=alone, timeout_s=120).ok
        assert locked_versions((alone / "poetry.lock").read_text())["acme-sdk"].versions == {"2.1.0"}

        [notice] = update_lockfiles(repo, dep, "2.0.0", runner) or []
        assert notice.updated, notice.message
        assert "pinning acme-sdk==2.0.0, then `poetry lock`" in notice.message
        assert locked_versions((repo / "poetry.lock").read_text())["acme-sdk"].versions == {"2.0.0"}
        assert (repo / "pyproject.toml").read_text() == bumped
        check = runner([str(POETRY), "check", "--lock"], cwd=repo, timeout_s=120)
        assert check.ok, check.output_tail


def test_hostile_repository_links_cannot_make_the_refresh_read_or_write_outside_it(
    tmp_path: Path, runner: Runner, only_bin: Path
) -> None:
    """A pdm.lock that links to a host file is neither read nor refreshed; an entry named like the override
    file that links out is replaced, never written through."""
    tool(only_bin, "pdm", "echo refreshed >> pdm.lock")
    outside = tmp_path / "outside"
    outside.mkdir()
    secret, victim = outside / "secret", outside / "victim"
    secret.write_text("s3cr3t\n")
    victim.write_text("untouched\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "pdm.lock").symlink_to(secret)
    [notice] = update_lockfiles(linked, DEP, "2.0.0", runner) or []
    assert (notice.updated, notice.message) == (
        False,
        "pdm.lock is a symbolic link or lies behind one: not refreshed",
    )
    assert secret.read_text() == "s3cr3t\n" and not (only_bin / "calls.log").exists()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pdm.lock").write_text("# pdm\n")
    (repo / ".agentic-codemod-pdm-override.txt").symlink_to(victim)
    [notice] = update_lockfiles(repo, DEP, "2.0.0", runner) or []
    assert notice.updated
    assert victim.read_text() == "untouched\n"
    override = repo / ".agentic-codemod-pdm-override.txt"
    assert not override.is_symlink() and override.read_text() == "acme-sdk==2.0.0\n"
    # code the tool ran swaps the lockfile for a link to a host file (or /dev/zero): never read through it
    tool(only_bin, "pdm", f'rm pdm.lock && ln -s "{secret}" pdm.lock')
    [notice] = update_lockfiles(repo, DEP, "2.0.0", runner) or []
    assert (notice.updated, notice.sha256) == (False, "")
    assert notice.message.endswith("left no regular file at pdm.lock (or one behind a link)"), notice.message


def test_poetrys_two_locks_share_a_cache_of_their_own_in_the_copy(
    tmp_path: Path, runner: Runner, only_bin: Path
) -> None:
    """The second lock reads what the first fetched (each process's HOME is new in the box): one cache for
    the refresh, made empty beside poetry.lock; an entry of that name in the repository (here a link to a
    host folder) is replaced, never written through."""
    tool(
        only_bin,
        "poetry",
        '[ "$1" = "--version" ] && echo "Poetry (version 2.5.1)" && exit 0\n'
        'echo "$POETRY_CACHE_DIR" >> caches.txt\n'
        'ls -A "$POETRY_CACHE_DIR" >> caches.txt\n'
        'touch "$POETRY_CACHE_DIR/fetched-$(wc -l < caches.txt)"\necho new >> poetry.lock',
    )
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["acme-sdk==1.4.0"]\n')
    (repo / "poetry.lock").write_text("# locked\n")
    (repo / ".agentic-codemod-poetry-cache").symlink_to(outside)

    [notice] = update_lockfiles(repo, DEP, "2.0.0", runner) or []

    assert notice.updated, notice.message
    assert [c.split()[-1] for c in calls(only_bin)] == ["--version", "lock", "lock"]  # pinned, then bumped
    assert (repo / "caches.txt").read_text().splitlines() == [
        ".agentic-codemod-poetry-cache",  # the first lock: an empty cache
        ".agentic-codemod-poetry-cache",  # the second: what the first left there
        "fetched-1",
    ]
    cache = repo / ".agentic-codemod-poetry-cache"
    assert cache.is_dir() and not cache.is_symlink() and list(outside.iterdir()) == []


PDM = Path(sys.executable).parent / "pdm"


@pytest.mark.skipif(
    not PDM.is_file() and os.environ.get("CI") != "true", reason="pdm is not installed beside python"
)
def test_real_pdm_locks_exactly_the_target_where_the_range_admits_a_newer_one(
    tmp_path: Path, runner: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pdm, like Poetry, would lock the newest version the bumped range admits (2.1.0); the override file
    holds it to the target 2.0.0. The project's one source is the wheelhouse (pdm reads find-links)."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(PDM.parent), "/bin", "/usr/bin"]))
    monkeypatch.setenv("PDM_CACHE_DIR", str(tmp_path / "pdm-cache"))
    monkeypatch.setenv("PDM_IGNORE_SAVED_PYTHON", "1")
    repo = tmp_path / "repo"
    repo.mkdir()
    source = f'\n[[tool.pdm.source]]\nname = "pypi"\nurl = "{WHEELHOUSE.as_uri()}"\ntype = "find_links"\n'
    (repo / "pyproject.toml").write_text(POETRY_PROJECT + source)
    first = runner([str(PDM), "lock"], cwd=repo, timeout_s=120)
    assert first.ok, first.output_tail
    assert locked_versions((repo / "pdm.lock").read_text())["acme-sdk"].versions == {"1.4.0"}
    dep = Dependency(name="acme-sdk", specifier=">=1.4,<2", file="pyproject.toml", kind="pep621", line=5)
    bumped = update_dependency((repo / "pyproject.toml").read_text(), dep, "2.0.0")
    (repo / "pyproject.toml").write_text(bumped)
    alone = tmp_path / "alone"
    shutil.copytree(repo, alone, ignore=shutil.ignore_patterns(".venv"))
    assert runner([str(PDM), "lock", "--update-reuse"], cwd=alone, timeout_s=120).ok
    assert locked_versions((alone / "pdm.lock").read_text())["acme-sdk"].versions == {"2.1.0"}
    [notice] = update_lockfiles(repo, dep, "2.0.0", runner) or []
    assert notice.updated, notice.message
    assert locked_versions((repo / "pdm.lock").read_text())["acme-sdk"].versions == {"2.0.0"}


def test_attack_code_run_by_the_pinned_poetry_lock_cannot_have_the_restore_write_a_host_file(
    tmp_path: Path, runner: Runner, only_bin: Path
) -> None:
    """The first (pinned) lock runs code the repository controls (a path dependency's build backend); here
    it swaps pyproject.toml for a link to a host file. Restoring the bumped text never writes through the
    link: the refresh fails with the reason (a human item), the host file is untouched, and the second lock
    never runs."""
    victim = tmp_path / "victim"
    victim.write_text("untouched\n")
    swap = f'rm pyproject.toml && ln -s "{victim}" pyproject.toml && echo pinned >> poetry.lock'
    tool(only_bin, "poetry", f'[ "$1" = "--version" ] && echo "Poetry (version 2.5.1)" && exit 0\n{swap}')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'app'\ndependencies = ['acme-sdk>=2.0.0,<3']\n")
    (repo / "poetry.lock").write_text("# locked\n")
    [notice] = update_lockfiles(repo, DEP, "2.0.0", runner) or []
    assert not notice.updated
    assert notice.message.startswith(
        "`poetry lock` with pyproject.toml pinning acme-sdk==2.0.0 failed: "
        "pyproject.toml not restored after it"
    ), notice.message
    assert victim.read_text() == "untouched\n"
    assert calls(only_bin) == ["--version", "lock"]


def test_a_pinned_poetry_lock_that_fails_ends_the_refresh_with_its_reason(
    tmp_path: Path, runner: Runner, only_bin: Path
) -> None:
    """The target cannot be locked with the rest (here: the stand-in refuses the pin): the refresh ends with
    Poetry's reason, a human item; no plain lock follows (it would lock another version, and a repository
    that hangs Poetry would get two timeouts)."""
    body = 'grep -q "acme-sdk==2.0.0" pyproject.toml && echo "version solving failed" && exit 1\n'
    body += "echo x >> poetry.lock"
    tool(only_bin, "poetry", f'[ "$1" = "--version" ] && echo "Poetry (version 2.5.1)" && exit 0\n{body}')
    bumped = "[project]\nname = 'app'\ndependencies = ['acme-sdk>=2.0.0,<3']\n"
    (tmp_path / "pyproject.toml").write_text(bumped)
    (tmp_path / "poetry.lock").write_text("# locked\n")
    [notice] = update_lockfiles(tmp_path, DEP, "2.0.0", runner) or []
    assert not notice.updated
    assert notice.message.startswith(
        "`poetry lock` with pyproject.toml pinning acme-sdk==2.0.0 failed: exit 1\nversion solving failed"
    ), notice.message
    assert calls(only_bin) == ["--version", "lock"]
    assert (tmp_path / "pyproject.toml").read_text() == bumped  # restored
    assert (tmp_path / "poetry.lock").read_text() == "# locked\n"


def test_without_poetry_the_notice_says_how_to_lock_exactly_the_target(
    tmp_path: Path, runner: Runner, only_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(update, "lock_tool", lambda tool, runner: (None, f"{tool} is not on PATH"))
    (tmp_path / "poetry.lock").write_text("# locked\n")
    [notice] = update_lockfiles(tmp_path, DEP, "2.0.0", runner) or []
    assert notice.message == (
        "poetry is not on PATH: poetry.lock not refreshed; run `poetry lock` twice: first with "
        "acme-sdk==2.0.0 pinned in pyproject.toml, then with the bumped range (Poetry alone locks the newest "
        "version a range admits)"
    )


def test_a_lock_tool_the_sandbox_cannot_see_is_passed_over_for_the_tools_own_or_named(
    tmp_path: Path, only_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a uv first on PATH outside the sandbox's mounts (~/.cargo/bin, another clone's venv) was
    chosen, failed to start inside the box, and the refresh ended as an unhelpful "not refreshed"."""
    for tool in ("uv", "fancylock"):
        (only_bin / tool).write_text("#!/bin/sh\n")
        (only_bin / tool).chmod(0o755)
    policy = Policy("sandbox", tmp_path / "env")
    (policy.env_dir / "bin").mkdir(parents=True)  # the lock box mounts the environment read-only
    boxed = SandboxRunner(env={}, tail_bytes=1000).boxed(policy.for_lock(tmp_path, None))
    beside = Path(sys.executable).parent / "uv"  # the tool's own (its `uv` extra), in a mounted venv
    assert beside.is_file() and update.lock_tool("uv", boxed) == (str(beside), "")
    program, missing = update.lock_tool("fancylock", boxed)
    assert program is None
    tool = only_bin / "fancylock"
    assert (
        missing
        == f"fancylock at {tool}: {tool} lies outside what the sandbox mounts (install fancylock under /usr)"
    )
    assert update.lock_tool("fancylock", SandboxRunner(env={}, tail_bytes=1000)) == (
        str(only_bin / "fancylock"),
        "",
    )
    assert update.lock_tool("no-such-tool", boxed) == (None, "no-such-tool is not on PATH")
    in_env = policy.env_dir / "bin" / "fancylock"  # a mount the box sees, but its script's interpreter not
    in_env.write_text(f"#!{tmp_path / 'elsewhere' / 'python'}\n")
    in_env.chmod(0o755)
    monkeypatch.setenv("PATH", f"{in_env.parent}:{os.environ['PATH']}")
    assert update.lock_tool("fancylock", boxed)[0] is None
    in_env.write_text("#!/usr/bin/env python3\n")
    assert update.lock_tool("fancylock", boxed) == (str(in_env), "")


@pytest.mark.skipif(probe() is not None, reason="bubblewrap cannot start here")
def test_the_sandboxed_lock_tool_gets_the_callers_certificate_as_the_installs_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox clears the machine's variables and shows the copy at another path: without pip's `cert`
    handed over, a real uv lock met a TLS proxy's certificate as unknown (referencing 0.36.2: "invalid
    peer certificate: UnknownIssuer") while the installs, which pass it, worked. The lockfile here lies
    beside a dependency file in a subfolder (the tool's working directory); the index is not passed."""
    cert = tmp_path / "corporate-ca.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n")
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_CERT", str(cert))
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example.invalid/simple")
    env_dir = tmp_path / "env"
    bin_dir = env_dir / "bin"  # the install box mounts the env dir: the stand-in uv is seen there
    env_dir.mkdir()
    tool(
        bin_dir,
        "uv",
        'cat "$SSL_CERT_FILE" > seen.pem\ncat "$REQUESTS_CA_BUNDLE" > seen-requests.pem\n'
        'echo "[$UV_DEFAULT_INDEX]" > index.txt\necho new >> uv.lock',
    )
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), "/bin", "/usr/bin"]))
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "uv.lock").write_text("version = 1\n")
    dep = DEP.model_copy(update={"file": "sub/pyproject.toml"})
    box = Policy("sandbox", env_dir, index_network=True).for_install(repo)
    runner = SandboxRunner(env={"PATH": os.environ["PATH"]}, tail_bytes=20_000).boxed(box)
    [notice] = update_lockfiles(repo, dep, "2.0.0", runner) or []
    assert notice.updated, notice.message
    assert (repo / "sub" / "seen.pem").read_text() == cert.read_text()
    assert (repo / "sub" / "seen-requests.pem").read_text() == cert.read_text()  # poetry's requests
    assert (repo / "sub" / "index.txt").read_text() == "[]\n"
    tool(
        bin_dir,
        "poetry",
        '[ "$1" = "--version" ] && echo "Poetry (version 2.5.1)" && exit 0\n'
        'echo "$PYTHON_KEYRING_BACKEND" > keyring.txt\necho new >> poetry.lock',
    )
    (repo / "sub" / "poetry.lock").write_text("# locked\n")
    (repo / "sub" / "uv.lock").unlink()
    [notice] = update_lockfiles(repo, dep, "2.0.0", runner) or []
    assert notice.updated, notice.message
    assert (repo / "sub" / "keyring.txt").read_text() == "keyring.backends.null.Keyring\n"  # no prompt
