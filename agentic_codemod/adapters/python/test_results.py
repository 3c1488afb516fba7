"""What a Python test run said, with test ids (adapters/types.py TestFacts.read_results and friends).

    read_results(command, copy, report, output) -> (Tally | None, [test id, ...])
        pytest      the JUnit XML report ({junit}); ids "<classname>::<name>"
        unittest    `-v` output: 'Ran N tests', 'OK' / 'FAILED (failures=F, errors=E)', failing tests named
                    from the result lines and report headers; ids: every result line's, when each test
                    that ran has one (else none: a passing or skipped test is never named by guess)
        stestr      its own subunit record of the run in the copy (.stestr/), whatever was printed
        trial       its `--reporter=bwverbose` result lines and problem report (trial_output.py)
    missing_dependency(output) -> "ModuleNotFoundError: No module named 'x'" | None
        when a test module could not be imported or collected for want of a module
    scrub(output, token) -> the output without the canary's report (pytest's section, FAILED line and
        count; unittest's FAIL block and count; trial's problem block)

None when there is no readable report or summary: a run whose results cannot be read proves nothing.
"""

from __future__ import annotations

import re
import secrets
import xml.etree.ElementTree as ET
from pathlib import Path

from agentic_codemod.adapters.python import subunit, trial_output
from agentic_codemod.adapters.types import TestCommand
from agentic_codemod.config import MAX_TEST_REPORT_BYTES
from agentic_codemod.models import Tally
from agentic_codemod.tools.junit import document, junit_case_ids, read_junit
from agentic_codemod.tools.untrusted_file import read_regular


def read_results(
    command: TestCommand, copy: Path, report: Path | None, output: str
) -> tuple[Tally | None, list[str]]:
    if command.runner == "stestr":  # its own record of the run, in the copy: subunit
        return read_stestr(copy)
    if command.runner == "trial":  # its result lines and problem report
        return trial_output.read(output) or (None, [])
    if report is not None and report.is_file():
        return read_junit(report), junit_case_ids(report)
    return counts_from_output(output), list(_unittest_outcomes(output) or ())


def case_report(
    command: TestCommand, copy: Path, report: Path | None, output: str, token: str
) -> ET.Element | None:
    """Each test's outcome as a JUnit document for the test_ids gate (TestFacts.case_report), the canary's
    left out, for the runners without a JUnit report: unittest's `-v` result lines, stestr's subunit
    record, trial's result lines. Without it the gate had no ids for them: a test that passed at baseline
    and was skipped on the target, beside one skipped at baseline running instead, passed as many tests
    as before (helper-20's review: green, exit 0). None for pytest (its own report is kept) and where
    nothing can be read."""
    if command.runner == "unittest":
        read: dict[str, str] | None = _unittest_outcomes(output)
    elif command.runner == "stestr":
        stream = subunit.latest_stream(copy / ".stestr")
        inside = stream is not None and stream.resolve().is_relative_to(copy.resolve())
        data = read_regular(stream, MAX_TEST_REPORT_BYTES) if stream is not None and inside else None
        read = None if data is None else subunit.outcomes(data)
    elif command.runner == "trial":
        read = trial_output.outcomes(output)
    else:
        return None
    if read is None:
        return None
    return document({t: s for t, s in read.items() if token not in t}, command.runner)


def reports_each_test(command: TestCommand) -> bool:
    """Every runner here gives each test's outcome in every run: pytest its JUnit report, the others
    through case_report (the tool runs unittest with `-v`)."""
    return True


# A `-v` result line's start: 'name (id) ... ' (a subtest's '(params)' after the id; a class a function
# builds has `<locals>` in its id), its status after
# the dots or on a later line of its own (output the test wrote to the same stream comes between: a
# logging warning, a DeprecationWarning); or 'name (id)' then the docstring line with ' ... '.
UNITTEST_START = re.compile(r"^ *(\S+) \(([\w.<>]+)\)((?: \([^\n]*?\))?)(?: \.\.\. ?(.*))?$")
UNITTEST_STATUS_TEXT = re.compile(r"(ok|FAIL|ERROR|unexpected success|expected failure|skipped\b.*)$")
UNITTEST_STATUS = {"ok": "passed", "FAIL": "failed", "ERROR": "failed", "unexpected success": "failed"}
_RANK = {"passed": 0, "skipped": 1, "failed": 2}


