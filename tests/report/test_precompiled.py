"""The report templates compiled ahead of time (report/compiled/): committed as generated, used by every run
without compiling a template, the same pages as from source, and never used once they are stale."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import jinja2
import pytest
from report_runs import Runs

from agentic_codemod import __version__
from agentic_codemod.report import page, precompiled
from agentic_codemod.report.fleet_view import load_fleet
from agentic_codemod.report.run_view import load_run


@pytest.fixture(autouse=True)
def fresh_environment() -> Iterator[None]:
    page.environment.cache_clear()
    yield
    page.environment.cache_clear()


def test_the_committed_compiled_templates_are_the_generated_ones() -> None:
    committed = {path.name: path.read_text(encoding="utf-8") for path in precompiled.COMPILED.glob("*.py")}
    generated = precompiled.compiled_texts()
    assert sorted(committed) == sorted(generated), "run: python -m agentic_codemod.report.precompiled"
    for name, text in generated.items():
        assert committed[name] == text, f"{name} is stale: run python -m agentic_codemod.report.precompiled"
    assert len(generated) == len(precompiled.template_names()) + 1 >= 4  # base, run, fleet + the manifest


def _pages(runs: Runs, planted: Path) -> dict[str, str]:
    """Every kind of page, hostile payloads included, from the environment page.py uses."""
    pages = {
        str(run_dir): page.render("run.html", script="filters.js", run=load_run(run_dir), tool_version="t")
        for run_dir in (runs.run_dir("ok"), runs.run_dir("hostile"), runs.full, planted)
    }
    fleet = load_fleet(runs.fleet_dir / "fleet.json")
    pages["fleet"] = page.render("fleet.html", script="sort.js", fleet=fleet, tool_version="t")
    return pages


def test_pages_from_compiled_templates_are_those_compiled_from_source(
    runs: Runs, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(precompiled, "loader", lambda: None)
    from_source = _pages(runs, planted)
    assert isinstance(page.environment().loader, jinja2.FileSystemLoader)
    monkeypatch.undo()
    page.environment.cache_clear()

    def no_compiling(*args: object, **kwargs: object) -> None:
        raise AssertionError("a template was compiled at run time")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compiling)
    compiled = _pages(runs, planted)
    assert isinstance(page.environment().loader, jinja2.ModuleLoader)
    assert compiled == from_source
    assert all("<script>document" not in html for html in compiled.values())  # still escaped
    assert (runs.full / "report.html").read_text(encoding="utf-8") == page.render(
        "run.html", script="filters.js", run=load_run(runs.full), tool_version=__version__
    )  # the page the run itself wrote


def _edited_templates(tmp_path: Path) -> Path:
    copy = tmp_path / "templates"
    shutil.copytree(page.TEMPLATES, copy)
    base = copy / "base.html"
    base.write_text(base.read_text(encoding="utf-8").replace("</body>", "<p>edited</p>\n</body>"))
    return copy


def test_a_template_edited_without_regenerating_is_compiled_from_source(
    runs: Runs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(page, "TEMPLATES", _edited_templates(tmp_path))
    assert precompiled.loader() is None
    html = page.render("run.html", script="filters.js", run=load_run(runs.full), tool_version="t")
    assert "<p>edited</p>" in html
    assert isinstance(page.environment().loader, jinja2.FileSystemLoader)


def test_another_jinja2_or_other_options_are_compiled_from_source(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(precompiled.loader(), jinja2.ModuleLoader)
    monkeypatch.setattr(precompiled, "jinja2_version", lambda: "3.1.5")
    assert precompiled.loader() is None
    monkeypatch.undo()
    monkeypatch.setitem(page.OPTIONS, "trim_blocks", False)
    assert precompiled.loader() is None


def test_the_generator_writes_the_files_and_removes_a_stale_module(tmp_path: Path) -> None:
    (tmp_path / "tmpl_gone.py").write_text("# a template that no longer exists\n")
    assert precompiled.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(precompiled.compiled_texts())


def compiled_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of report/compiled/ that the loader reads instead of the package's own."""
    copy = tmp_path / "compiled"
    shutil.copytree(precompiled.COMPILED, copy)
    monkeypatch.setattr(precompiled, "COMPILED", copy)
    return copy


def test_a_missing_compiled_module_is_compiled_from_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = compiled_copy(tmp_path, monkeypatch)
    assert isinstance(precompiled.loader(), jinja2.ModuleLoader)
    (copy / jinja2.ModuleLoader.get_module_filename("base.html")).unlink()
    assert precompiled.loader() is None


def test_an_old_compiled_module_beside_a_new_manifest_is_compiled_from_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partial upgrade of the package: the manifest matches today's templates, a module is yesterday's."""
    copy = compiled_copy(tmp_path, monkeypatch)
    module = copy / jinja2.ModuleLoader.get_module_filename("base.html")
    module.write_text(module.read_text(encoding="utf-8") + "# yesterday's module\n", encoding="utf-8")
    assert precompiled.loader() is None
