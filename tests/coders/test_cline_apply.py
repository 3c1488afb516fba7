"""What Cline changed in its scratch copy enters the worktree only through the Workspace (fast: no Cline,
a real git repository and a real Workspace)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fixtures_support import TASKS

from agentic_codemod.coders.cline_brain import apply_changes
from agentic_codemod.errors import CandidateRejected
from agentic_codemod.task import load_task
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Workspace

REPORTS = Path("src") / "acme_app" / "reports.py"


@pytest.fixture
def setup(acme_repo: Path, tmp_path: Path) -> tuple[Workspace, Trace, Path]:
    task = load_task(TASKS / "acme-sdk-2.yml")
    trace = Trace(tmp_path / "trace.jsonl")
    ws = Workspace(acme_repo, task.deny_globs, task.allowed_paths, trace=trace)
    scratch = tmp_path / "scratch"
    shutil.copytree(acme_repo, scratch, symlinks=True)
    return ws, trace, scratch


def test_allowed_edits_new_files_and_deletions_are_applied(setup: tuple[Workspace, Trace, Path]) -> None:
    ws, trace, scratch = setup
    (scratch / REPORTS).write_text((scratch / REPORTS).read_text().replace('"fetch"', '"get"'))
    (scratch / "src" / "acme_app" / "compat.py").write_text("VERSION = 2\n")
    (scratch / "src" / "acme_app" / "settings.py").unlink()
    applied = apply_changes(ws, trace, "HEAD", scratch)
    assert applied == ["src/acme_app/compat.py", "src/acme_app/reports.py", "src/acme_app/settings.py"]
    assert '"get"' in (ws.root / REPORTS).read_text()
    assert (ws.root / "src" / "acme_app" / "compat.py").read_text() == "VERSION = 2\n"
    assert not (ws.root / "src" / "acme_app" / "settings.py").exists()
    assert '"actor": "cline"' in (trace.path or Path()).read_text()


def test_unchanged_scratch_applies_nothing(setup: tuple[Workspace, Trace, Path]) -> None:
    ws, trace, scratch = setup
    assert apply_changes(ws, trace, "HEAD", scratch) == []


@pytest.mark.parametrize(
    ("plant", "refusal"),
    [
        (
            lambda s: (s / "tests" / "test_orders.py").write_text("def test_x():\n    pass\n"),
            "tests/test_orders.py",
        ),
        (lambda s: (s / "src" / "acme_app" / "evil.py").symlink_to("/etc/passwd"), "a symlink"),
        (lambda s: (s / "src" / "acme_app" / "blob.py").write_bytes(b"\xff\xfe\x00binary"), "not UTF-8 text"),
        (lambda s: (s / "src" / ".env").write_text("TOKEN=x\n"), "src/.env"),
        (lambda s: (s / "src" / "conftest.py").write_text("import os\n"), "src/conftest.py"),
    ],
)
def test_one_refused_path_rejects_the_whole_change(
    setup: tuple[Workspace, Trace, Path], plant: object, refusal: str
) -> None:
    ws, trace, scratch = setup
    (scratch / REPORTS).write_text((scratch / REPORTS).read_text().replace('"fetch"', '"get"'))
    plant(scratch)  # type: ignore[operator]
    with pytest.raises(CandidateRejected, match="nothing of it was applied") as caught:
        apply_changes(ws, trace, "HEAD", scratch)
    assert refusal in str(caught.value)
    assert '"fetch"' in (ws.root / REPORTS).read_text()  # the allowed edit did not go in either
