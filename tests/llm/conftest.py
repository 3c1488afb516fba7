from __future__ import annotations

from collections.abc import Iterator

import pytest
from mock_llm import MockLLM, start_mock


@pytest.fixture
def mock_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[MockLLM]:
    monkeypatch.setenv("AGNO_TELEMETRY", "false")
    mock = start_mock()
    try:
        yield mock
    finally:
        mock.stop()
