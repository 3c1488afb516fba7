"""Contract tests of the bmad-loop plugin: the hook command run exactly as bmad-loop's hook bus runs it
(bmad_loop_bus.py), on real git worktrees of acme-app, checking the exit code and the last line."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bmad_loop_bus import HookOutcome, load_plugin, run_hook
from fixtures_support import ACME_APP, FIXTURES, ROOT, materialize

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "semantic"))
from fake_jev import API_KEY, FakeJev

PLUGIN_DIR = ROOT / "integrations" / "bmad-loop" / "agentic-codemod-gate"
STAGE = "pre_commit_gate"
TASK = FIXTURES / "tasks" / "acme-sdk-2.yml"
STORY = FIXTURES / "stories" / "1-1-migrate-acme-sdk-2.md"
CODEMOD = str(Path(sys.executable).with_name("agentic-codemod"))
RunGate = Callable[..., HookOutcome]


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", *identity, *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """acme-app as a bmad-loop project: a repository with the story committed on main."""
    repo = tmp_path / "project"
    materialize.materialize(ACME_APP, repo)
    stories = repo / "_bmad-output" / "stories"
    stories.mkdir(parents=True)
    shutil.copy(STORY, stories / STORY.name)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "story 1.1")
    return repo


@pytest.fixture
def worktree(project: Path, tmp_path: Path) -> Path:
    """The unit's isolated worktree, made the way bmad-loop makes one (git worktree add -b)."""
    wt = tmp_path / "worktrees" / "1-1"
    _git(project, "worktree", "add", "-q", "-b", "story/1-1", str(wt))
    return wt


@pytest.fixture
def gate(project: Path, worktree: Path, tmp_path: Path) -> RunGate:
    plugin = load_plugin(PLUGIN_DIR)
    fields = {
        "BMAD_LOOP_RUN_ID": "run-1",
        "BMAD_LOOP_RUN_DIR": str(tmp_path / "bmad-run"),
        "BMAD_LOOP_REPO_ROOT": str(project),
        "BMAD_LOOP_WORKTREE": str(worktree),
        "BMAD_LOOP_STORY_KEY": "1-1-migrate-acme-sdk-2",
        "BMAD_LOOP_ROLE": "dev",
        "BMAD_LOOP_BRANCH": "story/1-1",
    }

    def run(env: dict[str, str] | None = None, **settings: object) -> HookOutcome:
        base_env = {k: v for k, v in os.environ.items() if not k.startswith(("BMAD_LOOP_", "TYPESAFE_"))}
        base_env.update({"AGNO_TELEMETRY": "false", **(env or {})})
        values = {"codemod_bin": CODEMOD, "task_file": str(TASK), **settings}
        return run_hook(plugin, STAGE, worktree=worktree, fields=fields, settings=values, base_env=base_env)

    return run


@pytest.fixture
def jev() -> Iterator[FakeJev]:
    fake = FakeJev()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.release.set()
        fake.server.shutdown()
        fake.server.server_close()
        fake.thread.join(5)


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _veto_line(outcome: HookOutcome) -> dict[str, str]:
    payload = json.loads(outcome.last_line)
    assert set(payload) == {"veto"}, outcome.output
    veto: dict[str, str] = payload["veto"]
    return veto


def test_the_manifest_is_a_declarative_blocking_fail_closed_pre_commit_gate() -> None:
    plugin = load_plugin(PLUGIN_DIR)
    assert plugin.name == PLUGIN_DIR.name  # the directory name is the plugin's id
    assert "python" not in plugin.doc  # folder-drop, declarative: nothing for bmad-loop to trust
    hook = plugin.hooks[STAGE]
    assert (hook.blocking, hook.fail_closed) == (True, True)
    assert "gate worktree --bmad-loop" in hook.cmd
    assert plugin.settings["semantic_gate"] == "off"
    assert {"task_file", "allowed_paths", "deny_globs", "semantic_gate"} <= set(plugin.settings)


def test_a_clean_worktree_passes_with_exit_0_and_no_veto(gate: RunGate) -> None:
    outcome = gate()
    assert outcome.returncode == 0, outcome.output
    assert outcome.veto is None
    assert not outcome.last_line.startswith("{")
    assert outcome.last_line.startswith("worktree gate: pass")


def test_an_in_scope_change_passes_and_leaves_the_verdict_with_the_run(
    gate: RunGate, worktree: Path, tmp_path: Path
) -> None:
    orders = worktree / "src" / "acme_app" / "orders.py"
    orders.write_text(orders.read_text() + "\n# migrated\n")
    (worktree / "src" / "acme_app" / "compat.py").write_text("VERSION = 2\n")  # new, untracked
    outcome = gate()
    assert outcome.returncode == 0, outcome.output
    assert outcome.veto is None
    verdict = json.loads(
        (
            tmp_path / "bmad-run" / "agentic-codemod" / "1-1-migrate-acme-sdk-2" / "worktree-gate.json"
        ).read_text()
    )
    assert verdict["outcome"] == "pass" and len(verdict["candidate_sha256"]) == 64


