"""A repository's install script (run by the baseline's `npm rebuild`, in the sandbox) tries to make the
bump test a package of its own under the target's name: the bump's environment is copied from what the
script left, and npm reads what the script wrote. Through `agentic-codemod run --offline` on the npm
fixture, real npm and node, the SDK from the local fixture registry.

The task is the breaking 2.0.0 without migration notes: on the registry's 2.0.0 the fixture's tests fail
(an honest requires_human, exit 3). The script's package claims 2.0.0 and holds 1.x code, on which they
pass: a green run would be a false success. Before the fix both routes below were green (exit 0)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import ROOT, materialize, npm_registry

from agentic_codemod.tools import sandbox

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed"),
    pytest.mark.skipif(sandbox.probe() is not None, reason=f"bwrap cannot start here: {sandbox.probe()}"),
]

TASK = ROOT / "fixtures" / "npm-tasks" / "acme-sdk-2-plain.yml"

# Runs in ENV/project, the environment's copy of the repository, after `npm ci` installed acme-sdk 1.x.
PLANTER = """const fs = require("fs"), path = require("path");
function fake(dir) {  // acme-sdk's 1.x code under the name and version of the target
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "acme-sdk", version: "2.0.0" }));
  fs.copyFileSync(path.join("node_modules", "acme-sdk", "index.js"), path.join(dir, "index.js"));
  fs.writeFileSync(path.join(dir, "PLANTED"), "by the repository's postinstall");
}
const route = process.argv[2];
fs.writeFileSync("planter-ran", route);
if (route === "workspace") {  // ENV/project's own package.json names a workspace called acme-sdk
  const manifest = JSON.parse(fs.readFileSync("package.json", "utf8"));
  manifest.workspaces = ["vendored"];
  fs.writeFileSync("package.json", JSON.stringify(manifest));
  fake("vendored");
} else if (route === "parent") {  // npm walks up from ENV/project to a workspace root in ENV
  const root = { name: "env", private: true, workspaces: ["project", "vendored"] };
  fs.writeFileSync(path.join("..", "package.json"), JSON.stringify(root));
  fake(path.join("..", "vendored"));
}
"""


def hostile_app(tmp_path: Path, route: str) -> Path:
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures" / "npm-app", src)
    manifest = json.loads((src / "package.json").read_text())
    manifest["scripts"]["postinstall"] = f"node planter.js {route}"
    (src / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (src / "planter.js").write_text(PLANTER)
    repo = tmp_path / "repo"
    materialize.materialize(src, repo)
    return repo


@pytest.mark.parametrize("route", ["workspace", "parent"])
def test_attack_an_install_script_puts_its_own_package_in_the_targets_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_codemod: Callable[..., object], route: str
) -> None:
    with npm_registry(tmp_path, monkeypatch):
        result = run_codemod(hostile_app(tmp_path, route), TASK, packages=False)
    m = result.manifest  # type: ignore[attr-defined]
    run_dir: Path = result.run_dir  # type: ignore[attr-defined]
    assert (run_dir / "env" / "project" / "planter-ran").read_text() == route  # the script ran
    assert result.code == 3, m["reason"]  # type: ignore[attr-defined]
    assert m["status"] == "requires_human" and m["classification"] != "green"
    assert m["environments"]["after"] == {"acme-sdk": "2.0.0"}
    assert m["verifications"][-1]["tests"]["failing"] == [
        "orders > loads an order by id",
        "reports > runs a named operation",
    ]
    after = run_dir / "env-after" if (run_dir / "env-after").is_dir() else run_dir / "env"
    installed = after / "project" / "node_modules" / "acme-sdk"
    assert not installed.is_symlink() and not (installed / "PLANTED").exists()
    assert "2.0.0" in (installed / "index.js").read_text()  # the registry's 2.0.0
    assert sorted(p.name for p in after.iterdir()) == ["project"]  # the script's ENV/package.json gone
