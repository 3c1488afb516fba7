"""Endpoint errors by meaning: the texts real servers return (vLLM, llama.cpp's server, llama-cpp-python,
ollama, the OpenAI API), read from their sources and docs, and what each must become."""

from __future__ import annotations

import pytest

from agentic_codemod.llm.errors import classify, classify_status, one_line, retry_after

LLAMA_CPP_PYTHON_500 = (
    "Traceback (most recent call last):\n"
    '  File "/srv/venv/lib/python3.11/site-packages/llama_cpp/server/errors.py", line 173, in handler\n'
    "    response = await original_route_handler(request)\n"
    "NotImplementedError: response_format json_schema is not supported with chatml-function-calling"
)

# (server, HTTP status, error text as the server sends it, headers, kind, cause, exit code)
TABLE = [
    # vLLM (vllm/entrypoints/openai: serving_engine, tool parsers)
    ("vllm", 400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
     {}, "permanent", "tool_parser", 2),
    ("vllm", 400, "This model's maximum context length is 4096 tokens. However, you requested 5000 "
     "tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or "
     "completion.",
     {}, "permanent", "context_length", 1),
    ("vllm", 400, "'max_tokens' or 'max_completion_tokens' is too large: 8000. This model's maximum context "
     "length is 4096 tokens and your request has 2778 input tokens (8000 > 4096 - 2778).",
     {}, "permanent", "context_length", 1),
    ("vllm", 404, "The model `Qwen/Qwen2.5-Coder-7B` does not exist.", {}, "permanent", "unknown_model", 2),
    ("vllm", 401, "Unauthorized", {}, "permanent", "auth", 2),
    # llama.cpp's server (tools/server: format_error_response types)
    ("llama.cpp", 400, "request (4476 tokens) exceeds the available context size (4096 tokens), try "
     "increasing it exceed_context_size_error", {}, "permanent", "context_length", 1),
    ("llama.cpp", 401, "Invalid API Key authentication_error", {}, "permanent", "auth", 2),
    ("llama.cpp", 503, "Loading model unavailable_error", {}, "transient", "busy", 75),
    ("llama.cpp", 400, "tools param requires --jinja flag invalid_request_error", {}, "permanent",
     "tool_parser", 2),
    ("llama.cpp", 501, "This server does not support embeddings not_supported_error", {}, "permanent",
     "unsupported", 1),
    # llama-cpp-python 0.3.x with chatml-function-calling: a 500 that can never pass
    ("llama-cpp-python", 500, LLAMA_CPP_PYTHON_500, {}, "permanent", "unsupported", 1),
    # ... and what llama-cpp-python 0.3.36's server answered here to response_format json_schema
    ("llama-cpp-python", 500, "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
     "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': "
     "'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}", {}, "permanent", "unsupported", 1),
    # ollama (its OpenAI-compatible /v1)
    ("ollama", 404, 'model "qwen2.5-coder:7b" not found, try pulling it first', {}, "permanent",
     "unknown_model", 2),
    ("ollama", 400, "registry.ollama.ai/library/gemma3:4b does not support tools", {}, "permanent",
     "unsupported", 1),
    ("ollama", 503, "server busy, please try again.  maximum pending requests exceeded", {}, "transient",
     "busy", 75),
    # the OpenAI API
    ("openai", 401, "Incorrect API key provided: sk-abc***xyz. You can find your API key at "
     "https://platform.openai.com/account/api-keys. invalid_api_key", {}, "permanent", "auth", 2),
    ("openai", 404, "The model `gpt-9` does not exist or you do not have access to it. model_not_found", {},
     "permanent", "unknown_model", 2),
    ("openai", 400, "This model's maximum context length is 8192 tokens. However, your messages resulted in "
     "10000 tokens. Please reduce the length of the messages. context_length_exceeded", {}, "permanent",
     "context_length", 1),
    ("openai", 400, "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this "
     "model.", {}, "permanent", "unsupported", 1),
    ("openai", 429, "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM): Limit "
     "30000, Used 29000, Requested 2000. Please try again in 2s. rate_limit_exceeded", {"retry-after": "2"},
     "transient", "busy", 75),
    ("openai", 429, "You exceeded your current quota, please check your plan and billing details. "
     "insufficient_quota", {}, "permanent", "auth", 2),
    ("openai", 500, "The server had an error while processing your request. Sorry about that!", {},
     "transient", "server_error", 75),
    ("openai", 503, "The engine is currently overloaded, please try again later", {"retry-after-ms": "1500"},
     "transient", "busy", 75),
]  # fmt: skip


@pytest.mark.parametrize(("server", "status", "text", "headers", "kind", "cause", "code"), TABLE)
def test_real_error_texts_are_classified_by_meaning(
    server: str, status: int, text: str, headers: dict[str, str], kind: str, cause: str, code: int
) -> None:
    meaning = classify_status(status, text, headers)
    assert (meaning.kind, meaning.cause, meaning.exit_code) == (kind, cause, code), server
    assert meaning.retryable is (kind == "transient" and cause in ("busy", "server_error"))
    assert meaning.hint and "\n" not in meaning.detail and len(meaning.detail) <= 240


def test_retry_after_is_read_in_seconds_or_milliseconds() -> None:
    assert classify_status(429, "slow down", {"Retry-After": "2"}).retry_after_s == 2.0
    assert classify_status(503, "busy", {"retry-after-ms": "1500"}).retry_after_s == 1.5
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) is None
    assert retry_after({}) is None


def test_a_traceback_never_reaches_the_reason() -> None:
    line = one_line(LLAMA_CPP_PYTHON_500)
    assert line.startswith("NotImplementedError: response_format json_schema is not supported")
    assert "Traceback" not in line and "/srv/venv" not in line and "site-packages" not in line
    assert one_line("boom at /usr/lib/python3.11/site-packages/x/y.py line 3") == "boom at <path> line 3"
    assert len(one_line("x" * 1000)) == 240
    assert one_line("1 validation error:\n  {'msg': 'Input should be text'}") == (
        "1 validation error: {'msg': 'Input should be text'}"
    )


def test_only_a_recursion_error_from_the_json_decoder_is_a_reply_too_deep_to_read() -> None:
    """A body nested past json's depth raises RecursionError in json's decoder: the endpoint's reply is no
    chat completion (a pause). A RecursionError from anywhere else is a bug: permanent, never a pause."""
    import json

    def caught(call: object) -> BaseException:
        try:
            call()  # type: ignore[operator]
        except RecursionError as exc:
            return exc
        raise AssertionError("no RecursionError")

    def recurse() -> None:
        recurse()

    deep = caught(lambda: json.loads("[" * 100_000))
    assert (classify(deep).cause, classify(deep).exit_code) == ("not_completion", 75)
    wrapped = RuntimeError("agno: error in the model call")
    wrapped.__cause__ = deep
    assert classify(wrapped).cause == "not_completion"
    bug = caught(recurse)
    assert (classify(bug).kind, classify(bug).cause) == ("permanent", "bad_request")
