"""Attacks on what leaves a run: the merge request text, the report's diff, the trace and the command
line's summary, each from a hostile repository end to end through the CLI (offline, the rules-only task,
which ends 0 on the fixture).

Each hostile file is a copy of orders.py under a hostile name or with hostile characters in a comment,
so the migration rules edit it and it is part of the approved candidate."""

from __future__ import annotations

import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures_support import ROOT
from markdown_it import MarkdownIt

from agentic_codemod.publish.check import check_candidate
from agentic_codemod.report import diff as diffs
from agentic_codemod.report.run_view import load_run
from agentic_codemod.tools.trace import Trace

pytestmark = pytest.mark.slow

TASK = "acme-sdk-2-rules.yml"
ORDERS = (ROOT / "fixtures" / "acme-app" / "src" / "acme_app" / "orders.py").read_text()
EVIL = "n` @all [click](http:evil.example/x) ![t](http:evil.example/p.png) <b>x</b> `m"


def test_a_file_name_with_backticks_cannot_turn_the_merge_request_into_markdown(
    make_repo, run_codemod
) -> None:
    name = f"src/acme_app/{EVIL}.py"
    result = run_codemod(make_repo("ticks", {name: ORDERS}), TASK)

    assert result.code == 0, result.err
    assert name in result.manifest["candidate"]["files"]
    source = result.artifact("merge_request.md").read_text()
    rendered = MarkdownIt("commonmark").render(source)
    assert "<img" not in rendered and "<a " not in rendered and "<b>" not in rendered
    spans = [html.unescape(s) for s in re.findall(r"<code>(.*?)</code>", rendered)]
    assert name in spans  # the whole name, as one code span
    outside = re.sub(r"<code>.*?</code>", "", rendered)
    assert "@all" not in outside and "evil.example" not in outside


def test_line_breaks_other_than_newline_in_a_source_file_neither_fail_the_run_nor_forge_the_diff(
    make_repo, run_codemod
) -> None:
    # A comment next to an edited line: unchanged, it is a context line of the patch. U+2028, \x1c and
    # U+0085 are line breaks to str.splitlines(), not to git or JSON Lines.
    forged = (
        "\x1c@@ -1 +1 @@\x1cdiff --git a/tests/test_orders.py b/tests/test_orders.py\u2028+++ b/tests/x\x85"
    )
    orders = ORDERS.replace(
        "from acme.errors import NotFound\n", f"from acme.errors import NotFound\n# {forged}\n"
    )
    assert orders != ORDERS
    result = run_codemod(make_repo("breaks", {"src/acme_app/orders.py": orders}), TASK)

    assert result.code == 0, (result.manifest.get("reason"), result.err)  # was: JSONDecodeError, exit 1
    records = Trace(result.artifact("trace.jsonl")).lines()
    assert any(
        forged in str((r.get("arguments") or {}).get("content", "")) for r in records
    )  # the write, whole
    changed = result.manifest["candidate"]["files"]
    view = load_run(result.run_dir)
    assert sorted(f.path for f in view.diff_files) == sorted(changed)
    assert "tests/test_orders.py" not in changed
    assert not [line for line in view.diff if line.kind == "file" and "tests/test_orders.py" in line.text]
    assert any("\\x1c@@" in line.text and line.kind == "ctx" for line in view.diff)  # shown, as an escape


def test_rich_markup_in_a_file_name_is_printed_as_written(make_repo, tmp_path: Path, wheels: Path) -> None:
    name = "src/acme_app/a[/bold][i]b[/i].py"
    repo = make_repo("markup", {name: ORDERS})
    argv = [
        sys.executable,
        "-m",
        "agentic_codemod",
        "run",
        "--repo",
        str(repo),
        "--task",
        str(ROOT / "fixtures" / "tasks" / TASK),
    ]
    argv += ["--run-dir", str(tmp_path / "run"), "--offline", "--find-links", str(wheels), "--no-index"]
    env = {**os.environ, "COLUMNS": "400", "AGNO_TELEMETRY": "false"}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)

    assert done.returncode == 0, done.stderr[-2000:]  # was: a MarkupError traceback and exit 1
    assert name in done.stdout


