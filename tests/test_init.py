"""`agentic-codemod init DIR`: the scaffolded context passes the real `apm install` and `apm audit --ci`,
the runtime's own context checks, and the example rule's before/after cases through the real ast-grep."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentic_codemod.apm import load_context
from agentic_codemod.cli import main
from agentic_codemod.task import load_task

BIN = Path(sys.executable).parent
APM = shutil.which("apm", path=str(BIN)) or "apm"
AST_GREP = shutil.which("ast-grep", path=str(BIN)) or shutil.which("ast-grep") or "ast-grep"
PACKAGE = "acme-sdk-2-migration"


def apm(ctx: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}
    return subprocess.run([APM, *args], cwd=ctx, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def ctx(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    dest = tmp_path / "codemod-context"
    assert main(["init", str(dest), "--sdk", "Acme_SDK", "--from", ">=1,<2", "--to", "2.1.0"]) == 0
    assert "apm install" in capsys.readouterr().out
    return dest


def test_init_writes_context_package_rule_cases_and_tasks(ctx: Path):
    pkg = ctx / "packages" / PACKAGE
    skill = pkg / ".apm/skills" / PACKAGE
    for rel in ("apm.yml", "apm-policy.yml", "README.md", ".apm/agents/coder.agent.md"):
        assert (ctx / rel).is_file(), rel
    assert (skill / "SKILL.md").read_text().startswith(f"---\nname: {PACKAGE}\n")
    assert [p.name for p in (skill / "rules").iterdir()] == ["EX001-rename-call.yml"]
    assert yaml.safe_load((ctx / "apm.yml").read_text())["dependencies"]["apm"] == [f"./packages/{PACKAGE}"]
    assert yaml.safe_load((ctx / "apm-policy.yml").read_text())["dependencies"]["allow"] == ["./packages/**"]
    plain = load_task(ctx / "tasks/acme-sdk-bump.yml")
    assert plain.migration is None and plain.sdk.name == "acme-sdk" and plain.sdk.to == "2.1.0"
    migration = load_task(ctx / "tasks/acme-sdk-migration.yml").migration
    assert migration is not None and (migration.package, migration.skill) == (PACKAGE, PACKAGE)
    assert not any("{{" in p.read_text() for p in ctx.rglob("*") if p.is_file())


def test_apm_install_audit_and_the_runtime_accept_the_context(ctx: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    install = apm(ctx, home, "install")
    assert install.returncode == 0, install.stdout + install.stderr
    assert (ctx / "apm.lock.yaml").is_file()
    audit = apm(ctx, home, "audit", "--ci", "--policy", "apm-policy.yml")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    frozen = apm(ctx, home, "install", "--frozen")
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr

    context = load_context(ctx, use_cli=False)  # the runtime's own checks: policy, hashes, primitives
    skill = context.skill(PACKAGE, PACKAGE)
    assert skill is not None and skill.rules_dir is not None
    assert [p.name for p in skill.rules_dir.glob("*.yml")] == ["EX001-rename-call.yml"]
    assert context.agent_for_step("implement").name == "coder"


def test_the_example_rule_passes_its_own_before_after_cases(ctx: Path, tmp_path: Path):
    pkg = ctx / "packages" / PACKAGE
    rule = pkg / ".apm/skills" / PACKAGE / "rules/EX001-rename-call.yml"
    cases = yaml.safe_load((pkg / "tests/EX001-rename-call.yml").read_text())["cases"]
    assert any(c["after"] is None for c in cases) and any(c["after"] for c in cases)
    for case in cases:
        target = tmp_path / f"{case['name']}.py"
        target.write_text(case["before"])
        done = subprocess.run(
            [AST_GREP, "scan", "--rule", str(rule), "-U", str(target)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert target.read_text() == (case["after"] or case["before"]), case["name"]


def test_init_never_overwrites_and_names_the_file(ctx: Path, capsys: pytest.CaptureFixture[str]):
    before = (ctx / "apm.yml").read_text()
    assert main(["init", str(ctx), "--sdk", "acme-sdk", "--to", "2.1.0"]) == 2
    err = capsys.readouterr().err
    assert "already exists" in err and str(ctx) in err
    assert (ctx / "apm.yml").read_text() == before


@pytest.mark.parametrize(
    ("args", "field"),
    [(["--sdk", "no such/sdk"], "--sdk"), (["--to", "two"], "--to"), (["--from", "1.x"], "--from")],
)
def test_init_bad_arguments_exit_2_naming_the_flag(tmp_path: Path, capsys, args: list[str], field: str):
    assert main(["init", str(tmp_path / "ctx"), *args]) == 2
    assert field in capsys.readouterr().err
    assert not (tmp_path / "ctx").exists()


def test_an_npm_repository_gets_an_npm_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    """--repo detects the ecosystem from the repository's dependency files (package.json: npm): the tasks
    name npm, npm's range syntax and files, and the example rule is JavaScript and passes its cases."""
    repo = tmp_path / "service"
    repo.mkdir()
    (repo / "package.json").write_text('{"name": "service", "dependencies": {"@acme/sdk": "^1.2.0"}}')
    dest = tmp_path / "ctx"
    assert main(["init", str(dest), "--repo", str(repo), "--sdk", "@acme/sdk", "--to", "2.1.0"]) == 0
    capsys.readouterr()
    package = "acme-sdk-2-migration"
    plain = load_task(dest / "tasks/acme-sdk-bump.yml")
    assert (plain.sdk.ecosystem, plain.sdk.name, plain.sdk.from_range) == ("npm", "@acme/sdk", "^1.0.0")
    assert plain.allowed_paths == ["package.json", "package-lock.json"]
    migration = load_task(dest / "tasks/acme-sdk-migration.yml")
    assert migration.migration is not None and migration.migration.package == package
    rule = dest / "packages" / package / ".apm/skills" / package / "rules/EX001-rename-call.yml"
    assert yaml.safe_load(rule.read_text())["language"] == "javascript"
    cases = yaml.safe_load((dest / "packages" / package / "tests/EX001-rename-call.yml").read_text())["cases"]
    for case in cases:
        target = tmp_path / f"{case['name']}.js"
        target.write_text(case["before"])
        done = subprocess.run(
            [AST_GREP, "scan", "--rule", str(rule), "-U", str(target)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert target.read_text() == (case["after"] or case["before"]), case["name"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ecosystem", "npm", "--from", ">=1,<2"], "not a npm version range (e.g. '^1.0.0')"),
        (["--ecosystem", "npm", "--sdk", "Acme_SDK"], "not a package name of npm"),
        (["--ecosystem", "npm", "--repo", "."], "give one"),
    ],
)
def test_init_reads_arguments_in_the_ecosystems_syntax(tmp_path: Path, capsys, args: list[str], message: str):
    assert main(["init", str(tmp_path / "ctx"), *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "ctx").exists()
