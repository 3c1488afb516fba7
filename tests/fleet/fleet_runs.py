"""Running `agentic-codemod fleet` from the tests and reading what it left (imported by name)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fleet_repos import TASK

from agentic_codemod.cli import dispatch
from agentic_codemod.fleet.cli import add_fleet_parser


@dataclass
class FleetRun:
    code: int
    out: str  # what the command printed (the summary)
    fleet_file: Path
    fleet_dir: Path
    report: dict[str, Any]  # fleet.json as this run left it

    def entry(self, name: str) -> dict[str, Any]:
        return next(e for e in self.report["repos"] if e["name"] == name)


def fleet_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    add_fleet_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["fleet", *argv])
    return dispatch(args)


def run_fleet(fleet_file: Path, fleet_dir: Path, context: Path, jobs: int = 2) -> FleetRun:
    argv = ["--task", str(TASK), "--repos", str(fleet_file), "--local", "--jobs", str(jobs)]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), wide_terminal():
        places = ["--fleet-dir", str(fleet_dir), "--context", str(context)]
        code = fleet_cli(*argv, *places, "--cache-dir", str(cache_of(fleet_dir)))
    report = json.loads((fleet_dir / "fleet.json").read_text())
    return FleetRun(code, buffer.getvalue(), fleet_file, fleet_dir, report)


def cache_of(fleet_dir: Path) -> Path:
    """The fleet's shared cache (environment templates), beside its fleet dir."""
    return fleet_dir.parent / "cache"


@contextlib.contextmanager
def wide_terminal() -> Iterator[None]:
    """rich sizes tables from COLUMNS when stdout is not a terminal."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "200"
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
