"""report.html of real runs, opened in headless Chromium: what a person sees, with and without JavaScript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from browser import Browser
from report_runs import Runs

from agentic_codemod.cli import main


def _trace(run_dir: Path) -> list[dict]:
    text = (run_dir / "trace.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]  # JSON Lines: "\n" only


def test_every_run_leaves_a_report(runs: Runs) -> None:
    for entry in runs.fleet["repos"]:
        assert (Path(entry["run_dir"]) / "report.html").is_file(), entry["name"]
    assert (runs.full / "report.html").is_file()


def test_approved_run_shows_outcome_steps_tests_gates_and_trace(runs: Runs, browser: Browser) -> None:
    run_dir = runs.run_dir("ok")
    manifest = json.loads((run_dir / "run.json").read_text())
    page = browser.open(run_dir / "report.html")
    dom = page.dom()
    assert dom.text("outcome") == "succeeded — exit 0 candidate verified and approved"
    assert len(dom.rows("step-table")) == len(manifest["steps"])
    assert all(s.get("duration_s") is not None for s in manifest["steps"])
    baseline = manifest["verifications"][0]["tests"]
    assert len(dom.rows("test-table")) == baseline["passed"] + baseline["failed"] + baseline["errors"]
    assert len(dom.rows("gate-table")) == len(manifest["gates"])
    assert dom.text("gate-table").count("this candidate") == len(manifest["gates"])
    # where the tests loaded the SDK from, each run's answer (an "unknown" would show as such)
    assert dom.text("verifications").count(" installed ") == len(manifest["verifications"]) == 2
    assert len(dom.rows("trace")) == len(_trace(run_dir))
    assert "acme-sdk 1.4.0 2.0.0" in dom.text("env-table")
    assert dom.text("tokens").endswith("all roles unknown unknown unknown unknown")  # offline: no figure
    assert manifest["apm"]["lock_sha256"] in dom.text("context-facts")
    assert page.console == []  # the page's own style and script pass its CSP; nothing else was tried
    page.screenshot("report-approved.png")


def test_full_task_marks_introduced_failures_and_the_human_item(runs: Runs, browser: Browser) -> None:
    assert runs.full_code == 3
    manifest = json.loads((runs.full / "run.json").read_text())
    page = browser.open(runs.full / "report.html")
    dom = page.dom()
    assert dom.text("outcome") == f"requires_human — exit 3 {manifest['reason']}"
    failing = manifest["verifications"][-1]["tests"]["failing"]
    introduced = [r for r in dom.rows("test-table") if r.attrs.get("data-mark") == "introduced"]
    assert len(introduced) == len(failing) > 0
    assert "ACME900" in dom.text("human")
    assert "not ready" in dom.text("mr-text")
    page.screenshot("report-requires-human.png")


def test_the_lockfile_table_shows_what_each_refreshed_lockfile_locks_and_what_the_tests_ran(
    runs: Runs, browser: Browser, tmp_path: Path
) -> None:
    """run.json `locked` and `lock_formats` on the page (docs/report.md said so; before, only the MR text
    had them): one row per entry, the tested version bold where it is not what the lockfile locks."""
    run_dir = tmp_path / "run"
    shutil.copytree(runs.run_dir("ok"), run_dir)
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["locked"] = {
        "uv.lock": {
            "gear": {"locked": ["1.1.0"], "tested": "1.1.0"},
            "cog": {"locked": ["2.0"], "tested": "2.1"},
            "old": {"locked": [], "tested": "0.9"},
            "docs-only": {"locked": ["3.0"], "tested": None},
        }
    }
    manifest["lock_formats"] = {"poetry.lock": {"before": "lock-version 2.0", "after": "lock-version 2.1"}}
    (run_dir / "run.json").write_text(json.dumps(manifest))
    assert main(["report", "--run-dir", str(run_dir)]) == 0
    dom = browser.open(run_dir / "report.html").dom()
    assert dom.text("lock-table").endswith(
        "uv.lock cog 2.0 2.1 uv.lock docs-only 3.0 not installed uv.lock gear 1.1.0 1.1.0 "
        "uv.lock old no longer locked 0.9"
    )
    assert [r.attrs["data-mark"] for r in dom.rows("lock-table")] == ["differs", "differs", "same", "differs"]
    formats = "poetry.lock: rewritten by its lock tool in lock-version 2.1 (was lock-version 2.0)."
    assert dom.text("lock-formats").replace(" )", ")") == formats  # (a space at each element's edge)


def test_trace_filters_narrow_the_rows(runs: Runs, browser: Browser) -> None:
    run_dir = runs.run_dir("ok")
    trace = _trace(run_dir)
    want = sum(1 for e in trace if e["actor"] == "verification" and e["tool"] == "run_process")
    assert 0 < want < len(trace)
    dom = browser.open(run_dir / "report.html", fragment="actor=verification&tool=run_process").dom()
    assert len(dom.rows("trace", visible=True)) == want
    assert dom.text("trace-shown") == str(want)
    assert "hidden" not in dom.all("div", id="trace-filters")[0].attrs


def test_page_works_without_javascript_apart_from_the_filters(runs: Runs, browser: Browser) -> None:
    run_dir = runs.run_dir("ok")
    page = browser.open(run_dir / "report.html", scripts=False, fragment="actor=verification")
    dom = page.dom()
    assert dom.text("outcome").startswith("succeeded — exit 0")
    assert len(dom.rows("trace", visible=True)) == len(_trace(run_dir))  # no filter applied: all rows
    assert "hidden" in dom.all("div", id="trace-filters")[0].attrs  # controls that cannot work stay hidden
    assert len(dom.rows("test-table")) > 0 and len(dom.rows("step-table")) > 0
    page.screenshot("report-no-javascript.png")
