"""Workspace: the only way an actor touches the worktree."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from agentic_codemod.config import Budgets
from agentic_codemod.errors import BudgetExceeded
from agentic_codemod.tools.trace import Trace
from agentic_codemod.tools.workspace import Refused, Workspace


def make_ws(root: Path, **kwargs) -> Workspace:  # type: ignore[no-untyped-def]
    kwargs.setdefault("trace", Trace(None))
    return Workspace(root, **kwargs)


def last(ws: Workspace) -> dict:  # type: ignore[type-arg]
    return ws.trace.lines()[-1]


def test_read_write_replace_delete_round_trip(repo: Path) -> None:
    ws = make_ws(repo)
    assert ws.read("src/app.py", "coder").startswith("import acme")
    ws.write("src/new/module.py", "x = 1\n", "coder")
    assert (repo / "src/new/module.py").read_text() == "x = 1\n"
    ws.replace("src/app.py", "acme.fetch", "acme.get", "coder")
    assert "acme.get('x')" in (repo / "src/app.py").read_text()
    ws.delete("README.md", "coder")
    assert not (repo / "README.md").exists()
    assert ws.changed_files == {"src/new/module.py", "src/app.py", "README.md"}
    assert ws.bytes_written == len(b"x = 1\n") + len((repo / "src/app.py").read_bytes())
    assert [line["tool"] for line in ws.trace.lines()] == ["read", "write", "replace", "delete"]
    assert all(line["decision"] == "allowed" and line["actor"] == "coder" for line in ws.trace.lines())


def test_write_keeps_the_file_mode(repo: Path) -> None:
    script = repo / "src/app.py"
    script.chmod(0o755)
    make_ws(repo).write("src/app.py", "print()\n", "coder")
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_write_leaves_no_temporary_file(repo: Path) -> None:
    make_ws(repo).write("src/app.py", "print()\n", "coder")
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["app.py"]


@pytest.mark.parametrize(("old", "count"), [("nothing-like-this", 0), ("\n", 5), ("", 0)])
def test_replace_needs_exactly_one_occurrence(repo: Path, old: str, count: int) -> None:
    ws = make_ws(repo)
    with pytest.raises(ValueError, match=f"found {count}"):
        ws.replace("src/app.py", old, "y", "coder")
    assert last(ws)["decision"] == "allowed" and last(ws)["result"].startswith("error: ValueError")
    assert ws.changed_files == set()


def test_reading_a_missing_file_is_an_error_not_a_refusal(repo: Path) -> None:
    ws = make_ws(repo)
    with pytest.raises(FileNotFoundError):
        ws.read("src/missing.py", "coder")
    assert "FileNotFoundError" in last(ws)["result"]


def test_non_utf8_file_is_an_error(repo: Path) -> None:
    (repo / "src/blob.py").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UnicodeDecodeError):
        make_ws(repo).read("src/blob.py", "coder")


def test_reads_are_allowed_outside_allowed_paths_but_writes_are_not(repo: Path) -> None:
    ws = make_ws(repo, allowed_paths=["src/**"])
    assert ws.read(".gitlab-ci.yml", "coder") == "stages: [test]\n"
    assert ws.read("README.md", "coder")
    with pytest.raises(Refused, match="outside allowed_paths"):
        ws.write("README.md", "x", "coder")
    assert last(ws)["decision"] == "refused" and last(ws)["reason"] == "outside allowed_paths"


@pytest.mark.parametrize("path", [".env", "config/.env.production", "certs/server.pem", "deploy/id_rsa"])
def test_secret_files_are_neither_read_nor_written(repo: Path, path: str) -> None:
    ws = make_ws(repo, allowed_paths=["**"])
    with pytest.raises(Refused, match="secret file"):
        ws.read(path, "coder")
    with pytest.raises(Refused, match="secret file"):
        ws.write(path, "x", "coder")


def test_extra_deny_globs_add_to_the_defaults(repo: Path) -> None:
    ws = make_ws(repo, deny_globs=["requirements*.txt"], allowed_paths=["**"])
    assert ".gitlab-ci.yml" in ws.deny_globs
    with pytest.raises(Refused, match="requirements"):
        ws.write("requirements.txt", "x", "coder")


def test_list_excludes_git_and_returns_posix_paths(repo: Path) -> None:
    ws = make_ws(repo)
    listed = ws.list(".", "scout")
    assert "src/app.py" in listed and "tests/test_app.py" in listed and ".env" in listed
    assert not any(p.startswith(".git/") for p in listed)
    assert ws.list("src", "scout") == ["src/app.py"]
    assert ws.list(actor="scout") == listed


def test_search_finds_lines_and_skips_secrets_git_and_binaries(repo: Path) -> None:
    (repo / "src/data.bin").write_bytes(b"acme\0binary")
    ws = make_ws(repo)
    hits = ws.search(r"acme", "scout")
    assert "src/app.py:1: import acme" in hits
    assert not any(h.startswith(("src/data.bin", ".git/")) for h in hits)
    assert ws.search("supersecretvalue", "scout") == []
    assert ws.search("acme", "scout", glob="tests/**") == []
    assert ws.search("acme", "scout", glob="*.txt") == ["requirements.txt:1: acme-sdk==1.4.0"]


def test_search_output_is_bounded(repo: Path) -> None:
    (repo / "src/many.py").write_text("hit\n" * 1000)
    hits = make_ws(repo).search("hit", "scout")
    assert len(hits) == 200


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"(\w*)*x", r"(a|aa){2,}" + "b" * 0 + r"(x+)+", "a" * 600])
def test_search_refuses_catastrophic_patterns(repo: Path, pattern: str) -> None:
    with pytest.raises(Refused):
        make_ws(repo).search(pattern, "scout")


def test_invalid_regex_is_an_error(repo: Path) -> None:
    with pytest.raises(ValueError, match="invalid regular expression"):
        make_ws(repo).search("(", "scout")


def test_diff_shows_new_untracked_files_and_leaves_git_alone(repo: Path) -> None:
    index = repo / ".git/index"
    before = hashlib.sha256(index.read_bytes()).hexdigest()
    ws = make_ws(repo)
    ws.write("src/new.py", "NEW = 1\n", "coder")
    ws.replace("src/app.py", "fetch", "get", "coder")
    diff = ws.diff("reviewer")
    assert "b/src/new.py" in diff and "+NEW = 1" in diff and "+    return acme.get('x')" in diff
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before
    assert last(ws)["tool"] == "diff"


def test_resolve_returns_the_path_or_refuses(repo: Path) -> None:
    ws = make_ws(repo)
    assert ws.resolve("src/app.py") == repo.resolve() / "src/app.py"
    assert ws.resolve("src/not/yet.py", write=True) == repo.resolve() / "src/not/yet.py"
    os.symlink("app.py", repo / "src/link.py")
    with pytest.raises(Refused, match="symlink"):
        ws.resolve("src/link.py")
    assert last(ws)["tool"] == "resolve" and last(ws)["decision"] == "refused"


def test_every_call_counts_against_the_tool_call_budget(repo: Path) -> None:
    ws = make_ws(repo, budgets=Budgets(max_tool_calls=3))
    ws.read("README.md", "coder")
    with pytest.raises(Refused):
        ws.read(".env", "coder")  # refused calls count too
    assert ws.count_call("coder", "run_verification") == 3
    with pytest.raises(BudgetExceeded) as caught:
        ws.list(".", "coder")
    assert (caught.value.budget, caught.value.limit, caught.value.actual) == ("max_tool_calls", 3, 4)
    assert last(ws)["decision"] == "refused" and "max_tool_calls" in last(ws)["reason"]
    with pytest.raises(BudgetExceeded):
        ws.count_call("coder", "run_verification")
    assert last(ws)["tool"] == "run_verification"


def test_rewriting_the_same_file_does_not_count_twice(repo: Path) -> None:
    ws = make_ws(repo, budgets=Budgets(max_changed_files=1))
    ws.write("src/app.py", "a\n", "coder")
    ws.write("src/app.py", "b\n", "coder")
    with pytest.raises(BudgetExceeded, match="max_changed_files"):
        ws.write("src/other.py", "c\n", "coder")
    assert not (repo / "src/other.py").exists()


def test_a_refreshed_lockfile_is_held_to_max_lockfile_bytes_alone(repo: Path) -> None:
    budgets = Budgets(max_file_bytes=10, max_total_bytes=10, max_lockfile_bytes=100)
    ws = make_ws(repo, budgets=budgets, allowed_paths=["src/**", "package-lock.json"])
    ws.write_refreshed("package-lock.json", "x" * 60, "bump")
    assert ws.bytes_written == 0 and "package-lock.json" in ws.changed_files
    assert "refreshed lockfile" in last(ws)["result"]
    ws.write("src/app.py", "y" * 10, "bump")  # an edit still has its whole budgets
    with pytest.raises(BudgetExceeded, match="max_file_bytes"):
        ws.write("package-lock.json", "x" * 60, "coder")
    with pytest.raises(BudgetExceeded, match="max_lockfile_bytes"):
        ws.write_refreshed("package-lock.json", "x" * 101, "bump")
    with pytest.raises(Refused, match="deny glob"):  # the path checks of write still hold
        make_ws(repo, allowed_paths=["src/**"]).write_refreshed("package-lock.json", "{}", "bump")


def test_a_trace_file_inside_the_worktree_is_protected(repo: Path) -> None:
    trace = Trace(repo / "run" / "trace.jsonl")
    ws = make_ws(repo, trace=trace)
    trace.record("system", "start", {}, "ok")
    for attempt in (
        lambda: ws.write("run/trace.jsonl", "{}", "coder"),
        lambda: ws.read("run/trace.jsonl", "coder"),
    ):
        with pytest.raises(Refused, match="trace file"):
            attempt()
    assert ws.search("start", "coder") == []


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        Workspace(tmp_path / "missing")


def test_the_tool_call_budget_holds_per_actor(repo: Path) -> None:
    ws = make_ws(repo, budgets=Budgets(max_tool_calls=2))
    for _ in range(2):
        ws.read("README.md", "codemod:ACME001")  # the rules' own calls ...
    ws.read("README.md", "coder")
    ws.read("README.md", "coder")  # ... never eat into the coder's budget
    with pytest.raises(BudgetExceeded):
        ws.read("README.md", "coder")
    with pytest.raises(BudgetExceeded):
        ws.read("README.md", "codemod:ACME001")
    ws.read("README.md", "reviewer")  # another role keeps its own


def test_a_role_override_and_the_run_total_bound_tool_calls(repo: Path) -> None:
    ws = make_ws(repo, budgets=Budgets(max_tool_calls=2, role_tool_calls={"coder": 4}, max_run_tool_calls=5))
    for _ in range(4):
        ws.read("README.md", "coder")  # the coder's own, higher limit
    with pytest.raises(BudgetExceeded) as caught:
        ws.read("README.md", "reviewer")  # 5 calls in the run are allowed ...
        ws.read("README.md", "reviewer")  # ... the sixth is not, whoever makes it
    assert caught.value.budget == "max_run_tool_calls"


# -- names with special meaning, new conftest.py, hostile spellings ---------------------------------------

SPECIAL_NAMES = [
    ".github/workflows/ci.yml",
    "src/.gitlab/ci/x.yml",
    "ci/deploy.gitlab-ci.yml",
    "src/.gitattributes",
    ".gitmodules",
    "src/sitecustomize.py",
    "src/pkg/usercustomize.py",
    "src/zz_evil.pth",
    "setup.py",
    "src/constraints.txt",
    "requirements/constraints-dev.txt",
    "poetry.lock",
    "src/Pipfile.lock",
    "uv.lock",
    "web/package-lock.json",
]


@pytest.mark.parametrize("path", SPECIAL_NAMES)
def test_names_with_special_meaning_are_denied_at_any_depth(repo: Path, path: str) -> None:
    ws = make_ws(repo, allowed_paths=["src/**", "requirements*", "requirements/**", "*.lock", ".github/**"])
    with pytest.raises(Refused, match="deny glob"):
        ws.write(path, "x = 1\n", "coder")
    assert last(ws)["decision"] == "refused" and "name the exact path" in last(ws)["reason"]
    assert not (repo / path).exists()


@pytest.mark.parametrize("path", SPECIAL_NAMES)
def test_a_special_name_is_writable_where_the_task_names_the_exact_path(repo: Path, path: str) -> None:
    ws = make_ws(repo, allowed_paths=["src/**", path])
    ws.write(path, "x = 1\n", "bump")
    assert (repo / path).read_text() == "x = 1\n"


def test_naming_a_path_does_not_waive_the_hard_deny_globs(repo: Path) -> None:
    ws = make_ws(repo, allowed_paths=[".gitlab-ci.yml", "Dockerfile", "apm.yml"])
    for path in (".gitlab-ci.yml", "Dockerfile", "apm.yml"):
        with pytest.raises(Refused, match="deny glob"):
            ws.write(path, "x\n", "coder")
        assert "name the exact path" not in last(ws)["reason"]


def test_a_new_conftest_is_refused_an_existing_one_may_be_edited(repo: Path, git) -> None:  # type: ignore[no-untyped-def]
    (repo / "tests/conftest.py").write_text("import pytest\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "conftest")
    ws = make_ws(repo, allowed_paths=["src/**", "tests/**"])
    ws.write("tests/conftest.py", "import pytest\n\nX = 1\n", "coder")
    for path in ("src/conftest.py", "tests/sub/conftest.py", "src/CONFTEST.py"):
        with pytest.raises(Refused, match=r"new conftest\.py"):
            ws.write(path, "def pytest_runtest_makereport(item, call): ...\n", "coder")
        assert not (repo / path).exists()
    named = make_ws(repo, allowed_paths=["src/**", "tests/sub/conftest.py"])
    named.write("tests/sub/conftest.py", "import pytest\n", "coder")


def test_a_conftest_created_after_base_is_still_new(repo: Path) -> None:
    """Present on disk (made by a test run, say) but not in the base commit: still new."""
    (repo / "src/conftest.py").write_text("")
    ws = make_ws(repo, allowed_paths=["src/**"])
    with pytest.raises(Refused, match=r"new conftest\.py"):
        ws.write("src/conftest.py", "def pytest_report_teststatus(report): ...\n", "coder")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("src/\uff41pp.py", "NFKC"),  # full-width a
        ("src/cafe\u0301.py", "NFKC"),  # decomposed e-acute
        ("src/\ufb01le.py", "NFKC"),  # the fi ligature
        ("src/a\u00a0b.py", "NFKC"),  # no-break space
        ("src/app\u200d.py", "invisible"),  # zero-width joiner
        ("src/\u2066x\u2069.py", "bidi"),  # isolate controls
        ("src/a\u2028b.py", "invisible"),  # line separator
        ("src/\ue000.py", "invisible"),  # private use
        ("src/\udcff.py", "invisible"),  # a lone surrogate: a non-UTF-8 byte decoded with surrogateescape
    ],
)
def test_hostile_unicode_names_are_refused_for_reads_and_writes(repo: Path, path: str, reason: str) -> None:
    ws = make_ws(repo, allowed_paths=["src/**"])
    with pytest.raises(Refused, match=reason):
        ws.write(path, "x = 1\n", "coder")
    with pytest.raises(Refused, match=reason):
        ws.read(path, "coder")
    assert sorted(p.name for p in (repo / "src").iterdir()) == ["app.py"]
