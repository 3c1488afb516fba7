"""The rules' scanner (workflow/scan.py) with the real ast-grep CLI: hostile file names are data, a failed
scan is an error (never "no matches"), results are cached per file content, every output is bounded."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from fixtures_support import ACME_APP, RULES_DIR, apply_rules, fixable_rule_files

from agentic_codemod.adapters.python.install_plan import InstallPlan
from agentic_codemod.config import ScanSettings
from agentic_codemod.errors import RequiresHuman
from agentic_codemod.workflow import codemod, scan
from agentic_codemod.workflow.codemod import Rule, load_rules
from agentic_codemod.workflow.scan import Hit, ScanFailed, Scanner, source_files

CALL = "def f(client):\n    return getattr(client, 'fetch')\n"
# Names a shell, getopt or clap would read as something else. Each is a Python file holding one match.
HOSTILE_NAMES = (
    "--x.py",
    "-rf.py",
    "--rule=evil.py",
    "-/x.py",
    "src/a b.py",
    "src/new\nline.py",
    "src/-- .py",
    "src/caf\u00e9.py",
    "src/`$(touch pwned)`.py",
)
GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t"}


def detect_rule() -> Rule:
    return next(r for r in load_rules(RULES_DIR) if r.id == "ACME900")


def make_repo(root: Path, files: dict[str | bytes, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / os.fsdecode(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, **GIT, "GIT_COMMITTER_EMAIL": "t@x.invalid"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)
    return root


def recording_binary(tmp_path: Path, real: str) -> tuple[Path, Path]:
    """A wrapper that records its argv (NUL-separated) and then runs the real ast-grep."""
    log = tmp_path / "argv.log"
    script = tmp_path / "ast-grep-recorder"
    script.write_text(
        "#!/usr/bin/env python3\nimport os, sys\n"
        f"with open({str(log)!r}, 'ab') as f:\n"
        "    f.write(b'\\0'.join(os.fsencode(a) for a in sys.argv[1:]) + b'\\n---\\n')\n"
        f"os.execv({real!r}, [{real!r}, *sys.argv[1:]])\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, log


def fake_binary(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "fake-ast-grep"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_hostile_file_names_are_scanned_as_files_and_passed_after_double_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {name: CALL for name in HOSTILE_NAMES})
    real = scan.ast_grep_binary()
    recorder, log = recording_binary(tmp_path, real)
    monkeypatch.setattr(scan, "ast_grep_binary", lambda: str(recorder))

    hits = Scanner(repo).matches(detect_rule())

    assert sorted(h.file for h in hits) == sorted(HOSTILE_NAMES)
    assert all(h.line == 2 for h in hits)
    calls = [[os.fsdecode(a) for a in c.split(b"\0")] for c in log.read_bytes().split(b"\n---\n") if c]
    names = [name for argv in calls for name in argv[argv.index("--") + 1 :]]
    assert sorted(names) == sorted(f"./{n}" for n in HOSTILE_NAMES)
    for argv in calls:
        assert not any(a in HOSTILE_NAMES for a in argv[: argv.index("--")]), "a file name before --"
        after = argv[argv.index("--") + 1 :]
        assert len(after) == 1 or not any("\n" in a for a in after), "a name with a line break not alone"
    assert not (repo / "pwned").exists() and not (tmp_path / "pwned").exists()


def test_an_empty_dash_named_file_does_not_turn_the_scan_into_no_matches(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"--x.py": "", "src/app.py": CALL})
    assert [(h.file, h.line) for h in Scanner(repo).matches(detect_rule())] == [("src/app.py", 2)]


def test_install_plan_passes_requirement_strings_after_double_dash() -> None:
    plan = InstallPlan(
        requirement_files=["requirements.txt"],
        project=".",
        requirements=["--index-url=http://attacker.invalid/simple", "-rf", "pytest"],
    )
    args = plan.pip_args()
    assert args[args.index("--") + 1 :] == ["--index-url=http://attacker.invalid/simple", "-rf", "pytest"]
    assert args[: args.index("--")] == ["-r", "requirements.txt", "-e", "."]


def test_non_utf8_file_name_requires_a_human_naming_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL, b"src/caf\xe9.py": "x = 1\n"})
    with pytest.raises(RequiresHuman, match=r"not UTF-8: 'src/caf\\\\xe9.py'"):
        source_files(repo, "python")
    with pytest.raises(RequiresHuman):
        Scanner(repo).matches(detect_rule())


def test_symlinks_and_ignored_files_are_not_scanned(tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text(CALL)
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL, ".gitignore": "build/\n"})
    (repo / "src/link.py").symlink_to(outside)
    (repo / "build").mkdir()
    (repo / "build/gen.py").write_text(CALL)
    assert source_files(repo, "python") == ["src/app.py"]


def test_a_repository_sgconfig_cannot_remap_python_to_hide_matches(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "repo",
        {"sgconfig.yml": "ruleDirs: []\nlanguageGlobs:\n  bash: ['*.py']\n", "src/app.py": CALL},
    )
    assert [h.file for h in Scanner(repo).matches(detect_rule())] == ["src/app.py"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("echo \"error: unexpected argument '--x.py' found\" >&2; exit 2", "unexpected argument '--x.py'"),
        ("exit 0", "did not report what it scanned"),
        ("echo 'ERROR: ./src/app.py: Permission denied' >&2; exit 0", "Permission denied"),
        ("echo '{not json' ; exit 0", "cannot read"),
        (
            "echo 'sg: summary|file: scannedFileCount=0,skippedFileCount=0' >&2;"
            "echo 'sg: summary|rule: effectiveRuleCount=1,skippedRuleCount=0' >&2",
            "scanned 0 of 1",
        ),
        (
            "echo 'sg: summary|file: scannedFileCount=1,skippedFileCount=0' >&2;"
            "echo 'sg: summary|rule: effectiveRuleCount=0,skippedRuleCount=1' >&2",
            "did not apply rule ACME900",
        ),
    ],
    ids=["exit-2", "silent", "stderr-error", "bad-json", "fewer-files", "rule-skipped"],
)
def test_a_failed_scan_is_an_error_never_no_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, expected: str
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL})
    monkeypatch.setattr(scan, "ast_grep_binary", lambda: str(fake_binary(tmp_path, body)))
    with pytest.raises(ScanFailed, match="ast-grep") as caught:
        Scanner(repo).matches(detect_rule())
    assert expected in str(caught.value)
    assert caught.value.exit_code == 1


def test_a_scan_that_does_not_finish_requires_a_human(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL})
    monkeypatch.setattr(scan, "ast_grep_binary", lambda: str(fake_binary(tmp_path, "exec sleep 60")))
    with pytest.raises(RequiresHuman, match=r"did not finish .*scan.timeout_s.*src/app.py"):
        Scanner(repo, ScanSettings(timeout_s=0.5)).matches(detect_rule())


def test_results_are_reused_for_unchanged_files_and_rescanned_where_a_file_changed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{i}.py": CALL for i in range(3)})
    scanner = Scanner(repo)
    rule = detect_rule()
    first = scanner.matches(rule)
    assert scanner.runs == 1 and len(first) == 3
    assert scanner.matches(rule) == first and scanner.runs == 1

    (repo / "src/m1.py").write_text("x = 1\n" + CALL)
    changed = scanner.matches(rule)
    assert scanner.runs == 2
    assert sorted((h.file, h.line) for h in changed) == [("src/m0.py", 2), ("src/m1.py", 3), ("src/m2.py", 2)]


def files_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the scanner reads to identify them (scan._digest), in order, from now on."""
    read: list[str] = []
    digest = scan._digest

    def reading(path: str) -> str:
        read.append(path)
        return digest(path)

    monkeypatch.setattr(scan, "_digest", reading)
    return read


