"""Failures carry test ids for every runner (unittest -v, stestr's subunit record, pytest's JUnit), and a
baseline that lost a test module to a missing module is not usable, naming the module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from agentic_codemod.adapters.python import ADAPTER, subunit, trial_output
from agentic_codemod.adapters.python import test_results as readers
from agentic_codemod.adapters.types import SDK_TEST
from agentic_codemod.models import Tally, VerificationResult
from agentic_codemod.tools.junit import junit_case_ids, read_junit
from agentic_codemod.workflow import oracle, verify

FACTS = ADAPTER.test_facts

RECORDED = Path(__file__).parent / "recorded"
SUITE = {
    "pkg/__init__.py": "",
    "pkg/test_a.py": (
        "import unittest\n\n\nclass TestA(unittest.TestCase):\n"
        "    def test_ok(self):\n        pass\n\n"
        '    def test_bad(self):\n        """A docstring line."""\n        self.assertEqual(1, 2)\n\n'
        "    def test_err(self):\n        raise RuntimeError('x')\n\n"
        "    def test_sub(self):\n        for i in range(2):\n            with self.subTest(i=i):\n"
        "                self.assertEqual(i, 0)\n\n"
        "    @unittest.skip('no')\n    def test_skip(self):\n        pass\n"
    ),
}


def make(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run(root: Path, *argv: str) -> str:
    done = subprocess.run([sys.executable, *argv], cwd=root, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


def test_unittest_verbose_output_names_every_failure(tmp_path: Path) -> None:
    counts = readers.counts_from_output(run(make(tmp_path, SUITE), "-m", "unittest", "discover", "-v"))
    assert counts is not None
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (1, 2, 1, 1)
    assert counts.failing == [
        "pkg.test_a.TestA.test_bad",
        "pkg.test_a.TestA.test_err",
        "pkg.test_a.TestA.test_sub (i=1)",
    ]


def test_an_unexpected_success_is_a_failure_and_an_expected_failure_none(tmp_path: Path) -> None:
    """`FAILED (expected failures=1, unexpected successes=1)`: the unanchored `failures=` read the expected
    failure as a failure, and the unexpected success (an @expectedFailure test passing on the target,
    which makes unittest exit 1) as nothing: green (helper-20's review)."""
    suite = {
        "pkg/__init__.py": "",
        "pkg/test_b.py": (
            "import unittest\n\n\nclass TestB(unittest.TestCase):\n"
            "    def test_ok(self):\n        pass\n\n"
            "    @unittest.expectedFailure\n    def test_still_broken(self):\n"
            "        self.assertEqual(1, 2)\n\n"
            "    @unittest.expectedFailure\n    def test_pages_by_itself(self):\n        pass\n"
        ),
    }
    output = run(make(tmp_path, suite), "-m", "unittest", "discover", "-v")
    assert "expected failures=1, unexpected successes=1" in output, output
    counts = readers.counts_from_output(output)
    assert counts is not None
    assert (counts.failed, counts.errors, counts.skipped) == (1, 0, 0)
    assert counts.failing == ["pkg.test_b.TestB.test_pages_by_itself"]
    quiet = readers.counts_from_output(run(tmp_path, "-m", "unittest", "discover"))  # headers only
    assert quiet is not None and quiet.failing == ["pkg.test_b.TestB.test_pages_by_itself"]


def test_unittest_ids_from_report_headers_alone_and_the_older_class_only_form() -> None:
    output = (
        "======\nFAIL: test_x (pkg.mod.TestX)\n------\nAssertionError\n"
        "======\nERROR: test_y (pkg.mod.TestX.test_y)\n------\nRuntimeError\n"
        "------\nRan 3 tests in 0.1s\n\nFAILED (failures=1, errors=1)\n"
    )
    counts = readers.counts_from_output(output)
    assert counts is not None and counts.failing == ["pkg.mod.TestX.test_x", "pkg.mod.TestX.test_y"]


def test_failures_cut_from_the_output_are_never_taken_for_the_baselines() -> None:
    output = "[... 9000 bytes cut ...]\nRan 40 tests in 1s\n\nFAILED (failures=2)\n"
    baseline, final = readers.counts_from_output(output), readers.counts_from_output(output)
    assert baseline is not None and final is not None
    assert baseline.failing != final.failing  # two runs' unnamed failures never match
    results = [
        VerificationResult(phase=p, command=["x"], exit_code=1, duration_s=0, passed=False, tests=t)
        for p, t in (("baseline", baseline), ("iteration-1", final))
    ]
    assert verify.classify(*results) == "introduced"


def test_same_unittest_ids_before_and_after_are_pre_existing(tmp_path: Path) -> None:
    output = run(make(tmp_path, SUITE), "-m", "unittest", "discover", "-v")
    before, after = readers.counts_from_output(output), readers.counts_from_output(output)
    results = [
        VerificationResult(phase=p, command=["x"], exit_code=1, duration_s=0, passed=False, tests=t)
        for p, t in (("baseline", before), ("iteration-1", after))
    ]
    assert verify.classify(*results) == "pre-existing"


@pytest.mark.parametrize("name", ["stestr-v1.subunit", "stestr-v2.subunit"])
def test_stestr_subunit_record_gives_ids(name: str) -> None:
    read = subunit.read_stream((RECORDED / name).read_bytes())
    assert read is not None
    tally, ids = read
    assert tally == Tally(passed=1, failed=1, skipped=1, failing=["pkg.tests.test_a.TestA.test_bad"])
    assert sorted(ids) == [f"pkg.tests.test_a.TestA.test_{n}" for n in ("bad", "ok", "skip")]


def test_a_damaged_subunit_stream_reads_as_nothing() -> None:
    v2 = bytearray((RECORDED / "stestr-v2.subunit").read_bytes())
    v2[20] ^= 0xFF  # the CRC no longer matches
    assert subunit.read_stream(bytes(v2)) is None
    v1 = (RECORDED / "stestr-v1.subunit").read_bytes()
    assert subunit.read_stream(v1[: v1.index(b"0\r\n]")]) is None  # details that never end


def test_stestr_repository_latest_run_is_read_and_must_stay_in_the_copy(tmp_path: Path) -> None:
    repo = tmp_path / ".stestr"
    repo.mkdir()
    (repo / "next-stream").write_text("2\n")
    (repo / "1").write_bytes((RECORDED / "stestr-v1.subunit").read_bytes())
    tally, ids = readers.read_stestr(tmp_path)
    assert tally is not None and tally.failing == ["pkg.tests.test_a.TestA.test_bad"] and len(ids) == 3
    outside = tmp_path.parent / "outside.subunit"
    outside.write_bytes((RECORDED / "stestr-v1.subunit").read_bytes())
    (repo / "1").unlink()
    (repo / "1").symlink_to(outside)
    assert readers.read_stestr(tmp_path) == (None, [])


def test_stestr_files_the_tests_made_fifos_or_links_are_not_read(tmp_path: Path) -> None:
    """A plain read of a FIFO waits for a writer: the test run is over, so the host would wait forever."""
    repo = tmp_path / ".stestr"
    repo.mkdir()
    os.mkfifo(repo / "next-stream")
    assert readers.read_stestr(tmp_path) == (None, [])
    (repo / "next-stream").unlink()
    (repo / "next-stream").write_text("2\n")
    os.mkfifo(repo / "1")
    assert readers.read_stestr(tmp_path) == (None, [])
    (repo / "1").unlink()
    (repo / "1").symlink_to(".stestr-copy")  # inside the copy, yet a link: not read either
    (repo / ".stestr-copy").write_bytes((RECORDED / "stestr-v1.subunit").read_bytes())
    assert readers.read_stestr(tmp_path) == (None, [])


def baseline(output: str, tests: Tally | None, exit_code: int = 1) -> VerificationResult:
    return VerificationResult(
        phase="baseline",
        command=["x"],
        exit_code=exit_code,
        duration_s=0,
        passed=False,
        tests=tests,
        output_tail=output,
    )


def test_a_unittest_baseline_that_lost_a_module_names_it(tmp_path: Path) -> None:
    make(tmp_path, {**SUITE, "pkg/test_b.py": "import hypothesis_not_installed_here\n"})
    output = run(tmp_path, "-m", "unittest", "discover", "-v")
    result = baseline(output, readers.counts_from_output(output))
    assert not verify.usable_baseline(result, FACTS)
    assert "ModuleNotFoundError: No module named 'hypothesis_not_installed_here'" in str(
        verify.baseline_problem(result, FACTS)
    )


def test_a_pytest_collection_error_for_a_missing_module_is_named(tmp_path: Path) -> None:
    make(tmp_path, {"tests/test_a.py": "import hypothesis_not_installed_here\n\ndef test_x():\n    pass\n"})
    junit = tmp_path / "junit.xml"
    output = run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", "tests")
    result = baseline(output, read_junit(junit), exit_code=2)
    assert result.tests is not None and result.tests.errors == 1  # "ran 1 test, errors=1": not usable
    assert "No module named 'hypothesis_not_installed_here'" in str(verify.baseline_problem(result, FACTS))


def test_stestr_discovery_failure_is_named() -> None:
    output = (
        "=========================\nFailures during discovery\n=========================\n"
        "--- import errors ---\nFailed to import test module: pkg.tests.test_b\n"
        "Traceback (most recent call last):\n"
        '  File "pkg/tests/test_b.py", line 1, in <module>\n    import testscenarios\n'
        "ModuleNotFoundError: No module named 'testscenarios'\n"
    )
    assert readers.missing_test_module(output) == "ModuleNotFoundError: No module named 'testscenarios'"


def test_a_failing_test_that_imports_nothing_missing_keeps_the_baseline_usable(tmp_path: Path) -> None:
    output = run(make(tmp_path, SUITE), "-m", "unittest", "discover", "-v")
    assert verify.baseline_problem(baseline(output, readers.counts_from_output(output)), FACTS) is None


# A real `python -m twisted.trial --reporter=bwverbose towncrier` run (Twisted 25, towncrier 23.11's suite
# plus three planted modules: a failure, an error and a skip; a module importing a missing module; and a
# canary), paths rewritten to the sandbox's. Output a test writes stands between an id and its [OK].
TRIAL_CANARY = "ca1b2c3d4e5"


def test_trial_result_lines_and_problem_report_give_ids_and_the_tally() -> None:
    output = (RECORDED / "trial_bwverbose.txt").read_text()
    read = trial_output.read(output)
    assert read is not None
    tally, ids = read
    assert (tally.passed, tally.failed, tally.errors, tally.skipped) == (111, 2, 2, 1)
    assert tally.failing == [
        "towncrier.test.test_ca1b2c3d4e5.TestCa1b2c3d4e5.test_ca1b2c3d4e5",
        "towncrier.test.test_zmissing",
        "towncrier.test.test_zz.T.test_a",
        "towncrier.test.test_zz.T.test_b",
    ]
    assert len(ids) == 116 and "towncrier.test.test_build.TestCli.test_bullet_points_false" in ids


def test_trial_canary_is_found_failed_and_cut_from_what_readers_see() -> None:
    output = (RECORDED / "trial_bwverbose.txt").read_text()
    read = trial_output.read(output)
    assert read is not None
    tally, ids = read
    canary = oracle.Canary(file="src/towncrier/test/test_ca1b2c3d4e5.py", token=TRIAL_CANARY)
    assert canary.state_in(tally, ids) == "failed"
    assert (tally.failed, tally.errors) == (1, 2) and not any(TRIAL_CANARY in t for t in tally.failing)
    scrubbed = oracle.scrub(output, TRIAL_CANARY, FACTS)
    assert TRIAL_CANARY not in scrubbed and "123 != 1045" not in scrubbed
    assert "towncrier.test.test_zz.T.test_a" in scrubbed
    assert "FAILED (skips=1, failures=1, errors=2" in scrubbed


def test_a_trial_module_that_lost_an_import_is_named_as_a_missing_test_dependency() -> None:
    output = (RECORDED / "trial_bwverbose.txt").read_text()
    assert readers.missing_test_module(output) == "ModuleNotFoundError: No module named 'nosuchmod'"


def test_trial_output_cut_before_the_report_leaves_unnamed_failures_unmatchable() -> None:
    output = (RECORDED / "trial_bwverbose.txt").read_text()
    cut = "\n".join(line for line in output.splitlines() if "test_zz.T.test_b" not in line)
    read = trial_output.read(cut)
    assert read is not None
    assert read[0].failing[-1].startswith("<1 failing test(s) not named")
    assert trial_output.read(output.split("\nRan ")[0]) is None  # no summary: the run did not finish


def test_a_junit_report_the_tests_made_a_fifo_or_a_link_is_unreadable_not_a_hang(tmp_path: Path) -> None:
    """The tests write the reports folder: a FIFO at junit.xml blocked the reader (the tool hung), and a
    symlink made it read a file of the link's choosing. Both read as no report."""
    import os

    fifo = tmp_path / "fifo.xml"
    os.mkfifo(fifo)
    outside = tmp_path / "outside.xml"
    outside.write_text('<testsuite><testcase classname="a" name="b"/></testsuite>')
    link = tmp_path / "link.xml"
    link.symlink_to(outside)
    for report in (fifo, link):
        assert read_junit(report) is None and junit_case_ids(report) == []
    assert read_junit(outside) == Tally(passed=1) and junit_case_ids(outside) == ["a::b"]


def test_the_ci_copy_of_a_report_the_tests_made_a_link_fifo_or_folder_is_not_written(tmp_path: Path) -> None:
    """verify.without_canary copies the report for CI's artifacts: through a link it copied a file of the
    link's choosing out of the sandbox, a FIFO hung it, a folder raised out of the verification."""
    import os

    secret = tmp_path / "outside.xml"
    secret.write_text('<settings><password>s3cr3t</password><testsuite name="x"/></settings>')
    (tmp_path / "link").mkdir()
    (tmp_path / "link" / "junit.xml").symlink_to(secret)
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / "junit.xml")
    (tmp_path / "folder" / "junit.xml").mkdir(parents=True)
    for case in ("link", "fifo", "folder"):
        dest = tmp_path / f"junit-{case}.xml"
        verify.without_canary(tmp_path / case / "junit.xml", "ctoken", dest)
        assert not dest.exists(), case
    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuite tests="2" failures="1"><testcase name="test_a"/>'
        '<testcase name="test_ctoken"><failure/></testcase></testsuite>'
    )
    verify.without_canary(report, "ctoken", tmp_path / "junit-ok.xml")
    assert 'tests="1" failures="0"' in (tmp_path / "junit-ok.xml").read_text()


