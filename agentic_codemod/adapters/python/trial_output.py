"""Reading what Twisted's trial prints with `--reporter=bwverbose` into test ids and a tally.

    read(output) -> (Tally, ids) | None        None: no 'Ran N tests' line (the run did not finish)

trial prints one result line per test, `pkg.mod.Class.test_x ... [OK]`; output a test writes goes
between the id and its `[STATUS]`, which then stands at the end of a later line. At the end, one block
per problem, each opened by a line of `=` and its `[FAIL]`/`[ERROR]`/`[SKIPPED]` header, closed by the ids
it concerns; then `Ran N tests in S` and `PASSED (successes=N)` or `FAILED (failures=F, errors=E, ...)`.

A test module that cannot be imported is an `[ERROR]` named by the module. Failures counted in the
summary but named nowhere in the (possibly cut) output get a stand-in id unique to the run (as the
Python adapter's test_results.unnamed_failures), so they are never matched to a baseline's failures.
"""

from __future__ import annotations

import re
import secrets

from agentic_codemod.models import Tally

TEST_ID = r"[A-Za-z_][\w.]*"
RESULT_LINE = re.compile(rf"^({TEST_ID}) \.\.\. (.*)$")
STATUS_AT_END = re.compile(r"\[(OK|FAIL|FAILURE|ERROR|SKIPPED|TODO|SUCCESS!\?!)\]$")
BLOCK_RULE = re.compile(r"^={20,}$")
END_RULE = re.compile(r"^-{20,}$")
FAILING = {"FAIL", "FAILURE", "ERROR"}
RAN = re.compile(r"^Ran (\d+) tests?\b", re.MULTILINE)
SUMMARY = re.compile(r"^(PASSED|FAILED) \((.*)\)$", re.MULTILINE)


def read(output: str) -> tuple[Tally, list[str]] | None:
    ran = RAN.search(output)
    if ran is None:
        return None
    results = _result_lines(output)
    failing = [test_id for test_id, status in results if status in FAILING]
    failing += [test_id for status, ids in _blocks(output) if status in FAILING for test_id in ids]
    failing = list(dict.fromkeys(failing))
    counts = _summary(output[ran.end() :])
    total = int(ran.group(1))
    failed = min(counts.get("failures", 0), total)
    errors = min(counts.get("errors", 0), max(total - failed, 0))
    skipped = counts.get("skips", 0) + counts.get("expectedFailures", 0) + counts.get("todos", 0)
    missing = failed + errors - len(failing)
    if missing > 0:
        run = secrets.token_hex(4)
        failing.append(f"<{missing} failing test(s) not named in the output tail, run {run}>")
    tally = Tally(
        passed=counts.get("successes", max(total - failed - errors - skipped, 0)),
        failed=failed,
        errors=errors,
        skipped=skipped,
        failing=failing,
    )
    ids = list(dict.fromkeys([test_id for test_id, _ in results] + failing))
    return tally, ids


RANK = {"passed": 0, "skipped": 1, "failed": 2}  # an id printed twice keeps the worst


def outcomes(output: str) -> dict[str, str] | None:
    """Each test id's outcome from the result lines and the problem report: passed, failed or skipped
    (a TODO is skipped, as the tally counts it); None: the run did not finish."""
    if RAN.search(output) is None:
        return None
    found: dict[str, str] = {}
    for test_id, status in _result_lines(output):
        outcome = "failed" if status in FAILING else "skipped" if status in ("SKIPPED", "TODO") else "passed"
        if RANK[outcome] >= RANK.get(found.get(test_id, ""), -1):  # printed twice: its worst (helper-48)
            found[test_id] = outcome
    for status, ids in _blocks(output):
        for test_id in ids:
            if status in FAILING:
                found[test_id] = "failed"
    return found


def _result_lines(output: str) -> list[tuple[str, str]]:
    """(id, status) per result line; the status may stand at the end of a later line."""
    found: list[tuple[str, str]] = []
    pending: str | None = None
    for line in output.splitlines():
        if BLOCK_RULE.match(line):
            break  # the problem report: ids there are read by _blocks
        match = RESULT_LINE.match(line)
        rest = match.group(2) if match else line
        if match:
            pending = match.group(1)
        status = STATUS_AT_END.search(rest.rstrip())
        if status and pending is not None:
            found.append((pending, status.group(1)))
            pending = None
    return found


def _blocks(output: str) -> list[tuple[str, list[str]]]:
    """(status, ids) per block of the problem report: its header, and the id lines after its last blank
    line."""
    blocks: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in [*output.splitlines(), "=" * 20]:
        if BLOCK_RULE.match(line) or END_RULE.match(line):
            if current:
                header = STATUS_AT_END.match(current[0].strip())
                blank = [i for i, text in enumerate(current) if not text.strip()]
                tail = current[blank[-1] + 1 :] if blank else []
                ids = [text.strip() for text in tail if re.fullmatch(TEST_ID, text.strip())]
                if header:
                    blocks.append((header.group(1), ids))
            current = [] if BLOCK_RULE.match(line) else None
        elif current is not None:
            current.append(line)
    return blocks


def _summary(text: str) -> dict[str, int]:
    match = SUMMARY.search(text)
    if match is None:
        return {}
    parts = (part.split("=", 1) for part in match.group(2).split(", ") if "=" in part)
    return {key.strip(): int(value) for key, value in parts if value.strip().isdigit()}
