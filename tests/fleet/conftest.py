"""One real local fleet per session: six generated repositories under `fleet --local --jobs 2`."""

from __future__ import annotations

from pathlib import Path

import pytest
from fleet_repos import VARIANTS, make_fleet
from fleet_runs import FleetRun, run_fleet


@pytest.fixture(scope="session")
def fleet_home(tmp_path_factory: pytest.TempPathFactory, wheels: Path) -> Path:
    home = tmp_path_factory.mktemp("fleet")
    make_fleet(home, list(VARIANTS), wheels)
    return home


@pytest.fixture(scope="session")
def first_run(fleet_home: Path, context_root: Path) -> FleetRun:
    """The fleet's first run. Tests only read it, except test_fleet_resume.py, which runs last."""
    return run_fleet(fleet_home / "fleet.yml", fleet_home / "out", context_root)
