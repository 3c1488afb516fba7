"""Shared fixtures of the npm adapter tests: the local registry (fixtures/npm-registry) and a small app."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fixtures_support import npm_registry

REPO = Path(__file__).resolve().parents[3]
APP_TEST = """const test = require("node:test");
const assert = require("node:assert");
const sdk = require("acme-sdk");
test.describe("client", () => {
  test.it("fetches a resource", () => {
    assert.equal(sdk.connect("https://api").fetch("/x").url, "https://api/x");
  });
  test.it("knows its version", () => {
    assert.match(sdk.VERSION, /^[12]\\./);
  });
});
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with npm_registry(tmp_path, monkeypatch) as url:
        yield url


def write_app(root: Path, range_: str) -> Path:
    root.mkdir()
    manifest: dict[str, object] = {"name": "app", "version": "1.0.0", "scripts": {"test": "node --test"}}
    manifest["dependencies"] = {"acme-sdk": range_}
    (root / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (root / "test").mkdir()
    (root / "test" / "client.test.js").write_text(APP_TEST)
    return root


@pytest.fixture
def app() -> Callable[[Path, str], Path]:
    """write_app(root, range): a small app depending on acme-sdk with `range`, tested with node --test."""
    return write_app