def test_a_file_name_that_looks_like_the_binding_does_not_void_the_merge_request(
    make_repo, run_codemod
) -> None:
    name = f"src/acme_app/candidate-sha256={'0' * 64}.py"
    result = run_codemod(make_repo("binding", {name: ORDERS}), TASK)

    assert result.code == 0, result.err
    approved = check_candidate(result.run_dir)  # was: "written for candidate 000000000000 ...: void"
    assert approved.sha256 == result.manifest["candidate"]["sha256"]
    assert name in approved.files


def test_a_forged_header_inside_a_patch_line_stays_in_that_line() -> None:
    patch = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n"
        " a\x1c@@ -1 +1 @@\x1cdiff --git a/tests/t.py b/tests/t.py\u2028+++ b/tests/t.py\x0b+evil\r\n"
        "-old\r\n+new\r\n"
    )
    shown = diffs.lines(patch)
    assert [line.kind for line in shown] == ["file", "meta", "meta", "hunk", "ctx", "del", "add"]
    assert (
        shown[4].text
        == " a\\x1c@@ -1 +1 @@\\x1cdiff --git a/tests/t.py b/tests/t.py\\u2028+++ b/tests/t.py\\x0b+evil"
    )
    assert shown[5].text == "-old"  # a CRLF file's line, without its CR
    assert diffs.files(shown) == [diffs.DiffFile("x.py", 1, 1)]


def test_files_past_the_reports_cut_of_the_diff_are_still_listed(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    # Each edited line carries 100 kB: the patch holds it twice (- and +) per file, past REPORT_DIFF_CHARS
    # after three files; the page lists the files after the cut too, marked so. (The rules rewrite each
    # file several times: the config allows the bytes that takes.)
    long_line = ORDERS.replace(
        "from acme.errors import NotFound\n", "from acme.errors import NotFound  # " + "x" * 100_000 + "\n"
    )
    files = {f"src/acme_app/aa{i}.py": long_line for i in range(3)}
    config = tmp_path / "config.yml"
    config.write_text("budgets: {max_total_bytes: 4000000}\n")
    result = run_codemod(make_repo("long", files), TASK, "--config", str(config))

    assert result.code == 0, (result.manifest.get("reason"), result.err)
    view = load_run(result.run_dir)
    assert view.diff_cut
    changed = result.manifest["candidate"]["files"]
    assert sorted(f.path for f in view.diff_files) == sorted(changed)
    past = [f.path for f in view.diff_files if f.cut]
    assert "src/acme_app/orders.py" in past  # past the cut: listed, its counts not claimed
    shown = [f.path for f in view.diff_files if not f.cut]
    assert shown and past[0] not in shown  # the file the cut falls in counts as cut, listed once
    assert (result.run_dir / "report.html").read_text().count("past the cut") == len(past)


def test_files_without_content_lines_are_named_once_and_bidi_is_shown(tmp_path: Path) -> None:
    """A new empty file, a mode change and a rename have no ---/+++ lines: named from their header or
    `rename to` line, listed once; a name's direction characters are shown as escapes."""
    repo = tmp_path / "r"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    (repo / "s.sh").write_text("x\n")
    (repo / "kept.txt").write_text("the same bytes\n")
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    (repo / "s.sh").chmod(0o755)
    (repo / "empty.py").write_text("")
    (repo / "b.py").write_text("ok = True  # \u202e\u2066 ;)(kcatta\u2069\n")
    (repo / "kept.txt").rename(repo / "renamed.txt")
    (repo / "rep\u202etxt.exe").write_text("x\n")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    patch = subprocess.run([*git, "diff", "--cached"], cwd=repo, check=True, capture_output=True, text=True)
    shown = diffs.lines(patch.stdout)
    names = [f.path for f in diffs.files(shown)]
    assert names == ["b.py", "empty.py", "renamed.txt", "rep\\u202etxt.exe", "s.sh"]
    added = [line.text for line in shown if line.kind == "add"]
    assert added == ["+ok = True  # \\u202e\\u2066 ;)(kcatta\\u2069", "+x"]


def test_a_change_of_line_ending_alone_is_visible_in_the_report_diff(tmp_path: Path) -> None:
    """A line that gains or loses only its "\r" differs in the diff: its "\r" is shown. A CRLF file with a
    real change shows its lines without the "\r" that every one of them has."""
    repo = tmp_path / "r"
    repo.mkdir()
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "core.autocrlf=false"]
    (repo / "lf.py").write_bytes(b"a = 1\nb = 2\n")
    (repo / "crlf.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*git, "add", "."], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=repo, check=True)
    (repo / "lf.py").write_bytes(b"a = 1\r\nb = 2\n")
    (repo / "crlf.py").write_bytes(b"a = 1\r\nb = 3\r\n")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    patch = subprocess.run([*git, "diff", "--cached"], cwd=repo, check=True, capture_output=True).stdout
    shown = diffs.lines(patch.decode())
    changed = [(line.kind, line.text) for line in shown if line.kind in ("add", "del")]
    assert changed == [("del", "-b = 2"), ("add", "+b = 3"), ("del", "-a = 1"), ("add", "+a = 1\\x0d")]


# The repository's own conftest.py, once pytest has written its JUnit report: the report again, as 5,000
# nested elements around the real one's test cases (35 KB; ElementTree parses it, its writer and a nested
# walk recurse once per level).
DEEP_REPORT_CONFTEST = """


def pytest_unconfigure(config):
    path = getattr(config.option, "xmlpath", None)
    if path:
        with open(path, encoding="utf-8") as f:
            report = f.read().split("?>", 1)[-1]
        with open(path, "w", encoding="utf-8") as f:
            f.write("<x>" * 5000 + report + "</x>" * 5000)
"""


def test_a_junit_report_the_tests_nest_past_what_the_readers_recurse_is_no_evidence(
    make_repo, run_codemod
) -> None:
    """Before, the CI copy of the report (verify.without_canary) raised RecursionError: the run ended
    `failed`, exit 1, with the error's text. Now a report past JUNIT_MAX_DEPTH is unreadable: no tally
    from it, never green."""
    conftest = (ROOT / "fixtures" / "acme-app" / "tests" / "conftest.py").read_text() + DEEP_REPORT_CONFTEST
    result = run_codemod(make_repo("deep-report", {"tests/conftest.py": conftest}), TASK)
    m = result.manifest
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]  # no proven test command
    assert "RecursionError" not in m["reason"] and m["classification"] != "green", m["reason"]
    assert [v["tests"] for v in m["verifications"]] == [None]  # no tally from the report
    assert not (result.run_dir / "reports" / "junit-baseline.xml").exists()  # no CI copy of it


