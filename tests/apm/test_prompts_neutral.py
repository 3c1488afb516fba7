"""The pipeline's own prompts know no ecosystem: the agents in .apm/ and the tool descriptions the model
reads (llm/agent_tools.py) serve a Python and an npm repository alike. Ecosystem knowledge reaches a
model only through the task, the facts the adapter found and the SDK's migration package. The words are
taken from the adapters themselves (names, manifest and lockfile names, source suffixes) plus the test
runners they read."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from agentic_codemod.adapters import registry
from agentic_codemod.llm.agent_tools import AgentTools

ROOT = Path(__file__).resolve().parents[2]
RUNNERS = ("pytest", "unittest", "stestr", "tox", "node --test", "jest", "vitest", "mocha", "getattr")


def ecosystem_words() -> set[str]:
    words = set(RUNNERS)
    for name, adapter in registry().items():
        words.add(name)
        for pattern in (*adapter.file_patterns, *adapter.lockfiles):
            words |= {part for part in pattern.rsplit("/", 1)[-1].split("*") if len(part.strip(".")) > 3}
        words |= set(adapter.test_facts.source_suffixes)
    return words


def mentions(text: str, words: set[str]) -> list[str]:
    found = []
    for word in sorted(words):
        before = "" if word.startswith(".") else r"(?<![\w.-])"  # a suffix ends a file name
        if re.search(rf"{before}{re.escape(word)}(?![\w-])", text, re.IGNORECASE):
            found.append(word)
    return found


def test_the_word_list_would_catch_both_ecosystems() -> None:
    words = ecosystem_words()
    assert {"python", "npm", "pyproject.toml", "package.json", ".py", ".js", "pytest"} <= words
    assert mentions("read pyproject.toml, then run pytest on src/app.py", words) == [
        ".py",
        ".toml",
        "pyproject.toml",
        "pytest",
    ]
    assert mentions("the test command from package.json's scripts", words) == ["package.json"]
    assert mentions("name the file and line; keep the diff small", words) == []


def test_the_agent_definitions_name_no_ecosystem() -> None:
    words = ecosystem_words()
    found = {
        path.relative_to(ROOT).as_posix(): mentions(path.read_text(encoding="utf-8"), words)
        for path in sorted((ROOT / ".apm").rglob("*.md"))
    }
    assert found, "no agent definitions under .apm/"
    assert not {k: v for k, v in found.items() if v}, found


def test_the_tool_descriptions_name_no_ecosystem() -> None:
    words = ecosystem_words()
    tools = ("read_file", "list_files", "search_code", "write_file", "replace_in_file", "show_diff")
    found = {name: mentions(inspect.getdoc(getattr(AgentTools, name)) or "", words) for name in tools}
    assert not {k: v for k, v in found.items() if v}, found
