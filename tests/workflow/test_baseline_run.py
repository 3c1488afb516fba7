"""The baseline's tests run beside the bump (workflow/baseline_run.py), for real: bwrap, uv, the fixture.

The proof that they overlap is a handshake, not a clock: the baseline's test (acme-sdk 1.x) waits for a file
that the bump's install drops into the baseline's report folder (mounted in its box). Run one after the
other, the test would wait in vain and fail the baseline.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from fixtures_support import ACME_APP, FLIP_REPORTS

from agentic_codemod.errors import CandidateRejected
from agentic_codemod.tools.sandbox import probe
from agentic_codemod.workflow import environments

pytestmark = [pytest.mark.slow, pytest.mark.skipif(probe() is not None, reason=f"no sandbox: {probe()}")]

SIGNAL = "bump-started"
HANDSHAKE_TEST = f"""\
import os
import time

import acme


def test_the_bump_runs_beside_the_baseline():
    if not acme.__version__.startswith("1."):
        return  # the candidate's run, on acme-sdk 2
    deadline = time.monotonic() + 120
    while not os.path.exists("/codemod/reports/{SIGNAL}"):
        assert time.monotonic() < deadline, "the bump never ran while the baseline's tests did"
        time.sleep(0.05)
"""


def _signal_the_baseline(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The bump's install drops SIGNAL into the baseline's report folder (/codemod/reports in its box)."""
    seen: list[str] = []
    install_target = environments.install_target

    def signalling(state):  # type: ignore[no-untyped-def]
        folder = state.paths.reports / "baseline"
        seen.append(str(state.env.root))
        if folder.is_dir():
            (folder / SIGNAL).write_text("go\n")
        return install_target(state)

    monkeypatch.setattr(environments, "install_target", signalling)
    return seen


