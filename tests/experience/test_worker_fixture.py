"""acme-worker, the second fixture repository: green on acme-sdk 1.4.0; after the rules and the bump only
its getattr dispatch breaks on 2.1.0; the published lesson's fix (the data, not the lookup) makes it green."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_support import apply_rules, bump_sdk, fixable_rule_files, make_venv, materialize, run_app_suite
from lessons_support import ACME_WORKER

pytestmark = pytest.mark.slow

DISPATCH_TESTS = {
    "tests/test_worker.py::test_refresh_stock_reads_the_inventory",
    "tests/test_worker.py::test_refresh_price_of_a_gone_sku_is_none",
    "tests/test_worker.py::test_jobs_wait_for_the_worker_timeout",
    "tests/test_worker.py::test_a_shorter_timeout_can_be_configured",
}


def test_acme_worker_passes_on_acme_sdk_1_4(wheels: Path, tmp_path: Path) -> None:
    repo = tmp_path / "acme-worker"
    materialize.materialize(ACME_WORKER, repo)
    suite = run_app_suite(make_venv(tmp_path / "v14", wheels, "acme-sdk==1.4.0", "pytest"), repo)
    assert suite.passed and "6 passed" in suite.output, suite.output


def test_after_the_rules_only_the_dispatch_breaks_and_the_lesson_fixes_it(
    wheels: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "acme-worker"
    materialize.materialize(ACME_WORKER, repo)
    apply_rules(repo, fixable_rule_files())
    bump_sdk(repo, "2.1.0")
    python = make_venv(tmp_path / "v21", wheels, "acme-sdk==2.1.0", "pytest")

    red = run_app_suite(python, repo)
    assert red.problems == DISPATCH_TESTS, red.output
    assert "the ACME client has no method 'fetch'" in red.output

    jobs = repo / "src" / "acme_worker" / "jobs.py"
    jobs.write_text(jobs.read_text().replace('method="fetch"', 'method="get"'))
    green = run_app_suite(python, repo)
    assert green.passed, green.output
