"""`nothing_to_do` only on proof: a declaration that admits both `from` and `to` (a bare name, an open range
the strategy keeps) proves nothing, so the run edits nothing and tests both versions (plan.verify_only)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixtures_support import PLAIN_TASK, stable_ping_files

from agentic_codemod.models import Dependency
from agentic_codemod.publish.check import PublishRefused, check_candidate
from agentic_codemod.task import SdkSpec
from agentic_codemod.workflow.declarations import doubts

ACME_FILES = Path(__file__).parents[1] / "fixtures" / "acme-app"


BARE = "# Runtime dependencies of acme-app.\nacme-sdk  # whatever the platform ships\n"


def dep(specifier: str, role: str = "runtime", file: str = "requirements.txt", **more: str) -> Dependency:
    return Dependency(
        name="acme-sdk", specifier=specifier, file=file, kind="requirements", line=2, role=role, **more
    )  # type: ignore[arg-type]


def sdk(strategy: str = "auto") -> SdkSpec:
    return SdkSpec.model_validate(
        {
            "name": "acme-sdk",
            "ecosystem": "python",
            "from": ">=1,<2",
            "to": "2.1.0",
            "range_strategy": strategy,
        }
    )


@pytest.mark.parametrize(
    ("declarations", "strategy", "doubt"),
    [
        ([dep("==2.1.0")], "auto", None),
        ([dep("==2.1")], "auto", None),
        ([dep("==2.1.0"), dep("==2.1.0", role="lock", file="uv.lock")], "auto", None),
        ([dep("==2.1.0"), dep("==1.0", role="constraint", file="requirements/tests-min.txt")], "auto", None),
        ([], "auto", None),  # declared nowhere (the import check runs before: pending_declarations)
        ([dep("")], "auto", "has no version, so it admits >=1,<2 too"),
        ([dep("*")], "auto", "has no version"),
        ([dep(">=1")], "replace", "`acme-sdk>=1` admits >=1,<2 too"),
        ([dep(">=1.4,<3")], "widen", "admits >=1,<2 too"),
        ([dep("==2.1.0"), dep("", role="test", file="tox.ini")], "auto", "tox.ini line 2: `acme-sdk` has no"),
        ([dep(">=2.0")], "auto", "no declaration pins 2.1.0: `acme-sdk>=2.0` in requirements.txt"),
        ([dep("~=2.1.0")], "auto", "no declaration pins 2.1.0"),
        ([dep(""), dep("==2.1.0", role="lock", file="uv.lock")], "auto", "has no version"),
        ([dep("==2.1.0"), dep("", uneditable="setup.py line 9: computed")], "auto", "computed"),
    ],
)
def test_only_declarations_that_pin_the_target_prove_there_is_nothing_to_do(declarations, strategy, doubt):
    found = doubts(sdk(strategy), declarations)
    if doubt is None:
        assert found == []
    else:
        assert any(doubt in d for d in found), found


def _task(tmp_path: Path) -> Path:
    path = tmp_path / "plain.yml"
    path.write_text(PLAIN_TASK)
    return path


def _versions(m: dict) -> tuple[str, str]:
    return m["environments"]["baseline"]["acme-sdk"], m["environments"]["after"]["acme-sdk"]


@pytest.mark.slow
def test_a_bare_declaration_whose_target_breaks_the_code_requires_a_human(make_repo, run_codemod, tmp_path):
    result = run_codemod(make_repo("bare", {"requirements.txt": BARE}), _task(tmp_path))

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    plan = result.json("plan.json")
    assert plan["verify_only"] and not plan["nothing_to_do"], plan
    assert "requirements.txt line 2: `acme-sdk` has no version" in plan["reason"]
    baseline, after = m["verifications"]
    assert (baseline["phase"], after["phase"]) == ("baseline", "iteration-1")
    assert baseline["passed"] and baseline["tests"]["passed"] == 17
    assert not after["passed"] and after["tests"]["failing"]
    assert _versions(m) == ("1.4.0", "2.1.0")
    assert "tests fail on acme-sdk 2.1.0 (new since acme-sdk 1.4.0, the baseline)" in m["reason"]
    assert after["tests"]["failing"][0] in m["reason"]
    assert result.artifact("changes.patch").read_bytes() == b""  # nothing edited: no cap is ever added
    assert not [t for t in result.trace() if t["tool"] == "write"]
    with pytest.raises(PublishRefused, match="ended requires_human"):
        check_candidate(result.run_dir)


def bare_stable_files() -> dict[str, str | None]:
    """acme-app with only the stable ping test and its code, the SDK declared bare (no version)."""
    files: dict[str, str | None] = {
        f"src/acme_app/{p.name}": None
        for p in (ACME_FILES / "src/acme_app").glob("*.py")
        if p.name != "__init__.py"
    }
    files.update({f"tests/{p.name}": None for p in (ACME_FILES / "tests").glob("*.py")})
    files.update({**stable_ping_files(), "requirements.txt": BARE})
    return files


@pytest.mark.slow
def test_a_bare_declaration_whose_target_passes_is_nothing_to_do_verified_on_both(
    make_repo, run_codemod, tmp_path
):
    result = run_codemod(make_repo("bare-stable", bare_stable_files()), _task(tmp_path))

    m = result.manifest
    assert result.code == 0 and m["status"] == "nothing_to_do", m["reason"]
    assert m["reason"].startswith("verified on acme-sdk 2.1.0: 1 test(s) pass there, as on acme-sdk 1.4.0")
    assert result.json("plan.json")["verify_only"]
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert all(
        v["passed"] and v["tests"]["passed"] == 1 and v["canary"] == "failed" for v in m["verifications"]
    )
    assert _versions(m) == ("1.4.0", "2.1.0")
    assert result.artifact("changes.patch").read_bytes() == b""
    text = result.artifact("merge_request.md").read_text()
    assert "[not ready]" in text and "Nothing was edited (verify only: nothing to edit" in text
    assert "No change is needed: verified on acme-sdk 2.1.0" in text
    assert "iteration-1 on acme-sdk 2.1.0: green (1 passed, 0 failing)" in text
    with pytest.raises(PublishRefused, match="ended nothing_to_do"):  # no candidate: nothing to publish
        check_candidate(result.run_dir)


ONE_TEST_SWAPPED_ON_2 = """import importlib.metadata

