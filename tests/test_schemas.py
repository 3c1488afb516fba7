"""The published JSON Schemas (schemas/*.schema.json) are the pydantic models' own, and they mean something:
the fixture task files pass them, a typo fails them the way the loader fails it; the loaders' errors name
the file, the field and the schema (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from agentic_codemod.config import load_settings
from agentic_codemod.errors import InputError
from agentic_codemod.fleet.repos import load_fleet
from agentic_codemod.schemas import main as write_schemas
from agentic_codemod.schemas import schema_texts
from agentic_codemod.task import load_task

ROOT = Path(__file__).resolve().parents[1]
TASK_FILES = sorted([*ROOT.glob("fixtures/tasks/*.yml"), *ROOT.glob("fixtures/npm-tasks/*.yml")])


def _schema(name: str) -> dict[str, object]:
    return json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))


def test_the_committed_schemas_are_the_generated_ones() -> None:
    stale = [
        name
        for name, text in schema_texts().items()
        if (ROOT / "schemas" / name).read_text(encoding="utf-8") != text
    ]
    assert stale == [], f"stale: {stale}; regenerate with `python -m agentic_codemod.schemas`"


def test_the_generator_writes_what_it_compares(tmp_path: Path) -> None:
    assert write_schemas([str(tmp_path)]) == 0
    assert {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir()} == schema_texts()


@pytest.mark.parametrize("path", TASK_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_task_passes_the_schema_and_names_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# yaml-language-server: $schema=../../schemas/task.schema.json\n")
    jsonschema.validate(yaml.safe_load(text), _schema("task"))
    load_task(path)  # and the loader agrees


def test_a_misspelt_task_field_fails_the_schema_and_the_loader_alike(tmp_path: Path) -> None:
    raw = yaml.safe_load(TASK_FILES[0].read_text(encoding="utf-8"))
    raw["allowed_path"] = raw.pop("allowed_paths", ["src/**"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(raw, _schema("task"))
    bad = tmp_path / "task.yml"
    bad.write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_task(bad)
    assert caught.value.exit_code == 2
    assert str(bad) in str(caught.value) and "allowed_path" in str(caught.value)
    assert "schemas/task.schema.json" in caught.value.hint


def test_a_config_and_a_fleet_file_pass_their_schemas(tmp_path: Path) -> None:
    config = {"deny_globs": ["secrets/**"], "budgets": {"max_changed_files": 5}}
    jsonschema.validate(config, _schema("config"))
    (tmp_path / "config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    assert "secrets/**" in load_settings(tmp_path / "config.yml").deny_globs
    fleet = {"repos": [{"name": "orders", "path": "repos/orders", "project": "acme/orders"}]}
    jsonschema.validate(fleet, _schema("fleet"))
    (tmp_path / "fleet.yml").write_text(yaml.safe_dump(fleet), encoding="utf-8")
    assert [r.name for r in load_fleet(tmp_path / "fleet.yml").repos] == ["orders"]
    assert "source" not in _schema("fleet")["properties"]  # type: ignore[operator]  # set by the loader


@pytest.mark.parametrize(
    ("loader", "text", "expected"),
    [
        (load_task, "- a\n- list\n", "the task file must be a YAML mapping"),
        (load_task, "id: [unclosed\n", "cannot read the task file"),
        (load_settings, "budgets:\n  x: [1,\n", "cannot read the config file: line 3, column 1: "),
        (load_settings, "budgets: {max_changed_files: many}\n", "field 'budgets.max_changed_files'"),
        (load_settings, "", None),  # an empty config file means the defaults
        (load_fleet, "repos: 3\n", "field 'repos'"),
        # a key written twice: YAML keeps the last without a word; here, the line to fix
        (
            load_settings,
            "budgets:\n  max_changed_files: 5\n  max_changed_files: 50\n",
            "line 3, column 3: key 'max_changed_files' given twice; keep one",
        ),
        (
            load_settings,
            "a: &x {max_changed_files: 5}\nbudgets:\n  <<: *x\n  max_changed_files: 6\n",
            "field 'a'",
        ),
    ],
)
def test_every_loader_names_the_file_the_field_and_exits_2(
    tmp_path: Path, loader: object, text: str, expected: str | None
) -> None:
    path = tmp_path / "input.yml"
    path.write_text(text, encoding="utf-8")
    if expected is None:
        loader(path)  # type: ignore[operator]
        return
    with pytest.raises(InputError) as caught:
        loader(path)  # type: ignore[operator]
    assert caught.value.exit_code == 2
    assert str(caught.value).startswith(f"{path}: ") and expected in str(caught.value)


def test_a_missing_file_is_named() -> None:
    with pytest.raises(InputError, match=r"nope\.yml: task file not found"):
        load_task(Path("nope.yml"))
