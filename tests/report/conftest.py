"""The session's browser and real runs for the report tests (report_runs.py makes them)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from browser import Browser, find_chromium
from report_runs import Runs, make_runs, plant


@pytest.fixture(scope="session")
def chromium() -> str:
    found = find_chromium()
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing on CI: scripts/test.sh installs it (Debian package chromium)")
        pytest.skip("no chromium on PATH: install the Debian package chromium (scripts/test.sh does as root)")
    return found


@pytest.fixture(scope="session")
def browser(chromium: str) -> Iterator[Browser]:
    with Browser(chromium) as running:
        yield running


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory, wheels: Path, context_root: Path) -> Runs:
    return make_runs(tmp_path_factory.mktemp("report-runs"), wheels, context_root)


@pytest.fixture(scope="session")
def planted(runs: Runs, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the hostile run with payloads in every kind of field the page shows, page rewritten."""
    return plant(runs, tmp_path_factory.mktemp("planted") / "run")