def test_files_older_than_the_racy_window_are_known_by_status_and_never_read_by_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{i}.py": CALL for i in range(3)})
    read = files_read(monkeypatch)
    monkeypatch.setattr(scan, "RACY_NS", -60 * 10**9)  # every file counts as old
    scanner = Scanner(repo)
    rule = detect_rule()
    first = scanner.matches(rule)
    assert len(first) == 3 and scanner.runs == 1 and read == []
    assert scanner.matches(rule) == first and scanner.runs == 1 and read == []

    (repo / "src/m1.py").write_text("x = 1\n" + CALL)  # a write changes ctime (and here the size)
    changed = scanner.matches(rule)
    assert scanner.runs == 2 and read == []
    assert sorted((h.file, h.line) for h in changed) == [("src/m0.py", 2), ("src/m1.py", 3), ("src/m2.py", 2)]


def test_a_file_read_while_recent_keeps_its_results_once_it_is_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {f"src/m{i}.py": CALL for i in range(3)})
    read = files_read(monkeypatch)
    monkeypatch.setattr(scan, "RACY_NS", 3_600 * 10**9)  # every file counts as recent: read each time
    scanner = Scanner(repo)
    rule = detect_rule()
    first = scanner.matches(rule)
    assert scanner.matches(rule) == first and len(read) == 6 and scanner.runs == 1

    monkeypatch.setattr(scan, "RACY_NS", -60 * 10**9)  # now old: read once more, then known by status
    assert scanner.matches(rule) == first and len(read) == 9 and scanner.runs == 1
    assert scanner.matches(rule) == first and len(read) == 9 and scanner.runs == 1


