"""`fleet --local` over six generated repositories: fleet.json, the summary, independent outcomes."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from fleet_repos import EXIT, TASK, VARIANTS, make_fleet
from fleet_runs import FleetRun, cache_of, run_fleet

from agentic_codemod.adapters.python.installer import find_uv
from agentic_codemod.errors import InputError
from agentic_codemod.fleet.context import snapshot_context
from agentic_codemod.fleet.local import child_pythonpath
from agentic_codemod.fleet.progress import current_step
from agentic_codemod.fleet.record import FleetReport
from agentic_codemod.fleet.repos import load_fleet
from agentic_codemod.status import Status


def test_every_repository_gets_the_outcome_of_its_own_variant(first_run: FleetRun) -> None:
    entries = first_run.report["repos"]
    assert [e["name"] for e in entries] == list(VARIANTS)  # fleet-file order, one entry each
    got = {e["name"]: (e["status"], e["exit_code"]) for e in entries}
    assert got == {kind: (status, EXIT[status]) for kind, (_, _, status) in VARIANTS.items()}


def test_one_failure_or_pause_does_not_stop_the_others(first_run: FleetRun) -> None:
    """The failing, human-needing and paused repositories ran in the same pool as the two that succeeded."""
    ok, docs = first_run.entry("ok"), first_run.entry("ok-docs")
    assert ok["status"] == docs["status"] == "succeeded"
    assert ok["candidate_sha256"] == docs["candidate_sha256"]  # same code, same candidate, run apart
    assert len({e["run_id"] for e in first_run.report["repos"]}) == len(VARIANTS)
    assert len({e["run_dir"] for e in first_run.report["repos"]}) == len(VARIANTS)
    assert first_run.code == 1  # the worst outcome (a failure) is the fleet's exit code


def test_fleet_json_points_at_each_runs_evidence(first_run: FleetRun) -> None:
    report = first_run.report
    assert report["format"] == "agentic-codemod/fleet@1" and report["task_id"] == "acme-sdk-2-rules"
    assert report["task_sha256"] == hashlib.sha256(TASK.read_bytes()).hexdigest()
    assert report["jobs"] == 2 and report["wall_s"] > 0
    for e in report["repos"]:
        run_dir = Path(e["run_dir"])
        manifest = json.loads((run_dir / "run.json").read_text())
        assert manifest["run_id"] == e["run_id"] and manifest["status"] == e["status"], e["name"]
        assert (first_run.fleet_dir / f"{e['name']}.log").is_file()
        assert e["tokens"] is None  # offline: unknown, never 0
        assert e["wall_s"] > 0
    ok = first_run.entry("ok")
    patch = Path(ok["run_dir"]) / "changes.patch"
    assert ok["candidate_sha256"] == hashlib.sha256(patch.read_bytes()).hexdigest()
    assert ok["files_changed"] == 5 and ok["verification"] == "green 17/17 passed"
    assert first_run.entry("endpoint-down")["verification"] == "not run"
    assert "index" in first_run.entry("endpoint-down")["reason"]


def test_repositories_with_one_dependency_set_share_one_environment_template(first_run: FleetRun) -> None:
    """ok, ok-docs, introduced- and pre-existing-failure install the same packages: one template, built
    by the first of them, copied by the others, in the fleet's cache (--cache-dir). no-sdk installs its
    own dependencies (without acme-sdk) to tell whether they bring acme-sdk in: a template of its own."""
    installs = {}
    for name in ("ok", "ok-docs", "introduced-failure", "pre-existing-failure", "no-sdk"):
        manifest = json.loads((Path(first_run.entry(name)["run_dir"]) / "run.json").read_text())
        installs[name] = manifest["installs"]["baseline"]
    if find_uv() is None:
        assert {i["installer"] for i in installs.values()} == {"pip"}
        pytest.skip("uv is not installed (the `uv` extra): no templates")
    own = installs.pop("no-sdk")["template"]
    keys = {i["template"] for i in installs.values()}
    assert len(keys) == 1 and "" not in keys and own not in ("", *keys), installs
    built = [p.name for p in (cache_of(first_run.fleet_dir) / "envs").iterdir() if not p.name.startswith(".")]
    assert sorted(built) == sorted([*keys, own])


def test_the_summary_shows_every_repository_and_the_totals(first_run: FleetRun) -> None:
    for kind, (_, _, status) in VARIANTS.items():
        assert kind in first_run.out and status in first_run.out
    assert "3 done, 1 failed, 1 paused, 1 need a human, 0 skipped" in first_run.out
    assert "repos/min" in first_run.out and "fleet.json" in first_run.out


@pytest.mark.parametrize(
    ("statuses", "code"),
    [
        (["succeeded", "nothing_to_do"], 0),
        (["succeeded", "requires_human"], 3),
        (["paused", "requires_human"], 75),
        (["paused", "rejected", "succeeded"], 1),
        (["paused", "cancelled"], 1),
        (["bad_input", "requires_human"], 1),
        ([], 0),
    ],
)
def test_the_fleet_exit_code_is_its_worst_outcome(statuses: list[str], code: int) -> None:
    repos = [
        {
            "name": f"r{i}",
            "repo": "r",
            "run_dir": "d",
            "status": s,
            "outcome": Status(s).outcome,
            "exit_code": Status(s).exit_code,
        }
        for i, s in enumerate(statuses)
    ]
    report = FleetReport.model_validate(
        {"task_id": "t", "task_sha256": "s", "jobs": 1, "started_at": "now", "repos": repos}
    )
    assert report.exit_code() == code


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("repos: [{name: a, path: x}, {name: a, path: y}]", "appears twice"),
        ("repos: [{name: Bad Name, path: x}]", "repos[0] (name 'Bad Name'), field 'name'"),
        ("repos: [{name: a}]", "needs `path`"),
        ("repos: [{name: a, path: x, colour: red}]", "repos[0] (name 'a'), field 'colour'"),
        ("repos: []", "repos"),
    ],
)
def test_a_bad_fleet_file_names_the_file_and_the_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "fleet.yml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_fleet(path)
    assert str(path) in str(caught.value) and field in str(caught.value)


def test_a_repository_without_a_path_cannot_run_locally(tmp_path: Path) -> None:
    path = tmp_path / "fleet.yml"
    path.write_text("repos: [{name: remote-only, project: g/remote-only}]")
    fleet = load_fleet(path)
    with pytest.raises(InputError, match=r"repos\[remote-only\]\.path"):
        fleet.local_path(fleet.repos[0])


def test_relative_paths_resolve_against_the_fleet_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub" / "fleet.yml"
    path.write_text(
        "defaults: {find_links: [../wheels], offline: true}\nrepos: [{name: a, path: ../repos/a}]"
    )
    fleet = load_fleet(path)
    assert fleet.local_path(fleet.repos[0]) == tmp_path / "repos" / "a"
    assert fleet.run_args(fleet.repos[0], local=True) == [
        "--offline",
        "--find-links",
        str(tmp_path / "wheels"),
    ]


def test_current_step_reads_the_run_dir(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert current_step(run) == "starting"
    (run / "worktree").mkdir(parents=True)
    assert current_step(run) == "intake"
    (run / "env").mkdir()
    assert current_step(run) == "baseline"
    (run / "trace.jsonl").write_text(json.dumps({"actor": "codemod:ACME003", "tool": "write"}) + "\n")
    assert current_step(run) == "codemod ACME003"
    (run / "run.json").write_text("{}")
    assert current_step(run) == "writing artifacts"


def test_each_run_verified_its_own_copy_of_the_context(first_run: FleetRun) -> None:
    """Runs in parallel each `apm install --frozen` their context: on one shared root they would race."""
    assert list((first_run.fleet_dir / ".contexts").iterdir()) == []  # copies are removed after each run
    for e in first_run.report["repos"]:
        manifest = json.loads((Path(e["run_dir"]) / "run.json").read_text())
        if e["status"] != "nothing_to_do":
            assert manifest["apm"]["lock_sha256"], e["name"]


def test_the_context_copy_holds_the_apm_files_and_local_packages(tmp_path: Path) -> None:
    root = tmp_path / "ctx"
    (root / ".apm" / "agents").mkdir(parents=True)
    (root / ".apm" / "agents" / "coder.agent.md").write_text("---\nname: coder\n---\n")
    (root / "packages" / "mig").mkdir(parents=True)
    (root / "packages" / "mig" / "apm.yml").write_text("name: mig\nversion: 1.0.0\n")
    (root / "apm.yml").write_text("name: p\nversion: 0.1.0\ndependencies:\n  apm:\n    - ./packages/mig\n")
    (root / "apm.lock.yaml").write_text("lockfile_version: 1\n")
    (root / "big-unrelated.bin").write_bytes(b"x" * 1000)
    copy = snapshot_context(root, tmp_path / "copy")
    assert (copy / ".apm" / "agents" / "coder.agent.md").is_file()
    assert (copy / "packages" / "mig" / "apm.yml").is_file() and (copy / "apm.lock.yaml").is_file()
    assert not (copy / "big-unrelated.bin").exists()
    (root / "apm.yml").write_text("name: p\nversion: 0.1.0\ndependencies:\n  apm:\n    - ../elsewhere\n")
    with pytest.raises(InputError, match="outside the context root"):
        snapshot_context(root, tmp_path / "copy2")


def test_a_repository_whose_run_never_starts_says_why(tmp_path: Path, context_root: Path) -> None:
    from fleet_runs import run_fleet

    fleet_file = tmp_path / "fleet.yml"
    fleet_file.write_text("defaults: {offline: true}\nrepos:\n  - {name: gone, path: does-not-exist}\n")
    run = run_fleet(fleet_file, tmp_path / "out", context_root, jobs=1)
    entry = run.entry("gone")
    assert run.code == 1 and entry["status"] == "crashed"
    assert "--repo is not a directory" in entry["reason"]


@pytest.mark.parametrize("pythonpath", [None, os.pathsep + "/nowhere", "."], ids=["unset", "empty", "dot"])
def test_an_agentic_codemod_package_in_the_working_directory_does_not_run_the_fleet(
    tmp_path: Path, wheels: Path, context_root: Path, monkeypatch: pytest.MonkeyPatch, pythonpath: str | None
) -> None:
    """Each repository's run is `python -m agentic_codemod` in the fleet's working directory. Started from a
    checkout that holds an `agentic_codemod` package, the runs must still be the tool's own (with -m and no
    -P, Python imports that package first, on the host, with the caller's environment; with -P, an empty
    or relative PYTHONPATH entry, as `export PYTHONPATH=$PYTHONPATH:/x` makes, still put it first)."""
    if pythonpath is None:
        monkeypatch.delenv("PYTHONPATH", raising=False)
    else:
        monkeypatch.setenv("PYTHONPATH", pythonpath)
    fleet_file = make_fleet(tmp_path / "home", ["ok"], wheels)
    checkout = tmp_path / "checkout"
    marker = tmp_path / "ran-on-the-host"
    (checkout / "agentic_codemod").mkdir(parents=True)
    (checkout / "agentic_codemod" / "__init__.py").write_text("")
    (checkout / "agentic_codemod" / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(checkout)
    run = run_fleet(fleet_file, tmp_path / "out", context_root, jobs=1)
    assert not marker.exists(), "the checkout's package ran in place of the tool"
    assert run.code == 0 and run.entry("ok")["status"] == "succeeded"


def test_the_runs_import_the_fleets_own_agentic_codemod_and_no_relative_path(tmp_path: Path) -> None:
    import agentic_codemod

    root = str(Path(agentic_codemod.__file__).resolve().parents[1])
    caller = os.pathsep.join(["", ".", "relative/dir", "/abs/one", root])
    kept = child_pythonpath(caller).split(os.pathsep)
    assert kept == [root, "/abs/one"]  # the fleet's own source checkout first (here: not a site dir)
