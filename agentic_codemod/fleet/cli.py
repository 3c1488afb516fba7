"""`agentic-codemod fleet`: one task over many repositories — locally, or as a GitLab child pipeline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentic_codemod.cli import add_json_option, dispatch, print_json

if TYPE_CHECKING:
    from agentic_codemod.fleet.repos import FleetFile


def add_fleet_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet",
        help="run one task over many repositories (local pool or GitLab child pipeline)",
        epilog="exit codes (--local): 0 all done, 1 any failed, 3 some need a human, 75 some paused, "
        "2 bad input",
    )
    p.add_argument("--task", type=Path, required=True, help="task file (YAML)")
    p.add_argument("--repos", type=Path, required=True, help="fleet file (YAML): the repositories")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--emit-gitlab-pipeline", type=Path, metavar="FILE", help="write a GitLab child pipeline"
    )
    mode.add_argument("--local", action="store_true", help="run the fleet on this machine")
    p.add_argument("--jobs", type=int, default=2, help="repositories at a time with --local (default 2)")
    p.add_argument(
        "--fleet-dir", type=Path, help="run dirs, logs and fleet.json (default: runs/fleet-<task id>)"
    )
    p.add_argument("--context", type=Path, default=Path("."), help="APM project with apm.yml (default: .)")
    p.add_argument("--config", type=Path, help="settings file passed to every run")
    p.add_argument("--timeout", type=_seconds, default=3600.0, help="seconds per repository with --local")
    p.add_argument(
        "--cache-dir",
        type=Path,
        help="the runs' shared cache of environment templates (default: $CODEMOD_CACHE_DIR or "
        "~/.cache/agentic-codemod)",
    )
    add_json_option(p, "fleet.json (--local; the summary goes to stderr) or the pipeline written")
    p.set_defaults(handler=fleet_command)


def fleet_command(args: argparse.Namespace) -> int:
    from agentic_codemod.fleet.repos import load_fleet

    fleet = load_fleet(args.repos)
    if args.emit_gitlab_pipeline is None:
        return _local(args, fleet)
    from agentic_codemod.fleet.emit import write_child_pipeline

    write_child_pipeline(
        fleet, args.task.as_posix(), args.emit_gitlab_pipeline, context=args.context.as_posix()
    )
    message = (
        f"wrote {args.emit_gitlab_pipeline}: {len(fleet.repos)} repositories, run -> gate -> publish each"
    )
    print(message, file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print_json({"pipeline": str(args.emit_gitlab_pipeline), "repos": [r.name for r in fleet.repos]})
    return 0


def _local(args: argparse.Namespace, fleet: FleetFile) -> int:
    from agentic_codemod.errors import InputError
    from agentic_codemod.fleet.local import LocalFleet, run_local
    from agentic_codemod.fleet.summary import print_fleet_summary
    from agentic_codemod.task import load_task

    if args.jobs < 1:
        raise InputError(f"--jobs must be at least 1, not {args.jobs}")
    out = args.fleet_dir or Path("runs") / f"fleet-{load_task(args.task).id}"
    report = run_local(
        LocalFleet(
            fleet=fleet,
            task=args.task,
            out_dir=out,
            jobs=args.jobs,
            context=args.context,
            config=args.config,
            timeout_s=args.timeout,
            cache_dir=args.cache_dir,
        )
    )
    from rich.console import Console

    from agentic_codemod.report import write_after_fleet

    human = sys.stderr if args.json else sys.stdout
    print_fleet_summary(report, Console(file=human))
    print(f"fleet.json: {out / 'fleet.json'}", file=human)
    if write_after_fleet(out / "fleet.json"):
        print(f"fleet.html: {out / 'fleet.html'}", file=human)
    if args.json:
        print_json((out / "fleet.json").read_text(encoding="utf-8"))
    return report.exit_code()


def main(argv: list[str] | None = None) -> int:
    """`python -m agentic_codemod.fleet.cli ...`: the fleet command on its own (same flags)."""
    parser = argparse.ArgumentParser(prog="agentic-codemod")
    add_fleet_parser(parser.add_subparsers(dest="command", required=True))
    return dispatch(parser.parse_args(argv))


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from exc
    if not value > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


if __name__ == "__main__":  # last: everything above must be defined before main() runs
    raise SystemExit(main())
