"""Start llm/mock_server.py on a free loopback port and drive its fault scripts (used by tests/llm/ and
tests/test_llm_path.py; imported by path, tests/ is not a package)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "llm" / "mock_server.py"


class MockLLM:
    def __init__(self, proc: subprocess.Popen[str], port: int) -> None:
        self.proc, self.port = proc, port
        self.root = f"http://127.0.0.1:{port}"
        self.url = f"{self.root}/v1"

    def fault(
        self, name: str | None, agent: str | None = None, delay_s: float | None = None
    ) -> dict[str, Any]:
        reply = httpx.post(f"{self.root}/_control", json={"fault": name, "agent": agent, "delay_s": delay_s})
        reply.raise_for_status()
        return reply.json()

    def behave(self, *names: str, max_model_len: int | None = None) -> dict[str, Any]:
        """Real-server behaviours (llm/mock_server.py): no-json-schema, tools-need-choice, wrong-echo,
        serial, no-json-object; and the context /v1/models reports."""
        body = {"behave": list(names), "max_model_len": max_model_len}
        reply = httpx.post(f"{self.root}/_control", json=body)
        reply.raise_for_status()
        return reply.json()

    def log(self) -> list[dict[str, Any]]:
        return httpx.get(f"{self.root}/_log").json()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def start_mock(*args: str) -> MockLLM:
    """Start the mock (extra CLI args allowed) and wait for its ready line."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "ready port=" not in line:
        proc.kill()
        raise RuntimeError(f"the mock did not start: {line}{proc.stdout.read()}")
    return MockLLM(proc, int(line.split("port=")[1].split()[0]))


def free_port() -> int:
    """A loopback port nobody listens on (for 'endpoint down')."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