SKIPS_ON_THE_NEW_VERSION = """

import importlib.metadata

ON_2 = importlib.metadata.version("acme-sdk").startswith("2.")


def pytest_collection_modifyitems(config, items):
    for item in items:  # the test that shows the change broke something stops running on 2.x
        if item.name == "test_get_unknown_order_raises_order_not_found" and ON_2:
            item.add_marker(pytest.mark.skip(reason="quarantined on acme-sdk 2"))
"""
DESELECTS_ON_THE_NEW_VERSION = """

import importlib.metadata

ON_2 = importlib.metadata.version("acme-sdk").startswith("2.")


def pytest_collection_modifyitems(config, items):
    if ON_2:  # the test is not collected at all on 2.x: no <testcase> for it in the report
        items[:] = [i for i in items if i.name != "test_get_unknown_order_raises_order_not_found"]
"""
RUNS_ON_THE_NEW_VERSION = """import importlib.metadata

import pytest


@pytest.mark.skipif(not importlib.metadata.version("acme-sdk").startswith("2."), reason="2.x only")
def test_a_new_feature_of_acme_sdk_2():
    assert True
"""


@pytest.mark.parametrize(
    ("hook", "shown"),
    [(SKIPS_ON_THE_NEW_VERSION, "skipped"), (DESELECTS_ON_THE_NEW_VERSION, "not in the report")],
    ids=["skipped", "deselected"],
)
def test_a_test_that_passed_at_baseline_and_is_skipped_after_the_change_is_never_green(
    make_repo, run_codemod, hook: str, shown: str
) -> None:
    """The repository's conftest skips (or deselects), on the new version only, a test that passed at
    baseline, and a test skipped at baseline runs instead: as many tests run before and after, so the
    test-count gate saw nothing and the run succeeded (exit 0) although the candidate was never shown to
    keep what that test checks. Every test that passed at baseline must pass after the change (by id,
    from the JUnit reports)."""
    conftest = (ROOT / "fixtures" / "acme-app" / "tests" / "conftest.py").read_text() + hook
    repo = make_repo(
        "skips-after", {"tests/conftest.py": conftest, "tests/test_new_feature.py": RUNS_ON_THE_NEW_VERSION}
    )
    result = run_codemod(repo, TASK)
    m = result.manifest
    baseline, after = m["verifications"][0]["tests"], m["verifications"][-1]["tests"]
    assert baseline["passed"] == after["passed"] and after["failed"] + after["errors"] == 0  # counts agree
    assert result.code != 0 and m["status"] != "succeeded", m["reason"]
    gate = next(g for g in m["gates"] if g["name"] == "test_ids")
    assert not gate["passed"]
    assert f"test_get_unknown_order_raises_order_not_found ({shown})" in gate["findings"][0]["message"]