import pytest

ON_2 = importlib.metadata.version("acme-sdk").startswith("2.")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.name == "test_ping_sends_one_request" and ON_2:
            item.add_marker(pytest.mark.skip(reason="quarantined on acme-sdk 2"))


@pytest.fixture
def unused():
    return None
"""
ONLY_ON_2 = """import importlib.metadata

import pytest


@pytest.mark.skipif(not importlib.metadata.version("acme-sdk").startswith("2."), reason="2.x only")
def test_only_on_2():
    assert True
"""


@pytest.mark.slow
def test_a_target_where_a_test_of_the_baseline_no_longer_runs_is_not_verified(
    make_repo, run_codemod, tmp_path
):
    """Verify only, green on `to`, as many tests as on the baseline, but the baseline's one passing test
    is skipped on `to` (another runs instead): before, `nothing_to_do`, "verified on acme-sdk 2.1.0:
    1 test(s) pass there, as on acme-sdk 1.4.0". The count and test_ids gates hold here too: a human."""
    files = {
        **bare_stable_files(),
        "tests/conftest.py": ONE_TEST_SWAPPED_ON_2,
        "tests/test_only_on_2.py": ONLY_ON_2,
    }
    result = run_codemod(make_repo("bare-swapped", files), _task(tmp_path))

    m = result.manifest
    assert all(v["passed"] and v["tests"]["passed"] == 1 for v in m["verifications"])  # green, same count
    assert (result.code, m["status"]) == (3, "requires_human"), m["reason"]
    assert "not all of the baseline's (acme-sdk 1.4.0)" in m["reason"]
    assert "tests.test_ping::test_ping_sends_one_request (skipped)" in m["reason"]


@pytest.mark.slow
def test_a_bare_declaration_with_a_migration_task_migrates_and_tests_both_versions(make_repo, run_codemod):
    """Rules that would change the code make work: the run migrates (it is not verify only) and, offline,
    leaves the dynamic lookup to a human."""
    result = run_codemod(make_repo("bare-migration", {"requirements.txt": BARE}), "acme-sdk-2.yml")

    m = result.manifest
    assert result.code == 3 and m["status"] == "requires_human", m["reason"]
    assert not result.json("plan.json")["verify_only"]
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert _versions(m) == ("1.4.0", "2.1.0")
    assert "requirements.txt" not in m["candidate"]["files"]  # the bare declaration stays bare
