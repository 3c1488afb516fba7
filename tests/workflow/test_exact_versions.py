"""Exact versions, recorded: the baseline tests the old version the repository allows, the after-bump
environment exactly `to` — never a fresh resolve to the newest release (issue: real repositories)."""

from __future__ import annotations

from pathlib import Path

from agentic_codemod.adapters.python import seed
from agentic_codemod.adapters.python.installer import find_uv

TASK = """id: acme-open-range
title: Migrate acme-sdk to 2.0 on an open range
sdk: {{name: acme-sdk, ecosystem: python, from: "{frm}", to: "2.0.0"}}
migration: {{package: acme-sdk-2-migration, skill: acme-sdk-2-migration}}
allowed_paths: ["src/**", "requirements*.txt"]
acceptance_criteria: ["the suite passes on acme-sdk 2.0.0"]
"""


def task(tmp_path: Path, frm: str = ">=1,<2") -> Path:
    path = tmp_path / "task.yml"
    path.write_text(TASK.format(frm=frm))
    return path


def test_an_open_range_baseline_tests_the_old_major_and_the_bump_installs_exactly_to(
    make_repo, run_codemod, tmp_path: Path
) -> None:
    """The wheelhouse holds acme-sdk 1.4.0, 2.0.0 and 2.1.0; `>=1.0` alone would resolve to 2.1.0."""
    repo = make_repo("open-range", {"requirements.txt": "acme-sdk>=1.0\n"})
    result = run_codemod(repo, task(tmp_path))
    m = result.manifest
    assert result.code == 0, m["reason"]
    assert m["environments"]["baseline"]["acme-sdk"] == "1.4.0"
    assert m["environments"]["after"]["acme-sdk"] == "2.0.0"
    unchanged = {k: v for k, v in m["environments"]["baseline"].items() if k not in ("acme-sdk", "acme-app")}
    assert unchanged and all(m["environments"]["after"][k] == v for k, v in unchanged.items())
    install = next(t for t in result.trace() if t["tool"] == "install_dependencies")
    assert "acme-sdk==2.0.0" in install["arguments"]["argv"] and "-r" not in install["arguments"]["argv"]
    uv = find_uv()
    assert (
        m["installs"]["baseline"]["installer"]
        == m["installs"]["after"]["installer"]
        == (uv.name if uv else "pip")
    )
    if uv is not None:
        assert install["arguments"]["argv"][:3] == [uv.program, "pip", "install"]
        assert m["installs"]["baseline"]["template"]  # the registry part came from a template
        copied = next(t for t in result.trace() if t["tool"] == "environment_template")
        assert copied["arguments"]["template"] == m["installs"]["baseline"]["template"]


def test_with_pip_as_the_installer_the_versions_are_the_same(make_repo, run_codemod, tmp_path: Path) -> None:
    repo = make_repo("open-range-pip", {"requirements.txt": "acme-sdk>=1.0\n"})
    config = tmp_path / "pip.yml"
    config.write_text("python:\n  installer: pip\n")
    result = run_codemod(repo, task(tmp_path), "--config", str(config))
    m = result.manifest
    assert result.code == 0, m["reason"]
    found = seed.find()
    seeded = found.label if found is not None else seed.NONE  # what `python -m venv` would have added
    assert m["installs"] == {
        "baseline": {"installer": "pip", "template": "", "seed": seeded},
        "after": {"installer": "pip", "template": "", "seed": seeded},
    }
    assert (m["environments"]["baseline"]["acme-sdk"], m["environments"]["after"]["acme-sdk"]) == (
        "1.4.0",
        "2.0.0",
    )


def test_a_repository_pinned_outside_from_is_not_a_baseline(make_repo, run_codemod, tmp_path: Path) -> None:
    repo = make_repo("pinned-new", {"requirements.txt": "acme-sdk==2.1.0\n"})
    result = run_codemod(repo, task(tmp_path, frm=">=2.1,<3"))  # from admits the pin: a working baseline
    assert result.manifest["environments"]["baseline"]["acme-sdk"] == "2.1.0"
    result = run_codemod(repo, task(tmp_path, frm=">=1,<2"))
    m = result.manifest
    assert result.code == 3, m["reason"]
    assert "cannot install" in m["reason"] and "acme-sdk>=1,<2" in m["reason"]
    assert [v["phase"] for v in m["verifications"]] == []