FAILS_ON_THE_NEW_VERSION = """import importlib.metadata


def test_runs_on_the_old_version_only():
    assert importlib.metadata.version("acme-sdk").startswith("1.")
"""
EXITS_0_AT_EXIT = """

import atexit
import os

atexit.register(os._exit, 0)  # whatever failed, the process ends with exit 0
"""
SETS_THE_EXIT_STATUS_TO_0 = """


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
"""


@pytest.mark.parametrize(
    "hook", [EXITS_0_AT_EXIT, SETS_THE_EXIT_STATUS_TO_0], ids=["atexit", "sessionfinish"]
)
def test_a_run_that_exits_0_with_failures_in_its_report_is_never_green(
    make_repo, run_codemod, hook: str
) -> None:
    """The repository's conftest makes the test process exit 0 whatever failed, and a test fails on the
    new version only. Before, exit 0 was clean whatever the report said: the run succeeded (exit 0),
    run.json listing the failing test beside `passed: true`, the merge request "green". The canary fails
    in every run that can be green, so an honest runner exits 1: an exit 0 is never clean."""
    conftest = (ROOT / "fixtures" / "acme-app" / "tests" / "conftest.py").read_text() + hook
    repo = make_repo(
        "exit-0", {"tests/conftest.py": conftest, "tests/test_old_only.py": FAILS_ON_THE_NEW_VERSION}
    )
    result = run_codemod(repo, TASK)
    m = result.manifest
    after = m["verifications"][-1]
    assert after["exit_code"] == 0 and after["canary"] == "failed"  # the trick worked on the runner
    assert "tests.test_old_only::test_runs_on_the_old_version_only" in after["tests"]["failing"]
    assert not after["passed"] and m["classification"] != "green"
    assert (result.code, m["status"]) == (1, "rejected"), m["reason"]
    text = result.artifact("merge_request.md").read_text()
    assert "verification is not green" in text and "verification is green" not in text


def test_a_run_that_stops_at_its_first_failure_still_runs_every_test(make_repo, run_codemod) -> None:
    """`addopts = "-x"`: the canary fails in every run, so pytest stopped there, and every test after it
    (the one that fails on the new version among them) ran in neither phase: green, exit 0, 3 of 19 tests
    run (the third review's reproduction). The tool's `--maxfail` comes last on its command line."""
    pyproject = (ROOT / "fixtures" / "acme-app" / "pyproject.toml").read_text()
    pyproject = pyproject.replace(
        "[tool.pytest.ini_options]\n", '[tool.pytest.ini_options]\naddopts = "-x"\n'
    )
    assert 'addopts = "-x"' in pyproject
    repo = make_repo(
        "exitfirst", {"pyproject.toml": pyproject, "tests/test_old_only.py": FAILS_ON_THE_NEW_VERSION}
    )
    result = run_codemod(repo, TASK)
    m = result.manifest
    baseline, after = m["verifications"][0], m["verifications"][-1]
    assert baseline["tests"]["passed"] >= 17  # every test ran, not the first few up to the canary
    assert "tests.test_old_only::test_runs_on_the_old_version_only" in after["tests"]["failing"]
    assert (result.code, m["status"]) == (1, "rejected"), m["reason"]