def test_the_baseline_tests_run_while_the_bump_installs_into_a_copy_of_their_environment(
    make_repo, run_codemod, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _signal_the_baseline(monkeypatch)
    repo = make_repo("beside", {"tests/test_zz_handshake.py": HANDSHAKE_TEST})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 0, m["reason"]
    baseline, after = m["verifications"]
    assert baseline["phase"] == "baseline" and baseline["passed"], baseline["output_tail"][-2000:]
    assert after["phase"] == "iteration-1" and after["passed"]
    run_dir = result.run_dir
    assert seen == [str(run_dir / "env-after")]  # the bump installed into the copy
    assert m["installs"]["after"]["copied_from"] == "the baseline environment (env), as installed"
    assert "copied_from" not in m["installs"]["baseline"]
    assert m["environments"]["baseline"]["acme-sdk"] == "1.4.0"
    assert m["environments"]["after"]["acme-sdk"] == "2.0.0"
    steps = {s["step"]: s["result"] for s in m["steps"]}
    assert steps["baseline"].startswith("baseline: tests running beside the bump")
    assert "; baseline: exit" in steps["verify"]  # the first verification joined them
    trace = [json.loads(line) for line in result.artifact("trace.jsonl").read_text().splitlines()]
    assert any(e["tool"] == "baseline_beside_bump" for e in trace)
    # the baseline's environment kept what it was tested on; the copy holds the target
    assert _installed(run_dir / "env", "acme_sdk") == "1.4.0"
    assert _installed(run_dir / "env-after", "acme_sdk") == "2.0.0"
    assert not (run_dir / "sandbox" / "baseline-tree").exists()  # thrown away once joined


@pytest.mark.parametrize(
    ("extra", "why"),
    [(("--isolation", "process"), "process isolation"), ((), "concurrent_baseline: false")],
)
def test_without_the_sandbox_or_the_setting_the_baseline_runs_first_and_the_bump_installs_after_it(
    make_repo, run_codemod, tmp_path: Path, extra: tuple[str, ...], why: str
) -> None:
    config = tmp_path / "settings.yml"
    config.write_text("concurrent_baseline: false\n" if not extra else "{}\n")
    repo = make_repo("after", {})
    result = run_codemod(repo, "acme-sdk-2-rules.yml", *extra, "--config", str(config))
    m = result.manifest
    assert result.code == 0, (why, m["reason"])
    steps = {s["step"]: s["result"] for s in m["steps"]}
    assert steps["baseline"].startswith("baseline: exit 1, 17 passed"), (why, steps["baseline"])
    assert "; baseline:" not in steps["verify"]
    assert not (result.run_dir / "env-after").exists(), why
    assert [v["phase"] for v in m["verifications"]] == ["baseline", "iteration-1"]
    assert _installed(result.run_dir / "env", "acme_sdk") == "2.0.0"  # installed in place, after the tests


def test_a_baseline_the_run_cannot_trust_ends_it_at_the_join_with_the_baseline_s_reason(
    make_repo, run_codemod
) -> None:
    """Beside the bump, a baseline that ran no test is found when the first verification joins it: the
    run ends as the baseline step ended it (exit 3, its reason), the baseline recorded, the candidate's
    result not."""
    conftest = (ACME_APP / "tests" / "conftest.py").read_text() + '\ncollect_ignore_glob = ["test_*.py"]\n'
    repo = make_repo("no-tests", {"tests/conftest.py": conftest})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert m["status"] == "requires_human"
    assert [v["phase"] for v in m["verifications"]] == ["baseline"]
    assert m["verifications"][0]["exit_code"] == 5
    assert "the test command does not work (exit 5)" in m["reason"]


def _installed(env: Path, dist: str) -> str:
    [record] = env.glob(f"lib/python*/site-packages/{dist}-*.dist-info")
    return record.name.removeprefix(f"{dist}-").removesuffix(".dist-info")


def test_a_step_that_ends_the_run_before_the_join_leaves_the_baseline_recorded_and_no_thread(
    make_repo, run_codemod, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bump fails while the baseline's tests still run: the run ends as the bump ended it (exit 1),
    after waiting for them; they are recorded as evidence, their thread is gone, their tree thrown away."""

    def failing(_state):  # type: ignore[no-untyped-def]
        raise CandidateRejected("installing acme-sdk 2.0.0 failed (exit 1)", hint="the test's own failure")

    monkeypatch.setattr(environments, "install_target", failing)
    result = run_codemod(make_repo("bump-fails", {}), "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 1, m["reason"]
    assert "installing acme-sdk 2.0.0 failed" in m["reason"]
    [baseline] = m["verifications"]
    assert baseline["phase"] == "baseline" and baseline["passed"]
    assert not [t for t in threading.enumerate() if t.name == "baseline-tests"]
    assert not (result.run_dir / "sandbox" / "baseline-tree").exists()


def test_a_test_command_that_spreads_its_tests_over_the_cores_runs_the_baseline_first(
    make_repo, run_codemod
) -> None:
    """An xdist addopts in a pytest configuration (setup.cfg here, which pytest itself leaves unread beside
    pyproject's [tool.pytest.ini_options], so the fixture needs no xdist): beside each other the two runs
    would only compete for the cores, so the baseline runs first and the trace says why."""
    repo = make_repo("xdist", {"setup.cfg": "[tool:pytest]\naddopts = -n auto\n"})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 0, m["reason"]
    steps = {s["step"]: s["result"] for s in m["steps"]}
    assert steps["baseline"].startswith("baseline: exit 1, 17 passed")
    assert not (result.run_dir / "env-after").exists()
    trace = [json.loads(line) for line in result.artifact("trace.jsonl").read_text().splitlines()]
    [why] = [e["result"] for e in trace if e["tool"] == "baseline_one_after_the_other"]
    assert "runs its tests on several processes itself" in why


def test_a_baseline_the_run_cannot_trust_still_ends_it_when_a_later_step_failed_first(
    make_repo, run_codemod, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcome does not depend on the two runs overlapping: a flipped oracle on the baseline ends the run
    with the baseline's reason (exit 3), as when the baseline ran first, even where the bump failed before
    any verification joined it; the bump's error is kept in the notes."""

    def failing(_state):  # type: ignore[no-untyped-def]
        raise CandidateRejected("installing acme-sdk 2.0.0 failed (exit 1)")

    monkeypatch.setattr(environments, "install_target", failing)
    conftest = (ACME_APP / "tests" / "conftest.py").read_text() + FLIP_REPORTS
    result = run_codemod(make_repo("flip-then-fail", {"tests/conftest.py": conftest}), "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert "the canary test that must fail passed" in m["reason"]
    [notes] = [s["result"] for s in m["steps"] if s["step"] == "notes"]
    assert any("later step: CandidateRejected: installing acme-sdk 2.0.0 failed" in note for note in notes)
    assert [v["phase"] for v in m["verifications"]] == ["baseline"]


def test_a_baseline_thread_that_cannot_start_fails_the_run_instead_of_waiting_forever(
    make_repo, run_codemod, monkeypatch: pytest.MonkeyPatch
) -> None:
    start = threading.Thread.start

    def refusing(thread: threading.Thread) -> None:
        if thread.name == "baseline-tests":
            raise RuntimeError("can't start new thread")
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", refusing)
    result = run_codemod(make_repo("no-thread", {}), "acme-sdk-2-rules.yml")
    m = result.manifest
    assert result.code == 1, m["reason"]
    assert m["status"] == "failed" and "can't start new thread" in m["reason"]
    assert not m["verifications"]
