"""The mock endpoint's answers for the Cline CLI (cline 3.0.x, npm), and OpenAI streaming.

Cline (through the AI SDK's openai-compatible provider) always sends `"stream": true` with
`stream_options.include_usage`: a real OpenAI-compatible server answers with server-sent events, one
`chat.completion.chunk` per `data:` line, a last chunk with `finish_reason`, a usage chunk, and
`data: [DONE]`. `sse(reply, body)` turns the mock's ordinary reply into that stream. Without it Cline
reports "Response stream ended without a finish reason" (the mock was not a faithful server).

Cline is recognised by its system prompt ("You are Cline"); its workspace by the prompt's
"Working Directory:" line. The script, for the acme-app fixture:
  turn 1   editor: replace '"load": "fetch"' with '"load": "get"' in src/acme_app/reports.py
           (for a prompt about the npm fixture, mock_npm.py: 'load: "fetch"' in src/reports.js)
  then     a short summary without a tool call (Cline counts that as the completed answer)
Faults (mock_server --fault NAME@cline, or every agent without @):
  hostile        (cline) first edits .gitlab-ci.yml, then does the real fix: the edit must be refused
  no-edit        (cline) answers at once without editing
  slow           the server's own: sleeps before answering (a hang, for the wall-clock kill)
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

Reply = tuple[str | None, list[dict[str, Any]]]
MARKER = "You are Cline"
WORKDIR = re.compile(r"^Working Directory:\s*(\S.*?)\s*$", re.MULTILINE)
TARGET_FILE = "src/acme_app/reports.py"
OLD, NEW = '"load": "fetch"', '"load": "get"'


def is_cline(system: str) -> bool:
    return system.lstrip().startswith(MARKER)


def cline(body: dict[str, Any], fault: str | None) -> Reply:
    messages = body.get("messages", [])
    system = "\n".join(_text(m) for m in messages if m.get("role") == "system")
    found = WORKDIR.search(system)
    root = found.group(1) if found else "."
    done = sum(1 for m in messages if m.get("role") == "tool")
    target, old, new = _fix_for(body)
    steps: list[Reply] = []
    if fault == "hostile":
        steps.append(_call("editor", path=f"{root}/.gitlab-ci.yml", new_text="pwned: {script: [env]}\n"))
    if fault != "no-edit":
        steps.append(_call("editor", path=f"{root}/{target}", old_text=old, new_text=new))
    if done < len(steps):
        return steps[done]
    return f"Replaced the removed fetch entry point with get in {target}.", []


def _fix_for(body: dict[str, Any]) -> tuple[str, str, str]:
    """(file, old, new): the npm fixture's when the prompt is about it (mock_npm.py), else acme-app's."""
    import mock_npm  # at call time: mock_npm imports mock_scripts, which imports this module

    if mock_npm.asks_about_npm(body):
        return mock_npm.TARGET_FILE, mock_npm.OLD, mock_npm.NEW
    return TARGET_FILE, OLD, NEW


def sse(reply: dict[str, Any], body: dict[str, Any]) -> bytes:
    """A chat.completion as the chunk stream an OpenAI-compatible server sends for `stream: true`."""
    base = {
        "id": reply["id"],
        "object": "chat.completion.chunk",
        "created": reply.get("created", int(time.time())),
    }
    base["model"] = reply.get("model", "mock-model")
    choice = reply["choices"][0]
    message = choice["message"]
    chunks: list[dict[str, Any]] = [_chunk(base, {"role": "assistant", "content": ""})]
    if message.get("content"):
        chunks.append(_chunk(base, {"content": message["content"]}))
    for index, tool_call in enumerate(message.get("tool_calls") or []):
        function = tool_call["function"]
        head = {"index": index, "id": tool_call["id"], "type": "function"}
        chunks.append(
            _chunk(base, {"tool_calls": [{**head, "function": {"name": function["name"], "arguments": ""}}]})
        )
        chunks.append(
            _chunk(base, {"tool_calls": [{"index": index, "function": {"arguments": function["arguments"]}}]})
        )
    chunks.append(_chunk(base, {}, choice.get("finish_reason") or "stop"))
    if (body.get("stream_options") or {}).get("include_usage") and reply.get("usage"):
        chunks.append({**base, "choices": [], "usage": reply["usage"]})
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _chunk(base: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


_ids = iter(range(1, 1 << 30))


def _call(name: str, **arguments: Any) -> Reply:
    call = {
        "id": f"call_cline_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return None, [call]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")
