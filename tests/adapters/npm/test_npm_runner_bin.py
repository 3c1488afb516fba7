"""The detected runner command starts whatever bin file the installed runner version has.

mocha 2-5 ship `bin/mocha` (no .js) and read `--reporter-options`; the command once named
`node_modules/mocha/bin/mocha.js` and `--reporter-option`, so a real package on mocha 2.5.3
(json-stringify-safe, bench/corpus) could not start its baseline. Here a local package laid out like
mocha 2.x is installed by real npm (offline, from a tarball it packs), and the detected argv runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.adapters.npm.test_results import read_results

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

# bin/mocha of the old layout: accepts only the plural option (as mocha 2's commander does) and writes an
# xunit report with one passing test case where it says.
OLD_MOCHA_BIN = """#!/usr/bin/env node
const fs = require("fs");
const args = process.argv.slice(2);
const bad = args.find((a) => a.startsWith("--reporter-option="));
if (bad) { console.error("error: unknown option `--reporter-option'"); process.exit(1); }
const opt = args.find((a) => a.startsWith("--reporter-options="));
const out = opt.split("=").slice(2).join("=");
fs.writeFileSync(out, '<testsuite name="Mocha Tests" tests="1" failures="0" errors="0" skipped="0">' +
  '<testcase classname="Stringify" name="must stringify" time="0"/></testsuite>');
"""


def test_an_old_mocha_layout_starts_through_its_bin_link(tmp_path: Path) -> None:
    runner = tmp_path / "mocha-src"
    (runner / "bin").mkdir(parents=True)
    (runner / "bin" / "mocha").write_text(OLD_MOCHA_BIN)
    (runner / "package.json").write_text(
        json.dumps({"name": "mocha", "version": "2.5.3", "bin": {"mocha": "./bin/mocha"}})
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "npm_config_cache": str(tmp_path / "cache")}
    packed = subprocess.run(
        ["npm", "pack", "--silent", str(runner)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert packed.returncode == 0, packed.stderr
    project = tmp_path / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "p", "scripts": {"test": "mocha"}}))
    argv = ["npm", "install", "--no-save", "--offline", "--ignore-scripts", str(tmp_path / "mocha-2.5.3.tgz")]
    installed = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    assert not (project / "node_modules" / "mocha" / "bin" / "mocha.js").exists()

    command = ADAPTER.detect_test_command(project, None)
    assert command is not None and command.runner == "mocha"
    report = tmp_path / "junit.xml"
    node = shutil.which("node") or "node"
    run = [a.replace("{interpreter}", node).replace("{junit}", str(report)) for a in command.argv]
    done = subprocess.run(run, cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    tally, ids = read_results("mocha", report, done.stdout)
    assert tally is not None and (tally.passed, tally.failing) == (1, [])
    assert ids == ["Mocha Tests > must stringify"]
