"""What fleet.html shows: counts per outcome, one row per repository, the human items grouped by rule
and file (what to write rules for next), and the paused runs to retry.

    load_fleet(fleet_json) -> FleetView      InputError when fleet.json is missing or not a fleet report
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from pydantic import ValidationError

from agentic_codemod.errors import InputError
from agentic_codemod.fleet.record import FleetEntry, FleetReport
from agentic_codemod.models import ChangePlan
from agentic_codemod.report.artifacts_read import cut, read_json
from agentic_codemod.status import Outcome

OUTCOMES = (Outcome.DONE, Outcome.NEEDS_HUMAN, Outcome.PAUSED, Outcome.FAILED)  # the chart's order
LABEL = {
    Outcome.DONE: "done",
    Outcome.NEEDS_HUMAN: "needs a human",
    Outcome.PAUSED: f"paused ({Outcome.PAUSED.exit_code})",
    Outcome.FAILED: "failed",
}
BAR_WIDTH = 600  # px of the largest bar in the chart


@dataclass
class Row:
    entry: FleetEntry
    reason: str
    report: str | None  # a relative link to the run's report.html, or None when the run left none


@dataclass
class HumanItem:
    repo: str
    line: int | None
    reason: str
    report: str | None


@dataclass
class HumanGroup:
    rule_id: str
    file: str
    items: list[HumanItem] = field(default_factory=list)


@dataclass
class Bar:
    outcome: str
    label: str
    count: int
    width: float


@dataclass
class FleetView:
    report: FleetReport
    rows: list[Row]
    bars: list[Bar]
    human: list[HumanGroup]
    paused: list[Row]
    fleet_dir: Path


def load_fleet(fleet_json: Path) -> FleetView:
    try:
        report = FleetReport.model_validate(json.loads(fleet_json.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise InputError(
            f"{fleet_json}: no such fleet.json", hint="pass the fleet.json a fleet wrote"
        ) from None
    except (OSError, ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(
            f"{fleet_json}: not a fleet report (agentic-codemod/fleet@1): {cut(first, 300)}",
            hint="pass the fleet.json that `agentic-codemod fleet --local` wrote",
        ) from None
    here = fleet_json.resolve().parent
    rows = [Row(e, cut(e.reason), _link(here, Path(e.run_dir))) for e in report.repos]
    rows.sort(key=lambda r: r.entry.name)
    return FleetView(
        report=report,
        rows=rows,
        bars=_bars(report),
        human=_human(rows),
        paused=[r for r in rows if r.entry.outcome == Outcome.PAUSED],
        fleet_dir=here,
    )


def _link(here: Path, run_dir: Path) -> str | None:
    run_dir = run_dir if run_dir.is_absolute() else here / run_dir
    page = run_dir / "report.html"
    if not page.is_file():
        return None
    return quote(Path(os.path.relpath(page, here)).as_posix())  # ':' is quoted: never a scheme


def _bars(report: FleetReport) -> list[Bar]:
    totals = report.totals()
    top = max([totals[o] for o in OUTCOMES] + [1])
    return [Bar(o, LABEL[o], totals[o], totals[o] / top * BAR_WIDTH) for o in OUTCOMES]


def _human(rows: list[Row]) -> list[HumanGroup]:
    """Requires-human items of every run, grouped by (rule id, file); most items first."""
    groups: dict[tuple[str, str], HumanGroup] = {}
    for row in rows:
        if row.entry.outcome != Outcome.NEEDS_HUMAN:
            continue
        items = _plan_items(Path(row.entry.run_dir))
        if not items:  # no item in the plan: the reason is the item (no test command, tests red ...)
            items = [("(no rule)", "(no file)", None, row.reason)]
        for rule, file, line, reason in items:
            group = groups.setdefault((rule, file), HumanGroup(rule, file))
            group.items.append(HumanItem(row.entry.name, line, reason, row.report))
    return sorted(groups.values(), key=lambda g: (-len(g.items), g.rule_id, g.file))


def _plan_items(run_dir: Path) -> list[tuple[str, str, int | None, str]]:
    data = read_json(run_dir / "plan.json")
    if data is None:
        return []
    try:
        plan = ChangePlan.model_validate(data)
    except ValidationError:
        return []
    return [
        (cut(h.rule_id or "(no rule)", 200), cut(h.file or "(no file)", 500), h.line, cut(h.reason))
        for h in plan.requires_human
    ]