def test_a_report_nested_past_what_the_readers_recurse_is_unreadable_and_not_copied(tmp_path: Path) -> None:
    """ElementTree parses any depth, but its writer and a nested-suite walk recurse per level: a report of
    5,000 nested elements (35 KB, a test can write it) raised RecursionError out of the CI copy and npm's
    reader. Past JUNIT_MAX_DEPTH it is unreadable (never green); a report of real depth still reads."""
    from agentic_codemod.adapters.npm import test_results as npm_results
    from agentic_codemod.config import JUNIT_MAX_DEPTH

    case = '<testcase classname="a" name="b"/>'
    deep = tmp_path / "deep.xml"
    deep.write_text("<testsuites>" + "<x>" * 5000 + case + "</x>" * 5000 + "</testsuites>")
    assert read_junit(deep) is None and junit_case_ids(deep) == []
    verify.without_canary(deep, "ctoken", tmp_path / "deep-copy.xml")
    assert not (tmp_path / "deep-copy.xml").exists()
    suites = '<testsuite name="s">' * 5000 + case + "</testsuite>" * 5000
    assert npm_results._junit(f"<testsuites>{suites}</testsuites>") == (None, [])
    fits = "<testsuites>" + '<testsuite name="s">' * (JUNIT_MAX_DEPTH - 2) + case
    fits += "</testsuite>" * (JUNIT_MAX_DEPTH - 2) + "</testsuites>"
    (tmp_path / "fits.xml").write_text(fits)
    assert read_junit(tmp_path / "fits.xml") == Tally(passed=1)
    tally, ids = npm_results._junit(fits)
    assert tally == Tally(passed=1) and ids == [" > ".join(["s"] * (JUNIT_MAX_DEPTH - 2) + ["b"])]
    past = fits.replace("<testsuites>", "<testsuites><testsuite>", 1).replace(
        "</testsuites>", "</testsuite></testsuites>"
    )
    assert npm_results._junit(past) == (None, [])


