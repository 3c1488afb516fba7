"""Command line: parse arguments, call one function, map the outcome to an exit code.

Exit codes (the contract with CI):
  0  candidate verified and approved, or nothing to do
  1  candidate rejected (verification failed, scope violation, review not approve) or the run failed
  2  bad input (task file, repo path, config, refused context)
  3  requires a human (no migration notes, no working test command, usages the rules cannot migrate)
  75 environment unavailable (a service the run needs cannot be reached): the run pauses, state kept
  130 cancelled
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import NoReturn

from agentic_codemod import __version__, startup
from agentic_codemod.errors import CodemodError, InputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-codemod",
        description="Migrate a repository to a new SDK version: rules first, agents for the rest.",
        epilog="exit codes: 0 ok/nothing to do, 1 rejected/failed, 2 bad input, 3 requires human, 75 paused",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one task on one repository")
    run.add_argument("--repo", type=Path, required=True, help="git repository to migrate (never modified)")
    intake = run.add_mutually_exclusive_group(required=True)
    intake.add_argument("--task", type=Path, help="task file (YAML)")
    intake.add_argument("--story", type=Path, help="BMAD story (Markdown) with an agentic-codemod block")
    run.add_argument("--run-dir", type=Path, required=True, help="where the run's artifacts go")
    run.add_argument("--offline", action="store_true", help="rules only (RuleBrain), no model")
    run.add_argument(
        "--coder",
        choices=("agno", "cline"),
        default="agno",
        help="who edits after the rules: the agno coder agent (default) or the Cline CLI (npm cline 3.0.x)",
    )
    run.add_argument("--config", type=Path, help="settings file (YAML) overriding the built-in limits")
    run.add_argument("--context", type=Path, default=Path("."), help="APM project with apm.yml (default: .)")
    run.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="DIR",
        help="extra place to find packages for the verification environment (repeatable)",
    )
    run.add_argument(
        "--index-url",
        help="package index for the verification environment (npm reads its registry from the npm config)",
    )
    run.add_argument("--no-index", action="store_true", help="install only from --find-links")
    run.add_argument(
        "--isolation",
        choices=("sandbox", "process"),
        help="how the repository's code (installs, tests) runs: sandbox (bubblewrap, the default; the run "
        "pauses with 75 where it cannot start) or process (no sandbox: the repository's code can read "
        "what the runner can; stated in run.json, the summary and the MR text)",
    )
    run.add_argument("--quiet", action="store_true", help="no summary on stdout")
    add_json_option(run, "run.json (the manifest)")
    run.set_defaults(handler=_run)

    from agentic_codemod.gate_cli import add_worktree_gate_parser
    from agentic_codemod.semantic import add_gate_parser

    add_worktree_gate_parser(add_gate_parser(sub))
    from agentic_codemod.experience.cli import add_lessons_parser

    add_lessons_parser(sub)
    from agentic_codemod.fleet.cli import add_fleet_parser
    from agentic_codemod.publish.cli import add_publish_parser

    add_publish_parser(sub)
    add_fleet_parser(sub)
    from agentic_codemod.scaffold import add_init_parser

    add_init_parser(sub)
    from agentic_codemod.report.cli import add_report_parser

    add_report_parser(sub)
    return parser


def entry() -> NoReturn:
    """The console script and `python -m agentic_codemod`: main() in a process of its own (startup.py)."""
    startup.defer()
    code = main()
    startup.before_exit()
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> int:
    return dispatch(build_parser().parse_args(argv))


def dispatch(args: argparse.Namespace) -> int:
    """Every subcommand the same way: its parser set `handler`; a CodemodError ends it with its exit code."""
    if args.handler is not _run:  # a run collects again once its workflow's modules are in (run.execute)
        startup.loaded()
    try:
        return int(args.handler(args))
    except CodemodError as exc:
        print(f"agentic-codemod {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code


def add_json_option(parser: argparse._ActionsContainer, what: str) -> None:
    parser.add_argument(
        "--json", action="store_true", help=f"print {what} on stdout as JSON, and nothing else there"
    )


def print_json(document: object) -> None:
    """The one JSON document of a --json run on stdout: a file's text as it is, or a JSON-able value."""
    text = document if isinstance(document, str) else json.dumps(document, indent=2)
    print(text.rstrip("\n"))


def _run(args: argparse.Namespace) -> int:
    from agentic_codemod.config import load_settings
    from agentic_codemod.run import RunOptions, execute
    from agentic_codemod.task import check_repo, check_run_dir, load_task

    if args.story is not None:
        from agentic_codemod.stories import load_story

        task = load_story(args.story)
    else:
        task = load_task(args.task)
    if args.coder != "agno" and args.offline:
        raise InputError(f"--coder {args.coder} with --offline: an offline run has no coder (rules only)")
    repo = check_repo(args.repo)
    check_run_dir(args.run_dir, repo, args.context)
    if not (args.context / "apm.yml").is_file():
        raise InputError(
            f"{args.context.resolve()}: --context has no apm.yml",
            hint="point --context at the APM project with the agents and migration packages",
        )
    settings = load_settings(args.config)
    sources = settings.packages  # the package sources every adapter reads in its own terms
    packages = sources.model_copy(
        update={
            "local": [*sources.local, *(str(Path(p).resolve()) for p in args.find_links)],
            "index_url": args.index_url or sources.index_url,
            "local_only": args.no_index or sources.local_only,
        }
    )
    settings = settings.model_copy(
        update={"packages": packages, "isolation": args.isolation or settings.isolation}
    )
    options = RunOptions(
        task=task,
        repo=repo,
        run_dir=args.run_dir,
        settings=settings,
        offline=args.offline,
        context_root=args.context,
        coder=args.coder,
    )
    with contextlib.redirect_stdout(sys.stderr if args.json else sys.stdout):  # stdout: the JSON only
        manifest = execute(options)
    if args.json:
        print_json((args.run_dir / "run.json").read_text(encoding="utf-8"))
    elif not args.quiet:
        from agentic_codemod.summary import print_summary

        print_summary(manifest, args.run_dir)
    return manifest.exit_code


if __name__ == "__main__":
    entry()
