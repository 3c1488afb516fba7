"""llm/factory.py: models.yml per role, environment overrides, metering, what an endpoint fault becomes."""

from __future__ import annotations

from pathlib import Path

import pytest
from mock_llm import MockLLM, free_port

from agentic_codemod.errors import EnvironmentUnavailable, InputError
from agentic_codemod.llm.factory import Meter, accounting, build_model, endpoint_failure, load_models
from agentic_codemod.models import RepoProfile

ROOT = Path(__file__).resolve().parents[2]


def test_every_agent_role_of_the_project_has_a_model() -> None:
    models = load_models(ROOT, environ={})
    roles = {
        line.split(":", 1)[1].strip()
        for path in (ROOT / ".apm" / "agents").glob("*.agent.md")
        for line in path.read_text().splitlines()
        if line.startswith("model:")
    }
    assert roles and roles <= set(models.roles)
    coder = models.role("coder")
    assert coder.timeout_s == 300 and coder.max_retries >= 0 and coder.base_url.endswith("/v1")


def test_the_environment_overrides_endpoint_model_and_key() -> None:
    env = {
        "CODEMOD_LLM_BASE_URL": "http://gpu.example:8000/v1/",
        "CODEMOD_LLM_MODEL": "qwen",
        "CODEMOD_LLM_API_KEY": "sk-secret-value-123",
    }
    role = load_models(ROOT, environ=env).role("scout")
    assert (role.base_url, role.model, role.api_key) == (
        "http://gpu.example:8000/v1",
        "qwen",
        "sk-secret-value-123",
    )
    assert "sk-secret" not in repr(role)


def test_a_models_file_error_names_the_file_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "models.yml"
    bad.write_text("roles:\n  coder: {timeout_s: -1}\n")
    with pytest.raises(InputError, match=r"models.yml: field 'roles.coder.timeout_s'"):
        load_models(None, environ={"CODEMOD_LLM_MODELS": str(bad)})
    bad.write_text("roles: {coder: {}}\n")
    with pytest.raises(InputError, match="no role 'reviewer'"):
        load_models(None, environ={"CODEMOD_LLM_MODELS": str(bad)}).role("reviewer")


def test_unknown_usage_stays_unknown_and_is_never_zero() -> None:
    known, unknown = Meter(), Meter()
    unknown.add_usage(None)
    unknown.add_usage(type("Usage", (), {"input_tokens": 5, "output_tokens": 2})())
    assert unknown.prompt_tokens is None and unknown.completion_tokens is None
    tokens = accounting({"coder": unknown, "scout": known})
    assert tokens["roles"]["scout"]["prompt_tokens"] == 0
    assert tokens["total"]["prompt_tokens"] is None


def test_the_model_sends_system_messages_and_the_agent_header(mock_llm: MockLLM) -> None:
    from agno.agent import Agent

    role = load_models(ROOT, environ={"CODEMOD_LLM_BASE_URL": mock_llm.url}).role("scout")
    meter = Meter()
    agent = Agent(
        name="scout",
        model=build_model(role, "scout", meter),
        output_schema=RepoProfile,
        add_name_to_context=True,
        telemetry=False,
    )
    assert isinstance(agent.run("go").content, RepoProfile)
    entry = mock_llm.log()[0]
    assert entry["roles"][0] == "system" and entry["recognised_by"] == "system message"
    assert meter.model_calls == 1 and (meter.prompt_tokens or 0) > 0


@pytest.mark.parametrize(
    ("fault", "message", "code"),
    [
        ("http-500", "HTTP 500", 75),
        ("http-429", "HTTP 429", 75),
        ("auth", "refused the credentials (HTTP 401)", 2),
        ("malformed-json", "not an OpenAI chat completion", 75),
        ("deep-json", "not an OpenAI chat completion", 75),  # nested past json's depth: RecursionError
        ("deep-error", "failed with HTTP 500", 75),
        ("slow", "did not answer within 1.0s", 75),
        ("down", "cannot reach", 75),
    ],
)
def test_endpoint_faults_end_with_the_code_of_their_meaning(
    mock_llm: MockLLM, fault: str, message: str, code: int
) -> None:
    from agno.agent import Agent

    url = f"http://127.0.0.1:{free_port()}/v1" if fault == "down" else mock_llm.url
    if fault != "down":
        mock_llm.fault(fault, delay_s=3)
    role = load_models(ROOT, environ={"CODEMOD_LLM_BASE_URL": url}).role("scout")
    role = type(role)(**{**role.__dict__, "timeout_s": 1.0, "max_retries": 0})
    meter = Meter()
    agent = Agent(name="scout", model=build_model(role, "scout", meter), telemetry=False)
    agent.run("go")
    error = endpoint_failure(meter.last_error, role, "scout")
    assert error.exit_code == code and isinstance(error, EnvironmentUnavailable) is (code == 75)
    assert message in str(error) and "agent scout" in str(error)
    assert meter.prompt_tokens is None  # a failed call's cost is unknown


def test_without_a_models_file_every_role_gets_the_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    models = load_models(
        tmp_path, environ={"CODEMOD_LLM_BASE_URL": "http://h:1/v1", "CODEMOD_LLM_MODEL": "m"}
    )
    assert models.source is None
    role = models.role("anything")
    assert (role.role, role.model, role.base_url, role.max_retries) == ("anything", "m", "http://h:1/v1", 1)
