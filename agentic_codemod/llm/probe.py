"""The probe behind `task llm:status`: it sends what a run sends, and says what the endpoint supports.

    result = run_probe(role)          # ProbeResult; raises OSError when the endpoint is unreachable
    save(result)                      # .cache/llm/probe.json (CODEMOD_LLM_PROBE): runs read it
    load_for(role)                    # the saved result if it was taken of this endpoint and model

Three requests, built by the same agno model class the agents use (so the same tool format, the
role's `tool_choice` and the same `response_format` a run sends):
  tool_calls   the tool `codemod_probe` with the agents' tool_choice; passes only when the model
               calls it with exactly {"echo": "ok"} in `tool_calls` (not as text, not other args)
  json_schema  response_format json_schema (strict) for {"echo": str}; the reply must validate
  json_object  response_format json_object with the schema in the prompt; the reply must validate
Chosen structured output: json_schema, else json_object, else tool_call (when tool calls work).
The verdict passes when tool calls work and one structured output does. Context length comes from
GET /models (`max_model_len` of vLLM, `context_length`, llama.cpp's `meta.n_ctx_train`).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from agentic_codemod import json_input
from agentic_codemod.llm.errors import body_text, classify_status, one_line

FORMAT = "agentic-codemod/llm-probe@1"
PROBE_FILE = Path(".cache") / "llm" / "probe.json"
ECHO = "ok"
PROBE_TIMEOUT_S = 120.0
PROBE_MAX_TOKENS = 128
SYSTEM = "You are probe, a test client. Follow the user's instruction exactly."
CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length", "n_ctx")


class ProbeAnswer(BaseModel):
    echo: str


def codemod_probe(echo: str) -> str:
    """Echo a value back to the caller.

    Args:
        echo: the value to echo back.
    """
    return echo


@dataclass
class Check:
    ok: bool
    detail: str
    http_status: int | None = None
    duration_s: float = 0.0


@dataclass
class ProbeResult:
    base_url: str
    model: str
    tool_choice: str
    checked_at: str
    tool_calls: Check
    json_schema: Check
    json_object: Check
    structured_output: str | None
    max_model_len: int | None
    usage: dict[str, int] = field(default_factory=dict)  # tokens the probe itself used
    format: str = FORMAT

    @property
    def ok(self) -> bool:
        return self.tool_calls.ok and self.structured_output is not None

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


class ProbeUnavailable(OSError):
    """The endpoint could not be asked (down, busy, timed out): the probe has no verdict (exit 75)."""


def run_probe(role: Any, timeout_s: float = PROBE_TIMEOUT_S) -> ProbeResult:
    """Probe the role's endpoint and model the way a run of that role would call it."""
    from agentic_codemod.llm.calls import MeteredModel

    model = MeteredModel(  # a probe's answers are short: a model that rambles is cut, not waited for
        id=role.model,
        base_url=role.base_url,
        api_key=role.api_key,
        temperature=0,
        max_tokens=min(role.max_output_tokens or PROBE_MAX_TOKENS, PROBE_MAX_TOKENS),
    )
    headers = {"Authorization": f"Bearer {role.api_key}", "X-Codemod-Agent": "probe"}
    usage: dict[str, int] = {"prompt_tokens": 0, "completion_tokens": 0}
    with httpx.Client(base_url=role.base_url, timeout=timeout_s, headers=headers) as client:
        context = _context_length(client, role.model)
        tool = _probe_tool()
        ask_tool = f"Call the tool codemod_probe with echo set to '{ECHO}'."
        params = model.get_request_params(tools=[tool], tool_choice=role.tool_choice)
        tools = _check(client, role.model, ask_tool, params, usage, _tool_call_ok)
        params = model.get_request_params(response_format=ProbeAnswer)
        ask_json = f"Answer with a JSON object whose field echo is '{ECHO}'."
        schema = _check(client, role.model, ask_json, params, usage, _json_ok)
        shape = json.dumps(ProbeAnswer.model_json_schema())
        params = model.get_request_params(response_format={"type": "json_object"})
        obj = _check(client, role.model, f"{ask_json} Use this JSON schema: {shape}", params, usage, _json_ok)
    chosen = "json_schema" if schema.ok else "json_object" if obj.ok else "tool_call" if tools.ok else None
    return ProbeResult(
        base_url=role.base_url,
        model=role.model,
        tool_choice=role.tool_choice,
        checked_at=datetime.now(UTC).isoformat(timespec="seconds"),
        tool_calls=tools,
        json_schema=schema,
        json_object=obj,
        structured_output=chosen,
        max_model_len=context,
        usage=usage,
    )


