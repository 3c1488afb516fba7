"""The semantic gate's decision and exit contract, against the fake /v1/systemone: 0 pass, 1, 75."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_jev import API_KEY, CRITERIA, REQUEST_ID, FakeJev, Reply, answers, error
from pydantic import ValidationError

from agentic_codemod.semantic import SemanticSettings, SemanticVerdict, enforced_exit_code, evaluate

MakeRun = Callable[..., Path]


def _saved(run_dir: Path) -> dict[str, object]:
    return json.loads((run_dir / "semantic.json").read_text())


# --- pass -------------------------------------------------------------------------------------------


def test_in_scope_green_candidate_passes_and_records_everything(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    run_dir = make_run()
    verdict = evaluate(run_dir, settings, env)
    assert (verdict.outcome, verdict.passed, verdict.exit_code) == ("pass", True, 0)
    saved = _saved(run_dir)
    assert saved["model"] == "jev-2026-10-01"
    assert saved["in_scope"] == 0.95
    assert saved["probabilities"] == {"in_scope": {"noul": 0.95}}
    assert saved["usage"] == {"input_tokens": 812, "output_tokens": 4}
    assert saved["request_id"] == REQUEST_ID
    assert saved["candidate_sha256"] == json.loads((run_dir / "run.json").read_text())["candidate"]["sha256"]
    assert saved["failure_kind"] is None


def test_request_carries_the_key_the_model_and_only_the_scope_question_when_green(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    evaluate(make_run(), settings, env)
    [request] = jev.requests
    assert request["path"] == "/v1/systemone"
    assert request["headers"]["Authorization"] == f"Bearer {API_KEY}"
    body = request["body"]
    assert body["model"] == "jev-latest"
    assert list(body["questions"]) == ["in_scope"]
    question = body["questions"]["in_scope"]
    assert question["type"] == "noul"
    assert question["instructions"] and set(question["criteria"]) == {"true", "false"}
    state = body["state"]
    assert all(c in state for c in CRITERIA)
    assert "+acme-sdk==2.1.0" in state and "- src/app.py" in state
    assert "12 passed" in state


def test_diff_is_cut_to_max_diff_bytes_but_every_changed_path_is_listed(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str]
) -> None:
    files = [f"src/mod{i}.py" for i in range(40)]
    patch = "".join(
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1 +1 @@\n-x = 1\n+x = {'2' * 400}\n"
        for f in files
    )
    settings = SemanticSettings(max_diff_bytes=2_000, max_retries=0, timeout_s=2)
    verdict = evaluate(make_run(patch=patch), settings, env)
    state = jev.body["state"]
    diff_part = state.split("## Candidate diff", 1)[1]
    assert len(diff_part.encode()) < 2_000 + 200
    assert "bytes of the diff omitted" in diff_part
    assert all(f"- {f}" in state for f in files)
    assert verdict.diff_truncated and verdict.diff_bytes == len(patch.encode())
    assert verdict.state_bytes == len(state.encode())


# --- violation (exit 1) ------------------------------------------------------------------------------


def test_low_in_scope_probability_is_scope_drift(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(answers(in_scope=0.05))
    verdict = evaluate(make_run(), settings, env)
    assert (verdict.outcome, verdict.passed, verdict.exit_code) == ("violation", False, 1)
    assert "scope drift" in verdict.reason


@pytest.mark.parametrize("p", [0.21, 0.5, 0.79])
def test_uncertain_band_does_not_pass(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings, p: float
) -> None:
    jev.script(answers(in_scope=p))
    verdict = evaluate(make_run(), settings, env)
    assert verdict.exit_code == 1 and not verdict.passed
    assert "uncertain scope" in verdict.reason


def test_red_verification_stays_red_even_when_jev_says_in_scope(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(answers(in_scope=0.99, failure_kind="environment", confidence=0.97))
    run_dir = make_run(passed=False, output_tail="E   AssertionError: 1 != 2\n1 failed, 11 passed")
    verdict = evaluate(run_dir, settings, env)
    assert (verdict.passed, verdict.exit_code) == (False, 1)
    assert "a red test result stays red" in verdict.reason
    assert list(jev.body["questions"]) == ["in_scope", "failure_kind"]
    assert set(jev.body["questions"]["failure_kind"]["criteria"]) == {
        "implementation",
        "environment",
        "unknown",
    }
    assert (verdict.failure_kind, verdict.failure_kind_confidence) == ("environment", 0.97)
    assert "AssertionError" in jev.body["state"] and "result: FAILED" in jev.body["state"]
    assert _saved(run_dir)["probabilities"]["failure_kind"]["environment"] == 0.97  # type: ignore[index]


def test_failure_kind_unknown_is_a_violation(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(answers(in_scope=0.99, failure_kind="unknown", confidence=0.95))
    verdict = evaluate(make_run(passed=False), settings, env)
    assert verdict.exit_code == 1 and verdict.failure_kind == "unknown"
    assert "failure kind unknown" in verdict.reason


def test_failure_kind_below_min_confidence_is_unclear(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(answers(in_scope=0.99, failure_kind="implementation", confidence=0.5))
    verdict = evaluate(make_run(passed=False), settings, env)
    assert verdict.exit_code == 1 and "unclear" in verdict.reason


def test_a_missing_answer_is_unclear_and_does_not_pass(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(answers(in_scope=None))
    verdict = evaluate(make_run(), settings, env)
    assert verdict.exit_code == 1 and "no in_scope answer" in verdict.reason


@pytest.mark.parametrize("status", [400, 404, 422])
def test_refused_request_is_a_violation(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings, status: int
) -> None:
    jev.script(error(status, "bad model"))
    verdict = evaluate(make_run(), settings, env)
    assert (verdict.outcome, verdict.exit_code) == ("violation", 1)
    assert str(status) in verdict.reason and verdict.request_id == REQUEST_ID


def test_unreadable_reply_is_a_violation(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    jev.script(Reply(body={"answers": {"in_scope": {"noul": 0.9}}}))  # no type, model or usage
    verdict = evaluate(make_run(), settings, env)
    assert (verdict.outcome, verdict.exit_code) == ("violation", 1)
    assert "unreadable reply" in verdict.reason


def test_candidate_changed_after_freeze_is_refused_without_asking(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    verdict = evaluate(make_run(frozen_sha="0" * 64), settings, env)
    assert verdict.exit_code == 1 and "changed after it was frozen" in verdict.reason
    assert jev.requests == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"criteria": []}, "acceptance_criteria"),
        ({"patch": ""}, "changes nothing"),
    ],
)
def test_run_dir_without_what_the_gate_needs_is_a_violation(
    make_run: MakeRun,
    jev: FakeJev,
    env: dict[str, str],
    settings: SemanticSettings,
    kwargs: dict[str, object],
    message: str,
) -> None:
    verdict = evaluate(make_run(**kwargs), settings, env)
    assert verdict.exit_code == 1 and message in verdict.reason
    assert jev.requests == []


def test_missing_run_json_is_named(tmp_path: Path, env: dict[str, str], settings: SemanticSettings) -> None:
    verdict = evaluate(tmp_path, settings, env)
    assert verdict.exit_code == 1 and "run.json: missing" in verdict.reason
    assert _saved(tmp_path)["outcome"] == "violation"


# --- unavailable (exit 75, or the mapped code) --------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403, 429, 500, 503])
def test_service_and_auth_failures_are_unavailable(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings, status: int
) -> None:
    jev.script(error(status))
    verdict = evaluate(make_run(), settings, env)
    assert (verdict.outcome, verdict.passed, verdict.exit_code) == ("unavailable", False, 75)
    assert str(status) in verdict.reason and verdict.request_id == REQUEST_ID


def test_missing_key_is_unavailable_and_sends_nothing(
    make_run: MakeRun, jev: FakeJev, settings: SemanticSettings
) -> None:
    verdict = evaluate(make_run(), settings, {"TYPESAFE_BASE_URL": jev.url, "TYPESAFE_API_KEY": " "})
    assert verdict.exit_code == 75 and "TYPESAFE_API_KEY is not set" in verdict.reason
    assert jev.requests == []


def test_connection_refused_is_unavailable(
    make_run: MakeRun, closed_port_url: str, settings: SemanticSettings
) -> None:
    env = {"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": closed_port_url}
    verdict = evaluate(make_run(), settings, env)
    assert verdict.exit_code == 75 and "unreachable" in verdict.reason


def test_slow_reply_past_timeout_is_unavailable_within_bounded_time(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str]
) -> None:
    jev.script(Reply(body=answers().body, delay_s=5.0))
    settings = SemanticSettings(timeout_s=0.3, max_retries=2)
    verdict = evaluate(make_run(), settings, env)
    assert verdict.exit_code == 75 and "timed out" in verdict.reason
    # Bounded: the retries fit in the time budget, so not every allowed attempt is spent waiting.
    assert 1 <= len(jev.requests) <= settings.max_retries + 1


def test_unavailable_maps_to_the_configured_code(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str]
) -> None:
    jev.script(error(503))
    settings = SemanticSettings(unavailable_exit_code=126, max_retries=0, timeout_s=2)
    verdict = evaluate(make_run(), settings, env)
    assert (verdict.outcome, verdict.exit_code) == ("unavailable", 126)


def test_without_the_sdk_the_gate_is_unavailable_never_passing(
    make_run: MakeRun, env: dict[str, str], settings: SemanticSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "typesafe_sdk", None)
    verdict = evaluate(make_run(), settings, env)
    assert verdict.exit_code == 75 and "typesafe-sdk is not installed" in verdict.reason


def test_a_transient_5xx_is_retried_within_the_budget(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str]
) -> None:
    jev.script(error(503), answers())
    verdict = evaluate(make_run(), SemanticSettings(max_retries=1, timeout_s=5), env)
    assert verdict.exit_code == 0 and len(jev.requests) == 2


# --- settings and mode --------------------------------------------------------------------------------


def test_bare_mode_is_accepted_and_thresholds_are_bounded() -> None:
    assert SemanticSettings.model_validate("required").mode == "required"
    for bad in ({"min_in_scope": 0.5}, {"unavailable_exit_code": 0}, {"mode": "on"}, {"nope": 1}):
        with pytest.raises(ValidationError):
            SemanticSettings.model_validate(bad)


@pytest.mark.parametrize(
    ("mode", "outcome", "code", "expected"),
    [
        ("required", "violation", 1, 1),
        ("required", "unavailable", 75, 75),
        ("required", "pass", 0, 0),
        ("advisory", "violation", 1, 0),
        ("advisory", "unavailable", 75, 0),
    ],
)
def test_only_required_mode_blocks(mode: str, outcome: str, code: int, expected: int) -> None:
    verdict = SemanticVerdict.model_validate(
        {"outcome": outcome, "passed": outcome == "pass", "exit_code": code, "reason": "r"}
    )
    assert enforced_exit_code(verdict, SemanticSettings.model_validate(mode)) == expected


def test_gate_record_binds_the_verdict_to_the_candidate(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], settings: SemanticSettings
) -> None:
    verdict = evaluate(make_run(), settings, env)
    record = verdict.gate_record()
    assert record["name"] == "semantic" and record["passed"] is True
    assert (
        record["candidate_sha256"] == verdict.candidate_sha256 and len(str(record["candidate_sha256"])) == 64
    )
