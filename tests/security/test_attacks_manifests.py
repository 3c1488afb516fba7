"""Attacks through dependency files, end to end through the CLI.

A hostile repository commits a requirements file that is a symlink out of it, includes a file from
outside (`-r /abs`, `-c ../..`), or chooses where packages come from (`--extra-index-url`,
`--find-links`): the run ends 2 before pip reads anything, naming the file and line, and the outside
file's contents reach no artifact. A hostile candidate adds a dependency file (requirements/test.txt,
constraints.txt, Pipfile.lock) with an index of its own: the manifest gate fails it, and the index is
never contacted. A uv path source or workspace member leading out of the repository (a path, a link) is
not read, and the run ends 3 before the target is tested; so is a Dockerfile, or a requirements file it
installs, that is a link out. Each attack also checks that the user's --repo is unchanged.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.slow

SECRET = "manifest-" + "Xq7" * 8  # planted in the file outside the repository
SMUGGLED = ("requirements/test.txt", "constraints.txt", "Pipfile.lock")
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
GIT_ENV = {
    "PATH": os.environ.get("PATH", os.defpath),
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "h",
    "GIT_AUTHOR_EMAIL": "h@example.invalid",
    "GIT_COMMITTER_NAME": "h",
    "GIT_COMMITTER_EMAIL": "h@example.invalid",
}


class Index:
    """A package index / find-links server on loopback that records every request made to it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                self.send_response(404)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def index() -> Iterator[Index]:
    server = Index()
    try:
        yield server
    finally:
        server.stop()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_symlink(repo: Path, name: str, target: str) -> None:
    os.symlink(target, repo / name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "--no-verify", "-m", f"add {name}")


def state_of(repo: Path) -> tuple[str, str]:
    return git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain", "--ignored")


def artifacts_text(run_dir: Path, out: str, err: str) -> str:
    """Every regular file of the run dir (symlinks are not followed) and the console."""
    texts = [out, err]
    for top, _dirs, files in os.walk(run_dir):
        for name in files:
            path = Path(top) / name
            if not path.is_symlink() and path.is_file():
                texts.append(path.read_bytes().decode("utf-8", errors="replace"))
    return "\n".join(texts)


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "outside-secret.txt"
    path.write_text(f"{SECRET}\n")
    return path


@pytest.mark.parametrize("spelling", ["absolute", "relative"])
@pytest.mark.parametrize("name", ["requirements-test.txt", "hatch.toml"])
def test_attack_symlinked_requirements_file_leading_out_of_the_repository(
    make_repo, run_codemod, secret_file: Path, spelling: str, name: str
) -> None:
    """Also Hatch's own file, which the tool reads since it holds Hatch's envs."""
    repo = make_repo("symlinked")
    target = str(secret_file) if spelling == "absolute" else os.path.relpath(secret_file, repo)
    commit_symlink(repo, name, target)
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 2, result.manifest.get("reason")
    reason = result.manifest["reason"]
    assert f"{name}: resolves outside the repository through a symlink" in reason
    assert SECRET not in artifacts_text(result.run_dir, result.out, result.err)
    assert not any(t["tool"] == "install_dependencies" for t in result.trace())  # pip was never started
    assert state_of(repo) == before


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("-r {secret}", "requirements.txt line 4: --requirement {secret}: resolves outside the repository"),
        ("-c ../{name}", "requirements.txt line 4: --constraint ../{name}: resolves outside the repository"),
    ],
    ids=["include-absolute", "constraint-relative"],
)
def test_attack_requirements_line_reading_a_file_outside_the_repository(
    make_repo, run_codemod, secret_file: Path, line: str, reason: str
) -> None:
    fill = {"secret": str(secret_file), "name": secret_file.name}
    requirements = (FIXTURES / "acme-app" / "requirements.txt").read_text()
    repo = make_repo("includes-outside", {"requirements.txt": requirements + line.format(**fill) + "\n"})
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 2, result.manifest.get("reason")
    assert reason.format(**fill) in result.manifest["reason"]
    assert SECRET not in artifacts_text(result.run_dir, result.out, result.err)
    assert state_of(repo) == before


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (
            "setenv =\n    PIP_CONSTRAINT = {secret}",
            "tox.ini line 3: --constraint {secret}: resolves outside the repository",
        ),
        (
            "setenv = UV_CONSTRAINT={{toxinidir}}/../{name}",
            "tox.ini line 2: --constraint ./../{name}: resolves outside the repository",
        ),
        (
            "install_command = python -m pip install --constraint=../{name} {{opts}} {{packages}}",
            "tox.ini line 2: --constraint ../{name}: resolves outside the repository",
        ),
        (
            "constraints = https://constraints.invalid/upper.txt",
            "tox.ini line 2: --constraint https://constraints.invalid/upper.txt: includes a file from "
            "outside the repository",
        ),
        # helper-4's review: a path no file system holds ended the run `failed`, exit 1, with the
        # ValueError's words; now it is bad input at its line
        (
            "setenv = PIP_CONSTRAINT = ci/a\0b.txt",
            "tox.ini line 2: --constraint 'ci/a\\x00b.txt': holds a NUL byte",
        ),
    ],
    ids=["setenv-pip-absolute", "setenv-uv-relative", "install-command", "constraints-url", "nul-byte"],
)
def test_attack_tox_constraints_outside_deps_reading_a_file_outside_the_repository(
    make_repo, run_codemod, secret_file: Path, value: str, reason: str
) -> None:
    """What tox applies to every install besides deps (PIP_CONSTRAINT / UV_CONSTRAINT in setenv,
    install_command's arguments, `constraints`) is read as the tests' install: a file it names is
    checked as a `-c` line in deps is, before any tool reads it."""
    fill = {"secret": str(secret_file), "name": secret_file.name}
    tox = f"[testenv]\n{value.format(**fill)}\ndeps = -r requirements-dev.txt\ncommands = pytest\n"
    repo = make_repo("tox-constraints-outside", {"tox.ini": tox})
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 2, result.manifest.get("reason")
    assert reason.format(**fill) in result.manifest["reason"]
    assert SECRET not in artifacts_text(result.run_dir, result.out, result.err)
    assert not any(t["tool"] == "install_dependencies" for t in result.trace())
    assert state_of(repo) == before