def test_a_rescan_of_some_files_with_a_rule_not_yet_seen_everywhere_scans_every_file(tmp_path: Path) -> None:
    both = CALL + "\n\ndef g(client):\n    return client.timeout\n"
    repo = make_repo(tmp_path / "repo", {f"src/m{i}.py": both for i in range(3)})
    rules = {r.id: r for r in load_rules(RULES_DIR)}
    scanner = Scanner(repo)
    assert len(scanner.scan([rules["ACME900"]])["ACME900"]) == 3

    def where(hits: list[Hit]) -> list[tuple[str, int]]:
        return [(h.file, h.line) for h in hits]

    (repo / "src/m1.py").write_text("x = 1\n" + both)
    found = scanner.scan([rules["ACME900"], rules["ACME007"]], files=["src/m1.py"])
    assert [h.file for h in found["ACME007"]] == ["src/m0.py", "src/m1.py", "src/m2.py"]
    assert [(h.file, h.line) for h in found["ACME900"]] == [
        ("src/m0.py", 2),
        ("src/m1.py", 3),
        ("src/m2.py", 2),
    ]
    runs = scanner.runs
    (repo / "src/m2.py").write_text("x = 1\n" + both)  # now every file has seen both rules: m2 alone
    found = scanner.scan([rules["ACME007"]], files=["src/m2.py"])
    assert [(h.file, h.line) for h in found["ACME007"]] == [
        ("src/m0.py", 6),
        ("src/m1.py", 7),
        ("src/m2.py", 7),
    ]
    assert scanner.runs == runs + 1


def test_many_files_are_scanned_in_batches_bounded_by_argv_bytes(tmp_path: Path) -> None:
    names = {f"src/{'d' * 60}/module_{i:03d}.py": CALL for i in range(40)}
    repo = make_repo(tmp_path / "repo", names)
    scanner = Scanner(repo, ScanSettings(max_argv_bytes=1_000))
    hits = scanner.matches(detect_rule())
    assert sorted(h.file for h in hits) == sorted(names)
    assert scanner.runs >= 3


def test_more_matches_than_the_cap_requires_a_human_naming_the_file(tmp_path: Path) -> None:
    many = "def f(client):\n" + "    getattr(client, 'x')\n" * 50
    repo = make_repo(tmp_path / "repo", {"src/a.py": CALL, "src/many.py": many})
    with pytest.raises(RequiresHuman, match=r"ACME900 matches more than 20 times .* src/many.py"):
        Scanner(repo, ScanSettings(max_matches_per_rule=20)).matches(detect_rule())


def test_more_output_than_the_cap_requires_a_human_naming_the_file(tmp_path: Path) -> None:
    big = "def f(client):\n    getattr(client, '" + "x" * 5_000 + "')\n"
    repo = make_repo(tmp_path / "repo", {"src/big.py": big, "src/a.py": CALL, "src/z.py": "x = 1\n"})
    with pytest.raises(RequiresHuman, match=r"scan.max_output_bytes\), in src/big.py"):
        Scanner(repo, ScanSettings(max_output_bytes=2_000)).matches(detect_rule())


class PlainWriter:
    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, rel: str, actor: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, content: str, actor: str) -> None:
        (self.root / rel).write_text(content, encoding="utf-8")


