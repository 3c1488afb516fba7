"""`agentic-codemod lessons validate FILE [--runs-root DIR]`: exit 0 valid, 1 invalid, 2 unreadable."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

PROPOSED = "lessons.proposed.jsonl"  # = records.PROPOSED (kept here so --help stays light)
PUBLISHED = "lessons.jsonl"  # = records.PUBLISHED


def add_lessons_parser(sub: Any) -> None:
    """Add `lessons validate` to the CLI's subparsers; the handler is in `args.handler`."""
    lessons = sub.add_parser("lessons", help="experience: check proposed or published lessons")
    verbs = lessons.add_subparsers(dest="lessons_command", required=True)
    check = verbs.add_parser("validate", help="check a lessons file (exit 0 valid, 1 invalid, 2 unreadable)")
    check.add_argument("file", type=Path, help=f"a run's {PROPOSED}, or a package's {PUBLISHED}")
    check.add_argument("--runs-root", type=Path, help="where run dirs (each with run.json) are kept")
    check.add_argument(
        "--published",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"check as a published file (default: any file not named {PROPOSED})",
    )
    from agentic_codemod.cli import add_json_option

    add_json_option(check, '{"file", "valid", "problems"}')
    check.set_defaults(handler=validate_command)


def validate_command(args: argparse.Namespace) -> int:
    from agentic_codemod.experience.validation import validate

    problems = validate(args.file, args.runs_root, published=args.published)  # unreadable: exit 2 (main)
    if args.json:
        from agentic_codemod.cli import print_json

        print_json({"file": str(args.file), "valid": not problems, "problems": problems})
        return 1 if problems else 0
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{args.file}: " + (f"invalid, {len(problems)} problem(s)" if problems else "valid"))
    return 1 if problems else 0