def test_attack_repository_requirements_choose_their_own_index(make_repo, run_codemod, index: Index) -> None:
    """pip honours --find-links from a requirements file even under --no-index: without the check it would
    ask this server at the baseline install."""
    hostile = f"--find-links {index.url}/links/\n--extra-index-url {index.url}/simple\nunknown-pkg-xq7\n"
    repo = make_repo("own-index", {"requirements/test.txt": hostile})
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 2, result.manifest.get("reason")
    reason = result.manifest["reason"]
    assert "requirements/test.txt line 1: --find-links: a repository may not choose" in reason
    assert "requirements/test.txt line 2: --extra-index-url: a repository may not choose" in reason
    assert "leave package indexes to the tool's configuration (packages.index_url" in reason  # what to do
    assert index.requests == []
    assert state_of(repo) == before


def test_attack_model_adds_dependency_files_with_an_index_of_their_own(
    make_repo, run_codemod, index: Index, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The coder (mock, fault smuggle-manifests) adds requirements/test.txt, constraints.txt and
    Pipfile.lock pointing at an index of its own, then does the real fix. The task names the three paths
    exactly (which waives the deny list's special names), so only the manifest gate stands in the way."""
    from mock_llm import start_mock  # tests/llm is put on sys.path by tests/conftest.py

    monkeypatch.setenv("MOCK_SMUGGLE_INDEX", index.url)
    mock = start_mock()
    monkeypatch.setenv("CODEMOD_LLM_BASE_URL", mock.url)
    monkeypatch.delenv("CODEMOD_LLM_MODELS", raising=False)
    monkeypatch.delenv("CODEMOD_LLM_MODEL", raising=False)
    task = yaml.safe_load((FIXTURES / "tasks" / "acme-sdk-2.yml").read_text())
    task["allowed_paths"] = [*task["allowed_paths"], *SMUGGLED]
    task_file = tmp_path / "smuggle-task.yml"
    task_file.write_text(yaml.safe_dump(task))
    repo = make_repo("smuggled")
    before = state_of(repo)
    try:
        mock.fault("smuggle-manifests")
        result = run_codemod(repo, task_file, offline=False)
    finally:
        mock.stop()

    m = result.manifest
    assert result.code == 1, m.get("reason")
    written = {
        t["arguments"].get("path")
        for t in result.trace()
        if t["actor"] == "coder" and t["tool"] == "write" and t["decision"] == "allowed"
    }
    assert set(SMUGGLED) <= written, "the smuggling writes did not happen: the test proves nothing"
    [gate] = [g for g in m["gates"] if g["name"] == "manifest"]
    messages = [f["message"] for f in gate["findings"]]
    for path in SMUGGLED:
        assert f"dependency manifest added: {path}" in messages, messages
    assert not gate["passed"]
    assert "refused in the candidate: requirements/test.txt line 1: --extra-index-url" in " ".join(messages)
    assert index.requests == []  # pip never asked the smuggled index
    assert state_of(repo) == before


@pytest.mark.parametrize("planted", ["folder", "file"])
def test_attack_a_symlink_where_the_tool_copies_the_callers_certificate(
    make_repo, run_codemod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    """The caller's pip `cert` (a client cert would be a private key) is copied into each install's copy
    of the repository, at .codemod-pip/. A repository that commits that folder as a symlink out of it, or
    a file there as a symlink to a victim, gets the copy written nowhere but inside the copy."""
    cert = tmp_path / "corporate-ca.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\ncaller\n-----END CERTIFICATE-----\n")
    monkeypatch.setenv("PIP_CERT", str(cert))
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("untouched\n")
    repo = make_repo("cert-link")
    if planted == "folder":
        commit_symlink(repo, ".codemod-pip", str(outside))
    else:
        (repo / ".codemod-pip").mkdir()
        commit_symlink(repo, ".codemod-pip/cert.pem", str(victim))
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 0, result.manifest.get("reason")
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert victim.read_text() == "untouched\n" and victim.stat().st_mode & 0o777 != 0o600
    assert state_of(repo) == before


def test_attack_a_test_folder_that_is_a_symlink_out_gets_no_canary_written_there(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    """The tool writes its must-fail canary beside a test file of the folder the test command names, from
    its own process. A repository whose tests/ is a symlink to a folder outside it, named by its own
    test command, gets no file written in that folder, and the run is not green."""
    outside = tmp_path / "outside-tests"
    repo = make_repo("tests-link", {"tox.ini": "[testenv]\ndeps = pytest\ncommands = pytest tests\n"})
    (repo / "tests").rename(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "tests moved")
    before = sorted(p.name for p in outside.iterdir())
    commit_symlink(repo, "tests", str(outside))

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert sorted(p.name for p in outside.iterdir()) == before
    assert result.code != 0, result.manifest.get("reason")


def test_attack_a_tox_ini_written_to_stall_its_reading_ends_the_run_as_needing_a_human(
    make_repo, run_codemod
) -> None:
    """A 6.7 KB tox.ini: 40 factor conditions of 1,024 distinct env names each, and 200 envs that inherit
    them. Each reading of the test env took 35 s, several a run: the run stalled for 106 s (more with
    more envs) and then succeeded. Now one reading has one budget: past it the run ends 3 before any
    install, naming tox.ini and the limit, and the repository is unchanged."""
    condition = "-".join(f"{{a{i},b{i}}}" for i in range(10))
    lines = "".join(f"    {condition}: pytest tests/t{i}.py\n" for i in range(40))
    tox = f"[testenv]\ncommands =\n{lines}\n" + "".join(f"[testenv:e{i}]\n" for i in range(200))
    repo = make_repo("tox-stall", {"tox.ini": tox})
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 3, result.manifest.get("reason")
    assert "tox.ini: its factor conditions take more than" in result.manifest["reason"]
    assert "config.TOX_FACTOR_MAX_CHECKS" in result.manifest["reason"]
    assert not result.manifest.get("verifications")  # nothing was installed nor run
    assert state_of(repo) == before


def test_attack_a_tox_ini_whose_references_multiply_factor_conditions_is_refused_at_once(
    make_repo, run_codemod
) -> None:
    """A 0.6 KB tox.ini: five sections, each taking the next's deps under 30 factor alternatives. The
    finder joined the conditions on the way (30^5 alternatives, a 445 MB section name): the run hung
    past 300 s. Now the joined conditions have the factor budget: the file is refused before any tool
    reads it, exit 2, naming it and the limit, and the repository is unchanged."""
    alternatives = ",".join(f"f{i}" for i in range(30))
    tox = f"[testenv]\ndeps =\n    {alternatives}: {{[l1]deps}}\ncommands = pytest\n"
    tox += "".join(f"[l{i}]\ndeps =\n    {alternatives}: {{[l{i + 1}]deps}}\n" for i in range(1, 5))
    repo = make_repo("tox-references", {"tox.ini": tox + "[l5]\ndeps = acme-sdk==1.4.0\n"})
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 2, result.manifest.get("reason")
    assert "tox.ini: factor conditions joined across {[SECTION]KEY} references" in result.manifest["reason"]
    assert "config.TOX_FACTOR_MAX_VARIANTS" in result.manifest["reason"]
    assert not result.manifest.get("verifications")
    assert state_of(repo) == before


WORKSPACE = "pyproject.toml [tool.uv.workspace]"


def outside_project(tmp_path: Path) -> Path:
    """A project outside the repository: its pyproject.toml holds the secret and pins the SDK below the
    target, which the run must neither read into an artifact nor take for a member it checked."""
    folder = tmp_path / "outside-project"
    folder.mkdir()
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "outside"\nversion = "1"\ndescription = "{SECRET}"\n'
        'dependencies = ["acme-sdk>=1.4,<2"]\n'
    )
    return folder


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("source-absolute", "pyproject.toml [tool.uv.sources] path {outside}: outside the repository"),
        ("source-parent", "pyproject.toml [tool.uv.sources] path ../{name}: outside the repository"),
        ("member-link", f"{WORKSPACE}: workspace member packages/evil (a link, not followed)"),
        ("member-loop", f"{WORKSPACE}: workspace member packages/loop (a link, not followed)"),
    ],
    ids=["source-absolute", "source-parent", "member-link", "member-loop"],
)
def test_attack_uv_workspace_or_path_source_leading_out_of_the_repository(
    make_repo, run_codemod, tmp_path: Path, where: str, reason: str
) -> None:
    """uv installs a path source and every workspace member with the project, and locks them as one. A
    hostile repository points them out of itself: a path source to a project outside (absolute, or
    through `..`), a member folder that is a symlink out, or a link back to its own folder that a walker
    following links would list for ever. None of them is followed or read: the run ends needing a human
    (exit 3), naming the table and the entry, before the target is tested; the outside project's text
    reaches no artifact, and the repository is unchanged."""
    outside = outside_project(tmp_path)
    fill = {"outside": str(outside), "name": outside.name}
    pyproject = (FIXTURES / "acme-app" / "pyproject.toml").read_text()
    if where.startswith("source"):
        path = str(outside) if where == "source-absolute" else f"../{outside.name}"
        pyproject += f'\n[tool.uv.sources]\noutside = {{ path = "{path}" }}\n'
    else:
        pattern = "packages/*" if where == "member-link" else "packages/*/*/*/*/*/*/*/*"
        pyproject += f'\n[tool.uv.workspace]\nmembers = ["{pattern}"]\n'
    repo = make_repo(f"uv-{where}", {"pyproject.toml": pyproject, "packages/README.md": "members\n"})
    assert (repo.parent / outside.name).is_dir()  # `../outside-project` names it from the repository
    if where == "member-link":
        commit_symlink(repo, "packages/evil", str(outside))
    elif where == "member-loop":
        commit_symlink(repo, "packages/loop", ".")
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    manifest = result.manifest
    assert result.code == 3, manifest.get("reason")
    assert reason.format(**fill) in manifest["reason"], manifest["reason"]
    assert not [v for v in manifest.get("verifications", []) if v.get("phase") != "baseline"]
    assert SECRET not in artifacts_text(result.run_dir, result.out, result.err)
    assert state_of(repo) == before


