"""Docs that name tests must name tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_ID = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`")


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")}


@pytest.mark.parametrize("doc", ["docs/failure-modes.md"])
def test_every_test_named_in_the_doc_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    named = TEST_ID.findall(text)
    assert len(named) >= 15, "the failure table names its proving tests"
    missing = [
        f"{file}::{name}"
        for file, name in named
        if not (ROOT / file).exists() or name not in defined_tests(ROOT / file)
    ]
    assert not missing, f"{doc} names tests that do not exist: {missing}"
