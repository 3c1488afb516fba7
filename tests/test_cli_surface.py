"""The CLI's public surface, and its start-up path kept free of heavy imports."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import agentic_codemod
from agentic_codemod.cli import build_parser, main

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
    from agentic_codemod.publish import cli as publish_cli
    from agentic_codemod.publish import runner

    assert (lessons_cli.PROPOSED, lessons_cli.PUBLISHED) == (records.PROPOSED, records.PUBLISHED)
    assert publish_cli.DEFAULT_LABELS == runner.DEFAULT_LABELS


def _leaf_parsers(parser: argparse.ArgumentParser, path: str = "") -> Iterator[tuple[str, Any]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
    for sub in subs:
        for name, child in sub.choices.items():
            yield from _leaf_parsers(child, f"{path} {name}".strip())


def test_every_subcommand_dispatches_through_a_handler() -> None:
    leaves = dict(_leaf_parsers(build_parser()))
    assert {"run", "fleet", "gate semantic", "gate worktree", "report", "publish"} <= set(leaves)
    assert [name for name, p in leaves.items() if not callable(p.get_default("handler"))] == []


@pytest.mark.parametrize(
    ("argv", "code", "said"),
    [
        (["report", "--fleet", "{tmp}/missing/fleet.json"], 2, "agentic-codemod report: error: "),
        (["lessons", "validate", "{tmp}/nope.jsonl"], 2, "agentic-codemod lessons: error: "),
        (
            ["fleet", "--task", "{tmp}/t.yml", "--repos", "{tmp}/r.yml", "--local"],
            2,
            "agentic-codemod fleet:",
        ),
        (["init", "{tmp}/ctx", "--to", "not a version"], 2, "agentic-codemod init: error: "),
    ],
)
def test_main_turns_every_codemod_error_into_its_exit_code(
    argv: list[str], code: int, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Argument values that reach a CodemodError (exit 2) deep in each subcommand."""
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == code
    captured = capsys.readouterr()
    assert captured.err.startswith(said) and captured.out == ""


def test_run_json_prints_the_manifest_and_nothing_else_on_stdout(make_repo, run_codemod) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo("no-sdk", {"requirements.txt": "pytest\n", "src/acme_app": None, "tests": None})
    result = run_codemod(repo, "acme-sdk-2.yml", "--json")
    assert result.code == 0
    printed = json.loads(result.out)
    assert printed == result.manifest and printed["status"] == "nothing_to_do"
    assert printed["exit_code"] == result.code


def test_report_json_prints_the_collected_fleet_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet_dir = tmp_path / "codemod-fleet"
    fleet_dir.mkdir()
    assert main(["report", "--collect", str(fleet_dir), "--expect", "gone", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((fleet_dir / "fleet.json").read_text())
    [entry] = printed["repos"]
    assert (entry["name"], entry["status"], entry["outcome"]) == ("gone", "crashed", "failed")
