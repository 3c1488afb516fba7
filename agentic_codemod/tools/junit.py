"""One JUnit <testcase> into a tally: skipped, failed (<failure>), error (<error>) or passed. Every JUnit or
xunit report is counted by this one rule (workflow/verify.py, and each adapter's result reader)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from agentic_codemod.models import Tally


def count_case(tally: Tally, test_id: str, case: ET.Element) -> None:
    if case.find("skipped") is not None:
        tally.skipped += 1
    elif case.find("failure") is not None:
        tally.failed += 1
        tally.failing.append(test_id)
    elif case.find("error") is not None:
        tally.errors += 1
        tally.failing.append(test_id)
    else:
        tally.passed += 1
