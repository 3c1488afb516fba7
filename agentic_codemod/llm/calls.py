"""One model call, bounded and on the record: metering, retries by meaning, time budgets, the context
check and the trace line (ARCHITECTURE.md §6.6, §6.7).

    clock = Clock(max_run_s=3600, role_s={"coder": 1200}, started=epoch_seconds)
    meter = Meter()
    model = MeteredModel(id=..., meter=meter, clock=clock, trace=trace, actor="coder", role_name="coder",
                         attempts=2, context_tokens=8192, chars_per_token=6.0)
    with agno_logs_to(trace):        # agno's log lines go to the trace, not the console
        agent.run(...)
    meter.stopped                    # BudgetExceeded / ContextTooLong that ended the agent, if one did
    meter.last_error                 # the provider error of the last failed call (see llm_errors)

Retries are ours (the openai client's are 0): only what `llm_errors.classify` calls retryable is sent
again — never a permanent error, never a timed-out request — after Retry-After when the server gives
one, within the time budget. Every call is one trace line: role, model, request size, HTTP status,
finish reason, tokens, duration (the Trace redacts and bounds it).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from agno.models.openai.like import OpenAILike

from agentic_codemod.errors import BudgetExceeded, CodemodError
from agentic_codemod.llm.errors import ContextTooLong, classify, error_text, root_cause

MAX_RETRY_WAIT_S = 60.0  # a Retry-After longer than this pauses the run (75) instead of sleeping
BACKOFF_S = 1.0


class Meter:
    """What one role cost: model calls, tool calls, tokens. A token figure is None (unknown) as soon as
    one reply came without usage: an unknown is never shown as 0."""

    def __init__(self) -> None:
        self.model_calls = 0
        self.tool_calls = 0
        self.prompt_tokens: int | None = 0
        self.completion_tokens: int | None = 0
        self.last_error: BaseException | None = None
        self.attempts = 0  # attempts of the last failed call
        self.stopped: CodemodError | None = None  # a budget or context refusal inside a model call

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


class Clock:
    """Wall-clock budgets of one run: `max_run_seconds` from the run's start, and seconds per role
    (`role_seconds`), spent only while that role's agent runs."""

    def __init__(
        self, max_run_s: float, role_s: Mapping[str, float] | None = None, started: float | None = None
    ) -> None:
        self.max_run_s = max_run_s
        self.role_s = dict(role_s or {})
        self.started = time.time() if started is None else started
        self.spent: dict[str, float] = {}
        self._active: tuple[str, float] | None = None

    @contextmanager
    def role(self, name: str) -> Iterator[None]:
        self._active = (name, time.time())
        try:
            yield
        finally:
            self.spent[name] = self.spent.get(name, 0.0) + time.time() - self._active[1]
            self._active = None

    def remaining(self, role: str) -> tuple[float, str, float, float]:
        """(seconds left, budget name, its limit, seconds used) of the budget that ends first."""
        now = time.time()
        run_used = now - self.started
        best = (self.max_run_s - run_used, "max_run_seconds", self.max_run_s, run_used)
        if role in self.role_s:
            active = now - self._active[1] if self._active and self._active[0] == role else 0.0
            used = self.spent.get(role, 0.0) + active
            limit = self.role_s[role]
            if limit - used < best[0]:
                best = (limit - used, f"role_seconds.{role}", limit, used)
        return best

    def check(self, role: str) -> float:
        """Seconds left for this role; BudgetExceeded when none are."""
        left, name, limit, used = self.remaining(role)
        if left <= 0:
            raise BudgetExceeded(name, limit, round(used, 1))
        return left


