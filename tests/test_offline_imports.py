"""An offline Python run loads only what it uses: not the npm adapter's semver library, not urllib.request,
and its report page compiles no template (report/compiled/ holds them). Checked on a real run of the CLI
in a process of its own, from what that process had in sys.modules and compiled when it ended."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Runs module argv[2] as __main__ with the arguments after it; at exit writes argv[1]: the modules loaded
# and every .html source compiled (jinja2 compiles a template's Python under the template's file name).
RECORDER = """
import atexit, json, runpy, sys
out, module, sys.argv = sys.argv[1], sys.argv[2], [sys.argv[2], *sys.argv[3:]]
compiled = []
sys.addaudithook(
    lambda event, args: compiled.append(str(args[1]))
    if event == "compile" and str(args[1]).endswith(".html") else None
)
seen = lambda: {"modules": sorted(sys.modules), "compiled": compiled}
atexit.register(lambda: open(out, "w").write(json.dumps(seen())))
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _recorded(
    out: Path, module: str, *argv: str, path: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]]]:
    env = {**os.environ, "AGNO_TELEMETRY": "false", **({"PYTHONPATH": str(path)} if path else {})}
    done = subprocess.run(
        [sys.executable, "-c", RECORDER, str(out), module, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return done, json.loads(out.read_text())


def test_the_recorder_sees_a_template_compiled_and_semver_loaded(tmp_path: Path) -> None:
    """The control: where a template is compiled or an npm range read, the recorder says so."""
    script = (
        "from jinja2 import FileSystemLoader\n"
        "from agentic_codemod.adapters.npm import versioning\n"
        "from agentic_codemod.report import page\n"
        "page.new_environment(FileSystemLoader(page.TEMPLATES)).get_template('base.html')\n"
        "assert versioning.matches('1.2.0', '^1.0.0')\n"
    )
    (tmp_path / "control.py").write_text(script)
    done, seen = _recorded(tmp_path / "seen.json", "control", path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [Path(name).name for name in seen["compiled"]] == ["base.html"]
    assert "nodesemver" in seen["modules"]


@pytest.mark.slow
def test_an_offline_python_run_loads_only_what_it_uses(
    acme_repo: Path, wheels: Path, context_root: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    done, seen = _recorded(
        tmp_path / "seen.json",
        "agentic_codemod",
        *("run", "--repo", str(acme_repo), "--task", str(ROOT / "fixtures/tasks/acme-sdk-2-rules.yml")),
        *("--run-dir", str(run_dir), "--context", str(context_root), "--offline", "--quiet"),
        *("--find-links", str(wheels), "--no-index"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "succeeded"
    assert (run_dir / "report.html").is_file()
    modules = set(seen["modules"])
    # the npm adapter loaded (the registry) and the page was written from the compiled templates
    loaded = {"agentic_codemod.adapters.npm.versioning", "agentic_codemod.report.precompiled", "jinja2"}
    assert loaded <= modules
    assert not modules & {"nodesemver", "urllib.request", "http.client"}
    assert seen["compiled"] == []  # report.html came from report/compiled/
