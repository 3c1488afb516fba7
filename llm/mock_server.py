"""A scripted OpenAI-compatible endpoint for tests and CI: a test double, not a model simulator.

    python llm/mock_server.py [--host 127.0.0.1] [--port 0] [--fault NAME[@AGENT]] [--delay-s 30]
                              [--behave NAME ...] [--max-model-len N]

Prints `mock-llm ready port=N url=http://HOST:N/v1` once it accepts connections. Stdlib only.

Routes: GET /v1/models, POST /v1/chat/completions; for tests POST /_control {"fault", "agent",
"delay_s", "behave", "max_model_len"} (a null fault = healthy), GET /_log (one entry per completion
request), POST /_reset.

Behaviours (--behave, combinable, they last until changed): what real servers were seen doing.
  no-json-schema      HTTP 500 with a traceback on response_format json_schema (llama-cpp-python
                      0.3.x with chatml-function-calling); json_object and tool calls still work
  tools-need-choice   tools are never offered to the model unless the request sends tool_choice
                      (llama-cpp-python's chatml-function-calling): it answers in plain text
  wrong-echo          the probe's tool call comes back with other arguments ({"echo": "true"})
  serial              one request at a time: a request waits until the one before it is answered,
                      also when its client gave up (a timed-out request keeps the server busy)
  no-json-object      HTTP 400 on response_format json_object
--max-model-len N: /v1/models reports it (vLLM's `max_model_len`), and a longer prompt gets vLLM's 400.
In tool_call structured output (a `submit_<Schema>` tool in the request) the structured answer comes
back as a call of that tool.

The calling agent is recognised by the name the runtime puts into the system message ("Your name is:
coder"), else by the X-Codemod-Agent header, else by what it asks for (output schema, edit tools).
The answers are scripted for the acme-app fixture (mock_scripts.py) and, for a request about the npm
fixture (its task or patch), for fixtures/npm-app (mock_npm.py).

Faults (without @AGENT a fault hits every agent, except the coder-only ones):
  http-500, http-429, auth (401)     an error status with an OpenAI error body
  malformed-json                     HTTP 200 with a body that is not JSON
  deep-json, deep-error              HTTP 200, or 500, with a JSON body nested 100,000 deep (past
                                     Python's json depth: a RecursionError, not a ValueError);
                                     deep-json also on GET /v1/models, for every agent
  slow                               sleep delay_s before answering (past the client's timeout)
  schema-invalid                     structured roles answer JSON that does not fit their schema
  no-usage                           replies without a `usage` block
  tool-loop         (coder)          calls read_file forever
  tool-call-as-text (coder, probe)   the vLLM failure: the tool call arrives as text in `content`
  deep-arguments    (coder)          the first tool call's arguments nested 100,000 deep
  no-edit           (coder)          reads, then stops without editing: a silent failure
  review-reject, review-unsure (reviewer)  a well-formed verdict that is not approve
  review-approve-with-errors (reviewer)    "approve" with an error finding: not an approval
  hostile-scribe    (scribe)         a title with @all, #1 and an issue URL; a description opening front
                                     matter, with an image from another host, @all, a link, raw HTML and
                                     an unclosed HTML comment (an injection obeyed)
  hostile           (coder)          obeys a prompt injection: tries .env, .gitlab-ci.yml, ../, .git/hooks,
                                     Dockerfile, emptying a test — then does the real fix
  hidden-diff       (coder)          writes src/.gitattributes (*.py -diff linguist-generated) and an
                                     import-time shell command, then does the real fix
  smuggle-manifests (coder)          adds requirements/test.txt, constraints.txt and Pipfile.lock with an
                                     index of their own (MOCK_SMUGGLE_INDEX), then does the real fix
An endpoint that is down is no server at all: point the client at a port nobody listens on.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mock_cline import sse
from mock_scripts import SCRIPTS, call, kind_of, recognise, text_of, tool_names

FAULTS = (
    "http-500",
    "http-429",
    "auth",
    "malformed-json",
    "deep-json",
    "deep-error",
    "slow",
    "schema-invalid",
    "no-usage",
    "tool-loop",
    "tool-call-as-text",
    "deep-arguments",
    "no-edit",
    "hostile",
    "hidden-diff",
    "smuggle-manifests",
    "review-reject",
    "review-unsure",
    "review-approve-with-errors",
    "hostile-scribe",
)
CODER_FAULTS = {
    "tool-loop": "coder",
    "tool-call-as-text": "coder",
    "deep-arguments": "coder",
    "no-edit": "coder",
    "hostile": "coder",
    "hidden-diff": "coder",
    "smuggle-manifests": "coder",
    "review-reject": "reviewer",
    "review-unsure": "reviewer",
    "review-approve-with-errors": "reviewer",
    "hostile-scribe": "scribe",
}
DEEP = 100_000  # nesting of the deep-* faults
BEHAVIOURS = ("no-json-schema", "tools-need-choice", "wrong-echo", "serial", "no-json-object")
# What llama-cpp-python 0.3.x answers to response_format json_schema with chatml-function-calling.
JSON_SCHEMA_500 = (
    "Traceback (most recent call last):\n"
    '  File "/srv/venv/lib/python3.11/site-packages/llama_cpp/server/errors.py", line 173, in '
    "custom_route_handler\n    response = await original_route_handler(request)\n"
    '  File "/srv/venv/lib/python3.11/site-packages/llama_cpp/llama_chat_format.py", line 3790, in '
    "chatml_function_calling\n"
    "NotImplementedError: response_format json_schema is not supported with chatml-function-calling"
)
ERROR_STATUS = {
    "http-500": (500, "internal error"),
    "http-429": (429, "rate limited"),
    "auth": (401, "bad key"),
}


class State:
    def __init__(
        self,
        fault: str | None = None,
        agent: str | None = None,
        delay_s: float = 30.0,
        behave: list[str] | None = None,
        max_model_len: int | None = None,
    ) -> None:
        self.lock = threading.Lock()
        self.busy = threading.Lock()  # held while answering, under the `serial` behaviour
        self.log: list[dict[str, Any]] = []
        self.behave: set[str] = set()
        self.max_model_len = max_model_len
        self.set(fault, agent, delay_s)
        self.set_behaviour(behave or [], max_model_len)

    def set_behaviour(self, behave: list[str], max_model_len: int | None) -> None:
        unknown = [b for b in behave if b not in BEHAVIOURS]
        if unknown:
            raise ValueError(f"unknown behaviour {unknown[0]!r}; known: {', '.join(BEHAVIOURS)}")
        self.behave, self.max_model_len = set(behave), max_model_len

    def set(self, fault: str | None, agent: str | None = None, delay_s: float | None = None) -> None:
        if fault is not None and fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
        self.fault, self.agent = fault, agent or (CODER_FAULTS.get(fault or "") if fault else None)
        if delay_s is not None:
            self.delay_s = delay_s

    def fault_for(self, agent: str) -> str | None:
        if self.fault is None:
            return None
        if self.fault == "tool-call-as-text" and agent == "probe":
            return self.fault
        return self.fault if self.agent in (None, agent) else None


# --- HTTP ------------------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read /_log instead
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            if self.server.state.fault == "deep-json":  # whatever the agent: /models names none
                self._send_raw(200, b'{"data": ' + b"[" * DEEP + b"]" * DEEP + b"}", "application/json")
                return
            model: dict[str, Any] = {"id": "mock-model", "object": "model"}
            if self.server.state.max_model_len:
                model["max_model_len"] = self.server.state.max_model_len
            self._send(200, {"object": "list", "data": [model]})
        elif self.path == "/_log":
            with self.server.state.lock:
                self._send(200, list(self.server.state.log))
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(
                400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}}
            )
            return
        state = self.server.state
        if self.path == "/_control":
            try:
                state.set(body.get("fault"), body.get("agent"), body.get("delay_s"))
                if "behave" in body or "max_model_len" in body:
                    state.set_behaviour(body.get("behave") or [], body.get("max_model_len"))
            except ValueError as exc:
                self._send(400, {"error": {"message": str(exc)}})
                return
            self._send(
                200,
                {
                    "fault": state.fault,
                    "agent": state.agent,
                    "delay_s": state.delay_s,
                    "behave": sorted(state.behave),
                },
            )
        elif self.path == "/_reset":
            with state.lock:
                state.log.clear()
            state.set(None)
            state.set_behaviour([], None)
            self._send(200, {"fault": None})
        elif self.path.rstrip("/") in ("/v1/chat/completions", "/chat/completions"):
            if "serial" in state.behave:
                with state.busy:
                    self._complete(body)
            else:
                self._complete(body)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def _complete(self, body: dict[str, Any]) -> None:
        state = self.server.state
        agent, how = recognise(body, self.headers.get("X-Codemod-Agent"))
        fault = state.fault_for(agent)
        entry = {
            "agent": agent,
            "recognised_by": how,
            "fault": fault,
            "roles": [m.get("role") for m in body.get("messages", [])],
            "tools": tool_names(body),
            "retry": self.headers.get("x-stainless-retry-count"),
            "tool_choice": body.get("tool_choice"),
            "response_format": (body.get("response_format") or {}).get("type"),
            "user": "\n".join(text_of(m) for m in body.get("messages", []) if m.get("role") == "user")[
                :50_000
            ],
        }
        with state.lock:
            state.log.append(entry)
        if fault == "slow":
            time.sleep(state.delay_s)
        refusal = self._refusal(body)
        if refusal is not None:
            entry["answer"] = f"HTTP {refusal[0]}"
            self._send(*refusal)
            return
        if fault in ERROR_STATUS:
            status, problem = ERROR_STATUS[fault]
            error = {"error": {"message": f"mock-llm: {problem}", "type": fault}}
            self._send(status, error, headers={"retry-after": "0"})
            return
        if fault == "malformed-json":
            self._send_raw(200, b'{"id": "chatcmpl-mock", "choices": [{"message": ', "application/json")
            return
        if fault in ("deep-json", "deep-error"):
            key = b'{"id": "chatcmpl-mock", "choices": ' if fault == "deep-json" else b'{"error": '
            deep = key + b"[" * DEEP + b"]" * DEEP + b"}"
            self._send_raw(200 if fault == "deep-json" else 500, deep, "application/json")
            return
        offered = body.get("tools") and ("tools-need-choice" not in state.behave or body.get("tool_choice"))
        if "wrong-echo" in state.behave and fault is None and agent == "probe":
            fault = "wrong-echo"
        if body.get("tools") and not offered:  # the model never saw the tools: it answers in text
            content, tool_calls = "I would read the file first, but I have no tools to do so.", []
        else:
            content, tool_calls = SCRIPTS[kind_of(agent, body)](body, fault)
        submit = next((n for n in tool_names(body) if n.startswith("submit_")), None)
        if submit and offered and content and not tool_calls:  # structured output by tool call
            try:
                data = json.loads(content)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict):
                content, tool_calls = None, call(submit, **data)[1]
        if fault == "deep-arguments" and tool_calls:
            tool_calls[0]["function"]["arguments"] = "[" * DEEP + "]" * DEEP
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
        reply: dict[str, Any] = {
            "id": f"chatcmpl-mock-{len(state.log)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "mock-model"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}
            ],
        }
        if fault != "no-usage":
            prompt = sum(len(text_of(m)) for m in body.get("messages", [])) // 4 + 1
            completion = len(json.dumps(message)) // 4 + 1
            reply["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        entry["answer"] = "tool_calls" if tool_calls else "content"
        if body.get("stream"):  # server-sent events, as OpenAI-compatible servers stream (mock_cline.py)
            self._send_raw(200, sse(reply, body), "text/event-stream")
            return
        self._send(200, reply)

    def _refusal(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """What a real server refuses before generating: formats it cannot serve, a prompt too long."""
        state, fmt = self.server.state, (body.get("response_format") or {}).get("type")
        if fmt == "json_schema" and "no-json-schema" in state.behave:
            return 500, {"error": {"message": JSON_SCHEMA_500, "type": "internal_server_error"}}
        if fmt == "json_object" and "no-json-object" in state.behave:
            message = "response_format type json_object is not supported"
            return 400, {"error": {"message": message, "type": "invalid_request_error"}}
        if state.max_model_len:
            tokens = sum(len(text_of(m)) for m in body.get("messages", [])) // 4 + 1
            if tokens > state.max_model_len:
                message = (
                    f"This model's maximum context length is {state.max_model_len} tokens. However, you "
                    f"requested {tokens} tokens ({tokens} in the messages, 0 in the completion). Please "
                    "reduce the length of the messages or completion."
                )
                return 400, {"error": {"message": message, "type": "BadRequestError", "code": 400}}
        return None

    def _send(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(data).encode(), "application/json", headers)

    def _send_raw(self, status: int, raw: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to say
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: State) -> None:
        super().__init__(address, Handler)
        self.state = state


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="scripted OpenAI-compatible endpoint for tests")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--fault", help=f"NAME[@AGENT], NAME one of: {', '.join(FAULTS)}")
    parser.add_argument("--delay-s", type=float, default=30.0, help="how long the `slow` fault sleeps")
    parser.add_argument("--behave", action="append", default=[], help=f"one of: {', '.join(BEHAVIOURS)}")
    parser.add_argument("--max-model-len", type=int, help="the context /v1/models reports")
    args = parser.parse_args(argv)
    fault, _, agent = (args.fault or "").partition("@")
    try:
        state = State(fault or None, agent or None, args.delay_s, args.behave, args.max_model_len)
    except ValueError as exc:
        parser.error(str(exc))
    server = Server((args.host, args.port), state)
    port = server.server_address[1]
    print(f"mock-llm ready port={port} url=http://{args.host}:{port}/v1", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