@pytest.mark.parametrize(
    ("links", "reason"),
    [
        (
            {"Dockerfile": "{secret}"},
            "Dockerfile installs packages outside the dependency files and may name the SDK, and is a link",
        ),
        (
            {"docker/deps.txt": "{secret}"},
            "docker/deps.txt, which docker/Dockerfile line 2 installs in a container image, cannot",
        ),
        (  # a requirements file below the root is read whether or not an install line names it
            {"docker/requirements.txt": "{secret}"},
            "docker/requirements.txt installs packages outside the dependency files and may name the SDK, "
            "and is a link",
        ),
    ],
    ids=["dockerfile-link", "a-file-the-image-installs", "requirements-below-the-root"],
)
def test_attack_an_install_script_leading_out_of_the_repository(
    make_repo, run_codemod, tmp_path: Path, links: dict[str, str], reason: str
) -> None:
    """The tool reads Dockerfiles (and the requirements files they install) for pins of the SDK. A hostile
    repository makes one a symlink to a file outside it that names the SDK: it is never read, the run ends
    needing a human (exit 3) before any install, and the outside file's text reaches no artifact."""
    secret = tmp_path / "outside-install.txt"
    secret.write_text(f"acme-sdk==1.4.0  # {SECRET}\n")
    repo = make_repo(
        "install-script-link",
        {"docker/Dockerfile": "RUN pip install -r requirements.txt\nRUN pip install -r deps.txt\n"},
    )
    for name, target in links.items():
        commit_symlink(repo, name, target.format(secret=secret))
    before = state_of(repo)

    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert result.code == 3, result.manifest.get("reason")
    assert reason in result.manifest["reason"]
    assert not result.manifest.get("verifications")
    assert SECRET not in artifacts_text(result.run_dir, result.out, result.err)
    assert state_of(repo) == before