def test_case_statuses_read_each_id_once_at_its_worst_outcome(tmp_path: Path) -> None:
    """The test_ids gate's reading: an id the report lists twice (a rerun plugin, a repeated class name)
    counts as its worst outcome, so a failure or skip cannot hide behind a pass of the same id."""
    from agentic_codemod.tools.junit import case_statuses

    report = tmp_path / "junit.xml"
    report.write_text(
        '<testsuites><testsuite name="s">'
        '<testcase classname="t" name="a"/><testcase classname="t" name="a"><skipped/></testcase>'
        '<testcase classname="t" name="b"><failure/></testcase><testcase classname="t" name="b"/>'
        '<testcase classname="t" name="c"><error/></testcase><testcase classname="t" name="d"/>'
        "</testsuite></testsuites>"
    )
    assert case_statuses(report) == {"t::a": "skipped", "t::b": "failed", "t::c": "failed", "t::d": "passed"}
    (tmp_path / "link.xml").symlink_to(report)
    assert case_statuses(tmp_path / "link.xml") is None  # the tests wrote it: never through a link
    assert case_statuses(tmp_path / "missing.xml") is None


def test_a_failure_beside_a_skip_in_one_testcase_counts_as_failed(tmp_path: Path) -> None:
    """pytest writes <skipped> and <error> into one <testcase> when a module fixture's teardown fails after
    the module's last test, a skipped one (helper-20's review: read skipped first, the error was lost and
    the run green on a target the fixture's teardown fails on). pytest itself exits 1."""
    from agentic_codemod.tools.junit import case_statuses

    make(
        tmp_path,
        {
            "test_pool.py": (
                "import pytest\n\n\n@pytest.fixture(scope='module')\ndef pooled():\n    yield 1\n"
                "    assert False, 'teardown fails on the target'\n\n\n"
                "def test_serves(pooled):\n    pass\n\n\n"
                "@pytest.mark.skip(reason='by hand')\ndef test_under_load(pooled):\n    pass\n"
            )
        },
    )
    output = run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml=junit.xml")
    assert "1 passed, 1 skipped, 1 error" in output, output
    report = tmp_path / "junit.xml"
    assert "<skipped" in report.read_text() and "<error" in report.read_text()  # in one testcase
    counts = read_junit(report)
    assert counts is not None
    assert (counts.passed, counts.failed, counts.errors, counts.skipped) == (1, 0, 1, 0)
    assert counts.failing == ["test_pool::test_under_load"]
    assert case_statuses(report) == {
        "test_pool::test_serves": "passed",
        "test_pool::test_under_load": "failed",
    }


