"""fleet.html of a real local fleet, opened in headless Chromium: counts, rows, links, groups, sorting."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from browser import Browser
from report_runs import Runs


def _names(rows: list) -> list[str]:
    return [r.attrs["data-name"] for r in rows]


def test_fleet_page_counts_rows_links_and_groups(runs: Runs, browser: Browser) -> None:
    page = browser.open(runs.fleet_dir / "fleet.html")
    dom = page.dom()
    assert dom.text("outcome").startswith("4 repositories: 1 done, 1 need a human, 1 paused, 1 failed")
    bars = {e.attrs["class"]: float(e.attrs["width"]) for e in dom.all("rect")}
    assert set(bars) == {"done", "needs_human", "paused", "failed"} and len(set(bars.values())) == 1
    assert _names(dom.rows("repos")) == sorted(e["name"] for e in runs.fleet["repos"])
    links = [e.attrs["href"] for e in dom.all("a") if ("table", "repos") in e.inside]
    assert len(links) == 4
    for href in links:
        assert (runs.fleet_dir / unquote(href)).resolve().name == "report.html"
        assert (runs.fleet_dir / unquote(href)).is_file()
    assert _names(dom.rows("paused-table")) == ["endpoint-down"]
    plan = json.loads((runs.run_dir("pre-existing-failure") / "plan.json").read_text())
    groups = dom.rows("human-table")
    assert len(groups) == max(len({(h["rule_id"], h["file"]) for h in plan["requires_human"]}), 1)
    assert "pre-existing-failure" in dom.text("human-table")
    assert page.console == []
    page.screenshot("fleet.png")


def test_fleet_table_sorts_by_duration(runs: Runs, browser: Browser) -> None:
    # Equal durations (fleet.json keeps two decimals) fall back to the name, A to Z, in either direction.
    slowest_first = [e["name"] for e in sorted(runs.fleet["repos"], key=lambda e: (-e["wall_s"], e["name"]))]
    dom = browser.open(runs.fleet_dir / "fleet.html", fragment="sort=-duration").dom()
    assert _names(dom.rows("repos")) == slowest_first
    assert dom.all("th", **{"data-col": "duration"})[0].attrs["aria-sort"] == "descending"


def test_fleet_page_without_javascript_is_complete_and_sorted_by_name(runs: Runs, browser: Browser) -> None:
    dom = browser.open(runs.fleet_dir / "fleet.html", scripts=False, fragment="sort=-duration").dom()
    assert _names(dom.rows("repos")) == sorted(e["name"] for e in runs.fleet["repos"])
    assert dom.text("outcome").startswith("4 repositories")
    assert len(dom.rows("paused-table")) == 1


def test_report_command_rewrites_fleet_html(runs: Runs, tmp_path: Path) -> None:
    from agentic_codemod.cli import main

    copy = tmp_path / "fleet.json"
    copy.write_text((runs.fleet_dir / "fleet.json").read_text())
    assert main(["report", "--fleet", str(copy)]) == 0
    assert "4 repositories" in (tmp_path / "fleet.html").read_text()


def test_fleet_table_breaks_equal_durations_by_name(runs: Runs, browser: Browser, tmp_path: Path) -> None:
    """Rows are written A to Z and the sort is stable: repositories of equal duration stay in name order."""
    from agentic_codemod.cli import main

    fleet = json.loads((runs.fleet_dir / "fleet.json").read_text())
    for entry in fleet["repos"]:
        entry["wall_s"] = 2.5
    fleet["repos"].sort(key=lambda e: e["name"], reverse=True)
    copy = tmp_path / "fleet.json"
    copy.write_text(json.dumps(fleet))
    assert main(["report", "--fleet", str(copy)]) == 0
    by_name = sorted(e["name"] for e in fleet["repos"])
    for fragment in ("sort=duration", "sort=-duration"):
        assert _names(browser.open(tmp_path / "fleet.html", fragment=fragment).dom().rows("repos")) == by_name
