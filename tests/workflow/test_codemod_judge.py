"""apply_rules judges each edit (rule_risk.assess) in a worker thread while the rules go on: the report must
hold exactly what judging each written edit inline gives, in the order the edits were written, and a judge
that raises must fail the step."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from fixtures_support import ACME_APP, RULES_DIR

from agentic_codemod.workflow import codemod, rule_risk
from agentic_codemod.workflow.codemod import load_rules

GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t"}
# Edits the rules make that a human must see: a file that does not parse, an edit that adds a package.
EXTRA = {
    "src/broken.py": "from acme.errors import NotFound\nx = (\n",
    "src/pages.py": "from acme.utils import paginate\n\n\ndef pages(client):\n"
    "    return list(paginate(client, '/p', page_size=1))\n",
}


class RecordingWriter:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.writes: list[tuple[str, str, str, str]] = []  # (actor, file, before, after)

    def read(self, rel: str, actor: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, content: str, actor: str) -> None:
        self.writes.append((actor, rel, self.read(rel, actor), content))
        (self.root / rel).write_text(content, encoding="utf-8")


def repo(root: Path) -> Path:
    for path in sorted(ACME_APP.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            target = root / path.relative_to(ACME_APP)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    for rel, text in EXTRA.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, **GIT, "GIT_COMMITTER_EMAIL": "t@x.invalid"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def test_each_edit_is_judged_as_inline_and_reported_in_the_order_written(tmp_path: Path) -> None:
    root = repo(tmp_path / "repo")
    writer = RecordingWriter(root)

    report = codemod.apply_rules(load_rules(RULES_DIR), root, writer)

    assert len(writer.writes) >= 5
    assert [(f"codemod:{e.rule}", e.file) for e in report.edits] == [(a, f) for a, f, _, _ in writer.writes]
    for edit, (_, _, before, after) in zip(report.edits, writer.writes, strict=True):
        assert (edit.adds, edit.requires_human) == rule_risk.assess(before, after, "python")
    broken = [e for e in report.edits if e.file == "src/broken.py"]
    assert broken and all(e.requires_human for e in broken)
    assert any(e.adds and not e.requires_human for e in report.edits), "no edit noted anything"


def test_a_judge_that_raises_fails_the_step(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path / "repo")

    def explode(before: str, after: str, language: str) -> tuple[list[str], bool]:
        raise RuntimeError("the judge failed")

    monkeypatch.setattr(rule_risk, "assess", explode)
    with pytest.raises(RuntimeError, match="the judge failed"):
        codemod.apply_rules(load_rules(RULES_DIR), root, RecordingWriter(root))