def _unittest_outcomes(output: str) -> dict[str, str] | None:
    """Each `-v` result's test id and outcome (an expected failure and a skip: skipped); an id printed
    twice keeps its worst outcome (a line the tests print cannot turn a skip into a pass; classes a
    factory builds alike print one id for several tests: each result line counts). None without a
    'Ran N tests' line (the run did not finish), or where fewer results were read than tests ran: a
    result whose status cannot be found (cut output, a line this reading does not model) leaves the gate
    without proof (test_ids.unread), never with a test silently missing from one phase."""
    ran = _ran(output)
    if not ran:
        return None
    found: dict[str, str] = {}
    results = 0  # result lines of tests (not subtests): ids repeat where a factory builds classes alike
    pending: tuple[str, str, str] | None = None
    for line in output[: ran.start()].splitlines():
        start = UNITTEST_START.match(line)
        if start and start.group(4) is not None:  # 'name (id) ... ' and what follows on the line
            pending = (start.group(1), start.group(2), start.group(3))
            rest = start.group(4)
        elif start and pending is None:  # 'name (id)': its docstring line with the dots comes next
            pending = (start.group(1), start.group(2), start.group(3))
            continue
        elif pending is not None:
            rest = line.rpartition(" ... ")[2] if " ... " in line else line
        else:
            continue
        status = UNITTEST_STATUS_TEXT.fullmatch(rest.strip()) if pending is not None else None
        if status and pending is not None:
            test_id = _unittest_id(*pending)
            outcome = UNITTEST_STATUS.get(status.group(1), "skipped")
            if _RANK[outcome] >= _RANK.get(found.get(test_id, ""), -1):
                found[test_id] = outcome
            results += not test_id.endswith(")") or " (" not in test_id  # subtests' lines come in addition
            pending = None
    return found if results >= int(ran.group(1)) else None


def read_stestr(copy: Path) -> tuple[Tally | None, list[str]]:
    """The tally and test ids of the newest run stestr recorded in the copy (.stestr/), or (None, [])
    when there is none, it leads out of the copy, or is too large to read."""
    stream = subunit.latest_stream(copy / ".stestr")
    if stream is None or not stream.resolve().is_relative_to(copy.resolve()):
        return None, []
    data = read_regular(stream, MAX_TEST_REPORT_BYTES)  # never through a link, never a FIFO
    read = None if data is None else subunit.read_stream(data)
    return read if read is not None else (None, [])


def counts_from_output(output: str) -> Tally | None:
    """unittest prints 'Ran N tests' then 'OK' or 'FAILED (failures=1, errors=2)'; an unexpected success is a
    failure, an expected failure none (unittest's own exit says the same). The failing tests are
    named by id ('pkg.mod.Class.test_x', a subtest with its parameters) from the `-v` result lines
    ('test_x (pkg.mod.Class.test_x) ... FAIL') and the report headers ('ERROR: test_x (...)'); when the
    output was cut and fewer ids than failures are left, `failing` says so (`unnamed_failures`)."""
    ran = _ran(output)
    if not ran:
        return None
    total = int(ran.group(1))
    summary = output[ran.end() :]
    # `expected failures=N` is no failure; `unexpected successes=N` is one: an @expectedFailure test that
    # passes on the target makes unittest exit 1 (Python >= 3.11), so the repository's CI goes red
    failures = sum(int(n) for n in re.findall(r"(?:\(|, )(?:failures|unexpected successes)=(\d+)", summary))
    errors = sum(int(n) for n in re.findall(r"(?:\(|, )errors=(\d+)", summary))
    skipped = sum(int(n) for n in re.findall(r"(?:\(|, )skipped=(\d+)", summary))
    failed, errors = min(failures, total), min(errors, max(total - failures, 0))
    ids = [_unittest_id(*m) for m in UNITTEST_RESULT.findall(output) + UNITTEST_HEADER.findall(output)]
    failing = list(dict.fromkeys(ids))
    missing = failed + errors - len(failing)
    failing += [unnamed_failures(missing)] if missing > 0 else []
    return Tally(
        passed=max(total - failed - errors - skipped, 0),
        failed=failed,
        errors=errors,
        skipped=skipped,
        failing=failing,
    )


RAN = re.compile(r"^Ran (\d{1,9}) tests?", re.MULTILINE)


def _ran(output: str) -> re.Match[str] | None:
    """unittest's one 'Ran N tests' line, or None: none (the run did not finish), or more than one. A
    test can print one as it is imported, above the real results, or run a runner of its own: the
    reading that stopped at the first took N printed result lines for the run's and never read the
    canary's (helper-48: a copy of the SDK first on sys.path then read green, exit 0)."""
    found = list(RAN.finditer(output))
    return found[0] if len(found) == 1 else None


def unnamed_failures(count: int) -> str:
    """The stand-in id for failures whose names were cut from the output: unique to this run, so it never
    matches a baseline's id and classify() never calls such failures pre-existing."""
    return f"<{count} failing test(s) not named in the output tail, run {secrets.token_hex(4)}>"