def test_node_cases_are_named_with_their_suites_so_a_skip_cannot_hide_behind_a_namesake(
    tmp_path: Path,
) -> None:
    """node's JUnit reporter writes classname="test" for every case, its describe blocks as <testsuite>
    elements (helper-21's review: `describe("on 1.x")` and `describe("on 2.x")` each holding
    `it("loads an order")`, one skipped in each phase, read as one test that passed in both: green)."""
    from agentic_codemod.tools.junit import case_statuses, lost_passes

    def report(name: str, on_one: bool) -> Path:
        one = '<testcase name="loads an order" classname="test"/>'
        skipped = '<testcase name="loads an order" classname="test"><skipped/></testcase>'
        path = tmp_path / name
        path.write_text(
            '<testsuites><testcase name="top" classname="test"/>'
            f'<testsuite name="orders on 1.x">{one if on_one else skipped}</testsuite>'
            f'<testsuite name="orders on 2.x">{skipped if on_one else one}</testsuite></testsuites>'
        )
        return path

    before, after = case_statuses(report("before.xml", True)), case_statuses(report("after.xml", False))
    assert before == {
        "test::top": "passed",
        "orders on 1.x > test::loads an order": "passed",
        "orders on 2.x > test::loads an order": "skipped",
    }
    assert after is not None and before is not None
    assert lost_passes(before, after) == ([("orders on 1.x > test::loads an order", "skipped")], 0)
    pytest_report = tmp_path / "pytest.xml"  # a class name that says where the test is: ids as before
    pytest_report.write_text(
        '<testsuites><testsuite name="pytest"><testcase classname="t" name="a"/></testsuite></testsuites>'
    )
    assert case_statuses(pytest_report) == {"t::a": "passed"}


