"""What a failed model call means, and the error it ends the run with (ARCHITECTURE.md §6.6).

    meaning = classify(exc)                 # Meaning(kind, cause, exit_code, hint, retry_after_s, detail)
    error = endpoint_failure(exc, role, agent)   # the CodemodError a run ends with

Classified by meaning, not by status alone (a 500 can be a permanent "json_schema not supported"):

    permanent (never retried; the same request can never pass)
        auth            401/403, "invalid api key", quota          exit 2  (set the key / the plan)
        unknown_model   404, "does not exist", "try pulling it"     exit 2  (set the model)
        tool_parser     "--enable-auto-tool-choice", "--jinja"      exit 2  (start the server with tools)
        context_length  "maximum context length", "exceeds the available context size"   exit 1
        unsupported     "does not support tools", response_format/json_schema not supported, 501
                                                                    exit 1  (structured_output in models.yml)
        bad_request     any other 4xx                               exit 1
    transient (exit 75: the job may be retried later)
        unreachable     connection refused/reset                    retried (the request never ran)
        busy            429, 503, 502, 504, 408                     retried after Retry-After
        server_error    another 5xx                                 retried once
        timeout         no answer in time                           NOT re-sent: a one-request-at-a-time
                                                                    server is still busy with it
        not_completion  a reply that is not a chat completion       not retried

The reason carries one line of the server's message: a traceback, file paths and agno's log lines go
to the trace, never to the console or run.json.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from agentic_codemod import json_input
from agentic_codemod.errors import (
    EXIT_BAD_INPUT,
    EXIT_REJECTED,
    EXIT_UNAVAILABLE,
    CandidateRejected,
    CodemodError,
    EnvironmentUnavailable,
    InputError,
    ServiceTimeout,
)

TOOL_PARSER_HINT = (
    "serve the model with tool calling enabled: vLLM needs `--enable-auto-tool-choice "
    "--tool-call-parser hermes` (see llm/compose.yml), llama.cpp's server `--jinja`; check with "
    "`task llm:status`"
)
START_HINT = "start an endpoint with `task llm:up` or point CODEMOD_LLM_BASE_URL at a running one"
STRUCTURED_HINT = (
    "run `task llm:status` so the probe picks a structured output the endpoint accepts, or set "
    "`structured_output: json_object` (or tool_call) for the role in llm/models.yml"
)
REASON_CHARS = 240

Kind = Literal["permanent", "transient"]

# (cause, markers in the lower-cased error text); first match wins, so order matters.
TEXT_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "context_length",
        (
            "maximum context length",
            "context_length_exceeded",
            "exceeds the available context size",
            "exceed_context_size",
            "context window",
            "prompt is too long",
            "input is too long",
            "too many tokens",
        ),
    ),
    ("auth", ("invalid api key", "incorrect api key", "invalid_api_key", "authentication", "unauthorized")),
    ("auth", ("insufficient_quota", "exceeded your current quota")),
    (
        "unknown_model",
        ("model_not_found", "does not exist", "try pulling it first", "no such model", "unknown model"),
    ),
    ("tool_parser", ("auto-tool-choice", "tool-call-parser", "--jinja", "tool choice requires")),
    (
        "unsupported",
        (
            "does not support tools",
            "not supported",
            "unsupported",
            "is not supported with this model",
            "response_format",
            "json_schema",
            "grammar",
        ),
    ),
)
BUSY = frozenset({408, 429, 502, 503, 504})
HINTS = {
    "auth": "set CODEMOD_LLM_API_KEY to a key the endpoint accepts (and a plan with quota)",
    "unknown_model": (
        "set CODEMOD_LLM_MODEL or the role's model in llm/models.yml to a model the endpoint serves"
    ),
    "tool_parser": TOOL_PARSER_HINT,
    "context_length": (
        "lower max_input_chars for the role in llm/models.yml or serve the model with a longer context"
    ),
    "unsupported": STRUCTURED_HINT,
    "bad_request": "the endpoint refuses this request shape; check it with `task llm:status`",
    "unreachable": START_HINT,
    "busy": "the endpoint is overloaded; retry the job later, the run's state is kept",
    "server_error": "retry the job later, the run's state is kept; the server's log says more",
    "timeout": "raise timeout_s in llm/models.yml, or retry the job when the endpoint is less busy",
    "not_completion": "check that CODEMOD_LLM_BASE_URL points at the /v1 root",
}
PERMANENT_EXIT = {"auth": EXIT_BAD_INPUT, "unknown_model": EXIT_BAD_INPUT, "tool_parser": EXIT_BAD_INPUT}


@dataclass(frozen=True)
class Meaning:
    kind: Kind
    cause: str
    exit_code: int
    hint: str
    status: int | None = None
    detail: str = ""  # one line of the server's message, no traceback
    retry_after_s: float | None = None

    @property
    def retryable(self) -> bool:
        """May the same request be sent again in this run? Never a permanent one, never a timeout."""
        return self.kind == "transient" and self.cause in ("unreachable", "busy", "server_error")


def classify_status(status: int, text: str, headers: Mapping[str, str] | None = None) -> Meaning:
    """The meaning of an HTTP error reply (status, body text or error message, headers)."""
    detail = one_line(text)
    low = text.lower()
    cause = next((c for c, markers in TEXT_RULES if any(m in low for m in markers)), None)
    if status in (401, 403):
        cause = "auth"
    elif status == 404 and cause is None:
        cause = "unknown_model"
    elif status == 501 and cause is None:
        cause = "unsupported"
    if cause == "auth" and status == 429 and "quota" not in low:
        cause = None  # a rate limit that says "authentication" somewhere is still a rate limit
    if cause is not None:
        code = PERMANENT_EXIT.get(cause, EXIT_REJECTED)
        return Meaning("permanent", cause, code, HINTS[cause], status, detail)
    if status in BUSY:
        wait = retry_after(headers or {})
        return Meaning("transient", "busy", EXIT_UNAVAILABLE, HINTS["busy"], status, detail, wait)
    if status >= 500:
        return Meaning("transient", "server_error", EXIT_UNAVAILABLE, HINTS["server_error"], status, detail)
    return Meaning("permanent", "bad_request", EXIT_REJECTED, HINTS["bad_request"], status, detail)


def classify(exc: BaseException | None) -> Meaning:
    """The meaning of whatever a model call raised (openai errors, JSON errors, agno's wrappers)."""
    import openai

    cause = root_cause(exc)
    if isinstance(cause, openai.APITimeoutError):
        return Meaning("transient", "timeout", EXIT_UNAVAILABLE, HINTS["timeout"])
    if isinstance(cause, openai.APIConnectionError):
        detail = one_line(f"{cause} {cause.__cause__ or ''}")
        return Meaning("transient", "unreachable", EXIT_UNAVAILABLE, HINTS["unreachable"], detail=detail)
    if isinstance(cause, openai.APIStatusError):
        headers = dict(cause.response.headers) if cause.response is not None else {}
        return classify_status(cause.status_code, error_text(cause), headers)
    decoding = json.JSONDecodeError | openai.APIResponseValidationError
    if isinstance(cause, decoding) or too_deep_to_decode(cause) or not_a_completion(exc):
        detail = one_line(str(cause))
        return Meaning(
            "transient", "not_completion", EXIT_UNAVAILABLE, HINTS["not_completion"], detail=detail
        )
    return Meaning(
        "permanent", "bad_request", EXIT_REJECTED, HINTS["bad_request"], detail=one_line(repr(cause))
    )


def endpoint_failure(exc: BaseException | None, role: Any, agent: str, attempts: int = 1) -> CodemodError:
    """The error a failed model call ends the run with; its exit code follows the meaning."""
    meaning = classify(exc)
    where = f"model endpoint {role.base_url} (agent {agent}, role {role.role}, model {role.model})"
    tries = f"{attempts} attempt(s)"
    said = f": {meaning.detail}" if meaning.detail else ""
    status = f"HTTP {meaning.status}" if meaning.status else ""
    message = {
        "timeout": (
            f"{where} did not answer within {role.timeout_s}s (not re-sent: the server may still be busy)"
        ),
        "unreachable": f"cannot reach the {where} after {tries}{said}",
        "busy": f"{where} failed with {status} after {tries} (busy){said}",
        "server_error": f"{where} failed with {status} after {tries}{said}",
        "not_completion": f"{where} answered with something that is not an OpenAI chat completion{said}",
        "auth": f"{where} refused the credentials ({status or 'auth'}){said}",
        "unknown_model": f"{where} does not serve the model ({status or 'unknown model'}){said}",
        "tool_parser": f"{where} cannot call tools ({status}){said}",
        "context_length": f"{where}: the prompt does not fit the model's context ({status}){said}",
        "unsupported": f"{where} does not support what the request asks for ({status}){said}",
        "bad_request": f"{where} refused the request ({status or 'error'}){said}",
    }[meaning.cause]
    if meaning.cause == "timeout":
        return ServiceTimeout(message, hint=meaning.hint)
    if meaning.kind == "transient":
        return EnvironmentUnavailable(message, hint=meaning.hint)
    if meaning.exit_code == EXIT_BAD_INPUT:
        return EndpointMisconfigured(message, hint=meaning.hint)
    return EndpointRefused(message, hint=meaning.hint)


class EndpointMisconfigured(InputError):
    """Permanent, and the user's configuration can fix it (key, model, server flags): exit 2."""


class EndpointRefused(CandidateRejected):
    """Permanent: this request can never pass on this endpoint (unsupported, too long): exit 1."""


class ContextTooLong(EndpointRefused):
    """Refused before sending: the prompt cannot fit the context the endpoint reports."""


# -- reading errors ---------------------------------------------------------------------------------

_TRACEBACK = re.compile(r"traceback \(most recent call last\)|^\s*file \"", re.IGNORECASE | re.MULTILINE)
_PATH = re.compile(r"(?:/[\w.+-]+){2,}\.py\b|[A-Za-z]:\\[\w\\.-]+")


def one_line(text: str, limit: int = REASON_CHARS) -> str:
    """The first meaningful line of a server message: no traceback, no file paths, bounded."""
    text = str(text or "")
    found = _TRACEBACK.search(text)
    if found:  # keep what precedes a traceback, else its last line (the exception itself)
        head = text[: found.start()].strip()
        lines = [ln.strip() for ln in text[found.start() :].splitlines() if ln.strip()]
        text = head or (lines[-1] if lines else "")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = lines[0] if lines else ""
    if line.endswith(":") and len(lines) > 1:  # "1 validation error:" says nothing without the next line
        line = f"{line} {lines[1]}"
    line = _PATH.sub("<path>", line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from Retry-After (or retry-after-ms); an HTTP date or garbage is None."""
    low = {k.lower(): v for k, v in headers.items()}
    try:
        if "retry-after-ms" in low:
            return max(0.0, float(low["retry-after-ms"]) / 1000)
        if "retry-after" in low:
            return max(0.0, float(low["retry-after"]))
    except ValueError:
        return None
    return None


def error_text(exc: Any) -> str:
    """The server's error message of an openai error (see `body_text`)."""
    response = getattr(exc, "response", None)
    raw = getattr(response, "text", None)
    return body_text(raw) if raw else str(getattr(exc, "message", exc))


def body_text(raw: str) -> str:
    """The error message in a reply body: error.message (+ code and type), error (a string), detail,
    or the raw text."""
    try:
        body = json_input.loads(raw)
    except ValueError:
        return raw
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            parts = [str(err.get("message") or ""), str(err.get("code") or ""), str(err.get("type") or "")]
            return " ".join(p for p in parts if p and p != "None") or raw
        if isinstance(err, str):
            return err
        if "detail" in body:
            return str(body["detail"])
    return raw


def root_cause(exc: BaseException | None) -> BaseException | None:
    """The first openai or JSON error in the cause chain, else the deepest cause (agno re-wraps its
    own errors, sometimes in a cycle)."""
    import openai

    chain: list[BaseException] = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    found = next((e for e in chain if isinstance(e, openai.OpenAIError | json.JSONDecodeError)), None)
    return found or (chain[-1] if chain else None)


def too_deep_to_decode(exc: BaseException | None) -> bool:
    """A reply body nested past the JSON parser's depth: json raises RecursionError (no ValueError) for
    it, from its decoder. A RecursionError raised anywhere else is a bug, not the endpoint's answer."""
    if not isinstance(exc, RecursionError) or exc.__traceback__ is None:
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).parts[-2:] == ("json", "decoder.py")


def not_a_completion(exc: BaseException | None) -> bool:
    """agno turns a reply it cannot parse (a non-JSON body the SDK returned as text) into an attribute
    error on the reply object."""
    text = str(exc or "")
    return "object has no attribute 'choices'" in text or "has no attribute 'usage'" in text
