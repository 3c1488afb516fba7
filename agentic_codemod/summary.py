"""The short human summary printed after a run (rich)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentic_codemod.fleet.summary import STYLE
from agentic_codemod.models import RunManifest
from agentic_codemod.visible import visible


def print_summary(m: RunManifest, run_dir: Path, console: Console | None = None) -> None:
    console = console or Console()
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    table.add_row("status", f"[{STYLE[m.status.outcome]}]{m.status}[/] (exit {m.exit_code})")
    # The reason and the file names come from the repository: Text, never rich markup (a name holding
    # "[/bold]" would end the run's process with a MarkupError, "[i]x[/i]" would print as "x"), with
    # control and direction characters as escapes (an ANSI sequence would recolour the job log)
    table.add_row("reason", Text("\n".join(visible(line) for line in (m.reason or "-").split("\n"))))
    files = m.candidate.files if m.candidate else []
    listed = f"{len(files)}" + (f": {', '.join(files[:6])}" if files else "")
    table.add_row("files changed", Text(visible(listed)))
    last = m.verifications[-1] if m.verifications else None
    if last is None:
        table.add_row("verification", "not run")
    else:
        counts = last.tests
        tally = (
            f"{counts.passed} passed, {counts.failed + counts.errors} failing" if counts else "no test counts"
        )
        table.add_row("verification", f"{last.phase}: {'green' if last.passed else 'red'} ({tally})")
    if m.isolation == "process":
        table.add_row(
            "isolation",
            "[red]process[/]: the repository's code ran WITHOUT the sandbox (--isolation process)",
        )
    table.add_row("review", f"{m.verdict.verdict} by {m.verdict.reviewer}" if m.verdict else "-")
    table.add_row("artifacts", Text(str(run_dir)))
    console.print(table)
