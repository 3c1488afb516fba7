"""JUnit / xunit reports, read the same way for every runner that writes one (workflow/verify.py, and each
adapter's result reader). Nothing here knows a runner.

    count_case(tally, test_id, case)   one <testcase> into a tally: skipped, failed (<failure>), error
                                       (<error>) or passed
    read_junit(path) -> Tally | None   every <testcase>, ids "<classname>::<name>"; None: unreadable
    junit_case_ids(path) -> [id, ...]  the same ids, passing ones too
    case_statuses(path) -> {id: status} | None   passed | failed | skipped, per id (a case whose class name
                                       says nothing, node's, named with its suites); None: unreadable
    lost_passes(before, after) -> ([(id, status)], renamed)   the ids that passed before and were
                                       skipped or gone after; ids pytest respelled are not lost
    report_root(path) -> Element | None  the document, read only as a regular file (no link, FIFO or
                                       device) of at most MAX_TEST_REPORT_BYTES: the tests wrote it
    parse(data) -> Element | None      a report's bytes or text as a document; None: not XML, or
                                       nested deeper than JUNIT_MAX_DEPTH
    document(outcomes, suite) -> Element   {id: status} as a JUnit document (runners without one)

ElementTree parses any depth, but its writer and every recursive walk over the tree (a nested
<testsuite> reader) recurse once per level: a report of a few thousand nested elements, which a test can
write in 35 KB, would end the run with a RecursionError. A real report is a handful of levels deep.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from agentic_codemod.config import JUNIT_MAX_DEPTH, MAX_TEST_REPORT_BYTES
from agentic_codemod.models import Tally
from agentic_codemod.tools.untrusted_file import read_regular


def count_case(tally: Tally, test_id: str, case: ET.Element) -> None:
    """A <failure> or <error> counts whatever <skipped> stands beside it: pytest writes both into one
    <testcase> when a test skipped in its call errors in teardown (a module fixture torn down after the
    module's last test, a skipped one), or a unittest subTest failed before the test skipped itself; pytest
    counts it failed and exits 1 (read skipped first, such a run was green)."""
    if case.find("failure") is not None:
        tally.failed += 1
        tally.failing.append(test_id)
    elif case.find("error") is not None:
        tally.errors += 1
        tally.failing.append(test_id)
    elif case.find("skipped") is not None:
        tally.skipped += 1
    else:
        tally.passed += 1


def junit_case_ids(path: Path) -> list[str]:
    root = report_root(path)
    if root is None:
        return []
    return [f"{c.get('classname', '')}::{c.get('name', '')}" for c in root.iter("testcase")]


def case_statuses(path: Path, max_bytes: int = MAX_TEST_REPORT_BYTES) -> dict[str, str] | None:
    """Each <testcase>'s outcome by id: skipped, failed (<failure> or <error>) or passed, as count_case
    counts it; a test id listed twice keeps its worst outcome (failed, then skipped, then passed)."""
    root = report_root(path, max_bytes)
    if root is None:
        return None
    out: dict[str, str] = {}
    for case, suites in _cases_in_suites(root):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.get("classname", "") in PLACEHOLDER_CLASSNAMES and suites:
            test_id = " > ".join([*suites, test_id])
        if case.find("failure") is not None or case.find("error") is not None:
            status = "failed"  # whatever <skipped> beside it (count_case)
        elif case.find("skipped") is not None:
            status = "skipped"
        else:
            status = "passed"
        if _WORST[status] > _WORST.get(out.get(test_id, ""), -1):
            out[test_id] = status
    return out


_WORST = {"passed": 0, "skipped": 1, "failed": 2}
# Class names that say nothing of where a test is: node's JUnit reporter writes classname="test" for every
# case, its describe blocks only as the <testsuite> elements around it. An id from them alone made
# `describe("on 1.x") > it("x")` and `describe("on 2.x") > it("x")` one test, so a test that passed at
# baseline and was skipped after the change read as kept (the other one passed): such ids carry the names
# of the suites around them.
PLACEHOLDER_CLASSNAMES = frozenset({"", "test"})


def _cases_in_suites(root: ET.Element) -> list[tuple[ET.Element, list[str]]]:
    """Every <testcase>, level by level, with the names of the <testsuite> elements around it (no
    recursion: a report nests as deep as parse lets it)."""
    found: list[tuple[ET.Element, list[str]]] = []
    level: list[tuple[ET.Element, list[str]]] = [
        (root, [root.get("name", "")] if root.tag == "testsuite" else [])
    ]
    while level:
        deeper = []
        for node, suites in level:
            for child in node:
                if child.tag == "testcase":
                    found.append((child, [s for s in suites if s]))
                else:
                    inner = [*suites, child.get("name", "")] if child.tag == "testsuite" else suites
                    deeper.append((child, inner))
        level = deeper
    return found


def lost_passes(before: dict[str, str], after: dict[str, str]) -> tuple[list[tuple[str, str]], int]:
    """The tests that passed in `before` and were skipped, or are not in `after` at all (their status
    there, or "not in the report"), in `before`'s order; a failure is the oracle's to judge, not lost.
    Gone ids are matched by a whole family pytest respelled: pytest 8 suffixes duplicate parameter
    ids that end in a digit with `_N` where pytest 7 wrote `N` (tomlkit's toml-test suite, 210 ids on a
    pytest bump: `spec-array-10`, `spec-array-11` became `spec-array-1_0`, `spec-array-1_1`). A family
    is new passing ids `X_0` .. `X_k` (k >= 1, every one, as pytest numbers them) whose old spellings
    `X0` .. `Xk` are all gone; a lone `X1_0` or `1_000` matches nothing. Returns the lost tests and how
    many ids were matched that way."""
    lost = [
        (test_id, after.get(test_id, "not in the report"))
        for test_id, status in before.items()
        if status == "passed" and after.get(test_id) not in ("passed", "failed")
    ]
    gone = {t for t, s in lost if s == "not in the report"}
    respelled = _respelled_families([t for t, s in after.items() if s == "passed" and t not in before], gone)
    kept = [(t, s) for t, s in lost if t not in respelled]
    return kept, len(lost) - len(kept)


def _respelled_families(new: list[str], gone: set[str]) -> set[str]:
    """The gone ids whose whole duplicate family is among the new ids under pytest 8's spelling."""
    families: dict[tuple[str, str], dict[int, str]] = {}
    for test_id in new:
        head, bracket, params = test_id.partition("[")
        for suffix in _DUPLICATE_SUFFIX.finditer(params):
            number = suffix.group(1)
            if number == str(int(number)):  # pytest writes 0, 1, ..., never 00
                key = (head + bracket + params[: suffix.start()], params[suffix.end() :])
                families.setdefault(key, {})[int(number)] = test_id
    matched: set[str] = set()
    for (prefix, rest), members in families.items():
        old = [f"{prefix}{n}{rest}" for n in range(len(members))]
        if len(members) >= 2 and sorted(members) == list(range(len(members))) and gone.issuperset(old):
            matched.update(old)
    return matched


_DUPLICATE_SUFFIX = re.compile(r"(?<=\d)_(\d{1,6})(?=-|\]$)")  # `1_0`: pytest 8's spelling of pytest 7's `10`


def read_junit(path: Path) -> Tally | None:
    root = report_root(path)
    if root is None:
        return None
    counts = Tally()
    for case in root.iter("testcase"):
        count_case(counts, f"{case.get('classname', '')}::{case.get('name', '')}", case)
    return counts


def document(outcomes: dict[str, str], suite: str) -> ET.Element:
    """A JUnit document of `outcomes` (test id -> passed | failed | skipped), one <testcase> each, the id
    split at its last dot into class name and name: what case_statuses reads back, for runners whose
    results are no JUnit report (an ecosystem's TestFacts.case_report)."""
    root = ET.Element("testsuites")
    holder = ET.SubElement(root, "testsuite", name=suite)
    for test_id, status in outcomes.items():
        head, _, params = test_id.partition(" ")  # a unittest subtest's `(i=1)` after its id
        classname, _, name = head.rpartition(".")
        case = ET.SubElement(
            holder,
            "testcase",
            classname=xml_text(classname or suite),
            name=xml_text(name + (" " + params if params else "")),
        )
        if status != "passed":
            ET.SubElement(case, "failure" if status == "failed" else "skipped")
    return root


XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """A test's name as XML may hold it: ElementTree writes a control character (an escape sequence in a
    title) as is, and the document would then be unreadable; replaced the same way in every run."""
    return XML_INVALID.sub("\ufffd", text)


def report_root(path: Path, max_bytes: int = MAX_TEST_REPORT_BYTES) -> ET.Element | None:
    """The report's document: a regular file (the tests wrote the reports folder: never through a link,
    never a FIFO or device) of at most `max_bytes`; None otherwise or unparseable."""
    data = read_regular(path, max_bytes)
    return None if data is None else parse(data)


def parse(data: bytes | str) -> ET.Element | None:
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    level = [root]
    for _ in range(JUNIT_MAX_DEPTH):  # level by level, never recursing
        level = [child for node in level for child in node]
        if not level:
            return root
    return None
