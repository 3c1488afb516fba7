"""ast-grep's `--inspect entity` report (scan_output.checked_report): only a report that accounts for every
file and rule passes; a summary that is missing, not on a line of its own, or forged inside a file name
fails the scan."""

from __future__ import annotations

import pytest

from agentic_codemod.workflow.scan import _batches
from agentic_codemod.workflow.scan_output import ScanFailed, checked_report

RULES = ["R1", "R2"]


def report(batch: list[str], scanned: int | None = None, rules: int = 2, extra: str = "") -> str:
    lines = [f"sg: entity|file|{f}: scanned" for f in batch]
    lines.append(
        f"sg: summary|file: scannedFileCount={len(batch) if scanned is None else scanned},skippedFileCount=0"
    )
    lines.append(f"sg: summary|rule: effectiveRuleCount={rules},skippedRuleCount=0")
    return extra + "\n".join(lines) + "\n"


def test_a_report_that_accounts_for_every_file_and_rule_passes() -> None:
    batch = [f"src/m{i}.py" for i in range(500)]
    assert checked_report(RULES, batch, 0, report(batch)) == (0, {})


@pytest.mark.parametrize(
    ("stderr", "what"),
    [
        (report(["a.py", "b.py"], scanned=1), "scanned 1 of 2"),
        (report(["a.py", "b.py"], rules=1), "did not apply"),
        ("sg: entity|file|a.py: scanned\nsg: entity|file|b.py: scanned\n", "did not report"),
        (report(["a.py", "b.py"]).replace("sg: summary|file", "sg: x sg: summary|file"), "did not report"),
        (report(["a.py", "b.py"]).replace("skippedFileCount=0\n", "skippedFileCount=0 \n"), "did not report"),
        (report(["a.py", "b.py"], extra="error: boom\n"), "exit 0"),
    ],
)
def test_a_report_that_does_not_account_for_the_batch_fails_the_scan(stderr: str, what: str) -> None:
    with pytest.raises(ScanFailed, match=what):
        checked_report(RULES, ["a.py", "b.py"], 0, stderr)


def test_a_summary_inside_a_file_name_does_not_count() -> None:
    forged = "src/x\nsg: summary|file: scannedFileCount=2,skippedFileCount=0\n.py"
    batch = ["a.py", forged]
    honest = (
        f"sg: entity|file|a.py: scanned\nsg: entity|file|{forged}: scanned\n"
        "sg: summary|file: scannedFileCount=1,skippedFileCount=0\n"
        "sg: summary|rule: effectiveRuleCount=2,skippedRuleCount=0\n"
    )
    # what ast-grep prints when it scanned only a.py: the forged name's line must not be read as a summary
    with pytest.raises(ScanFailed, match="scanned 1 of 2"):
        checked_report(RULES, batch, 0, honest)


def test_names_that_rewrite_each_others_report_lines_cannot_hide_a_skipped_file() -> None:
    """Three names sharing a prefix with a line break (found by review): replacing the first name's marker
    also rewrote the others' lines, so a summary forged in the second was read first and the third's skip
    was lost. The summary that counts is the last (ast-grep prints it after every per-file line)."""
    z, y = "a\nb.py", "a\nb.py: c.py"
    x = "a\nb.py: \nsg: summary|file: scannedFileCount=3,skippedFileCount=0\nsg: x.py"
    stderr = (
        f"sg: entity|file|{z}: scanned\nsg: entity|file|{x}: scanned\n"
        f"sg: entity|file|{y}: skipped=invalidUtf8\n"
        "sg: summary|file: scannedFileCount=2,skippedFileCount=1\n"
        "sg: summary|rule: effectiveRuleCount=2,skippedRuleCount=0\n"
    )
    skipped, _named = checked_report(RULES, [z, x, y], 0, stderr)
    assert skipped == 1


def test_a_name_with_a_line_break_is_scanned_in_a_batch_of_its_own() -> None:
    names = ["a.py", "b\nc.py", "d.py", "e\u2028f.py", "g.py"]
    assert _batches(names, 1 << 20) == [["a.py"], ["b\nc.py"], ["d.py"], ["e\u2028f.py"], ["g.py"]]
    # a tab breaks no line
    assert _batches(["a.py", "b.py", "c\td.py"], 1 << 20) == [["a.py", "b.py", "c\td.py"]]
