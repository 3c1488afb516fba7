"""Only the SDK's declaration may change in a dependency manifest; any other dependency edit is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentic_codemod.tools.trace import Trace
from agentic_codemod.workflow.gates import changed_paths
from agentic_codemod.workflow.manifest_gate import manifest_gate, name_pattern

REQUIREMENTS = "# runtime\nacme-sdk==1.4.0  # pinned\nrequests==2.31.0\n"
PYPROJECT = '[project]\nname = "x"\ndependencies = [\n  "acme_sdk>=1.2,<2",\n  "httpx>=0.27",\n]\n'


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


def gate(repo: Path, trace: Trace | None = None):  # type: ignore[no-untyped-def]
    changes = changed_paths(repo, "HEAD")
    return manifest_gate(
        repo,
        "HEAD",
        changes,
        ["requirements.txt", "pyproject.toml"],
        "acme-sdk",
        lockfiles=("poetry.lock",),
        trace=trace,
    )


def test_bumping_only_the_sdk_passes(repo: Path) -> None:
    (repo / "requirements.txt").write_text(REQUIREMENTS.replace("1.4.0", "2.1.0"))
    (repo / "pyproject.toml").write_text(PYPROJECT.replace(">=1.2,<2", ">=2.1.0,<3"))
    (repo / "poetry.lock").write_text("# lock refreshed by poetry\n")
    assert gate(repo).passed


@pytest.mark.parametrize(
    ("path", "edit", "expected"),
    [
        ("requirements.txt", lambda t: t + "leftpad==1.0\n", "beyond acme-sdk in requirements.txt: leftpad"),
        ("requirements.txt", lambda t: t.replace("requests==2.31.0", "requests==2.0.0"), "requests"),
        ("requirements.txt", lambda t: t.replace("requests==2.31.0\n", ""), "requests==2.31.0"),
        (
            "pyproject.toml",
            lambda t: t.replace('  "httpx>=0.27",\n', '  "httpx>=0.27",\n  "evil",\n'),
            "evil",
        ),
        (
            "requirements.txt",
            lambda t: t + "--extra-index-url https://evil.example/simple\n",
            "extra-index-url",
        ),
    ],
    ids=["new-requirement", "re-pinned-other", "removed-other", "new-pep621-dependency", "new-index"],
)
def test_other_dependency_edits_are_refused(repo: Path, path: str, edit, expected: str) -> None:  # type: ignore[no-untyped-def]
    target = repo / path
    target.write_text(edit(target.read_text()))
    trace = Trace(None)
    result = gate(repo, trace)
    assert not result.passed
    assert any(expected in f.message for f in result.findings)
    line = trace.lines()[-1]
    assert line["decision"] == "refused" and line["tool"] == "manifest_gate"


def test_new_and_deleted_manifests_are_refused(repo: Path) -> None:
    (repo / "requirements-extra.txt").write_text("acme-sdk==2.1.0\n")
    (repo / "pyproject.toml").unlink()
    messages = [f.message for f in gate(repo).findings]
    assert "new dependency manifest: requirements-extra.txt" in messages
    assert "dependency manifest deleted: pyproject.toml" in messages


def test_name_normalisation() -> None:
    pattern = name_pattern("acme-sdk")
    assert all(pattern.search(s) for s in ("acme-sdk==2", "acme_sdk>=1", "Acme.SDK"))
    assert not pattern.search("acmesdk==1")
