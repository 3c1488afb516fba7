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

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentic_codemod.errors import (
    CandidateRejected,
    CodemodError,
    EnvironmentUnavailable,
    InputError,
    ServiceTimeout,
)

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.models.openai.like import OpenAILike

MODELS_FILE = Path("llm") / "models.yml"
TOOL_PARSER_HINT = (
    "serve the model with tool calling enabled: vLLM needs `--enable-auto-tool-choice "
    "--tool-call-parser hermes` (see llm/compose.yml); check with `task llm:status`"
)
START_HINT = "start an endpoint with `task llm:up` or point CODEMOD_LLM_BASE_URL at a running one"


class _Limits(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    timeout_s: float | None = Field(None, gt=0)
    max_retries: int | None = Field(None, ge=0, le=5)
    max_model_calls: int | None = Field(None, ge=1)
    max_input_chars: int | None = Field(None, ge=1_000)
    max_tokens: int | None = Field(None, ge=1)  # prompt + completion tokens of one role in one run


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
    raw: Any = {}
    if source is not None:
        try:
            raw = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(f"{source}: cannot read the models file: {exc}") from exc
    try:
        parsed = _ModelsFile.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"{source}: field '{'.'.join(str(p) for p in err['loc'])}': {err['msg']}") from exc
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


class Meter:
    """What one role cost: model calls, tool calls, tokens. A token figure is None (unknown) as soon as
    one reply came without usage: an unknown is never shown as 0."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_calls = 0
        self.prompt_tokens: int | None = 0
        self.completion_tokens: int | None = 0
        self.last_error: BaseException | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> Meter:  # agno copies models; the meter stays shared
        return self

    def add_usage(self, usage: Any) -> None:
        if usage is None:
            self.prompt_tokens = self.completion_tokens = None
            return
        if self.prompt_tokens is not None:
            self.prompt_tokens += int(getattr(usage, "input_tokens", 0) or 0)
        if self.completion_tokens is not None:
            self.completion_tokens += int(getattr(usage, "output_tokens", 0) or 0)

    def tokens(self) -> int | None:
        """Prompt + completion tokens so far; None when any reply did not say (the budget is then unknown)."""
        if self.prompt_tokens is None or self.completion_tokens is None:
            return None
        return self.prompt_tokens + self.completion_tokens

    def record(self) -> dict[str, Any]:
        return {
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


def accounting(meters: Mapping[str, Meter]) -> dict[str, Any]:
    """run.json `tokens`: per role and in total; a total is None when one role's figure is unknown."""
    roles = {role: meter.record() for role, meter in sorted(meters.items())}
    total: dict[str, Any] = {}
    for key in ("model_calls", "tool_calls", "prompt_tokens", "completion_tokens"):
        values = [r[key] for r in roles.values()]
        total[key] = None if any(v is None for v in values) else sum(values)
    return {"roles": roles, "total": total}


@dataclass
class MeteredModel(OpenAILike):
    """OpenAILike that counts its calls and keeps the last provider error for `endpoint_failure`."""

    meter: Meter | None = None

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        meter = self.meter or Meter()
        meter.model_calls += 1
        try:
            response = super().invoke(*args, **kwargs)
        except Exception as exc:
            meter.last_error = _root_cause(exc)  # now: agno re-raises it later with itself as cause
            meter.add_usage(None)  # what a failed call cost is unknown, not 0
            raise
        meter.add_usage(getattr(response, "response_usage", None))
        return response


def build_model(role: RoleConfig, agent_name: str, meter: Meter) -> MeteredModel:
    return MeteredModel(
        id=role.model,
        name=f"codemod-{role.role}",
        base_url=role.base_url,
        api_key=role.api_key,
        temperature=role.temperature,
        timeout=role.timeout_s,
        max_retries=role.max_retries,
        default_headers={"X-Codemod-Agent": agent_name, "X-Codemod-Role": role.role},
        meter=meter,
    )


def endpoint_failure(exc: BaseException | None, role: RoleConfig, agent: str) -> CodemodError:
    """The error a failed model call ends the run with: EnvironmentUnavailable (exit 75) when the endpoint
    is at fault (down, timeout, 5xx, 429, auth, not an OpenAI reply), CandidateRejected (exit 1) otherwise."""
    import openai

    cause = _root_cause(exc)
    where = f"model endpoint {role.base_url} (agent {agent}, role {role.role}, model {role.model})"
    tries = f"{role.max_retries + 1} attempt(s)"
    if isinstance(cause, openai.APITimeoutError):
        return ServiceTimeout(
            f"{where} did not answer within {role.timeout_s}s ({tries})",
            hint=f"raise timeout_s in llm/models.yml or {START_HINT}",
        )
    if isinstance(cause, openai.APIConnectionError):
        detail = f"{cause} {cause.__cause__ or ''}".strip()
        return EnvironmentUnavailable(f"cannot reach the {where}: {detail}", hint=START_HINT)
    if isinstance(cause, openai.APIStatusError):
        status, text = cause.status_code, _error_text(cause)
        if status in (401, 403):
            return EnvironmentUnavailable(
                f"{where} refused the credentials (HTTP {status}): {text}",
                hint="set CODEMOD_LLM_API_KEY to a key the endpoint accepts",
            )
        if status in (408, 429) or status >= 500:
            return EnvironmentUnavailable(
                f"{where} failed with HTTP {status} after {tries}: {text}",
                hint="retry the job later; the run's state is kept",
            )
        if status == 404:
            return EnvironmentUnavailable(
                f"{where} does not serve the model (HTTP 404): {text}",
                hint="set CODEMOD_LLM_MODEL or the role's model in llm/models.yml",
            )
        if "tool-call-parser" in text or "auto-tool-choice" in text or "tool choice" in text:
            return EnvironmentUnavailable(
                f"{where} cannot call tools (HTTP {status}): {text}", hint=TOOL_PARSER_HINT
            )
        return CandidateRejected(f"{where} refused the request (HTTP {status}): {text}")
    if isinstance(cause, json.JSONDecodeError | openai.APIResponseValidationError) or _not_a_completion(exc):
        return EnvironmentUnavailable(
            f"{where} answered with something that is not an OpenAI chat completion: {cause}",
            hint="check CODEMOD_LLM_BASE_URL points at the /v1 root",
        )
    return CandidateRejected(f"the call to the {where} failed: {type(cause).__name__}: {cause}")


def _root_cause(exc: BaseException | None) -> BaseException | None:
    """The first openai or JSON error in the cause chain, else the deepest cause (agno re-wraps its
    own errors, sometimes in a cycle)."""
    import openai

    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    found = next((e for e in chain if isinstance(e, openai.OpenAIError | json.JSONDecodeError)), None)
    return found or (chain[-1] if chain else None)


def _not_a_completion(exc: BaseException | None) -> bool:
    """agno turns a reply it cannot parse (e.g. a non-JSON body the SDK returned as text) into an
    attribute error on the reply object."""
    text = str(exc or "")
    return "object has no attribute 'choices'" in text or "has no attribute 'usage'" in text


def _error_text(exc: Any) -> str:
    try:
        body = exc.response.json()
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        return str(message or body)[:300]
    except Exception:
        return str(getattr(exc, "message", exc))[:300]
