"""The fleet's summary table (rich): one row per repository, totals and throughput underneath."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from agentic_codemod.fleet.record import FleetReport
from agentic_codemod.status import Outcome

# The colour of a status by its outcome (the run summary uses it too).
STYLE = {
    Outcome.DONE: "green",
    Outcome.FAILED: "red",
    Outcome.PAUSED: "yellow",
    Outcome.NEEDS_HUMAN: "yellow",
}


def summary_table(report: FleetReport) -> Table:
    table = Table(title=f"fleet: {report.task_id} ({report.jobs} job(s))", title_justify="left")
    for column in ("repository", "outcome", "exit", "files", "verification", "tokens", "wall"):
        right = column in ("exit", "files", "wall")
        table.add_column(column, justify="right" if right else "left", no_wrap=right, overflow="fold")
    for e in report.repos:
        status = f"[{STYLE[e.outcome]}]{e.status}[/]"
        tokens = "unknown" if e.tokens is None else str(e.tokens.get("total", e.tokens))
        table.add_row(
            e.name,
            status,
            str(e.exit_code),
            str(e.files_changed),
            e.verification,
            tokens,
            "resumed" if e.resumed else f"{e.wall_s:.1f}s",
        )
    return table


def print_fleet_summary(report: FleetReport, console: Console | None = None) -> None:
    console = console or Console()
    console.print(summary_table(report))
    t = report.totals()
    ran = len(report.repos) - t["resumed"]
    rate = ran / report.wall_s * 60 if report.wall_s > 0 and ran else 0.0
    console.print(
        f"{len(report.repos)} repositories: {t[Outcome.DONE]} done, {t[Outcome.FAILED]} failed, "
        f"{t[Outcome.PAUSED]} paused, {t[Outcome.NEEDS_HUMAN]} need a human, "
        f"{t['resumed']} skipped as already done; "
        f"{ran} ran in {report.wall_s:.1f}s ({rate:.1f} repos/min)"
    )
    for e in report.repos:
        if e.outcome != Outcome.DONE and e.reason:
            reason = e.reason.strip().splitlines()[0] if e.reason.strip() else ""
            cut = reason if len(reason) <= 160 else reason[:157] + "..."
            console.print(
                f"  {e.name}: {cut}", markup=False, highlight=False, overflow="ellipsis", no_wrap=True
            )