# `-v` result lines: 'name (id) ... FAIL', a docstring line between, a subtest's '(params)' after.
UNITTEST_RESULT = re.compile(
    r"^ *(\S+) \(([\w.<>]+)\)((?: \([^\n]*\))?)(?:\n[^\n]*)? \.\.\. (?:FAIL|ERROR|unexpected success)$",
    re.MULTILINE,
)
# Report headers: 'FAIL: name (id)', 'ERROR: name (id) (params)', 'UNEXPECTED SUCCESS: name (id)'.
UNITTEST_HEADER = re.compile(
    r"^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([\w.<>]+)\)((?: \([^\n]*\))?)$", re.MULTILINE
)
# What an import of a test module that failed on a missing module prints (pytest, unittest, stestr,
# trial: its loader in the traceback).
MISSING_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?")
IMPORT_FAILURE = re.compile(
    r"ImportError while importing test module|ERROR collecting|error(?:s)? during collection"
    r"|Failed to import test module|unittest\.loader\._FailedTest|Failures during discovery"
    r"|trial/runner\.py\", line \d+, in load"
)


def _unittest_id(name: str, where: str, params: str) -> str:
    """Python >= 3.11 prints the full id in the parentheses; older versions print the class."""
    test_id = where if where.endswith(f".{name}") else f"{where}.{name}"
    return test_id + params


def missing_test_module(output: str) -> str | None:
    """'ModuleNotFoundError: No module named 'x'' when a test module could not be imported or collected
    for want of a module (a missing test dependency), else None."""
    if not IMPORT_FAILURE.search(output):
        return None
    found = MISSING_MODULE.search(output)
    return f"ModuleNotFoundError: No module named '{found.group(1)}'" if found else None


PYTEST_SECTION = re.compile(r"^_{3,} .* _{3,}\s*$")
# One problem of trial's report: a rule of `=`, `[FAIL]` or `[ERROR]`, the traceback, the test ids.
TRIAL_BLOCK = re.compile(r"(?ms)^={20,}\n\[(?:FAIL|FAILURE|ERROR)\]\n.*?(?=^={20,}$|^-{20,}$|\Z)")


def scrub(output: str, token: str) -> str:
    """The output without the canary's own report (pytest's section, FAILED line and count; unittest's
    FAIL block and count; trial's problem block)."""
    cut = {"FAILED": 0, "FAIL": 0, "ERROR": 0}  # the canary's own lines: its tests' counts leave the summary

    def trial(block: re.Match[str]) -> str:
        if token not in block.group(0):
            return block.group(0)
        cut["ERROR" if block.group(0).lstrip("=\n").startswith("[ERROR]") else "FAIL"] += 1
        return ""

    output = TRIAL_BLOCK.sub(trial, output)
    out: list[str] = []
    skip, block_lines = "", 0
    for line in output.splitlines(keepends=True):
        if skip == "pytest" and (PYTEST_SECTION.match(line) or line.startswith("===")):
            skip = ""
        elif skip == "unittest":
            block_lines += 1
            if line.startswith("===") or (line.startswith("---") and block_lines > 1):
                skip = ""
        if skip:
            continue
        if token in line:
            if PYTEST_SECTION.match(line):
                skip = "pytest"
            elif line.startswith(("FAIL: ", "ERROR: ")):
                skip, block_lines = "unittest", 0
                cut[line.split(":", 1)[0]] += 1
                if out and out[-1].startswith("==="):
                    out.pop()
            elif line.startswith("FAILED "):
                cut["FAILED"] += 1
            continue
        out.append(line)
    text = "".join(out)
    pytest_cut = cut["FAILED"] or 1  # -q without the short summary lists none: the canary's one failure
    text = re.sub(r"(?m)^(=* ?)(\d+) failed(, )?", lambda m: _failures_fewer(m, pytest_cut), text)
    unittest_cut = {"failures": cut["FAIL"] or 1, "errors": cut["ERROR"]}
    return re.sub(r"(?m)^FAILED \((.*)\)$", lambda m: _unittest_fewer(m, unittest_cut), text)


def _failures_fewer(match: re.Match[str], cut: int) -> str:
    left = max(int(match.group(2)) - cut, 0)
    return match.group(1) + (f"{left} failed{match.group(3) or ''}" if left else "")


def _unittest_fewer(match: re.Match[str], cut: dict[str, int]) -> str:
    parts = dict(p.split("=", 1) for p in match.group(1).split(", ") if "=" in p)
    for key, n in cut.items():
        if parts.get(key, "0").isdigit() and int(parts.get(key, "0")) > 0:
            parts[key] = str(max(int(parts[key]) - n, 0))
    left = ", ".join(f"{k}={v}" for k, v in parts.items() if v != "0")
    if any(parts.get(k, "0") != "0" for k in ("failures", "errors", "unexpected successes")):
        return f"FAILED ({left})"
    if "successes" in parts:  # trial's summary
        return f"PASSED ({left})"
    return f"OK ({left})" if left else "OK"