def test_an_out_of_scope_change_defers_naming_the_paths(gate: RunGate, worktree: Path) -> None:
    (worktree / ".gitlab-ci.yml").write_text("deploy: {script: [curl evil]}\n")
    (worktree / "docs").mkdir()
    (worktree / "docs" / "notes.md").write_text("x\n")
    outcome = gate()
    assert outcome.returncode == 1, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "defer"
    assert "denied by '.gitlab-ci.yml'" in veto["reason"]
    assert "outside allowed_paths: docs/notes.md" in veto["reason"]


def test_tampered_tests_defer_even_where_the_scope_allows_tests(gate: RunGate, worktree: Path) -> None:
    test = worktree / "tests" / "test_orders.py"
    text = test.read_text().replace("    assert caught.value.order_id == 404\n", "")
    test.write_text(text.replace("def test_open_orders", "@pytest.mark.skip\ndef test_open_orders"))
    outcome = gate(task_file="", allowed_paths="src/**, tests/**")
    assert outcome.returncode == 1, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "defer"
    assert "fewer assertions in tests/test_orders.py" in veto["reason"]
    assert "skip/xfail marker added in tests/test_orders.py" in veto["reason"]


def test_the_sdk_bump_alone_passes(gate: RunGate, worktree: Path) -> None:
    requirements = worktree / "requirements.txt"
    requirements.write_text(requirements.read_text().replace("acme-sdk==1.4.0", "acme-sdk==2.1.0"))
    outcome = gate()
    assert outcome.returncode == 0, outcome.output
    assert outcome.veto is None


def test_a_new_dependency_beside_the_bump_defers(gate: RunGate, worktree: Path) -> None:
    requirements = worktree / "requirements.txt"
    bumped = requirements.read_text().replace("acme-sdk==1.4.0", "acme-sdk==2.1.0")
    requirements.write_text(bumped + "requests==2.32.0\n")
    outcome = gate()
    assert outcome.returncode == 1, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "defer"
    assert "requirements.txt differs from the bump of the SDK alone: + requests==2.32.0" in veto["reason"]


def test_a_semantic_fault_pauses_with_75(gate: RunGate, worktree: Path) -> None:
    orders = worktree / "src" / "acme_app" / "orders.py"
    orders.write_text(orders.read_text() + "\n# migrated\n")
    env = {"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": _closed_port_url()}
    outcome = gate(env=env, semantic_gate="required", verify_cmd="true")
    assert outcome.returncode == 75, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "pause"
    assert "semantic gate unavailable" in veto["reason"]


def test_the_semantic_gate_passes_an_in_scope_diff_with_real_evidence(
    gate: RunGate, worktree: Path, jev: FakeJev
) -> None:
    orders = worktree / "src" / "acme_app" / "orders.py"
    orders.write_text(orders.read_text() + "\n# migrated\n")
    env = {"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": jev.url}
    outcome = gate(env=env, semantic_gate="required", verify_cmd="echo '3 passed'")
    assert outcome.returncode == 0, outcome.output
    assert outcome.veto is None
    sent = json.dumps(jev.body)
    assert "then it pins acme-sdk==2.1.0" not in sent  # the task file's criteria, not the story's
    assert "requirements.txt pins acme-sdk==2.1.0" in sent
    assert "3 passed" in sent and "src/acme_app/orders.py" in sent


def test_the_semantic_gate_without_evidence_defers_and_says_what_to_set(
    gate: RunGate, worktree: Path
) -> None:
    orders = worktree / "src" / "acme_app" / "orders.py"
    orders.write_text(orders.read_text() + "\n# migrated\n")
    outcome = gate(
        env={"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": _closed_port_url()}, semantic_gate="required"
    )
    assert outcome.returncode == 1, outcome.output
    assert "set verify_cmd" in _veto_line(outcome)["reason"]


def test_a_story_in_the_worktree_is_read_from_the_base_commit(gate: RunGate, worktree: Path) -> None:
    story = worktree / "_bmad-output" / "stories" / STORY.name
    story.write_text(story.read_text().replace('["src/**", "requirements*.txt"]', '["src/**", "docs/**"]'))
    (worktree / "docs").mkdir()
    (worktree / "docs" / "notes.md").write_text("x\n")
    outcome = gate(task_file=f"_bmad-output/stories/{STORY.name}")
    assert outcome.returncode == 1, outcome.output
    reason = _veto_line(outcome)["reason"]
    assert "outside allowed_paths: docs/notes.md" in reason
    assert "_bmad-output/stories" not in reason  # the dev agent may record its progress in the story


