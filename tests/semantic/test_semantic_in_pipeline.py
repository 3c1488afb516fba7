"""The semantic gate inside a real offline run: required + pass, violation, unreachable."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_jev import API_KEY, FakeJev, answers

pytestmark = pytest.mark.slow


def config(tmp_path: Path, mode: str = "required") -> Path:
    path = tmp_path / "semantic.yml"
    path.write_text(f"gates:\n  semantic:\n    mode: {mode}\n    timeout_s: 2\n    max_retries: 0\n")
    return path


def test_required_gate_pass_lets_the_candidate_through(
    acme_repo, run_codemod, jev: FakeJev, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", API_KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", jev.url)
    jev.script(answers(in_scope=0.97))
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--config", str(config(tmp_path)))
    assert result.code == 0, result.manifest["reason"]
    gates = {g["name"]: g for g in result.manifest["gates"]}
    assert (
        gates["semantic"]["passed"]
        and gates["semantic"]["candidate_sha256"] == result.manifest["candidate"]["sha256"]
    )
    assert (result.run_dir / "semantic.json").exists()
    assert "requirements.txt" in jev.body["state"]


def test_required_gate_violation_rejects(
    acme_repo, run_codemod, jev: FakeJev, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", API_KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", jev.url)
    jev.script(answers(in_scope=0.1))
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--config", str(config(tmp_path)))
    assert result.code == 1 and result.manifest["status"] == "rejected"
    assert "semantic.violation" in [f["code"] for f in result.json("review.json")["findings"]]


def test_required_gate_unreachable_pauses_with_state_kept(
    acme_repo, run_codemod, closed_port_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", API_KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", closed_port_url)
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--config", str(config(tmp_path)))
    assert result.code == 75 and result.manifest["status"] == "paused"
    assert result.manifest["candidate"]["sha256"]
    assert (result.run_dir / "changes.patch").read_bytes()


def test_advisory_gate_never_blocks(
    acme_repo, run_codemod, jev: FakeJev, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", API_KEY)
    monkeypatch.setenv("TYPESAFE_BASE_URL", jev.url)
    jev.script(answers(in_scope=0.1))
    result = run_codemod(acme_repo, "acme-sdk-2-rules.yml", "--config", str(config(tmp_path, "advisory")))
    assert result.code == 0
    assert "semantic" not in {g["name"] for g in result.manifest["gates"]}
