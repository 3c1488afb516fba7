"""JSON Schemas of the YAML files a user writes, generated from the pydantic models that read them.

    python -m agentic_codemod.schemas [DIR]     writes DIR/{task,config,fleet}.schema.json (default: schemas/)
    schema_texts() -> {file name: JSON text}    what those files hold (tests/test_schemas.py compares the
                                                committed files with it: regenerate after changing a model)

An editor with the YAML language server checks a file against its schema when the file's first line says
so, e.g. in a task file:  # yaml-language-server: $schema=../schemas/task.schema.json
The loaders (yaml_input.load_yaml_model) name the schema in their error hint.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_DIR = Path("schemas")


def _models() -> dict[str, tuple[type[BaseModel], str, tuple[str, ...]]]:
    """file stem -> (model, title, fields the loader sets itself and a file must not)."""
    from agentic_codemod.config import Settings
    from agentic_codemod.fleet.repos import FleetFile
    from agentic_codemod.task import TaskSpec

    return {
        "task": (TaskSpec, "agentic-codemod task file", ()),
        "config": (Settings, "agentic-codemod config file (--config)", ()),
        "fleet": (FleetFile, "agentic-codemod fleet file", ("source",)),
    }


def schema_of(model: type[BaseModel], title: str, internal: tuple[str, ...] = ()) -> dict[str, Any]:
    schema = model.model_json_schema(mode="validation")
    for name in internal:
        schema.get("properties", {}).pop(name, None)
        if name in schema.get("required", []):
            schema["required"].remove(name)
    return {"$schema": SCHEMA_DIALECT, **schema, "title": title}


def schema_texts() -> dict[str, str]:
    return {
        f"{stem}.schema.json": json.dumps(schema_of(model, title, internal), indent=2, sort_keys=True) + "\n"
        for stem, (model, title, internal) in _models().items()
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else DEFAULT_DIR
    out.mkdir(parents=True, exist_ok=True)
    for name, text in schema_texts().items():
        (out / name).write_text(text, encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
