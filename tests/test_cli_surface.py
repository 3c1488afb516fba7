"""The CLI's public surface, and its start-up path kept free of heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

import agentic_codemod
from agentic_codemod.cli import build_parser

HEAVY = ("agno", "openai", "pydantic", "httpx", "rich", "yaml", "typesafe_sdk")


def test_building_the_parser_imports_nothing_heavy() -> None:
    code = (
        "import json, sys; from agentic_codemod.cli import build_parser; build_parser();"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []


def test_subcommands() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(sub.choices) == ["fleet", "gate", "init", "lessons", "publish", "report", "run"]


def test_public_names() -> None:
    assert agentic_codemod.__all__ == ["__version__"]


def test_lazy_constants_match_their_sources() -> None:
    from agentic_codemod.experience import cli as lessons_cli
    from agentic_codemod.experience import records
    from agentic_codemod.workflow import publish_cli, runner

    assert (lessons_cli.PROPOSED, lessons_cli.PUBLISHED) == (records.PROPOSED, records.PUBLISHED)
    assert publish_cli.DEFAULT_LABELS == runner.DEFAULT_LABELS
