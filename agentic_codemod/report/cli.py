"""`agentic-codemod report`: write report.html for a run directory, or fleet.html beside a fleet.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentic_codemod.errors import InputError


def add_report_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="write report.html for a run (or fleet.html for a fleet): one self-contained page",
        epilog="exit codes: 0 written, 2 not a run directory / fleet.json",
    )
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--run-dir", type=Path, help="a run's --run-dir: writes <run-dir>/report.html")
    what.add_argument(
        "--fleet", type=Path, metavar="FLEET_JSON", help="a fleet.json: writes fleet.html beside it"
    )
    p.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> int:
    from agentic_codemod.report import write_fleet_report, write_run_report

    if args.run_dir is not None:
        if not args.run_dir.is_dir():
            raise InputError(f"{args.run_dir}: --run-dir is not a directory", hint="pass a run's --run-dir")
        path = write_run_report(args.run_dir)
    else:
        path = write_fleet_report(args.fleet)
    print(f"wrote {path}")
    return 0
