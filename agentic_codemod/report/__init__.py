"""The auditor's page and the fleet dashboard: self-contained HTML read from the artifacts.

    write_run_report(run_dir) -> Path          run_dir/report.html, from run.json and the other artifacts
    write_after_run(run_dir) -> Path | None    the same at the end of every run; never fails the run
    write_fleet_report(fleet_json) -> Path     fleet.html beside fleet.json
    write_after_fleet(fleet_json) -> Path | None   the same at the end of a local fleet; never fails it
    add_report_parser(sub)                     `agentic-codemod report --run-dir D | --fleet FILE`

Repository content and model output are hostile: the pages escape every value (jinja2 autoescape) and
carry a Content-Security-Policy that forbids every load and every script but their own (page.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

from agentic_codemod import __version__
from agentic_codemod.report.cli import add_report_parser

__all__ = [
    "add_report_parser",
    "write_after_fleet",
    "write_after_run",
    "write_fleet_report",
    "write_run_report",
]


def write_run_report(run_dir: Path) -> Path:
    from agentic_codemod.report.page import render, write
    from agentic_codemod.report.run_view import load_run

    run = load_run(run_dir)
    html = render("run.html", script="filters.js", run=run, tool_version=__version__)
    return write(run_dir / "report.html", html)


def write_after_run(run_dir: Path) -> Path | None:
    """report.html at the end of a run. The evidence is in the artifacts already written; a page that
    cannot be made is said on stderr and does not change the run's outcome."""
    try:
        return write_run_report(run_dir)
    except Exception as exc:
        print(f"agentic-codemod: report.html not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None


def write_fleet_report(fleet_json: Path) -> Path:
    from agentic_codemod.report.fleet_view import load_fleet
    from agentic_codemod.report.page import render, write

    fleet = load_fleet(fleet_json)
    html = render("fleet.html", script="sort.js", fleet=fleet, tool_version=__version__)
    return write(fleet_json.with_name("fleet.html"), html)


def write_after_fleet(fleet_json: Path) -> Path | None:
    """fleet.html at the end of a fleet; like write_after_run, it never changes the fleet's exit code."""
    try:
        return write_fleet_report(fleet_json)
    except Exception as exc:
        print(f"agentic-codemod: fleet.html not written: {type(exc).__name__}: {exc}", file=sys.stderr)
        return None