def test_lost_passes_name_skipped_and_gone_tests_but_not_ids_pytest_respelled() -> None:
    """The test_ids gate's comparison. pytest 8 suffixes duplicate parameter ids ending in a digit with
    `_N` where pytest 7 wrote `N` (tomlkit's suite: 210 ids, on a safe pytest bump, read as lost): a
    whole family, `X_0` .. `X_k` new and passing with `X0` .. `Xk` all gone, is the same tests. A skip,
    a gone id, a lone look-alike (`1_000`, `py3_11`, one `X1_0`) or a respelling that did not pass stays
    lost (helper-10's review: each of those hid a gone test); a failure is the oracle's."""
    from agentic_codemod.tools.junit import lost_passes

    before = {
        "t::a": "passed",
        "t::b": "passed",
        "t::c": "passed",
        "t::d": "skipped",
        "t::v[spec-array-10]": "passed",
        "t::v[spec-array-11]": "passed",
        "t::w[x10-y]": "passed",
        "t::w[x11-y]": "passed",
        "t::z[10]": "passed",
        "t::z[11]": "passed",
    }
    after = {
        "t::a": "passed",
        "t::b": "skipped",
        "t::c": "failed",
        "t::d": "passed",
        "t::v[spec-array-1_0]": "passed",
        "t::v[spec-array-1_1]": "passed",
        "t::w[x1_0-y]": "passed",  # mid-id: a stacked parametrize
        "t::w[x1_1-y]": "passed",
        "t::z[1_0]": "passed",
        "t::z[1_1]": "skipped",  # the family is not all passing: both stay lost
    }
    assert lost_passes(before, after) == (
        [("t::b", "skipped"), ("t::z[10]", "not in the report"), ("t::z[11]", "not in the report")],
        4,
    )
    for gone, new in [("1000", "1_000"), ("py311", "py3_11"), ("a10", "a1_0"), ("2_0-10", "20-1_0")]:
        assert lost_passes({f"t::u[{gone}]": "passed"}, {f"t::u[{new}]": "passed"})[0] == [
            (f"t::u[{gone}]", "not in the report")
        ]
    # a family whose old spellings are not all gone is no respelling
    half = {"t::q[a10]": "passed", "t::q[a11]": "passed"}
    assert lost_passes(half, {"t::q[a11]": "passed", "t::q[a1_0]": "passed", "t::q[a1_1]": "passed"}) == (
        [("t::q[a10]", "not in the report")],
        0,
    )


