"""The workflow fails loudly: agno's default (skip a failed step, report `completed`) never reaches a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_codemod import run as run_module
from agentic_codemod.adapters.python import ADAPTER
from agentic_codemod.adapters.python.test_results import counts_from_output
from agentic_codemod.config import Settings
from agentic_codemod.models import ChangePlan, Tally, VerificationResult
from agentic_codemod.task import load_task
from agentic_codemod.workflow import verify
from agentic_codemod.workflow.artifacts import ARTIFACTS
from agentic_codemod.workflow.brains import RuleBrain

TASKS = Path(__file__).resolve().parents[2] / "fixtures" / "tasks"


class ExplodingPlanner(RuleBrain):
    calls = 0

    def plan(self, state, plan: ChangePlan) -> ChangePlan:  # type: ignore[no-untyped-def]
        ExplodingPlanner.calls += 1
        raise RuntimeError("planner blew up")


@pytest.mark.slow
def test_a_crashing_step_fails_the_run_once_and_keeps_the_evidence(
    acme_repo: Path, context_root: Path, wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_module, "_brain", lambda options: ExplodingPlanner())
    settings = Settings()
    settings.packages.local = [str(wheels)]
    settings.packages.local_only = True
    options = run_module.RunOptions(
        task=load_task(TASKS / "acme-sdk-2.yml"),
        repo=acme_repo,
        run_dir=tmp_path / "run",
        settings=settings,
        context_root=context_root,
    )
    manifest = run_module.execute(options)

    assert ExplodingPlanner.calls == 1, "a failed step must not be retried"
    assert manifest.status == "failed" and manifest.exit_code == 1
    assert manifest.error == "RuntimeError: planner blew up"
    ran = {s["step"]: s["result"] for s in manifest.steps}
    assert ran["plan"].startswith("error: RuntimeError")
    assert "bump" not in ran and "gate" not in ran, "nothing runs after a failed step"
    assert all((tmp_path / "run" / name).exists() for name in ARTIFACTS)
    assert (tmp_path / "run" / "changes.patch").read_bytes() == b""


def result(phase: str, exit_code: int, failing: list[str], passed: int = 3) -> VerificationResult:
    counts = Tally(passed=passed, failed=len(failing), failing=failing)
    return VerificationResult(
        phase=phase,
        command=["pytest"],
        exit_code=exit_code,
        duration_s=0.1,
        passed=exit_code == 0 and passed > 0,
        tests=counts,
    )


@pytest.mark.parametrize(
    ("baseline", "final", "expected"),
    [
        (result("baseline", 0, []), result("iteration-1", 0, []), "green"),
        (result("baseline", 0, []), result("iteration-1", 1, ["t::a"]), "introduced"),
        (result("baseline", 1, ["t::a"]), result("iteration-1", 1, ["t::a"]), "pre-existing"),
        (result("baseline", 1, ["t::a"]), result("iteration-1", 1, ["t::a", "t::b"]), "introduced"),
        (result("baseline", 0, []), result("iteration-1", 2, [], passed=0), "introduced"),
        (None, result("iteration-1", 1, ["t::a"]), "unknown"),
        (result("baseline", 0, []), None, "unknown"),
    ],
    ids=[
        "green",
        "introduced",
        "pre-existing",
        "new-on-top-of-old",
        "collection-error",
        "no-baseline",
        "no-run",
    ],
)
def test_failures_are_classed_against_the_baseline(baseline, final, expected) -> None:  # type: ignore[no-untyped-def]
    assert verify.classify(baseline, final) == expected


@pytest.mark.parametrize(
    ("exit_code", "counts", "usable"),
    [
        (0, Tally(passed=3), True),
        (1, Tally(passed=2, failed=1), True),
        (5, Tally(), False),
        (4, None, False),
        (127, None, False),
        (0, Tally(), False),
    ],
    ids=["green", "red-but-ran", "no-tests", "usage-error", "not-found", "exit-0-without-tests"],
)
def test_a_baseline_must_have_run_tests(exit_code: int, counts: Tally | None, usable: bool) -> None:
    baseline = VerificationResult(
        phase="baseline", command=["x"], exit_code=exit_code, duration_s=0.0, passed=False, tests=counts
    )
    assert verify.usable_baseline(baseline, ADAPTER.test_facts) is usable


def test_unittest_output_is_counted() -> None:
    counts = counts_from_output("....F.\nRan 6 tests in 0.01s\n\nFAILED (failures=1, skipped=1)\n")
    assert counts is not None and (counts.passed, counts.failed, counts.skipped) == (4, 1, 1)
    assert len(counts.failing) == 1 and "not named in the output" in counts.failing[0]  # no -v lines
    assert counts_from_output("no tests here") is None


def test_a_red_reason_cut_short_still_counts_the_bumps_failures_apart() -> None:
    from agentic_codemod.config import MR_ITEM_MAX_CHARS
    from agentic_codemod.workflow.pipeline import red_tests

    assert red_tests(["t::a", "t::b"], {"t::b"}) == "t::a (failing on the baseline too: t::b)"
    assert red_tests(["t::a"], set()) == "t::a"
    many = [f"tests/test_{i}.py::test_{'x' * 40}" for i in range(40)]
    cut = red_tests(many, set(many[30:]))
    assert len(cut) < MR_ITEM_MAX_CHARS + 60 and "failing on the baseline too" not in cut[:MR_ITEM_MAX_CHARS]
    assert cut.endswith(" ... (30 new, 10 failing on the baseline too)")
    assert red_tests(many, set()).endswith(" ... (40 failing)")
