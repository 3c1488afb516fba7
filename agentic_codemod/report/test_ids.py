"""Baseline versus after, per test id: introduced, pre-existing, fixed, or unchanged.

    compare(run_dir, manifest) -> TestTable

The ids come from the JUnit reports the run kept (reports/junit-<phase>.xml, the canary already removed)
when there are any; otherwise from the failing ids in run.json (the other tests then have no id).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentic_codemod.config import REPORT_CELL_CHARS, REPORT_READ_BYTES, REPORT_TEST_ROWS
from agentic_codemod.models import RunManifest, Tally, VerificationResult
from agentic_codemod.report.artifacts_read import cut
from agentic_codemod.tools.junit import case_statuses

ORDER = {"introduced": 0, "pre-existing": 1, "fixed": 2, "": 3}


@dataclass
class TestRow:
    test_id: str
    baseline: str  # passed | failed | skipped | absent | unknown
    after: str
    mark: str  # introduced | pre-existing | fixed | ""


@dataclass
class TestTable:
    baseline_phase: str | None = None
    after_phase: str | None = None
    baseline_tally: Tally | None = None
    after_tally: Tally | None = None
    source: str = ""  # where the ids came from
    rows: list[TestRow] = field(default_factory=list)
    hidden: int = 0  # rows over REPORT_TEST_ROWS, not shown

    def count(self, mark: str) -> int:
        return sum(1 for r in self.rows if r.mark == mark)


def compare(run_dir: Path, manifest: RunManifest) -> TestTable:
    baseline = next((v for v in manifest.verifications if v.phase == "baseline"), None)
    after = next((v for v in reversed(manifest.verifications) if v.phase != "baseline"), None)
    table = TestTable(
        baseline_phase=baseline.phase if baseline else None,
        after_phase=after.phase if after else None,
        baseline_tally=baseline.tests if baseline else None,
        after_tally=after.tests if after else None,
    )
    before_ids = _statuses(run_dir, baseline)
    after_ids = _statuses(run_dir, after)
    from_junit = before_ids[1] or after_ids[1]
    table.source = "JUnit reports (reports/junit-<phase>.xml)" if from_junit else "failing ids in run.json"
    rows = [
        TestRow(cut(test_id, REPORT_CELL_CHARS), b, a, _mark(b, a))
        for test_id in dict.fromkeys([*before_ids[0], *after_ids[0]])
        for b, a in [(_status(before_ids, baseline, test_id), _status(after_ids, after, test_id))]
    ]
    rows.sort(key=lambda r: (ORDER[r.mark], r.test_id))
    table.rows, table.hidden = rows[:REPORT_TEST_ROWS], max(len(rows) - REPORT_TEST_ROWS, 0)
    return table


def _mark(before: str, after: str) -> str:
    if after == "failed":
        return "pre-existing" if before == "failed" else "introduced"
    return "fixed" if before == "failed" and after == "passed" else ""


def _status(found: tuple[dict[str, str], bool], result: VerificationResult | None, test_id: str) -> str:
    statuses, from_junit = found
    if result is None:
        return "not run"
    if test_id in statuses:
        return statuses[test_id]
    return "absent" if from_junit else "unknown"


def _statuses(run_dir: Path, result: VerificationResult | None) -> tuple[dict[str, str], bool]:
    """({test id: status}, True when read from a JUnit report)."""
    if result is None:
        return {}, False
    junit = run_dir / "reports" / f"junit-{result.phase}.xml"
    read = case_statuses(junit, REPORT_READ_BYTES)
    if read is not None:
        return read, True
    failing = result.tests.failing if result.tests else []
    return dict.fromkeys(failing, "failed"), False
