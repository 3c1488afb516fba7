"""`task llm:up` decides by the machine's facts; `llm:status` proves tool calling with a real probe."""

from __future__ import annotations

import pytest
from mock_llm import MockLLM, free_port

from agentic_codemod import llm_backend
from agentic_codemod.llm_backend import TOOL_FLAGS, Facts, ProbeFailed, choose_backend, probe

LINUX_GPU = Facts("Linux", "x86_64", nvidia_gpu=True, docker=True)
MAC_M = Facts("Darwin", "arm64", vllm="/opt/homebrew/bin/vllm")


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (LINUX_GPU, "vllm-gpu"),
        (Facts("Linux", "aarch64", nvidia_gpu=True, docker=True), "vllm-gpu"),
        (Facts("Linux", "x86_64", nvidia_gpu=True, docker=False), "ollama"),  # GPU but no Docker
        (Facts("Linux", "x86_64", nvidia_gpu=False, docker=True), "ollama"),  # Docker but no GPU
        (MAC_M, "vllm-metal"),
        (Facts("Darwin", "arm64"), "ollama"),  # Apple Silicon without vllm-metal installed
        (Facts("Darwin", "x86_64", docker=True, vllm="/usr/local/bin/vllm"), "ollama"),  # Intel Mac: no Metal
        (Facts("Windows", "AMD64"), "ollama"),
        (Facts("Linux", "x86_64", nvidia_gpu=True, docker=True, requested="mock"), "mock"),
        (Facts("Darwin", "arm64", requested="vllm-gpu"), "vllm-gpu"),
    ],
)
def test_the_backend_follows_the_platform(facts: Facts, expected: str) -> None:
    backend = choose_backend(facts)
    assert backend.name == expected
    assert backend.reason


def test_vllm_on_gpu_runs_the_compose_file_and_vllm_metal_runs_vllm_serve_with_tool_calling() -> None:
    gpu = choose_backend(LINUX_GPU)
    assert gpu.up == ["docker", "compose", "-f", "llm/compose.yml", "up", "-d"]
    assert gpu.down[-1] == "down" and not gpu.detach
    metal = choose_backend(MAC_M)
    assert metal.up[:2] == ["/opt/homebrew/bin/vllm", "serve"]
    assert metal.up[-3:] == TOOL_FLAGS == ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"]


def test_the_compose_file_starts_vllm_with_the_tool_parser() -> None:
    text = (llm_backend.Path(__file__).resolve().parents[2] / "llm" / "compose.yml").read_text()
    assert "vllm/vllm-openai" in text
    assert "- --enable-auto-tool-choice" in text and "- --tool-call-parser\n      - hermes" in text


def test_the_mock_and_ollama_endpoints_and_a_model_override() -> None:
    mock = choose_backend(Facts("Linux", "x86_64", requested="mock"))
    assert mock.up[1:] == ["llm/mock_server.py", "--port", "8000"] and mock.base_url.endswith(":8000/v1")
    ollama = choose_backend(Facts("Windows", "AMD64", model="llama3.1:8b"))
    assert ollama.base_url == "http://127.0.0.1:11434/v1" and ollama.model == "llama3.1:8b"


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of"):
        choose_backend(Facts("Linux", "x86_64", requested="tpu"))
    assert llm_backend.main(["up"], {"BACKEND": "tpu"}) == 2


def test_the_probe_passes_on_a_real_tool_call(mock_llm: MockLLM) -> None:
    assert "codemod_probe" in probe(mock_llm.url, "mock-model")
    assert mock_llm.log()[-1]["agent"] == "probe"


def test_the_probe_fails_when_the_tool_call_comes_back_as_text(mock_llm: MockLLM) -> None:
    mock_llm.fault("tool-call-as-text")
    with pytest.raises(ProbeFailed, match="tool-call-parser hermes"):
        probe(mock_llm.url, "mock-model")


def test_the_probe_fails_on_an_error_status(mock_llm: MockLLM) -> None:
    mock_llm.fault("http-500")
    with pytest.raises(ProbeFailed, match="HTTP 200/500"):
        probe(mock_llm.url, "mock-model")


@pytest.mark.parametrize(("fault", "code"), [(None, 0), ("tool-call-as-text", 1)])
def test_status_exit_codes(mock_llm: MockLLM, fault: str | None, code: int) -> None:
    mock_llm.fault(fault)
    env = {"CODEMOD_LLM_BASE_URL": mock_llm.url, "CODEMOD_LLM_MODEL": "mock-model"}
    assert llm_backend.main(["status"], env) == code


def test_status_of_an_endpoint_that_is_down_is_75() -> None:
    env = {"CODEMOD_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    assert llm_backend.main(["status"], env) == 75