def probe_file(environ: Any = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("CODEMOD_LLM_PROBE") or PROBE_FILE)


def save(result: ProbeResult, environ: Any = None) -> Path:
    path = probe_file(environ)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result.record(), indent=1) + "\n", encoding="utf-8")
    return path


def load_for(base_url: str, model: str, environ: Any = None) -> dict[str, Any] | None:
    """The saved probe of this endpoint and model; None when there is none, or it is of another one."""
    path = probe_file(environ)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if data.get("base_url") != base_url.rstrip("/") or data.get("model") != model:
        return None
    return data


# -- the requests -----------------------------------------------------------------------------------


def _probe_tool() -> dict[str, Any]:
    from agno.tools.function import Function

    function = Function.from_callable(codemod_probe)
    return {"type": "function", "function": function.to_dict()}


def _check(
    client: httpx.Client,
    model: str,
    ask: str,
    params: dict[str, Any],
    usage: dict[str, int],
    judge: Any,
) -> Check:
    body = {
        "model": model,
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}],
        **{k: v for k, v in params.items() if k not in ("timeout", "extra_headers")},
    }
    started = time.monotonic()
    try:
        reply = client.post("/chat/completions", json=body)
    except httpx.TimeoutException as exc:
        raise ProbeUnavailable(f"{client.base_url} did not answer within {client.timeout.read}s") from exc
    except httpx.TransportError as exc:
        raise ProbeUnavailable(f"{client.base_url} is unreachable: {exc}") from exc
    took = round(time.monotonic() - started, 2)
    if reply.status_code >= 400:
        meaning = classify_status(reply.status_code, body_text(reply.text), reply.headers)
        if meaning.kind == "transient":
            raise ProbeUnavailable(f"{client.base_url} answered HTTP {reply.status_code}: {meaning.detail}")
        return Check(
            False, f"HTTP {reply.status_code} ({meaning.cause}): {meaning.detail}", reply.status_code, took
        )
    try:
        data = json_input.loads(reply.content)
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return Check(False, f"not a chat completion: {one_line(reply.text)}", reply.status_code, took)
    for key in usage:
        usage[key] += int((data.get("usage") or {}).get(key) or 0)
    ok, detail = judge(message)
    return Check(ok, detail, reply.status_code, took)


def _tool_call_ok(message: dict[str, Any]) -> tuple[bool, str]:
    calls = message.get("tool_calls") or []
    content = str(message.get("content") or "")
    if not calls:
        if "codemod_probe" in content or "<tool_call>" in content:
            return False, "the tool call came back as text in `content`, not in `tool_calls`"
        return False, f"no tool call: {one_line(content, 160)!r}"
    function = calls[0].get("function") or {}
    raw = function.get("arguments")
    try:
        args = json_input.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        args = raw
    if function.get("name") != "codemod_probe" or args != {"echo": ECHO}:
        return False, f"wrong call: {function.get('name')}({one_line(str(raw), 160)}), expected echo={ECHO!r}"
    return True, f"codemod_probe({raw})"


def _json_ok(message: dict[str, Any]) -> tuple[bool, str]:
    content = str(message.get("content") or "")
    try:
        answer = ProbeAnswer.model_validate_json(content)
    except ValidationError:
        return False, f"reply does not fit the schema: {one_line(content, 160)!r}"
    exact = "" if answer.echo == ECHO else f" (echo {answer.echo!r}, asked {ECHO!r})"
    return True, f"valid JSON reply{exact}"


def _context_length(client: httpx.Client, model: str) -> int | None:
    try:
        reply = client.get("/models", timeout=10.0)
        entries = json_input.loads(reply.content).get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return context_of(entries, model)


def context_of(entries: list[Any], model: str) -> int | None:
    """The context length /v1/models reports for the model, if it reports one."""
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("id") not in (model, None):
            continue
        for source in (entry, entry.get("meta") or {}):
            for key in (*CONTEXT_KEYS, "n_ctx_train"):
                value = source.get(key) if isinstance(source, dict) else None
                if isinstance(value, int) and value > 0:
                    return value
    return None
