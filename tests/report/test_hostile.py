"""Hostile input on the page: script tags and event handlers in file names, test ids, trace fields, the MR
text and more are shown as text, and none runs. The control proves the detector: the same payloads, put in
a page raw, do run in the same browser."""

from __future__ import annotations

import json
from pathlib import Path

from browser import Browser, Dom
from report_runs import FIXED_ID, HOSTILE_FILE, HOSTILE_TEST_ID, PAYLOADS, Runs

PAGE_TAGS = {"script": 1, "style": 1, "svg": 1}  # the page's own: one script, one stylesheet, the timeline


def _assert_nothing_ran(dom: Dom, console: list[str]) -> None:
    assert "data-pwned" not in dom.root().attrs, dom.root().attrs
    assert not any("PWNED" in line for line in console), console
    assert not any("Content Security Policy" in line for line in console), console  # nothing even tried
    for tag, count in PAGE_TAGS.items():
        assert len(dom.all(tag)) <= count, f"<{tag}> from the data"
    for tag in ("img", "iframe", "object", "embed", "base", "form"):
        assert dom.all(tag) == [], f"<{tag}> from the data"
    handlers = [(e.tag, k) for e in dom.elements for k in e.attrs if k.startswith("on")]
    assert handlers == []
    assert not [e for e in dom.all("a") if e.attrs.get("href", "").lower().startswith("javascript:")]


def test_hostile_file_name_and_test_id_from_a_real_run_stay_text(runs: Runs, browser: Browser) -> None:
    run_dir = runs.run_dir("hostile")
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["status"] == "rejected", manifest["reason"]  # its hostile test fails on 2.0.0
    assert HOSTILE_FILE in manifest["candidate"]["files"]
    page = browser.open(run_dir / "report.html")
    dom = page.dom()
    _assert_nothing_ran(dom, page.console)
    assert HOSTILE_FILE in dom.text("diff-files")
    assert HOSTILE_FILE in dom.text("mr-text")
    assert HOSTILE_FILE.removeprefix("src/acme_app/") in dom.text("trace")
    marks = [r.attrs.get("data-mark") for r in dom.rows("test-table")]
    assert marks.count("introduced") == 1 and marks.count("fixed") == 1  # the hostile id; FIXED_ID
    assert HOSTILE_TEST_ID in dom.text("test-table") and FIXED_ID in dom.text("test-table")


def test_payloads_planted_everywhere_stay_text(planted: Path, browser: Browser) -> None:
    for scripts in (True, False):
        page = browser.open(planted / "report.html", scripts=scripts)
        dom = page.dom()
        _assert_nothing_ran(dom, page.console)
        for payload in PAYLOADS:
            assert payload in dom.text("trace")
            assert payload in dom.text("mr-text")
        assert PAYLOADS[0] in dom.text("outcome")
        assert PAYLOADS[0] in dom.text("step-table") and PAYLOADS[2] in dom.text("env-table")
        assert PAYLOADS[4] in dom.text("packages") and PAYLOADS[0] in dom.text("findings")
        assert all(p in dom.text("lock-table") for p in PAYLOADS[:3])  # PAYLOADS[3]: cut at 100 characters
        assert PAYLOADS[5] in dom.text("lock-formats") and PAYLOADS[4] in dom.text("lock-formats")
    page.screenshot("report-hostile.png")


def test_hostile_filter_values_select_their_rows_and_run_nothing(planted: Path, browser: Browser) -> None:
    """A filter value from the data, taken from the URL, matches its row as a string and runs nothing."""
    from urllib.parse import quote

    page = browser.open(planted / "report.html", fragment="actor=" + quote(PAYLOADS[1], safe=""))
    dom = page.dom()
    _assert_nothing_ran(dom, page.console)
    visible = dom.rows("trace", visible=True)
    assert [r.attrs["data-actor"] for r in visible] == [PAYLOADS[1]]


def test_control_the_same_payloads_raw_do_run(tmp_path: Path, browser: Browser) -> None:
    raw = tmp_path / "raw.html"
    raw.write_text(f"<!doctype html><html><body><pre>{''.join(PAYLOADS[:2])}</pre></body></html>")
    page = browser.open(raw)
    assert "data-pwned" in page.dom().root().attrs
    assert "PWNED" in page.console