@dataclass
class MeteredModel(OpenAILike):
    """OpenAILike that counts, bounds, retries by meaning and traces each call."""

    meter: Meter | None = None
    clock: Clock | None = None
    trace: Any = None  # tools.trace.Trace
    actor: str = "model"
    role_name: str = ""
    attempts: int = 1  # 1 + max_retries of the role
    context_tokens: int | None = None  # the model's context as the endpoint reports it
    chars_per_token: float = 6.0  # a prompt has at least chars / this many tokens
    _request_timeout: float | None = field(default=None, repr=False)
    _last_reply: dict[str, Any] = field(default_factory=dict, repr=False)

    def get_request_params(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        params = super().get_request_params(*args, **kwargs)
        if self._request_timeout is not None:
            params["timeout"] = self._request_timeout
        return params

    def _parse_provider_response(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        choices = getattr(response, "choices", None) or []
        usage = getattr(response, "usage", None)
        self._last_reply = {
            "finish_reason": getattr(choices[0], "finish_reason", None) if choices else None,
            "prompt_tokens": getattr(usage, "prompt_tokens", None),
            "completion_tokens": getattr(usage, "completion_tokens", None),
        }
        return super()._parse_provider_response(response, *args, **kwargs)

    def invoke(self, *args: Any, **kwargs: Any) -> Any:
        meter = self.meter or Meter()
        messages = kwargs.get("messages", args[0] if args else [])
        tools = kwargs.get("tools")
        size = request_chars(messages, tools)
        self._refuse_if_too_long(meter, size)
        attempt = 0
        while True:
            attempt += 1
            budget_bound = self._timeout_for_this_call(meter)
            meter.model_calls += 1
            started = time.monotonic()
            self._last_reply = {}
            try:
                response = super().invoke(*args, **kwargs)
            except Exception as raised:
                exc = root_cause(raised) or raised  # now: agno re-raises it later with itself as cause
                meaning = classify(exc)
                meter.add_usage(None)  # what a failed call cost is unknown, not 0
                self._record(size, kwargs, attempt, started, meaning.status, error=exc)
                if meaning.cause == "timeout" and budget_bound:
                    self._stop(meter, self._budget_error())
                wait = self._retry_wait(meaning, attempt)
                if wait is None:
                    meter.last_error, meter.attempts = exc, attempt
                    raise
                time.sleep(wait)
                continue
            meter.add_usage(getattr(response, "response_usage", None))
            self._record(size, kwargs, attempt, started, 200)
            return response

    # -- helpers ----------------------------------------------------------------------------------------

    def _timeout_for_this_call(self, meter: Meter) -> bool:
        """Set the per-request timeout: the role's, or less when a time budget ends sooner (then True)."""
        base = float(self.timeout or 120.0)
        if self.clock is None:
            self._request_timeout = base
            return False
        try:
            left = self.clock.check(self.role_name)
        except BudgetExceeded as exc:
            self._stop(meter, exc)
        self._request_timeout = min(base, max(left, 0.1))
        return left < base

    def _budget_error(self) -> BudgetExceeded:
        assert self.clock is not None
        _, name, limit, used = self.clock.remaining(self.role_name)
        return BudgetExceeded(name, limit, round(max(used, limit), 1))

    def _retry_wait(self, meaning: Any, attempt: int) -> float | None:
        """Seconds to wait before sending again, or None: give up now."""
        if not meaning.retryable or attempt >= self.attempts:
            return None
        wait = meaning.retry_after_s if meaning.retry_after_s is not None else BACKOFF_S * attempt
        if wait > MAX_RETRY_WAIT_S:
            return None
        if self.clock is not None and self.clock.remaining(self.role_name)[0] <= wait:
            return None
        return wait

    def _refuse_if_too_long(self, meter: Meter, size: int) -> None:
        if self.context_tokens is None:
            return
        at_least = int(size / self.chars_per_token)
        if at_least >= self.context_tokens:
            error = ContextTooLong(
                f"the prompt of agent {self.actor} (role {self.role_name}) is {size} chars, at least "
                f"{at_least} tokens, and model {self.id} has a context of {self.context_tokens} tokens; "
                "not sent",
                hint="lower max_input_chars for the role in llm/models.yml or serve a longer context",
            )
            if self.trace is not None:
                self.trace.record(
                    self.actor,
                    "model_call",
                    {"role": self.role_name, "model": self.id, "request_chars": size},
                    "",
                    "refused",
                    str(error),
                )
            self._stop(meter, error)

    def _stop(self, meter: Meter, error: CodemodError) -> None:
        meter.stopped = error
        raise error

    def _record(
        self,
        size: int,
        kwargs: Mapping[str, Any],
        attempt: int,
        started: float,
        status: int | None,
        error: BaseException | None = None,
    ) -> None:
        if self.trace is None:
            return
        fmt = kwargs.get("response_format")
        result = {
            "http_status": status,
            "duration_s": round(time.monotonic() - started, 3),
            **self._last_reply,
        }
        if error is not None:
            meaning = classify(error)
            said = (error_text(error) if getattr(error, "response", None) is not None else repr(error))[:1000]
            result |= {"error": meaning.cause, "kind": meaning.kind, "detail": meaning.detail, "server": said}
        arguments = {
            "role": self.role_name,
            "model": self.id,
            "request_chars": size,
            "messages": len(kwargs.get("messages") or []),
            "tools": len(kwargs.get("tools") or []),
            "tool_choice": kwargs.get("tool_choice"),
            "response_format": fmt if isinstance(fmt, dict) else getattr(fmt, "__name__", None),
            "attempt": attempt,
            "timeout_s": self._request_timeout,
        }
        self.trace.record(self.actor, "model_call", arguments, json.dumps(result, default=str))


def request_chars(messages: Any, tools: Any) -> int:
    """Characters a request carries: message contents and tool calls, plus the tool schemas."""
    total = 0
    for message in messages or []:
        content = getattr(message, "content", None)
        total += len(content if isinstance(content, str) else json.dumps(content, default=str))
        calls = getattr(message, "tool_calls", None)
        if calls:
            total += len(json.dumps(calls, default=str))
    if tools:
        total += len(json.dumps(tools, default=str))
    return total


class _TraceHandler(logging.Handler):
    """Warnings and errors of agno, to the trace of the agent that runs (dropped between agents)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.trace: Any = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING or self.trace is None:
            return
        with suppress(Exception):  # a log line must never end a run
            self.trace.record("agno", "log", {"level": record.levelname}, record.getMessage()[:2000])


_AGNO_LOGS = _TraceHandler()


@contextmanager
def agno_logs_to(trace: Any) -> Iterator[None]:
    """agno's loggers never write to the console in LLM mode (their lines would land before the run's
    summary); while an agent runs, its warnings and errors go to the run's trace."""
    for name in [n for n in logging.Logger.manager.loggerDict if n.startswith("agno")]:
        logger = logging.getLogger(name)
        logger.handlers, logger.propagate = [_AGNO_LOGS], False
    _AGNO_LOGS.trace = trace
    try:
        yield
    finally:
        _AGNO_LOGS.trace = None
