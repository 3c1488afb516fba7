"""`agentic-codemod gate semantic --run-dir DIR [--unavailable-exit-code N]`: exit codes and output."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from fake_jev import FakeJev, answers, error

from agentic_codemod.semantic import add_gate_parser, gate_command

MakeRun = Callable[..., Path]


def _gate(argv: list[str], env: dict[str, str]) -> int:
    parser = argparse.ArgumentParser(prog="agentic-codemod")
    add_gate_parser(parser.add_subparsers(dest="command", required=True))
    return gate_command(parser.parse_args(argv), env)


def test_pass_exits_0_and_says_where_the_verdict_is(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = make_run()
    assert _gate(["gate", "semantic", "--run-dir", str(run_dir)], env) == 0
    out = capsys.readouterr().out
    assert out.startswith("semantic gate: pass (exit 0)") and str(run_dir / "semantic.json") in out


def test_violation_exits_1(make_run: MakeRun, jev: FakeJev, env: dict[str, str]) -> None:
    jev.script(answers(in_scope=0.1))
    assert _gate(["gate", "semantic", "--run-dir", str(make_run()), "--quiet"], env) == 1


def test_unavailable_exits_75_or_the_mapped_code(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str]
) -> None:
    jev.script(error(503))
    run_dir = make_run()
    assert _gate(["gate", "semantic", "--run-dir", str(run_dir), "--quiet"], env) == 75
    argv = ["gate", "semantic", "--run-dir", str(run_dir), "--unavailable-exit-code", "126", "--quiet"]
    assert _gate(argv, env) == 126
    assert json.loads((run_dir / "semantic.json").read_text())["exit_code"] == 126


@pytest.mark.parametrize("code", ["0", "256", "x"])
def test_unavailable_can_never_be_mapped_to_success(
    tmp_path: Path, code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        _gate(["gate", "semantic", "--run-dir", str(tmp_path), "--unavailable-exit-code", code], {})
    assert exc.value.code == 2
    assert "--unavailable-exit-code" in capsys.readouterr().err


def test_missing_run_dir_is_a_violation_and_writes_nothing(
    tmp_path: Path, env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    assert _gate(["gate", "semantic", "--run-dir", str(missing)], env) == 1
    assert "not written" in capsys.readouterr().out and not missing.exists()


def test_wired_into_the_main_cli(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentic_codemod.cli import main

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    jev.script(error(429))
    assert main(["gate", "semantic", "--run-dir", str(make_run()), "--unavailable-exit-code", "126"]) == 126


def test_config_file_sets_gates_semantic(
    make_run: MakeRun, jev: FakeJev, env: dict[str, str], tmp_path: Path
) -> None:
    config = tmp_path / "codemod.yml"
    config.write_text(
        "gates:\n  semantic:\n    mode: required\n    model: jev-preview\n    min_in_scope: 0.97\n"
    )
    jev.script(answers(in_scope=0.95))
    assert (
        _gate(["gate", "semantic", "--run-dir", str(make_run()), "--config", str(config), "--quiet"], env)
        == 1
    )
    assert jev.body["model"] == "jev-preview"