def test_a_task_file_the_unit_created_is_refused_and_pauses(gate: RunGate, worktree: Path) -> None:
    (worktree / "wide.yml").write_text(TASK.read_text().replace('"src/**"', '"**"'))
    outcome = gate(task_file="wide.yml")
    assert outcome.returncode == 2, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "pause"
    assert "wide.yml: the task file is not committed at HEAD" in veto["reason"]


def test_no_scope_is_a_configuration_error_that_pauses(gate: RunGate) -> None:
    outcome = gate(task_file="")
    assert outcome.returncode == 2, outcome.output
    veto = _veto_line(outcome)
    assert veto["action"] == "pause" and "no scope" in veto["reason"]


def test_a_missing_agentic_codemod_pauses(gate: RunGate) -> None:
    outcome = gate(codemod_bin="/nonexistent/agentic-codemod")
    assert outcome.returncode == 127
    assert _veto_line(outcome)["action"] == "pause"


def test_as_a_verify_command_an_unavailable_service_maps_to_126(worktree: Path) -> None:
    """bmad-loop's [verify] commands: 0 pass, 126/127 environment fault, anything else fixable."""
    orders = worktree / "src" / "acme_app" / "orders.py"
    orders.write_text(orders.read_text() + "\n# migrated\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BMAD_LOOP_", "TYPESAFE_"))}
    env.update({"TYPESAFE_API_KEY": API_KEY, "TYPESAFE_BASE_URL": _closed_port_url()})
    argv = [
        CODEMOD,
        "gate",
        "worktree",
        "--task",
        str(TASK),
        "--semantic",
        "required",
        "--verify-cmd",
        "true",
    ]
    mapped = subprocess.run(
        [*argv, "--unavailable-exit-code", "126"], cwd=worktree, env=env, capture_output=True
    )
    plain = subprocess.run(argv, cwd=worktree, env=env, capture_output=True)
    assert (mapped.returncode, plain.returncode) == (126, 75), mapped.stdout
    assert b"veto" not in mapped.stdout  # the veto line is for the plugin hook only


def test_a_committed_task_file_the_unit_changes_defers_and_its_base_scope_holds(
    project: Path, tmp_path: Path
) -> None:
    shutil.copy(TASK, project / "codemod-task.yml")
    _git(project, "add", "codemod-task.yml")
    _git(project, "commit", "-q", "-m", "task")
    wt = tmp_path / "worktrees" / "task"
    _git(project, "worktree", "add", "-q", "-b", "story/task", str(wt))
    task = wt / "codemod-task.yml"
    task.write_text(task.read_text().replace('"src/**"', '"src/**", "docs/**"'))
    (wt / "docs").mkdir()
    (wt / "docs" / "notes.md").write_text("x\n")
    plugin = load_plugin(PLUGIN_DIR)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("BMAD_LOOP_", "TYPESAFE_"))}
    outcome = run_hook(
        plugin,
        STAGE,
        worktree=wt,
        fields={"BMAD_LOOP_WORKTREE": str(wt), "BMAD_LOOP_STORY_KEY": "task"},
        settings={"codemod_bin": CODEMOD, "task_file": "codemod-task.yml"},
        base_env=base_env,
    )
    assert outcome.returncode == 1, outcome.output
    reason = _veto_line(outcome)["reason"]
    assert "the gate's own task file changed: codemod-task.yml" in reason
    assert "outside allowed_paths: docs/notes.md" in reason  # the widened scope was not used


def test_a_task_file_symlink_the_unit_planted_is_not_followed(
    gate: RunGate, worktree: Path, tmp_path: Path
) -> None:
    wide = tmp_path / "wide.yml"
    wide.write_text(TASK.read_text().replace('"src/**"', '"src/**", "docs/**"'))
    (worktree / "codemod-task.yml").symlink_to(wide)
    outcome = gate(task_file="codemod-task.yml")
    assert outcome.returncode == 2, outcome.output
    assert "codemod-task.yml: the task file is not committed at HEAD" in _veto_line(outcome)["reason"]


def test_bmad_loops_own_sprint_board_is_allowed_on_top_of_the_scope(gate: RunGate, worktree: Path) -> None:
    board = worktree / "_bmad-output" / "implementation-artifacts" / "sprint-status.yaml"
    board.parent.mkdir(parents=True)
    board.write_text("development_status: {1-1-migrate-acme-sdk-2: done}\n")
    assert gate().veto is None
    outcome = gate(bookkeeping_paths="")
    assert outcome.returncode == 1
    board_path = "_bmad-output/implementation-artifacts/sprint-status.yaml"
    assert f"outside allowed_paths: {board_path}" in outcome.last_line


def test_bookkeeping_paths_never_make_a_scope_of_their_own(gate: RunGate) -> None:
    outcome = gate(task_file="")
    assert outcome.returncode == 2 and "no scope" in _veto_line(outcome)["reason"]
