"""A YAML file the user writes (task, config, fleet, models.yml), read into its pydantic model: one way,
one kind of error.

    load_yaml_model(path, model, what="task file", ...) -> model instance
        raises InputError (exit 2) naming the file, the field and what to do:
            <path>: <what> not found
            <path>: cannot read the <what>: <the YAML error's first line>
            <path>: cannot read the <what>: line 6, column 1: key 'to' given twice; keep one
            <path>: the <what> must be a YAML mapping
            <path>: field 'budgets.max_files': Input should be a valid integer   (hint: the schema to follow)
    first_error(exc) -> "field 'a.b': message"      the first pydantic error on one line
    safe_load(text) -> object                       yaml.safe_load, with libyaml's parser when pyyaml has it

The schema hint points at schemas/<name>.schema.json (schemas.py generates them from the same models).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from agentic_codemod.errors import InputError

M = TypeVar("M", bound=BaseModel)
# libyaml's parser (same documents, the same safe constructor, about five times faster) when pyyaml was
# built with it; its errors carry the same marks, worded by libyaml.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load(text: str) -> Any:
    """One YAML document, as yaml.safe_load reads it."""
    return yaml.load(text, Loader=_LOADER)


class _UniqueKeys(_LOADER):  # type: ignore[valid-type,misc]
    """The loader for files a user writes: a key written twice in one mapping is an error at its line
    (YAML would keep the last without a word: `to:` twice in a task, the first silently lost). Keys a
    merge (`<<:`) brings in may be overridden, as YAML says."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str | int | float | bool) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} given twice; keep one", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml_model(
    path: Path,
    model: type[M],
    *,
    what: str,
    hint: str = "",
    empty_ok: bool = False,
    extra: Mapping[str, Any] | None = None,
    describe: Callable[[ValidationError, dict[str, Any]], str] | None = None,
) -> M:
    """The file parsed and validated. `empty_ok`: an empty file means all defaults. `extra` is merged into
    the mapping before validation (fields the loader sets, such as the file's own path). `describe` words
    a validation error (default: first_error)."""
    try:
        raw = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=_UniqueKeys)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: {what} not found", hint="check the path") from exc
    except yaml.MarkedYAMLError as exc:  # where and what: "line 4, column 1: expected the node content ..."
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = " ".join(p for p in (exc.context, exc.problem) if p) or type(exc).__name__
        raise InputError(f"{path}: cannot read the {what}: {where}{problem}", hint=hint) from exc
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"{path}: cannot read the {what}: {first_line}", hint=hint) from exc
    if raw is None and empty_ok:
        raw = {}
    if not isinstance(raw, dict):
        raise InputError(f"{path}: the {what} must be a YAML mapping", hint=hint)
    try:
        return model.model_validate({**raw, **(extra or {})})
    except ValidationError as exc:
        raise InputError(f"{path}: {(describe or _describe)(exc, raw)}", hint=hint) from exc


def first_error(exc: ValidationError) -> str:
    """One line for the first pydantic error: 'field.path: message'."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "<root>"
    return f"field '{where}': {err['msg']}"


def _describe(exc: ValidationError, raw: dict[str, Any]) -> str:
    return first_error(exc)
