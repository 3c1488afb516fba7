"""A hostile baseline running beside the bump (workflow/baseline_run.py), end to end: bwrap, uv, the fixture.

The repository's test knows the host paths of this run exactly (the attacker's best case). While the bump
installs into its copy of the environment (a handshake makes sure it is running), the baseline's test tries
to plant a start-up file (.pth) in both environments, in the candidate's copy and in the run dir, and
lists every process it can see. None of it may land: the bump's environment, the candidate and the
evidence stay as the tool made them, and the baseline's box sees only its own processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentic_codemod.tools.sandbox import probe
from agentic_codemod.workflow import environments

pytestmark = [pytest.mark.slow, pytest.mark.skipif(probe() is not None, reason=f"no sandbox: {probe()}")]

POISON = "zz_poison.pth"


def hostile_test(run_dir: Path) -> str:
    targets = [
        run_dir / "env-after",
        run_dir / "env",
        run_dir / "sandbox" / "repo",
        run_dir / "worktree",
        run_dir,
    ]
    return f"""\
import glob
import os
import time

import acme

TARGETS = {[str(t) for t in targets]!r}
PTH = "import pathlib; pathlib.Path('/codemod/reports/POISONED').write_text('ran')\\n"


def test_poison_the_run_beside_it():
    if not acme.__version__.startswith("1."):
        return  # the candidate's run
    deadline = time.monotonic() + 120
    while not os.path.exists("/codemod/reports/bump-started"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    planted = []
    for target in TARGETS:
        for folder in [target, *glob.glob(target + "/lib/python*/site-packages")]:
            try:
                with open(os.path.join(folder, "{POISON}"), "w") as handle:
                    handle.write(PTH)
                planted.append(folder)
            except OSError:
                pass
    seen = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{{pid}}/cmdline", "rb") as handle:
                    seen.append(handle.read().replace(b"\\0", b" ").decode("utf-8", "replace"))
            except OSError:
                pass
    with open("/codemod/reports/seen.json", "w") as handle:
        import json
        json.dump({{"planted": planted, "processes": seen}}, handle)
"""


def test_a_hostile_baseline_beside_the_bump_reaches_nothing_of_the_run(
    make_repo, run_codemod, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_target = environments.install_target

    def signalling(state):  # type: ignore[no-untyped-def]
        (state.paths.reports / "baseline" / "bump-started").write_text("go\n")
        return install_target(state)

    monkeypatch.setattr(environments, "install_target", signalling)
    run_dir = tmp_path / "run-1"  # run_codemod's first run
    repo = make_repo("hostile-beside", {"tests/test_zz_poison.py": hostile_test(run_dir)})
    result = run_codemod(repo, "acme-sdk-2-rules.yml")
    assert result.run_dir == run_dir
    m = result.manifest
    assert result.code == 0, m["reason"]  # the attack failed quietly: the run is what it would have been
    steps = {s["step"]: s["result"] for s in m["steps"]}
    assert steps["baseline"].startswith("baseline: tests running beside the bump")
    seen = json.loads((run_dir / "reports" / "baseline" / "seen.json").read_text())
    # whatever the test wrote landed in its own box (bwrap's root), never on the host
    assert not list(run_dir.rglob(POISON)), seen["planted"]
    assert not list(run_dir.rglob("POISONED"))
    assert POISON not in result.artifact("changes.patch").read_text()
    # its box runs its own processes only (its bwrap and its pytest): not the bump's installer, not the
    # candidate's tests
    own = [p for p in seen["processes"] if not p.startswith("bwrap ")]
    assert own and all(p.startswith(f"{run_dir / 'env' / 'bin'}/") for p in own), seen["processes"]
    assert m["environments"]["after"]["acme-sdk"] == "2.0.0"
    assert m["verifications"][1]["passed"]
