"""The fixtures tell the story the pipeline is tested on, so check the story itself, for real:

acme-app passes on acme-sdk 1.4, fails on 2.x; the package's rules plus the bump make it pass on 2.0,
and on 2.1 only the dynamic `getattr` dispatch is left, which the documented manual fix repairs.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fixtures_support import (
    ACME_APP,
    TASKS,
    apply_rules,
    ast_grep,
    bump_sdk,
    fixable_rule_files,
    make_venv,
    materialize,
    rule_files,
    run_app_suite,
    wheelhouse,
)

from agentic_codemod.task import load_task

DYNAMIC_DISPATCH_TESTS = {
    "tests/test_reports.py::test_daily_summary_totals_the_day",
    "tests/test_reports.py::test_daily_summary_is_published",
}
DEPRECATION = "Client.fetch() is deprecated"


# --- fast: task files and materialize ----------------------------------------------------------


@pytest.mark.parametrize("name", ["acme-sdk-2.yml", "acme-sdk-2-rules.yml"])
def test_task_files_are_valid(name: str) -> None:
    task = load_task(TASKS / name)
    assert task.migration.package == task.migration.skill == "acme-sdk-2-migration"
    assert task.sdk.name == "acme-sdk"


def test_materialize_makes_the_same_commit_every_time(tmp_path: Path) -> None:
    first = materialize.materialize(ACME_APP, tmp_path / "one")
    second = materialize.materialize(ACME_APP, tmp_path / "two")
    assert first == second
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path / "one", capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
    author = subprocess.run(
        ["git", "log", "-1", "--format=%an <%ae> %aI"],
        cwd=tmp_path / "one",
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        author.stdout.strip() == "Fixture Author <fixtures@agentic-codemod.invalid> 2024-01-01T00:00:00+00:00"
    )


def test_materialize_refuses_a_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    with pytest.raises(materialize.MaterializeError, match="not empty"):
        materialize.materialize(ACME_APP, tmp_path / "taken")


# --- slow: wheels, venvs and the app's suite ----------------------------------------------------


@pytest.fixture(scope="session")
def wheels() -> Path:
    return wheelhouse.build_wheelhouse(wheelhouse.DEFAULT_DEST)


@pytest.fixture(scope="session")
def sdk_python(wheels: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """One venv per SDK version, installed offline from the app's own (bumped) requirements."""
    pythons: dict[str, Path] = {}

    def python_for(version: str) -> Path:
        if version not in pythons:
            root = tmp_path_factory.mktemp(f"sdk-{version}")
            for name in ("requirements.txt", "requirements-dev.txt"):
                shutil.copy(ACME_APP / name, root / name)
            bump_sdk(root, version)
            pythons[version] = make_venv(root / "venv", wheels, "-r", str(root / "requirements-dev.txt"))
        return pythons[version]

    return python_for


@pytest.fixture
def app(tmp_path: Path) -> Path:
    repo = tmp_path / "acme-app"
    materialize.materialize(ACME_APP, repo)
    return repo


def migrate(repo: Path, version: str, rules: list[Path] | None = None) -> None:
    apply_rules(repo, fixable_rule_files() if rules is None else rules)
    bump_sdk(repo, version)


@pytest.mark.slow
def test_wheelhouse_has_every_sdk_and_is_idempotent(wheels: Path) -> None:
    names = sorted(path.name for path in wheels.glob("acme_sdk-*.whl"))
    assert names == [f"acme_sdk-{v}-py3-none-any.whl" for v in ("1.4.0", "2.0.0", "2.1.0")]
    assert list(wheels.glob("pytest-*.whl"))
    before = {path.name: path.stat().st_mtime_ns for path in wheels.iterdir()}
    assert wheelhouse.build_wheelhouse(wheels) == wheels
    assert {path.name: path.stat().st_mtime_ns for path in wheels.iterdir()} == before


@pytest.mark.slow
def test_app_suite_passes_on_1_4(app: Path, sdk_python: Callable[[str], Path]) -> None:
    run = run_app_suite(sdk_python("1.4.0"), app)
    assert run.passed, run.output
    assert DEPRECATION not in run.output


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.0.0", "2.1.0"])
def test_unmigrated_app_fails_on_2_x(app: Path, sdk_python: Callable[[str], Path], version: str) -> None:
    run = run_app_suite(sdk_python(version), app)
    assert not run.passed
    assert "No module named 'acme.errors'" in run.output


@pytest.mark.slow
def test_rules_and_bump_make_the_app_pass_on_2_0(app: Path, sdk_python: Callable[[str], Path]) -> None:
    migrate(app, "2.0.0")
    run = run_app_suite(sdk_python("2.0.0"), app)
    assert run.passed, run.output
    # The dynamic dispatch still goes through the deprecated alias, and nothing else does.
    assert DEPRECATION in run.output
    assert "reports.py" in run.output


@pytest.mark.slow
def test_rules_touch_only_allowed_paths(app: Path) -> None:
    migrate(app, "2.0.0")
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=app, capture_output=True, text=True, check=True
    )
    changed = sorted(line[3:] for line in status.stdout.splitlines())
    assert changed == [
        "requirements.txt",
        "src/acme_app/billing.py",
        "src/acme_app/clients.py",
        "src/acme_app/inventory.py",
        "src/acme_app/orders.py",
    ]
    assert "acme-sdk==2.0.0  # pinned by the platform team" in (app / "requirements.txt").read_text()


@pytest.mark.slow
def test_after_rules_only_the_dynamic_dispatch_fails_on_2_1(
    app: Path, sdk_python: Callable[[str], Path]
) -> None:
    migrate(app, "2.1.0")
    run = run_app_suite(sdk_python("2.1.0"), app)
    assert run.problems == DYNAMIC_DISPATCH_TESTS, run.output
    assert "'Client' object has no attribute 'fetch'" in run.output
    flagged = subprocess.run(
        [ast_grep(), "scan", "--rule", str(rule_files()[-1]), "--json=compact", "src"],
        cwd=app,
        capture_output=True,
        text=True,
        check=True,
    )
    assert '"ruleId":"ACME900"' in flagged.stdout
    assert '"file":"src/acme_app/reports.py"' in flagged.stdout


@pytest.mark.slow
def test_documented_manual_fix_makes_the_app_pass_on_2_1(
    app: Path, sdk_python: Callable[[str], Path]
) -> None:
    migrate(app, "2.1.0")
    reports = app / "src" / "acme_app" / "reports.py"
    # The fix described in references/unusual-cases.md: change the data, not the lookup.
    reports.write_text(reports.read_text().replace('"load": "fetch"', '"load": "get"'))
    run = run_app_suite(sdk_python("2.1.0"), app)
    assert run.passed, run.output
    assert DEPRECATION not in run.output


@pytest.mark.slow
@pytest.mark.parametrize("skipped", [path.name.split("-")[0] for path in fixable_rule_files()])
def test_every_rule_is_needed_by_the_app_suite(
    app: Path, sdk_python: Callable[[str], Path], skipped: str
) -> None:
    """Each breaking change is exercised: leaving out any one rule makes more than the dispatch fail."""
    migrate(app, "2.1.0", [path for path in fixable_rule_files() if not path.name.startswith(skipped)])
    run = run_app_suite(sdk_python("2.1.0"), app)
    assert not run.passed
    assert run.problems - DYNAMIC_DISPATCH_TESTS, run.output
