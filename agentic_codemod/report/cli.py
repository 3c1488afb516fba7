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
    what.add_argument(
        "--collect",
        type=Path,
        metavar="DIR",
        help="a GitLab fleet's codemod-fleet/ (<repository>/run.json each): writes fleet.json and fleet.html",
    )
    p.add_argument(
        "--expect",
        default="",
        help="with --collect: the repositories of the fleet, one per line (a missing run shows as crashed)",
    )
    p.add_argument("--task", type=Path, help="with --collect: the task file (its sha256 goes in fleet.json)")
    from agentic_codemod.cli import add_json_option

    add_json_option(p, 'the report: fleet.json with --collect, else {"html": the page written}')
    p.set_defaults(handler=report_command)


def report_command(args: argparse.Namespace) -> int:
    from agentic_codemod.report import write_fleet_report, write_run_report

    if args.run_dir is not None:
        if not args.run_dir.is_dir():
            raise InputError(f"{args.run_dir}: --run-dir is not a directory", hint="pass a run's --run-dir")
        path = write_run_report(args.run_dir)
    elif args.collect is not None:
        from agentic_codemod.report.collect import collect

        names = [n.strip() for n in args.expect.splitlines() if n.strip()]
        path = collect(args.collect, names, args.task)
    else:
        path = write_fleet_report(args.fleet)
    if args.json:
        from agentic_codemod.cli import print_json

        fleet_json = path.with_name("fleet.json")
        print_json(fleet_json.read_text(encoding="utf-8") if args.collect else {"html": str(path)})
    else:
        print(f"wrote {path}")
    return 0