def acme_repo(root: Path) -> Path:
    """The acme-app fixture's files in a fresh git repository."""
    files = {
        p.relative_to(ACME_APP).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(ACME_APP.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    return make_repo(root, files)


def test_all_rules_are_scanned_in_one_pass_with_the_matches_of_one_rule_at_a_time(tmp_path: Path) -> None:
    repo = acme_repo(tmp_path / "repo")
    rules = load_rules(RULES_DIR)
    scanner = Scanner(repo)
    together = codemod.find_matches(rules, repo, scanner)
    assert scanner.runs == 1
    alone = [m for rule in rules for m in codemod.find_matches([rule], repo, Scanner(repo))]
    assert together == alone
    assert {m.rule_id for m in together} >= {"ACME001", "ACME003", "ACME900"}


def test_the_codemod_rescans_only_files_an_earlier_rule_edited_and_ends_as_rules_applied_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = acme_repo(tmp_path / "repo")
    reference = tmp_path / "reference"
    shutil.copytree(repo, reference)
    apply_rules(reference, fixable_rule_files())  # ast-grep -U, one rule file after the other
    real = scan.ast_grep_binary()
    recorder, log = recording_binary(tmp_path, real)
    monkeypatch.setattr(scan, "ast_grep_binary", lambda: str(recorder))

    report = codemod.apply_rules(load_rules(RULES_DIR), repo, PlainWriter(repo))

    calls = [[os.fsdecode(a) for a in c.split(b"\0")] for c in log.read_bytes().split(b"\n---\n") if c]
    named = [{n.removeprefix("./") for n in argv[argv.index("--") + 1 :]} for argv in calls]
    assert named[0] == set(source_files(reference, "python"))  # the first pass: every source file
    edited = set(report.files)
    assert len(calls) > 1 and all(later <= edited for later in named[1:]), (
        "a later pass scanned an unedited file"
    )
    for rel in source_files(reference, "python"):
        assert (repo / rel).read_text() == (reference / rel).read_text(), rel


def test_a_match_of_a_rule_the_scan_was_not_given_fails_the_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL})
    line = (
        '{"ruleId":"EVIL","file":"src/app.py","range":{"byteOffset":{"start":0,"end":1},'
        '"start":{"line":0,"column":0},"end":{"line":0,"column":1}}}'
    )
    monkeypatch.setattr(scan, "ast_grep_binary", lambda: str(fake_binary(tmp_path, f"echo '{line}'")))
    with pytest.raises(ScanFailed, match="EVIL"):
        Scanner(repo).matches(detect_rule())


def test_a_rule_is_scanned_as_it_was_loaded_even_if_its_file_is_replaced_later(tmp_path: Path) -> None:
    """A concurrent `apm install` re-creates apm_modules/ (new files): a run's later scans must not read
    the rule files again."""
    rules_dir = tmp_path / "rules"
    shutil.copytree(RULES_DIR, rules_dir)
    [rule] = [r for r in load_rules(rules_dir) if r.id == "ACME900"]
    shutil.rmtree(rules_dir)
    repo = make_repo(tmp_path / "repo", {"src/app.py": CALL})
    assert [(h.file, h.line) for h in Scanner(repo).matches(rule)] == [("src/app.py", 2)]


def test_a_listed_file_the_tool_cannot_look_at_requires_a_human_naming_it(tmp_path: Path) -> None:
    """A tracked file at a path longer than PATH_MAX (lstat: ENAMETOOLONG) was dropped from the listing
    without a word, its matches with it (found by review). Gone files are still left out."""
    root = make_repo(tmp_path / "repo", {"a.py": "import acme.errors\n", "gone.py": "import acme.errors\n"})
    parts = ["d" * 200 + str(i) for i in range(22)]  # 22 * 201+ bytes: over PATH_MAX (4096)
    fd = os.open(root, os.O_RDONLY)
    for part in parts:
        os.mkdir(part, dir_fd=fd)
        child = os.open(part, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = child
    out = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(out, b"import acme.errors\n")
    os.close(out)
    os.close(fd)
    name = "/".join(parts) + "/deep.py"
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=root,
            input=b"import acme.errors\n",
            capture_output=True,
        )
        .stdout.decode()
        .strip()
    )
    index = ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"]
    subprocess.run(index, cwd=root, check=True)
    (root / "gone.py").unlink()  # tracked, deleted in the worktree: simply not scanned
    with pytest.raises(RequiresHuman, match=r"the rules cannot see into 'd{200}0/"):
        source_files(root, "python")
