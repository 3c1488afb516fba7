"""`agentic-codemod gate semantic --run-dir DIR`: the gate alone, for CI jobs and orchestrators.

Exit codes: 0 pass, 1 violation, 75 unavailable (or --unavailable-exit-code, e.g. 126 for bmad-loop).
The verdict goes to DIR/semantic.json and one line to stdout. Asked explicitly, the gate runs whatever
`gates.semantic.mode` says; the rest of `gates.semantic` (model, thresholds, limits) comes from --config.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported lazily: `agentic-codemod --help` must stay light
    from agentic_codemod.semantic.settings import SemanticSettings


def add_gate_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """Add `gate semantic` to the CLI's subparsers; returns the `gate` parser."""
    gate = sub.add_parser("gate", help="run one fail-closed gate on a finished run directory")
    gates = gate.add_subparsers(dest="gate", required=True)
    semantic = gates.add_parser(
        "semantic",
        help="ask Jev (TypeSafe System One) whether the candidate stays in scope",
        epilog="exit codes: 0 pass, 1 violation or unclear, 75 service/auth/transport unavailable",
    )
    semantic.add_argument("--run-dir", type=Path, required=True, help="run directory with run.json")
    semantic.add_argument("--config", type=Path, help="settings file (YAML); reads gates.semantic")
    semantic.add_argument(
        "--unavailable-exit-code",
        type=_exit_code,
        metavar="N",
        help="exit code when TypeSafe is unavailable (default 75; bmad-loop pauses on 126)",
    )
    semantic.add_argument("--quiet", action="store_true", help="no line on stdout")
    from agentic_codemod.cli import add_json_option

    add_json_option(semantic, "the verdict (semantic.json)")
    semantic.set_defaults(handler=gate_command)
    return gate


def gate_command(args: argparse.Namespace, env: dict[str, str] | None = None) -> int:
    from agentic_codemod.semantic.gate import VERDICT_FILE, evaluate

    settings = _settings(args.config)
    if args.unavailable_exit_code is not None:
        settings = settings.model_copy(update={"unavailable_exit_code": args.unavailable_exit_code})
    verdict = evaluate(args.run_dir, settings, os.environ if env is None else env)
    if getattr(args, "json", False):
        from agentic_codemod.cli import print_json

        print_json(verdict.model_dump_json(indent=2))
    elif not args.quiet:
        where = args.run_dir / VERDICT_FILE if Path(args.run_dir).is_dir() else "not written"
        print(f"semantic gate: {verdict.outcome} (exit {verdict.exit_code}): {verdict.reason} [{where}]")
    return verdict.exit_code


def _settings(path: Path | None) -> SemanticSettings:
    from agentic_codemod.config import load_settings
    from agentic_codemod.semantic.settings import SemanticSettings

    # config.Settings mounts SemanticSettings as `gates.semantic`; until it does, the defaults apply.
    gates = getattr(load_settings(path), "gates", None)
    semantic = getattr(gates, "semantic", None)
    return semantic if isinstance(semantic, SemanticSettings) else SemanticSettings()


def _exit_code(text: str) -> int:
    try:
        code = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an exit code: {text!r}") from exc
    if not 1 <= code <= 255:
        raise argparse.ArgumentTypeError("must be 1..255 (0 would let an unavailable service pass)")
    return code
