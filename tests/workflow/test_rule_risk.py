"""What a rule's edit brings into a file (workflow/rule_risk.py): before/after strings, one case a line."""

from __future__ import annotations

import pytest

from agentic_codemod.models import RuleEdit
from agentic_codemod.workflow.rule_risk import assess, provenance_gate

BASE = """\
import acme.errors
from acme import errors
import os

TIMEOUT = 5


def load(client):
    return client.fetch("x", timeout=TIMEOUT)
"""


@pytest.mark.parametrize(
    ("before", "after", "adds", "human"),
    [
        # the acme rules: renames inside a package the file already imports, calls inside functions
        (BASE, BASE.replace("acme.errors", "acme.exceptions"), ["import of acme.exceptions"], False),
        (
            BASE,
            BASE.replace("import errors", "import exceptions as errors"),
            ["import of acme.exceptions"],
            False,
        ),
        (BASE, BASE.replace("client.fetch", "client.get"), [], False),
        (BASE, BASE.replace("timeout=", "timeout_s="), [], False),
        (BASE, BASE.replace("import os\n", ""), [], False),
        # a new package, import-time code, risky APIs
        (BASE, BASE.replace("import os", "import os\nimport evil"), ["import of evil, a package"], True),
        (BASE, BASE + "\nprint('hi')\n", ["a call of print at import time"], True),
        (BASE, BASE.replace("TIMEOUT = 5", "TIMEOUT = int('5')"), ["a call of int at import time"], True),
        (BASE, BASE + "\n@register()\ndef g(): pass\n", ["a call of register at import time"], True),
        (BASE, BASE + "\ndef g(x=setup()): pass\n", ["a call of setup at import time"], True),
        (BASE, BASE + "\nclass C:\n    X = boot()\n", ["a call of boot at import time"], True),
        (BASE, BASE.replace('"x"', 'os.system("curl x | sh")'), ["use of os.system"], True),
        (BASE, BASE.replace("import os", "from os import system as run"), ["use of os.system"], True),
        (BASE, BASE.replace('"x"', 'eval("1")'), ["use of eval"], True),
        (BASE, BASE.replace('"x"', 'open("/etc/passwd").read()'), ["use of open"], True),
        (BASE, BASE.replace('"x"', '__import__("socket")'), ["use of __import__"], True),
        (BASE, BASE + '\n__import__("os").system("id")\n', ["a call of os.system at import time"], True),
        (BASE, BASE + '\nP = __import__("os", globals()).sep\n', ["a call of globals at import time"], True),
        (BASE, BASE.replace("import os", "import os\nimport subprocess as sp"), ["use of subprocess"], True),
        (BASE, BASE.replace("return", "import urllib.request\n    return"), ["use of urllib.request"], True),
        # a file the tool cannot check
        (BASE, BASE + "\ndef (:\n", ["leaves the file unparseable"], True),
        ("print 'py2'\n", "print 'py3'\n", ["cannot parse"], True),
    ],
)
def test_what_an_edit_adds(before: str, after: str, adds: list[str], human: bool) -> None:
    found, needs_human = assess(before, after, "python")
    assert needs_human is human, found
    for expected in adds:
        assert any(expected in line for line in found), found
    if not adds:
        assert found == []


def test_an_edit_in_a_language_the_tool_cannot_check_needs_a_human() -> None:
    assert assess("a", "b", "rust") == (["an edit in rust, which the tool cannot check"], True)


def test_the_provenance_gate_shows_every_addition_and_never_fails() -> None:
    edits = [
        RuleEdit(rule="ACME001", file="src/a.py", count=2, adds=["import of acme.exceptions"]),
        RuleEdit(rule="ACME666", file="src/b.py", count=1, adds=["use of os.system"], requires_human=True),
        RuleEdit(rule="ACME003", file="src/c.py", count=4),
    ]
    gate = provenance_gate(edits)
    assert gate.passed
    assert [(f.severity, f.path) for f in gate.findings] == [("info", "src/a.py"), ("warning", "src/b.py")]
    assert gate.findings[1].message == "rule ACME666 edit adds use of os.system: a human must check it"
    assert [f.code for f in gate.findings] == ["rule_edits.adds"] * 2


@pytest.mark.parametrize(
    "wrap",
    [
        "try:\n    pass\nexcept ImportError:\n    {}\n",
        "def f():\n    if True:\n        {}\n",
        "class C:\n    {}\n",
        "match x:\n    case 1:\n        {}\n",
        "with open('f') as h:\n    {}\n",
    ],
    ids=["except-handler", "function-if", "class", "match-case", "with"],
)
def test_an_import_added_at_any_statement_depth_is_seen(wrap: str) -> None:
    before = wrap.format("pass")
    after = wrap.format("import socket")
    adds, human = assess(before, after, "python")
    assert "import of socket, a package the file did not import" in adds and human


def test_a_statement_walked_for_another_file_is_resolved_through_this_files_imports() -> None:
    """Top-level statements are walked once per exact text; what their names mean comes from each file."""
    body = "def run():\n    return o.system('id')\n"
    assert assess("import os as o\n", "import os as o\n" + body, "python") == (["use of os.system"], True)
    assert assess("import json as o\n", "import json as o\n" + body, "python") == ([], False)


def test_a_file_with_carriage_returns_is_assessed_like_any_other() -> None:
    before = "import os\r\n\r\ndef f():\r\n    return 1\r\n"
    after = before.replace("return 1", "return os.system('id')")
    assert assess(before, after, "python") == (["use of os.system"], True)
    assert assess("x = 1\r", "x = 1\rprint(x)\r", "python") == (["a call of print at import time"], True)


def test_a_file_that_starts_with_a_byte_order_mark_is_judged_like_any_other() -> None:
    """helper-29: a valid .py starting with a UTF-8 BOM was "cannot parse (U+FEFF)": a rule's plain edit
    of it went to a human, exit 3."""
    before = "\ufefffrom acme.errors import NotFound\n"
    after = "\ufefffrom acme.exceptions import NotFound\n"
    assert assess(before, after, "python") == assess(before[1:], after[1:], "python")
    assert assess(before, after, "python") == (["import of acme.exceptions.NotFound"], False)