def test_a_unittest_skip_that_swaps_one_test_for_another_is_lost_by_id(tmp_path: Path) -> None:
    """helper-20's review: at baseline test_by_the_sdk passes and test_names_its_exceptions is skipped, on
    the target the other way round: 2 passed, 1 skipped in both runs, and unittest (like stestr and trial)
    gave the test_ids gate no ids, so the count gate alone let it through (green, exit 0). Its `-v`
    result lines are now kept as a JUnit document of each test's outcome, the canary's left out."""
    from agentic_codemod.adapters.python import test_results
    from agentic_codemod.adapters.types import TestCommand
    from agentic_codemod.tools.junit import case_statuses, lost_passes

    def run_suite(name: str, on_target: bool) -> dict[str, str]:
        skip_first = "@unittest.skip('2.x')\n    " if on_target else ""
        skip_second = "" if on_target else "@unittest.skip('1.x')\n    "
        root = make(
            tmp_path / name,
            {
                "pkg/__init__.py": "",
                "pkg/test_c.py": (
                    "import unittest\n\n\nclass TestC(unittest.TestCase):\n"
                    "    def test_plain(self):\n        pass\n\n"
                    f"    {skip_first}def test_by_the_sdk(self):\n        pass\n\n"
                    f"    {skip_second}def test_names_its_exceptions(self):\n        pass\n\n"
                    "    def test_ca1b2c3(self):\n        self.fail('the canary')\n"
                ),
            },
        )
        output = run(root, "-m", "unittest", "discover", "-v")
        command = TestCommand(
            argv=["python", "-m", "unittest", "discover", "-v"], source="x", runner="unittest"
        )
        made = test_results.case_report(command, root, None, output, "ca1b2c3")
        assert made is not None
        report = tmp_path / f"{name}.xml"
        ElementTree.ElementTree(made).write(report, encoding="utf-8")
        statuses = case_statuses(report)
        assert statuses is not None
        return statuses

    before, after = run_suite("baseline", False), run_suite("target", True)
    assert before == {
        "pkg.test_c.TestC::test_plain": "passed",
        "pkg.test_c.TestC::test_by_the_sdk": "passed",
        "pkg.test_c.TestC::test_names_its_exceptions": "skipped",
    }  # the canary left out
    assert lost_passes(before, after) == ([("pkg.test_c.TestC::test_by_the_sdk", "skipped")], 0)


