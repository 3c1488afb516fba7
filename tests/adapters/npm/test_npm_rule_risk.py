"""What a JavaScript rule edit brings in (the npm adapter's rule-risk assessor, asked by rule_risk.assess)."""

from __future__ import annotations

import pytest

from agentic_codemod.workflow import rule_risk

BEFORE = (
    'const { connect } = require("acme-sdk");\nconst c = connect(url);\nc.fetch("/x"); // fs.readFile later\n'
)


@pytest.mark.parametrize(
    ("after", "adds", "human"),
    [
        (BEFORE.replace("connect(url)", "connect({ url: url })"), [], False),
        (BEFORE.replace('c.fetch("/x")', 'c.get("/x")'), [], False),
        (BEFORE + 'const e = require("acme-sdk/errors");\n', ["import of acme-sdk/errors"], False),
        (BEFORE + 'const cp = require("child_process");\n', None, True),
        (BEFORE + "eval(code);\n", ["use of eval"], True),
        (BEFORE + "const t = process.env.TOKEN;\n", ["use of process.env"], True),
        (BEFORE + "import('x');\n", None, True),
        (
            BEFORE.replace("connect(url);", "connect(url;"),
            ["an edit that leaves the file's brackets unbalanced"],
            True,
        ),
        (BEFORE.replace('"/x"', '"fs.readFile(eval)"'), [], False),  # words in strings count for nothing
    ],
)
def test_a_javascript_rule_edit_is_assessed(after: str, adds: list[str] | None, human: bool) -> None:
    found, needs_human = rule_risk.assess(BEFORE, after, "javascript")
    assert needs_human is human, found
    if adds is not None:
        assert found == adds


def test_a_language_no_adapter_reads_stays_unchecked() -> None:
    assert rule_risk.assess("a", "b", "cobol") == (["an edit in cobol, which the tool cannot check"], True)
