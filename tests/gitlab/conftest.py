"""A loopback fake of the GitLab merge request API, per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_gitlab import JOB_TOKEN, TOKEN, FakeGitLab


@pytest.fixture
def fake_gitlab() -> Iterator[FakeGitLab]:
    fake = FakeGitLab(tokens={("PRIVATE-TOKEN", TOKEN), ("JOB-TOKEN", JOB_TOKEN)}).start()
    try:
        yield fake
    finally:
        fake.stop()
