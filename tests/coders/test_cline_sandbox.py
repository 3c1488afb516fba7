"""Cline's sandbox, with real bubblewrap: the model endpoint (through the relay) is its only network.
A stand-in for the cline binary probes the network from inside exactly where Cline would run."""

from __future__ import annotations

import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentic_codemod.coders.cline import ClineConfig, run_cline
from agentic_codemod.coders.cline_sandbox import Relay, RelayError, sandboxed
from agentic_codemod.tools.sandbox import probe

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"bubblewrap cannot start here: {probe()}")

PROBE = """
import socket, sys, urllib.request
inner, other = sys.argv[1], int(sys.argv[2])
print("endpoint:", urllib.request.urlopen(inner + "/models", timeout=5).status)
for host, port in (("127.0.0.1", other), ("1.1.1.1", 80)):
    try:
        socket.create_connection((host, port), timeout=3).close(); print("reached", host, port)
    except OSError as exc:
        print("blocked", host, port, type(exc).__name__)
"""


@pytest.fixture
def other_service() -> Iterator[int]:
    """Something else listening on the host's loopback that the sandbox must not reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    yield server.getsockname()[1]
    server.close()


def _stand_in(tmp_path: Path) -> Path:
    binary = tmp_path / "install" / "bin" / "cline"
    binary.parent.mkdir(parents=True)
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} -c "$PROBE_CODE" "$@"\n')
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def test_inside_the_sandbox_only_the_model_endpoint_is_reachable(
    tmp_path: Path, mock_llm: Any, other_service: int
) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    data.mkdir()
    with Relay(mock_llm.url) as relay:
        argv = [str(_stand_in(tmp_path)), relay.inner_url, str(other_service)]
        outer, cwd, env = sandboxed(argv, work, data, relay, "bwrap", {"PROBE_CODE": PROBE})
        done = subprocess.run(outer, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "endpoint: 200" in lines  # the model endpoint, through the relay
    assert any(line.startswith(f"blocked 127.0.0.1 {other_service}") for line in lines), lines
    assert any(line.startswith("blocked 1.1.1.1 80") for line in lines), lines


def test_an_https_endpoint_cannot_be_relayed_and_the_run_pauses(tmp_path: Path, mock_llm: Any) -> None:
    with pytest.raises(RelayError, match="http:// only"):
        Relay("https://models.example:8443/v1")
    binary = _stand_in(tmp_path)
    config = ClineConfig(str(binary), "m", mock_llm.url.replace("http:", "https:"), tmp_path / "c", 10)
    result = run_cline(tmp_path, "migrate it", config)
    assert (result.ok, result.unreachable) == (False, True)