def test_stestr_and_trial_records_give_each_tests_outcome() -> None:
    """The same document from stestr's subunit record and trial's result lines and problem report."""
    from agentic_codemod.tools.junit import document

    for name in ("stestr-v1.subunit", "stestr-v2.subunit"):
        read = subunit.outcomes((RECORDED / name).read_bytes())
        assert read == {
            "pkg.tests.test_a.TestA.test_ok": "passed",
            "pkg.tests.test_a.TestA.test_bad": "failed",
            "pkg.tests.test_a.TestA.test_skip": "skipped",
        }, name
        assert read is not None and read["pkg.tests.test_a.TestA.test_bad"] == "failed"
        assert read["pkg.tests.test_a.TestA.test_skip"] == "skipped"
    outcomes = trial_output.outcomes((RECORDED / "trial_bwverbose.txt").read_text())
    assert outcomes is not None and len(outcomes) == 116
    assert outcomes["towncrier.test.test_zz.T.test_a"] == "failed"
    assert outcomes["towncrier.test.test_build.TestCli.test_bullet_points_false"] == "passed"
    assert list(outcomes.values()).count("skipped") == 1
    made = document(outcomes, "trial")
    assert len(list(made.iter("testcase"))) == 116
    assert trial_output.outcomes("no summary line") is None
    # a result line the tests print again for a skipped one cannot make it a pass (helper-48)
    text = (RECORDED / "trial_bwverbose.txt").read_text()
    forged = text.replace(
        "towncrier.test.test_zz.T.test_c ... [SKIPPED]\n",
        "towncrier.test.test_zz.T.test_c ... [SKIPPED]\ntowncrier.test.test_zz.T.test_c ... [OK]\n",
        1,
    )
    assert forged != text
    assert (trial_output.outcomes(forged) or {})["towncrier.test.test_zz.T.test_c"] == "skipped"


