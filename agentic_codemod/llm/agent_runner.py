"""Running one agent of LlmBrain against the endpoint: model, tools, structured output, time budgets.

    runner = AgentRunner(models)                  # one per run
    content, tools, spec = runner.run(state, "plan", prompt, ChangePlan)

What it decides per role (and records in run.json `llm`):
- structured output: `structured_output` of the role in models.yml, else what the probe found this
  endpoint and model accept (.cache/llm/probe.json, `task llm:status`), else json_schema.
    json_schema  agno's response_format json_schema (strict)
    json_object  response_format json_object + the schema in the system prompt (agno's use_json_mode)
    tool_call    a tool `submit_<Schema>` whose parameters are the schema; calling it ends the agent
  The reply is validated against the same pydantic schema in all three (agent_replies.structured_reply).
- tool_choice: the role's (default "auto"), always sent with the tools: some servers (llama-cpp-python's
  chatml-function-calling) never offer tools to the model without it.
- time: `budgets.max_run_seconds` from the run's start and `budgets.role_seconds` per role, checked
  before every model and tool call; the request timeout shrinks to what is left.
- context: the model's context (models.yml `context_tokens`, else the probe's, else GET /models); a
  prompt that cannot fit is refused before it is sent.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

import httpx
from agno.agent import Agent
from agno.run import RunStatus
from pydantic import BaseModel

from agentic_codemod import json_input
from agentic_codemod.errors import BudgetExceeded, CandidateRejected
from agentic_codemod.llm.agent_replies import structured_reply
from agentic_codemod.llm.agent_tools import AgentTools, cut
from agentic_codemod.llm.calls import agno_logs_to
from agentic_codemod.llm.factory import (
    Clock,
    Meter,
    ModelsConfig,
    RoleConfig,
    accounting,
    build_model,
    endpoint_failure,
    load_models,
)
from agentic_codemod.llm.probe import context_of, load_for
from agentic_codemod.workflow.state import RunState

S = TypeVar("S", bound=BaseModel)


class AgentRunner:
    def __init__(self, models: ModelsConfig | None = None) -> None:
        self.models = models
        self.meters: dict[str, Meter] = {}
        self.clock: Clock | None = None
        self._contexts: dict[str, list[Any] | None] = {}

    def role(self, state: RunState, name: str) -> RoleConfig:
        if self.models is None:
            self.models = load_models(state.context_root)
        return self.models.role(name)

    def run(
        self, state: RunState, step: str, prompt: str, schema: type[S] | None
    ) -> tuple[Any, AgentTools, Any]:
        spec = state.context.agent_for_step(step)
        role = self.role(state, spec.model_role)
        meter = self.meters.setdefault(role.role, Meter())
        meter.last_error, meter.stopped = None, None
        state.manifest.models[role.role] = role.model
        clock = self._clock(state)
        mode, context = self._endpoint(state, role, schema)
        tools = AgentTools(
            state,
            spec.name,
            spec.tools,
            meter,
            role.max_model_calls,
            role.max_tokens,
            clock=clock,
            role=role.role,
        )
        functions: list[Any] = list(tools.functions())
        instructions = spec.instructions
        if schema is not None and mode == "tool_call":
            functions.append(tools.submit_function(schema))
            instructions = f"{instructions}\n\n{tools.submit_instruction(schema)}"
        agent = Agent(
            name=spec.name,
            role=spec.description,
            instructions=instructions,
            model=build_model(role, spec.name, meter, clock=clock, trace=state.trace, context_tokens=context),
            tools=functions,
            tool_hooks=[tools.hook],
            tool_choice=role.tool_choice if functions else None,
            output_schema=schema if mode != "tool_call" else None,
            use_json_mode=mode == "json_object",
            add_name_to_context=True,
            telemetry=False,
            retries=0,
        )
        try:
            with agno_logs_to(state.trace), clock.role(role.role):
                output = agent.run(cut(prompt, role.max_input_chars))
        finally:
            state.manifest.tokens = accounting(self.meters)
        if tools.stopped is not None:
            raise tools.stopped
        if meter.stopped is not None:
            raise meter.stopped
        used = meter.tokens()
        if role.max_tokens is not None and used is not None and used > role.max_tokens:
            raise BudgetExceeded("max_tokens", role.max_tokens, used)
        if meter.last_error is not None:  # a failed model call, even one agno reported as completed
            raise endpoint_failure(meter.last_error, role, spec.name, meter.attempts)
        if schema is not None and tools.submitted is not None:
            return structured_reply(tools.submitted, schema, spec.name), tools, spec
        if output.status != RunStatus.completed:
            raise CandidateRejected(
                f"agent {spec.name} ended with status {output.status.value}: {str(output.content)[:300]}"
            )
        if schema is None:
            return output.content, tools, spec
        return structured_reply(output.content, schema, spec.name), tools, spec

    # -- per run and per role ---------------------------------------------------------------------------

    def _clock(self, state: RunState) -> Clock:
        if self.clock is None:
            budgets = state.settings.budgets
            self.clock = Clock(budgets.max_run_seconds, budgets.role_seconds, started=_epoch(state))
        return self.clock

    def _endpoint(
        self, state: RunState, role: RoleConfig, schema: type[BaseModel] | None
    ) -> tuple[str, int | None]:
        """(structured output, context tokens) for this role, recorded in run.json `llm`."""
        probe = load_for(role.base_url, role.model)
        mode: str
        if role.structured_output:
            mode, source = role.structured_output, "models.yml"
        elif probe and probe.get("structured_output"):
            mode, source = str(probe["structured_output"]), "probe"
        else:
            mode, source = "json_schema", "default"
        context = role.context_tokens or (probe or {}).get("max_model_len") or self._reported_context(role)
        record = state.manifest.llm or {"probe": _probe_summary(probe), "roles": {}}
        if record.get("probe") is None and probe is not None:
            record["probe"] = _probe_summary(probe)
        record["roles"][role.role] = {
            "structured_output": mode if schema is not None else None,
            "structured_output_source": source,
            "tool_choice": role.tool_choice,
            "context_tokens": context,
        }
        state.manifest.llm = record
        return mode, context

    def _reported_context(self, role: RoleConfig) -> int | None:
        if role.base_url not in self._contexts:
            try:
                reply = httpx.get(
                    f"{role.base_url}/models",
                    timeout=5.0,
                    headers={"Authorization": f"Bearer {role.api_key}"},
                )
                self._contexts[role.base_url] = json_input.loads(reply.content).get("data") or []
            except (httpx.HTTPError, ValueError, AttributeError):
                self._contexts[role.base_url] = None
        entries = self._contexts[role.base_url]
        return context_of(entries, role.model) if entries else None


def _probe_summary(probe: dict[str, Any] | None) -> dict[str, Any] | None:
    if probe is None:
        return None
    keep = ("base_url", "model", "checked_at", "ok", "structured_output", "max_model_len", "tool_choice")
    summary = {key: probe.get(key) for key in keep}
    for name in ("tool_calls", "json_schema", "json_object"):
        summary[name] = bool((probe.get(name) or {}).get("ok"))
    return summary


def _epoch(state: RunState) -> float | None:
    try:
        return datetime.fromisoformat(state.manifest.started_at).timestamp()
    except (TypeError, ValueError):
        return None
