"""The npm fixture's migration rules (fixtures/packages/acme-sdk-2-js-migration): JavaScript ast-grep
rules through the tool's own codemod engine, each with a case it changes and one it must leave; then
the migrated app on acme-sdk 2.0.0: the rules fix all but the method looked up by name, which only a
human or the coder can fix (ACMEJS900 flags it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentic_codemod.adapters import types
from agentic_codemod.adapters.npm import ADAPTER
from agentic_codemod.config import Settings
from agentic_codemod.workflow import codemod

ROOT = Path(__file__).resolve().parents[3]
RULES = ROOT / "fixtures/packages/acme-sdk-2-js-migration/.apm/skills/acme-sdk-2-js-migration/rules"


class FileWriter:
    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, rel: str, actor: str) -> str:
        return (self.root / rel).read_text(encoding="utf-8")

    def write(self, rel: str, content: str, actor: str) -> None:
        (self.root / rel).write_text(content, encoding="utf-8")


def migrate(tmp_path: Path, files: dict[str, str]) -> tuple[dict[str, str], codemod.CodemodReport]:
    root = tmp_path / "src-tree"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    report = codemod.apply_rules(codemod.load_rules(RULES), root, FileWriter(root))
    return {rel: (root / rel).read_text() for rel in files}, report


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("const c = connect(url);\n", "const c = connect({ url: url });\n"),
        ("const c = connect({ url });\n", None),  # already an options object
        ("client.fetch('/a', 1);\n", "client.get('/a', 1);\n"),
        ("makeClient(u).fetch('/a');\n", "makeClient(u).get('/a');\n"),
        ("const r = await fetch('https://x');\nwindow.fetch('/y');\n", None),  # the global fetch
    ],
)
def test_each_rule_changes_what_it_should_and_nothing_else(
    tmp_path: Path, before: str, after: str | None
) -> None:
    out, report = migrate(tmp_path, {"src/a.js": before})
    assert out["src/a.js"] == (after if after is not None else before)
    assert bool(report.edits) is (after is not None)


def test_the_method_by_name_is_flagged_not_fixed(tmp_path: Path) -> None:
    text = 'const OPERATIONS = { load: "fetch" };\nconst other = { method: "get" };\n'
    out, report = migrate(tmp_path, {"src/r.js": text})
    assert out["src/r.js"] == text and not report.edits
    rules = codemod.load_rules(RULES)
    assert [r.id for r in rules if not r.fixable] == ["ACMEJS900"]
    matches = codemod.find_matches(rules, tmp_path / "src-tree")
    assert [(m.rule_id, m.file, m.line) for m in matches] == [("ACMEJS900", "src/r.js", 1)]


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_the_migrated_app_passes_on_2_0_but_the_by_name_call(
    tmp_path: Path, registry: str, runner: types.Runner
) -> None:
    app = tmp_path / "app"
    shutil.copytree(ROOT / "fixtures/npm-app", app)
    subprocess.run(["git", "init", "-q", str(app)], check=True)
    report = codemod.apply_rules(codemod.load_rules(RULES), app, FileWriter(app))
    assert report.by_rule() == {"ACMEJS001": ["src/orders.js"], "ACMEJS002": ["src/orders.js"]}
    text = (app / "package.json").read_text()
    dep = ADAPTER.extract_dependencies(app, ["package.json"], "acme-sdk")[0]
    (app / "package.json").write_text(ADAPTER.update_dependency(text, dep, "2.0.0"))
    (app / "package-lock.json").unlink()  # refreshed by npm below (the pipeline does it in the sandbox)
    env = ADAPTER.prepare_environment(app, tmp_path / "env", Settings(), runner, ["acme-sdk^2.0.0"])
    assert all(r.ok for r in env.install_log), env.install_log[-1].output_tail
    command = ADAPTER.detect_test_command(app, None)
    assert command is not None
    junit = tmp_path / "junit.xml"
    argv = [
        a.replace("{interpreter}", str(env.interpreter)).replace("{junit}", str(junit)) for a in command.argv
    ]
    result = runner(argv, cwd=env.root / "project", timeout_s=120)
    tally, _ids = ADAPTER.test_facts.read_results(command, env.root / "project", junit, result.output_tail)
    assert tally is not None and tally.failing == ["reports > runs a named operation"], result.output_tail
    assert tally.passed == 2
