"""End to end, offline: a unittest-only repository's failures are classified by test id, and a baseline
that lost a test module to a missing test dependency ends requires_human naming the module."""

from __future__ import annotations

import pytest
from fixtures_support import PLAIN_TASK

pytestmark = pytest.mark.slow

# No pytest configuration and no tests/ folder: the unittest fallback (discover -v) runs these.
UNITTEST_ONLY: dict[str, str | None] = {"pyproject.toml": None, "tests": None, "checks/__init__.py": ""}
CHECKS = """\
import importlib.metadata
import unittest

import acme


class TestApp(unittest.TestCase):
    def test_sdk_imports(self):
        self.assertTrue(acme)

    def test_known_broken(self):
        self.assertEqual("fixed", "not yet")
{extra}
"""
ON_1X = """
    def test_still_on_1x(self):
        self.assertTrue(importlib.metadata.version("acme-sdk").startswith("1."))
"""


def test_a_failure_present_before_and_after_is_pre_existing_by_id(make_repo, run_codemod) -> None:
    repo = make_repo("unittest-pre", {**UNITTEST_ONLY, "checks/test_app.py": CHECKS.format(extra="")})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    m = result.manifest
    assert result.code == 3, m["reason"]
    assert m["classification"] == "pre-existing"
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    for verification in m["verifications"]:
        assert verification["command"][-3:] == ["unittest", "discover", "-v"]
        assert verification["canary"] == "failed"
        assert verification["tests"]["failing"] == ["checks.test_app.TestApp.test_known_broken"]


def test_a_failure_only_after_the_bump_is_introduced_by_id(make_repo, run_codemod) -> None:
    repo = make_repo("unittest-new", {**UNITTEST_ONLY, "checks/test_app.py": CHECKS.format(extra=ON_1X)})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")

    m = result.manifest
    assert result.code in (1, 3), m["reason"]
    assert m["status"] != "succeeded"
    assert m["classification"] == "introduced"
    baseline, final = m["verifications"][0], m["verifications"][-1]
    assert baseline["tests"]["failing"] == ["checks.test_app.TestApp.test_known_broken"]
    assert sorted(final["tests"]["failing"]) == [
        "checks.test_app.TestApp.test_known_broken",
        "checks.test_app.TestApp.test_still_on_1x",
    ]


def test_a_plain_bump_names_its_failures_apart_from_the_baselines(make_repo, run_codemod, tmp_path) -> None:
    repo = make_repo("unittest-plain", {**UNITTEST_ONLY, "checks/test_app.py": CHECKS.format(extra=ON_1X)})
    task = tmp_path / "plain.yml"
    task.write_text(PLAIN_TASK)
    result = run_codemod(repo, task)

    m = result.manifest
    assert result.code == 3, m["reason"]
    assert m["reason"].startswith(
        "tests fail after the bump and no migration notes exist for acme-sdk: "
        "checks.test_app.TestApp.test_still_on_1x "
        "(failing on the baseline too: checks.test_app.TestApp.test_known_broken)"
    ), m["reason"]


def test_a_missing_test_dependency_ends_requires_human_naming_the_module(make_repo, run_codemod) -> None:
    files = {
        **UNITTEST_ONLY,
        "checks/test_app.py": CHECKS.format(extra=""),
        "checks/test_props.py": "import hypothesis\n",
    }
    result = run_codemod(make_repo("unittest-missing", files), "acme-sdk-2-rules.yml")

    m = result.manifest
    assert result.code == 3
    assert m["status"] == "requires_human"
    assert "ModuleNotFoundError: No module named 'hypothesis'" in m["reason"]
    assert [v["phase"] for v in m["verifications"]] == ["baseline"]  # nothing was bumped or tested after