def test_unittest_results_are_read_past_what_the_tests_write_between_and_a_printed_line_forges_none(
    tmp_path: Path,
) -> None:
    """helper-25's review: a test that logs a warning (an SDK's DeprecationWarning) puts the warning
    between `... ` and `ok`; the result line was not read, the test was missing from the baseline's ids,
    and its skip on the target went unseen (green, exit 0). A line the tests print cannot turn the real
    `skipped` into a pass (worst outcome per id), and a run whose results are not all read is unread."""
    from agentic_codemod.adapters.python import test_results

    root = make(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/test_d.py": (
                "import logging\nimport sys\nimport unittest\nimport warnings\n\n\n"
                "class TestD(unittest.TestCase):\n"
                "    def test_logs(self):\n        logging.warning('the 1.x client is deprecated')\n\n"
                "    def test_warns(self):\n        warnings.warn('old', DeprecationWarning)\n\n"
                "    @unittest.skip('2.x')\n    def test_skipped(self):\n        pass\n\n"
                "    def test_zforges(self):\n"
                "        sys.stderr.write('test_skipped (pkg.test_d.TestD.test_skipped) ... ok\\n')\n"
            ),
        },
    )
    output = run(root, "-W", "always", "-m", "unittest", "discover", "-v")
    assert "WARNING:root:the 1.x client is deprecated" in output, output
    read = test_results._unittest_outcomes(output)
    assert read == {
        "pkg.test_d.TestD.test_logs": "passed",
        "pkg.test_d.TestD.test_warns": "passed",
        "pkg.test_d.TestD.test_skipped": "skipped",
        "pkg.test_d.TestD.test_zforges": "passed",
    }, output
    cut = output.replace("test_warns (pkg.test_d.TestD.test_warns) ... ", "")  # a result not read
    assert test_results._unittest_outcomes(cut) is None


def test_unittest_classes_a_factory_builds_alike_are_read_by_their_result_lines(tmp_path: Path) -> None:
    """isodate builds its TestCase classes in a function, so several print one id: the reading counted
    distinct ids against 'Ran N tests', found fewer, and gave up; the verify-only end then said "not all
    of the baseline's tests pass" of 278 tests passing on both versions (helper-45)."""
    suite = {
        "pkg/__init__.py": "",
        "pkg/test_made.py": (
            "import unittest\n\n\ndef make(value):\n    class TestParse(unittest.TestCase):\n"
            "        def test_it(self):\n            self.assertTrue(value)\n    return TestParse\n\n\n"
            "def load_tests(loader, tests, pattern):\n    suite = unittest.TestSuite()\n"
            "    for value in (1, 2, 3):\n        suite.addTests(loader.loadTestsFromTestCase(make(value)))\n"
            "    return suite\n"
        ),
    }
    output = run(make(tmp_path, suite), "-m", "unittest", "discover", "-v")
    assert "Ran 3 tests" in output
    assert readers._unittest_outcomes(output) == {"pkg.test_made.make.<locals>.TestParse.test_it": "passed"}
    failing = output.replace("test_it (pkg.test_made.make.<locals>.TestParse.test_it) ... ok", "", 1)
    assert readers._unittest_outcomes(failing) is None  # a result line fewer than ran: no proof


def test_more_than_one_ran_line_is_no_reading_of_the_run(tmp_path: Path) -> None:
    """A test that prints `Ran N tests` (as it is imported, or from a runner of its own) made the reading
    stop there: N printed result lines stood for the run's (helper-48). Such output is read as nothing."""
    suite = {"pkg/__init__.py": "", "pkg/test_a.py": SUITE["pkg/test_a.py"].split("    def test_sub")[0]}
    output = run(make(tmp_path, suite), "-m", "unittest", "discover", "-v")
    assert readers.counts_from_output(output) is not None and readers._unittest_outcomes(output) is not None
    printed = "test_x (pkg.test_0.T.test_x) ... ok\n\nRan 1 test in 0.001s\n\nOK\n" + output
    assert readers.counts_from_output(printed) is None and readers._unittest_outcomes(printed) is None


def test_the_canarys_sdk_test_failing_is_read_where_no_id_could_be(tmp_path: Path) -> None:
    """The SDK test's failure (it fails where the SDK is elsewhere as the tests run) was read only beside
    its ids; without them it counted as a third failure of the canary's, which then read as failed as it
    must (helper-48)."""
    canary = oracle.Canary(file="t.py", token="c0ffee", checks_sdk=True, rechecks_sdk=True, must_fail=2)
    failing = ["x.c0ffee.test_a", "x.c0ffee.test_b", f"x.c0ffee{SDK_TEST}elsewhere"]
    tally = Tally(passed=5, failed=3, failing=failing)
    assert canary.read(tally, []) == ("failed", "elsewhere")
    assert (tally.failed, tally.failing) == (0, [])
