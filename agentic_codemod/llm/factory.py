"""The model factory: the only module that knows about providers (ARCHITECTURE.md §9).

One contract: an OpenAI-compatible endpoint. `llm/models.yml` says, per role (the `model:` field of an
agent file), which model id, temperature, timeout, retries and budgets; the environment may override
the endpoint (CODEMOD_LLM_BASE_URL), the key (CODEMOD_LLM_API_KEY), the model (CODEMOD_LLM_MODEL) and
the file (CODEMOD_LLM_MODELS).

    models = load_models(context_root)          # ModelsConfig; InputError names the file and field
    role = models.role("coder")                 # RoleConfig
    meter = Meter()                             # model calls and tokens of one role, None = unknown
    state.manifest.tokens = accounting({"coder": meter, ...})
    model = build_model(role, agent_name="coder", meter=meter)   # agno OpenAILike
    error = endpoint_failure(meter.last_error, role, "coder")    # EnvironmentUnavailable | CandidateRejected

Every request carries `X-Codemod-Agent: <agent name>` so an endpoint (or the mock) can tell agents
apart. OpenAILike, not OpenAIChat: vLLM and ollama expect the system prompt with role `system`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_codemod.errors import InputError
from agentic_codemod.yaml_input import load_yaml_model

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agentic_codemod.llm.calls import Clock, Meter, MeteredModel, accounting
from agentic_codemod.llm.errors import START_HINT, TOOL_PARSER_HINT, endpoint_failure

__all__ = [
    "MODELS_FILE",
    "START_HINT",
    "STRUCTURED_OUTPUTS",
    "TOOL_PARSER_HINT",
    "Clock",
    "Meter",
    "MeteredModel",
    "ModelsConfig",
    "RoleConfig",
    "accounting",
    "build_model",
    "endpoint_failure",
    "load_models",
]

MODELS_FILE = Path("llm") / "models.yml"
STRUCTURED_OUTPUTS = ("json_schema", "json_object", "tool_call")
StructuredOutput = Literal["json_schema", "json_object", "tool_call"]


class _Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    timeout_s: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0, le=5)
    max_model_calls: int | None = Field(None, ge=1)
    max_input_chars: int | None = Field(None, ge=1_000)
    max_tokens: int | None = Field(None, ge=1)  # prompt + completion tokens of one role in one run
    # How a structured reply is asked for; unset: what `task llm:status` found the endpoint accepts.
    structured_output: StructuredOutput | None = None
    tool_choice: Literal["auto", "required"] | None = None  # sent with the tools (never left out)
    context_tokens: int | None = Field(None, ge=256)  # the model's context when /v1/models does not say
    max_output_tokens: int | None = Field(None, ge=16)  # `max_tokens` of each request (a reply's length)
    chars_per_token: float | None = Field(None, ge=1, le=16)  # a prompt has >= chars/this tokens


class _Endpoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url: str = "http://127.0.0.1:8000/v1"
    api_key_env: str = "CODEMOD_LLM_API_KEY"


class _ModelsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = "agentic-codemod/models@1"
    endpoint: _Endpoint = Field(default_factory=_Endpoint)
    defaults: _Limits = Field(default_factory=_Limits)
    roles: dict[str, _Limits] = Field(default_factory=dict)


@dataclass(frozen=True)
class RoleConfig:
    role: str
    model: str
    base_url: str
    api_key: str = field(repr=False)
    temperature: float
    timeout_s: float
    max_retries: int
    max_model_calls: int
    max_input_chars: int
    max_tokens: int | None = None  # None: no token budget (and none is claimed in run.json)
    structured_output: StructuredOutput | None = None  # None: the probe's finding, else json_schema
    tool_choice: str = "auto"
    context_tokens: int | None = None
    chars_per_token: float = 6.0
    max_output_tokens: int | None = None  # None: the server's default


@dataclass(frozen=True)
class ModelsConfig:
    source: Path | None  # None: no models file, every role gets `default`
    roles: dict[str, RoleConfig]
    default: RoleConfig

    def role(self, name: str) -> RoleConfig:
        if self.source is None:
            return self.roles.get(name) or replace(self.default, role=name)
        if name not in self.roles:
            where = self.source
            raise InputError(
                f"{where}: no role {name!r} under 'roles' (known: {sorted(self.roles)})",
                hint="add the role to llm/models.yml or change the agent file's `model:`",
            )
        return self.roles[name]


BUILTIN = {
    "model": "Qwen/Qwen2.5-Coder-7B-Instruct",
    "temperature": 0.0,
    "timeout_s": 120.0,
    "max_retries": 1,
    "max_model_calls": 40,
    "max_input_chars": 60_000,
}


def load_models(context_root: Path | None = None, environ: Mapping[str, str] | None = None) -> ModelsConfig:
    """models.yml from CODEMOD_LLM_MODELS, else <context_root>/llm/models.yml, else ./llm/models.yml."""
    env = os.environ if environ is None else environ
    candidates = (
        [Path(env["CODEMOD_LLM_MODELS"])]
        if env.get("CODEMOD_LLM_MODELS")
        else [*([context_root / MODELS_FILE] if context_root is not None else []), MODELS_FILE]
    )
    source = next((p for p in candidates if p.is_file()), None)
    if source is None and env.get("CODEMOD_LLM_MODELS"):
        raise InputError(f"{candidates[0]}: CODEMOD_LLM_MODELS names no file")
    parsed = (
        load_yaml_model(source, _ModelsFile, what="models file", empty_ok=True)
        if source is not None
        else _ModelsFile()
    )
    base_url = env.get("CODEMOD_LLM_BASE_URL") or parsed.endpoint.base_url
    api_key = env.get(parsed.endpoint.api_key_env) or "not-needed"
    defaults = {**BUILTIN, **parsed.defaults.model_dump(exclude_none=True)}
    roles = {}
    for name, limits in {"default": _Limits(), **parsed.roles}.items():
        merged = {**defaults, **limits.model_dump(exclude_none=True)}
        if env.get("CODEMOD_LLM_MODEL"):
            merged["model"] = env["CODEMOD_LLM_MODEL"]
        roles[name] = RoleConfig(role=name, base_url=base_url.rstrip("/"), api_key=api_key, **merged)
    default = roles.pop("default") if "default" not in parsed.roles else roles["default"]
    return ModelsConfig(source=source, roles=roles, default=default)


def build_model(
    role: RoleConfig,
    agent_name: str,
    meter: Meter,
    clock: Clock | None = None,
    trace: Any = None,
    context_tokens: int | None = None,
) -> MeteredModel:
    """The role's model. The openai client never retries (max_retries=0): MeteredModel retries only
    what is worth sending again (llm_errors.classify)."""
    return MeteredModel(
        id=role.model,
        name=f"codemod-{role.role}",
        base_url=role.base_url,
        api_key=role.api_key,
        temperature=role.temperature,
        max_tokens=role.max_output_tokens,
        timeout=role.timeout_s,
        max_retries=0,
        default_headers={"X-Codemod-Agent": agent_name, "X-Codemod-Role": role.role},
        meter=meter,
        clock=clock,
        trace=trace,
        actor=agent_name,
        role_name=role.role,
        attempts=role.max_retries + 1,
        context_tokens=role.context_tokens or context_tokens,
        chars_per_token=role.chars_per_token,
    )
