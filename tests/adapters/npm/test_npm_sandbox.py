"""npm inside the real sandbox: the install box reaches the (local) registry, install scripts run only
in `npm rebuild`, never with the caller's credentials, and tests run with no network."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.config import Settings
from agentic_codemod.tools import sandbox
from agentic_codemod.tools.verification import SandboxRunner, scrubbed_env

pytestmark = [
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]


def test_install_and_tests_in_the_sandbox(
    tmp_path: Path, registry: str, monkeypatch: pytest.MonkeyPatch, app: Callable[[Path, str], Path]
) -> None:
    monkeypatch.setenv("NPM_CONFIG_USERCONFIG", str(tmp_path / "user.npmrc"))
    (tmp_path / "user.npmrc").write_text("//127.0.0.1/:_authToken=npm_SECRETTOKEN1234567890\n")
    root = app(tmp_path / "repo", "^1.0.0")
    manifest = json.loads((root / "package.json").read_text())
    # An install script that records what it saw: the credentials file must be gone by then.
    (root / "postinstall.js").write_text(
        "const fs=require('fs');fs.writeFileSync('seen.txt', String(fs.existsSync('.codemod-npmrc')) + "
        "' ' + (process.env.npm_config_userconfig||''))"
    )
    manifest["scripts"]["postinstall"] = "node postinstall.js"
    (root / "package.json").write_text(json.dumps(manifest))
    env = scrubbed_env({"PATH": "/usr/bin:/bin"}, ["PATH"], [], home=tmp_path / "h", tmp=tmp_path / "t")
    runner = SandboxRunner(env, 20_000)
    policy = sandbox.Policy("sandbox", tmp_path / "env", index_network=True)
    boxed = runner.boxed(policy.for_install(root))
    result = ADAPTER.prepare_environment(root, tmp_path / "env", Settings(), boxed, ["acme-sdk^1.0.0"])
    assert all(r.ok for r in result.install_log), result.install_log[-1].output_tail
    assert ADAPTER.installed_versions(root, result, boxed) == {"acme-sdk": "1.1.0"}
    assert (tmp_path / "env/project/seen.txt").read_text().startswith("false")
    assert "SECRETTOKEN" not in "".join(r.output_tail for r in result.install_log)
