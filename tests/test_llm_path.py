"""LLM mode end to end on the mock endpoint: agents compiled from .apm/agents, tool calls through the
sandbox, structured outputs, the verify loop — on the full acme task that offline mode cannot finish.
Then one run per fault script: 75 when the endpoint is at fault, 1 when the model misbehaves, and the
artifacts always there to say what happened."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from fixtures_support import ACME_APP, materialize
from mock_llm import free_port

from agentic_codemod.workflow.artifacts import ARTIFACTS

pytestmark = pytest.mark.slow

TASK = "acme-sdk-2.yml"
FIX_REMOVED, FIX_ADDED = '-    "load": "fetch",', '+    "load": "get",'
AGENTS = {"scout", "planner", "coder", "reviewer", "scribe"}
# Fault runs: short timeouts and budgets, one retry, so every fault ends within seconds.
FAST_MODELS = """\
endpoint: {base_url: http://127.0.0.1:9/v1}
defaults: {model: mock-model, timeout_s: 2, max_retries: 1, max_model_calls: 12}
roles: {scout: {}, planner: {}, coder: {}, reviewer: {}, scribe: {}}
"""


@pytest.fixture(autouse=True)
def own_probe_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "probe.json"
    monkeypatch.setenv("CODEMOD_LLM_PROBE", str(path))
    return path


def llm_run(run_codemod: Any, repo: Path) -> Any:
    result = run_codemod(repo, TASK, offline=False)
    missing = [name for name in ARTIFACTS if not result.artifact(name).exists()]
    assert not missing, f"missing artifacts: {missing}"
    return result


def test_the_agents_finish_the_task_offline_mode_cannot(
    mock_llm: Any, acme_repo: Path, run_codemod: Any
) -> None:
    result = llm_run(run_codemod, acme_repo)
    m = result.manifest
    assert result.code == 0, m["reason"]
    assert (m["mode"], m["status"], m["classification"]) == ("llm", "succeeded", "green")

    # The coder's tool calls went through the sandbox and are in the trace, under its name.
    coder = [(t["tool"], t["decision"]) for t in result.trace() if t["actor"] == "coder"]
    assert (
        ("read", "allowed") in coder
        and ("replace", "allowed") in coder
        and ("run_verification", "allowed") in coder
    )
    # The unusual usage is fixed, verification is green on the frozen candidate, the review approves it.
    patch = result.artifact("changes.patch").read_text()
    assert FIX_REMOVED in patch and FIX_ADDED in patch
    last = m["verifications"][-1]
    assert last["passed"] and last["tests"]["passed"] == 17 and last["tests"]["failed"] == 0
    review = result.json("review.json")
    assert review["verdict"] == "approve" and review["reviewer"] == "reviewer"
    assert review["candidate_sha256"] == hashlib.sha256(patch.encode()).hexdigest()

    # Each agent was built from its .apm/agents file and recognised by the name in its system prompt.
    calls = mock_llm.log()
    assert {c["agent"] for c in calls} == AGENTS
    assert {c["recognised_by"] for c in calls} == {"system message"} and all(
        c["roles"][0] == "system" for c in calls
    )
    reviewer = [c for c in calls if c["agent"] == "reviewer"]
    assert all(c["roles"] == ["system", "user"] for c in reviewer)  # blind: no coder conversation
    assert "Replaced" not in reviewer[0]["user"] and FIX_ADDED in reviewer[0]["user"]

    # Structured outputs landed where they belong.
    assert any(n.startswith("scout:") and "getattr" in n for n in result.json("profile.json")["notes"])
    assert any(step.startswith("coder:") for step in result.json("plan.json")["steps"])
    # The title is the tool's (GitLab reads mentions and references in a title); the model writes the text.
    mr = result.artifact("merge_request.md").read_text()
    assert mr.startswith("# Migrate acme-sdk to 2.1 (acme-sdk -> 2.1.0)\n") and "## Why" in mr

    # Accounting per role, with the model of each role.
    assert set(m["models"]) == AGENTS
    roles = m["tokens"]["roles"]
    assert set(roles) == AGENTS and roles["coder"]["tool_calls"] >= 3 and roles["coder"]["model_calls"] >= 4
    assert all(isinstance(r["prompt_tokens"], int) and r["prompt_tokens"] > 0 for r in roles.values())


def test_usage_the_endpoint_does_not_report_is_null_not_zero(
    mock_llm: Any, acme_repo: Path, run_codemod: Any
) -> None:
    mock_llm.fault("no-usage")
    result = llm_run(run_codemod, acme_repo)
    assert result.code == 0, result.manifest["reason"]
    tokens = result.manifest["tokens"]
    assert tokens["total"]["prompt_tokens"] is None and tokens["total"]["completion_tokens"] is None
    assert tokens["total"]["model_calls"] > 0


@pytest.mark.parametrize(
    ("fault", "agent", "reason"),
    [
        ("down", None, "cannot reach the model endpoint"),
        ("http-500", "reviewer", "failed with HTTP 500 after 2 attempt(s)"),
        ("http-429", None, "failed with HTTP 429"),
        ("malformed-json", "coder", "not an OpenAI chat completion"),
        ("deep-json", "planner", "not an OpenAI chat completion"),  # nested past json's depth
        ("deep-error", "scout", "failed with HTTP 500"),
        ("slow", "scout", "did not answer within 2.0s"),
    ],
)
def test_endpoint_faults_pause_the_run(
    mock_llm: Any,
    acme_repo: Path,
    run_codemod: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    agent: str | None,
    reason: str,
) -> None:
    fast_models(tmp_path, monkeypatch)
    if fault == "down":
        monkeypatch.setenv("CODEMOD_LLM_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    else:
        mock_llm.fault(fault, agent=agent, delay_s=6)
    result = llm_run(run_codemod, acme_repo)
    m = result.manifest
    assert (result.code, m["status"]) == (75, "paused"), m["reason"]
    assert reason in m["reason"] and (agent is None or f"agent {agent}" in m["reason"])
    assert "Not ready" in result.artifact("merge_request.md").read_text()
    if agent == "reviewer":  # the work so far is kept, and the missing review is not an approval
        assert FIX_ADDED in result.artifact("changes.patch").read_text()
        review = result.json("review.json")
        assert review["verdict"] == "unsure" and "no review" in review["summary"]
        assert len([c for c in mock_llm.log() if c["agent"] == "reviewer"]) == 2  # max_retries: 1


@pytest.mark.parametrize(
    ("fault", "agent", "reason"),
    [
        ("schema-invalid", "planner", "agent planner's reply does not fit ChangePlan"),
        ("schema-invalid", "reviewer", "unusable review reply"),
        ("review-reject", "reviewer", "reviewer: reject"),
        ("review-unsure", "reviewer", "reviewer: unsure"),
        ("slow", "reviewer", "review timed out"),
        ("tool-loop", "coder", "budget 'max_model_calls' exceeded"),
        ("tool-call-as-text", "coder", "--tool-call-parser hermes"),
        ("no-edit", "coder", "without changing a file"),
        ("deep-arguments", "coder", "made no tool call at all"),  # arguments nested past json's depth
    ],
)
def test_bad_model_behaviour_rejects_the_run(
    mock_llm: Any,
    acme_repo: Path,
    run_codemod: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    agent: str,
    reason: str,
) -> None:
    fast_models(tmp_path, monkeypatch)
    mock_llm.fault(fault, agent=agent, delay_s=6)
    result = llm_run(run_codemod, acme_repo)
    m = result.manifest
    assert (result.code, m["status"]) == (1, "rejected"), m["reason"]
    assert reason in m["reason"]
    assert "Not ready" in result.artifact("merge_request.md").read_text()
    if agent == "coder":  # a coder that did not edit leaves the dispatch unfixed: no silent success
        assert FIX_ADDED not in result.artifact("changes.patch").read_text()
        assert not [t for t in result.trace() if t["actor"] == "coder" and t["tool"] in ("write", "replace")]
    if fault == "tool-loop":
        reads = [t for t in result.trace() if t["actor"] == "coder" and t["tool"] == "read"]
        assert len(reads) >= 10
    if agent == "reviewer":  # green tests do not override the reviewer: no approval, no ready MR
        assert result.json("review.json")["verdict"] == ("reject" if fault == "review-reject" else "unsure")
        assert m["verifications"][-1]["passed"]


def test_a_permanent_endpoint_error_ends_the_run_without_a_retry(
    mock_llm: Any, acme_repo: Path, run_codemod: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_models(tmp_path, monkeypatch)
    mock_llm.fault("auth", agent="planner")
    result = llm_run(run_codemod, acme_repo)
    m = result.manifest
    assert (result.code, m["status"]) == (2, "bad_input"), m["reason"]
    assert "refused the credentials (HTTP 401)" in m["reason"] and "CODEMOD_LLM_API_KEY" in m["reason"]
    assert len([c for c in mock_llm.log() if c["agent"] == "planner"]) == 1


def test_a_server_that_rejects_json_schema_fails_once_then_the_probe_makes_it_pass(
    mock_llm: Any,
    acme_repo: Path,
    run_codemod: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    own_probe_file: Path,
) -> None:
    """llama-cpp-python's 500 on json_schema: exit 1 and one request, never 75; after `task llm:status`
    the run asks for json_object and finishes. No traceback and no agno log line on the console."""
    from agentic_codemod.llm import backend as llm_backend

    fast_models(tmp_path, monkeypatch)
    mock_llm.behave("no-json-schema", "tools-need-choice")
    failed = llm_run(run_codemod, acme_repo)
    m = failed.manifest
    assert (failed.code, m["status"]) == (1, "rejected"), m["reason"]
    assert "does not support what the request asks for (HTTP 500)" in m["reason"]
    assert "Traceback" not in m["reason"] and "site-packages" not in m["reason"]
    assert len(mock_llm.log()) == 1  # the scout's first request, not retried
    assert "Traceback" not in failed.out + failed.err and "ERROR" not in failed.out + failed.err
    calls = [t for t in failed.trace() if t["tool"] == "model_call"]
    assert len(calls) == 1 and '"http_status": 500' in calls[0]["result"]

    env = {"CODEMOD_LLM_BASE_URL": mock_llm.url, "CODEMOD_LLM_MODEL": "mock-model"}
    assert llm_backend.main(["status"], {**env, "CODEMOD_LLM_PROBE": str(own_probe_file)}) == 0
    mock_llm.behave("no-json-schema", "tools-need-choice")
    before = len(mock_llm.log())
    rerun = acme_repo.parent / "again"
    materialize.materialize(ACME_APP, rerun)
    passed = llm_run(run_codemod, rerun)
    m = passed.manifest
    assert passed.code == 0, m["reason"]
    assert m["llm"]["probe"]["structured_output"] == "json_object"
    assert {r["structured_output"] for r in m["llm"]["roles"].values()} == {"json_object", None}
    second = mock_llm.log()[before:]
    assert second and all(c["response_format"] != "json_schema" for c in second)
    assert all(c["tool_choice"] == "auto" for c in second if c["tools"])


def test_a_role_over_its_token_budget_fails_the_run_naming_it(
    mock_llm: Any, acme_repo: Path, run_codemod: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "models.yml"
    path.write_text(FAST_MODELS.replace("coder: {}", "coder: {max_tokens: 50}"))
    monkeypatch.setenv("CODEMOD_LLM_MODELS", str(path))
    result = llm_run(run_codemod, acme_repo)
    m = result.manifest
    assert (result.code, m["status"]) == (1, "rejected"), m["reason"]
    assert "budget 'max_tokens' exceeded" in m["reason"]
    coder = m["tokens"]["roles"]["coder"]
    assert coder["prompt_tokens"] + coder["completion_tokens"] > 50


def fast_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "models.yml"
    path.write_text(FAST_MODELS)
    monkeypatch.setenv("CODEMOD_LLM_MODELS", str(path))


def test_a_scribe_obeying_an_injection_writes_inert_markdown_and_hides_no_evidence(
    mock_llm: Any, acme_repo: Path, run_codemod: Any
) -> None:
    """The scribe read the candidate patch (the repository's words): what it writes keeps its headings,
    nothing else of it renders, and the run's evidence after it stays visible and the binding holds."""
    from markdown_it import MarkdownIt

    from agentic_codemod.publish.check import check_candidate

    mock_llm.fault("hostile-scribe", agent="scribe")
    result = llm_run(run_codemod, acme_repo)
    assert result.code == 0, result.manifest["reason"]
    source = result.artifact("merge_request.md").read_text()
    assert "evil.example" in source  # the model's words are there, as words
    assert source.startswith("# Migrate acme-sdk to 2.1 (acme-sdk -> 2.1.0)\n")  # the tool's title, not its
    assert "gitlab.example" not in source.splitlines()[0]
    assert source.splitlines()[2] == "\\---"  # no front matter opened before the evidence
    rendered = MarkdownIt("commonmark").render(source)
    assert "<h2>Why</h2>" in rendered  # its heading stays one
    assert "<img" not in rendered and "<a " not in rendered and "<b>" not in rendered
    assert "<details open>" not in rendered and "<!--\n" not in rendered
    assert "17 passed" in rendered  # the run's evidence after the model's text is not swallowed
    assert "@all" not in source.replace("\\@all", "")  # escaped for GitLab
    assert check_candidate(result.run_dir).sha256 == result.manifest["candidate"]["sha256"]
