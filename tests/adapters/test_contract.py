"""Every registered adapter against the contract of adapters/types.py (Renovate style)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from agentic_codemod.adapters import get_adapter, registry
from agentic_codemod.adapters.types import Adapter
from agentic_codemod.errors import InputError

ADAPTERS = sorted(registry().items())
MODULES = ("dependency_files.py", "extract.py", "update.py", "test_command.py", "environment.py")
# Adapter field -> number of positional parameters of the function.
FUNCTIONS = {
    "is_dependency_file": 1,
    "read_dependency_files": 1,
    "find_dependency_files": 1,
    "extract_dependencies": 3,
    "update_dependency": 3,
    "update_lockfiles": 4,
    "detect_test_command": 2,
    "prepare_environment": 5,
    "install_dependencies": 5,
    "installed_versions": 3,
    "version_matches": 2,
}


def package(name: str) -> ModuleType:
    return importlib.import_module(f"agentic_codemod.adapters.{name}")


def test_registry_is_not_empty_and_every_function_field_is_checked() -> None:
    assert ADAPTERS
    callables = {f.name for f in dataclasses.fields(Adapter)} - {"name", "file_patterns", "lockfiles"}
    assert callables == set(FUNCTIONS)


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_package_declares_what_the_adapter_holds(name: str, adapter: Adapter) -> None:
    module = package(name)
    assert adapter.name == module.NAME == name
    assert adapter is module.ADAPTER
    assert adapter.file_patterns == module.FILE_PATTERNS
    assert adapter.lockfiles == module.LOCKFILES
    assert get_adapter(name) is adapter


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_patterns_and_lockfiles_are_set(name: str, adapter: Adapter) -> None:
    assert adapter.file_patterns and all(isinstance(p, str) and p for p in adapter.file_patterns)
    assert adapter.lockfiles and all(isinstance(f, str) and f and "/" not in f for f in adapter.lockfiles)


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_every_function_is_present_with_its_arity(name: str, adapter: Adapter) -> None:
    for field, arity in FUNCTIONS.items():
        function = getattr(adapter, field)
        assert callable(function), field
        assert len(inspect.signature(function).parameters) == arity, field


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_package_has_the_same_file_names_and_a_readme(name: str, adapter: Adapter) -> None:
    folder = Path(package(name).__file__ or "").parent
    missing = [f for f in ("README.md", "__init__.py", *MODULES) if not (folder / f).is_file()]
    assert not missing, f"adapter {name!r} lacks {missing}"
    assert len((folder / "README.md").read_text(encoding="utf-8").strip()) > 200


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_package_init_only_declares(name: str, adapter: Adapter) -> None:
    tree = ast.parse(Path(package(name).__file__ or "").read_text(encoding="utf-8"))
    logic = [
        n for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.If | ast.For | ast.While)
    ]
    assert not logic


def test_unknown_ecosystem_is_an_input_error() -> None:
    with pytest.raises(InputError, match="no adapter for ecosystem 'cobol'"):
        get_adapter("cobol")
