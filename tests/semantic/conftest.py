"""Fixtures for the semantic gate: the fake Jev endpoint, its environment, hand-written run directories."""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_jev import API_KEY, CRITERIA, PATCH, FakeJev

from agentic_codemod.semantic import SemanticSettings


@pytest.fixture
def jev() -> Iterator[FakeJev]:
    fake = FakeJev()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        fake.server.shutdown()
        fake.server.server_close()
        fake.thread.join(5)


@pytest.fixture
def env(jev: FakeJev) -> dict[str, str]:
    return {"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": jev.url}


@pytest.fixture
def closed_port_url() -> str:
    """A loopback URL nothing listens on: connection refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def settings() -> SemanticSettings:
    return SemanticSettings(mode="required", timeout_s=2.0, max_retries=0)


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    """Write the minimal artifacts the gate reads: run.json, changes.patch, review.json."""

    def make(
        *,
        passed: bool = True,
        exit_code: int | None = None,
        output_tail: str = "12 passed in 0.31s",
        patch: str = PATCH,
        criteria: list[str] | None = None,
        frozen_sha: str | None = "auto",
        name: str = "run",
    ) -> Path:
        run_dir = tmp_path / name
        run_dir.mkdir()
        (run_dir / "changes.patch").write_text(patch, encoding="utf-8")
        sha = hashlib.sha256(patch.encode()).hexdigest() if frozen_sha == "auto" else frozen_sha
        verification = {
            "phase": "iteration-1",
            "command": ["python", "-m", "pytest", "-q"],
            "exit_code": (0 if passed else 1) if exit_code is None else exit_code,
            "duration_s": 1.2,
            "passed": passed,
            "output_tail": output_tail,
        }
        run = {
            "task": {"id": "acme-2", "acceptance_criteria": CRITERIA if criteria is None else criteria},
            "verifications": [
                {**verification, "phase": "baseline", "exit_code": 0, "passed": True},
                verification,
            ],
            "candidate": {"sha256": sha} if sha else None,
        }
        (run_dir / "run.json").write_text(json.dumps(run), encoding="utf-8")
        review = {"verdict": "approve", "reviewer": "reviewer", "candidate_sha256": sha}
        (run_dir / "review.json").write_text(json.dumps(review), encoding="utf-8")
        return run_dir

    return make
