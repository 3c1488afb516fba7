"""Shared fixtures of the npm adapter tests: the local registry (fixtures/npm-registry) and a small app."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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


def _serve() -> object:
    spec = importlib.util.spec_from_file_location("npm_registry", REPO / "fixtures/npm-registry/serve.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = _serve().start()  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    monkeypatch.setenv("npm_config_registry", url)
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    monkeypatch.setenv("npm_config_update_notifier", "false")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


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
