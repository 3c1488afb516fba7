"""Every registered adapter against the contract of adapters/types.py (Renovate style)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from agentic_codemod.adapters import detect_ecosystem, get_adapter, registry
from agentic_codemod.adapters.types import Adapter, Shadowing, TestCommand
from agentic_codemod.errors import InputError

ADAPTERS = sorted(registry().items())
MODULES = (
    "dependency_files.py",
    "extract.py",
    "lockfile.py",
    "update.py",
    "test_command.py",
    "environment.py",
)
# Adapter field -> number of positional parameters of the function.
FUNCTIONS = {
    "is_dependency_file": 1,
    "read_dependency_files": 1,
    "find_dependency_files": 1,
    "extract_dependencies": 3,
    "update_dependency": 3,
    "update_lockfiles": 6,
    "locked_versions": 1,
    "lock_format": 1,
    "detect_test_command": 2,
    "prepare_environment": 5,
    "install_dependencies": 5,
    "installed_versions": 3,
    "copy_environment": 2,
    "uninstall": 5,
    "version_matches": 2,
    "detect": 1,
    "first_import": 4,
    "credentials": 1,
    "check_test_requirement": 1,
}
# Fields an adapter may leave None (adapters/types.py says when), checked where it sets them.
OPTIONAL_FUNCTIONS = {
    "asked_for_by_tests": 3,
    "install_script_pins": 2,
    "shadowing": 3,
    "holding": 4,
    "capping": 4,
    "removed_imports": 7,
    "unscanned_code": 5,
    "secret_files": 1,
}


def package(name: str) -> ModuleType:
    return importlib.import_module(f"agentic_codemod.adapters.{name}")


def test_registry_is_not_empty_and_every_function_field_is_checked() -> None:
    assert ADAPTERS
    data = {
        "name",
        "file_patterns",
        "lockfiles",
        "versioning",
        "test_facts",
        "sandbox_env",
        "scaffold",
        "lock_cache",
    }
    callables = {f.name for f in dataclasses.fields(Adapter)} - data
    assert callables == set(FUNCTIONS) | set(OPTIONAL_FUNCTIONS)
    assert get_adapter("python").asked_for_by_tests is not None  # the ecosystem whose install reads more


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_package_declares_what_the_adapter_holds(name: str, adapter: Adapter) -> None:
    module = package(name)
    assert adapter.name == module.NAME == name
    assert adapter is module.ADAPTER
    assert adapter.file_patterns == module.FILE_PATTERNS
    assert adapter.lockfiles == module.LOCKFILES
    assert get_adapter(name) is adapter


def test_only_an_adapter_whose_lock_tool_runs_no_repository_code_shares_the_runs_cache_with_it() -> None:
    """npm refreshes with --ignore-scripts; Python's lock tools may run the project's build backend."""
    assert {name: adapter.lock_cache for name, adapter in ADAPTERS} == {"npm": True, "python": False}


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
    for field, arity in OPTIONAL_FUNCTIONS.items():
        function = getattr(adapter, field)
        assert function is None or len(inspect.signature(function).parameters) == arity, field


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


# Conformance: the same behaviour asked of every adapter, in each one's own syntax.
# name -> (a range admitting 1.x only, from, to, a range that pins `to`, a value with no version)
SAMPLES = {
    "python": (">=1.2,<2", "1.4.0", "2.0.0", "==2.0.0", ""),
    "npm": ("^1.2.0", "1.4.0", "2.0.0", "2.0.0", "latest"),
}


def test_every_adapter_has_conformance_samples() -> None:
    assert set(SAMPLES) == {name for name, _ in ADAPTERS}


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_versioning_conforms(name: str, adapter: Adapter) -> None:
    old, from_, to, pinned, bare = SAMPLES[name]
    v = adapter.versioning
    assert v.is_version(to) and not v.is_version("not a version")
    assert v.matches(from_, old, "") and not v.matches(to, old, "")
    assert adapter.version_matches(from_, old) and not adapter.version_matches(to, old)
    assert v.intersects(old, "", old) and not v.intersects(old, "", pinned)
    assert v.pins(pinned, "", to) and not v.pins(old, "", to)
    assert not v.has_version(bare, "") and v.has_version(old, "")
    assert v.new_range(bare, "", to, "bump") is None
    for strategy in ("auto", "bump", "replace", "widen", "pin"):
        bumped = v.new_range(old, "", to, strategy)
        assert bumped is not None and v.matches(to, bumped, ""), (strategy, bumped)
        assert strategy == "widen" or not v.matches(from_, bumped, ""), (strategy, bumped)
    with pytest.raises(ValueError):
        v.check("><>< nonsense", "")
    assert (
        v.pins(v.exact(to), "", to)
        and v.matches(to, v.exact(to), "")
        and not v.matches(from_, v.exact(to), "")
    )
    assert v.compare(from_, to) < 0 < v.compare(to, from_) and v.compare(to, to) == 0
    with pytest.raises(ValueError):
        v.compare("not a version", to)
    assert v.canonical_name(v.canonical_name("acme-sdk")) == v.canonical_name("acme-sdk") == "acme-sdk"
    assert v.requirement("acme-sdk", old).startswith("acme-sdk") and old in v.requirement("acme-sdk", old)


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_test_facts_conform(name: str, adapter: Adapter, tmp_path: Path) -> None:
    facts = adapter.test_facts
    assert facts.source_suffixes and all(s.startswith(".") for s in facts.source_suffixes)
    assert set(facts.source_suffixes) <= set(facts.code_suffixes)
    assert facts.ast_grep_languages and facts.config_files
    assert 127 in facts.not_a_test_run and 0 not in facts.not_a_test_run and 1 not in facts.not_a_test_run
    sample = f"tests/test_x{facts.source_suffixes[0]}" if name == "python" else "test/x.test.js"
    assert facts.is_test_file(sample) and not facts.is_test_file(f"src/app{facts.source_suffixes[0]}")
    command = adapter.detect_test_command(tmp_path, None)
    assert command is None  # an empty tree has no test command in any ecosystem
    canary = facts.canary(
        TestCommand(["x"], "s", "node-test" if name == "npm" else "pytest"), sample, "c0ffee"
    )
    assert "c0ffee" in canary.name and "c0ffee" in canary.text and facts.is_test_file(f"tests/{canary.name}")
    assert facts.read_results(TestCommand(["x"], "s", "pytest"), tmp_path, None, "") == (None, [])
    assert facts.missing_dependency("") is None and facts.missing_dependency("3 passed") is None
    scrubbed = facts.scrub(f"before\n{canary.name} c0ffee failed\nafter\n", "c0ffee")
    assert "c0ffee" not in scrubbed and "before" in scrubbed and "after" in scrubbed
    assert facts.suspects(tmp_path) == []
    assert isinstance(facts.shadowing, Shadowing) and set(facts.shadowing.module_suffixes) <= set(
        facts.code_suffixes
    )
    assert all(o.startswith("-") for o in facts.start_options)
    assert facts.test_folders and all(f and "/" not in f for f in facts.test_folders)
    assert isinstance(facts.skipped_dirs, frozenset) and not set(facts.test_folders) & facts.skipped_dirs
    assert not facts.is_test_support(f"src/app{facts.source_suffixes[0]}")
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in adapter.sandbox_env.items())
    runner = "tape" if name == "npm" else "unittest"  # a runner of one process, with no option given
    assert facts.parallel(TestCommand(["x"], "s", runner), tmp_path) is False


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_the_tamper_gate_finds_new_runner_configuration_in_every_ecosystem(
    name: str, adapter: Adapter
) -> None:
    """A candidate that adds a test-runner configuration file (conftest.py, .mocharc.yml …) is red, and
    one that leaves it as base had it is not."""
    facts = adapter.test_facts
    for pattern in facts.config_files:
        path = "sub/" + pattern.replace("*", ".yml" if pattern.startswith(".") else "js")
        text = "x = 1\n"
        assert facts.tamper(path, None, text, False, True), path
        assert not facts.tamper(path, text, text, False, False), path


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_scaffold_values_are_the_ecosystems_own(name: str, adapter: Adapter) -> None:
    import re

    facts = adapter.scaffold
    assert facts.rule_language in adapter.test_facts.ast_grep_languages
    adapter.versioning.check(facts.from_range, "")  # the default --from reads in the ecosystem's syntax
    assert adapter.versioning.matches("1.4.0", facts.from_range, "")
    assert not adapter.versioning.matches("2.0.0", facts.from_range, "")
    assert facts.bump_paths and any(adapter.is_dependency_file(p) for p in facts.bump_paths)
    assert re.fullmatch(facts.name_pattern, "acme-sdk") and not re.fullmatch(facts.name_pattern, "a b")
    assert facts.module("acme-sdk") and facts.code


def test_detection_names_one_ecosystem_or_asks(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    assert detect_ecosystem(tmp_path) == "npm"
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\n")
    with pytest.raises(InputError, match="several ecosystems found"):
        detect_ecosystem(tmp_path)
    with pytest.raises(InputError, match="no known ecosystem"):
        detect_ecosystem(tmp_path / "missing")


@pytest.mark.parametrize(
    ("ecosystem", "from_", "to", "error"),
    [
        ("npm", "^1.0.0", "2.0.0", None),
        ("python", ">=1,<2", "2.0.0", None),
        ("npm", ">=1,<2", "2.0.0", "not a version range"),  # PEP 440 is not npm's syntax
        ("python", "^1.0.0", "2.0.0", "not a version range"),
        ("npm", "^1.0.0", "2.0", "not a version"),
        ("cobol", "1", "2", "unknown ecosystem 'cobol'; known: npm, python"),
    ],
)
def test_a_task_is_read_in_its_ecosystems_syntax(
    ecosystem: str, from_: str, to: str, error: str | None
) -> None:
    from pydantic import ValidationError

    from agentic_codemod.task import SdkSpec

    raw = {"name": "acme-sdk", "ecosystem": ecosystem, "from": from_, "to": to}
    if error is None:
        assert SdkSpec.model_validate(raw).ecosystem == ecosystem
        return
    with pytest.raises(ValidationError, match=error):
        SdkSpec.model_validate(raw)


@pytest.mark.parametrize(("name", "adapter"), ADAPTERS)
def test_first_import_finds_the_sdk_in_the_ecosystems_code(
    name: str, adapter: Adapter, tmp_path: Path
) -> None:
    import subprocess

    from agentic_codemod.config import Settings

    files = {
        "python": {
            "src/app.py": "import os\nfrom acme_sdk import client\n",
            "src/other.py": "import acme_sdkx\n",
        },
        "npm": {
            "src/app.js": "const os = require('os');\nconst { connect } = require('acme-sdk/client');\n",
            "src/other.ts": "import x from 'acme-sdkx';\n",
        },
    }[name]
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    found = adapter.first_import(tmp_path, "acme-sdk", ["acme_sdk"] if name == "python" else [], Settings())
    assert found == (next(iter(files)), 2)
    assert adapter.first_import(tmp_path, "other-sdk", [], Settings()) is None


# The leak test (issue 14): outside adapters/<ecosystem>/ the code imports no ecosystem library or
# adapter package and names no ecosystem's file suffix or test runner. None does any more: the list is
# empty and stays so (a file that starts leaking fails the test; a stale entry fails it too).
KNOWN_LEAKS: dict[str, str] = {}
ECOSYSTEM_MODULES = (
    "packaging",
    "nodesemver",
    "agentic_codemod.adapters.python",
    "agentic_codemod.adapters.npm",
)


def _leaks(path: Path) -> list[str]:
    facts = [adapter.test_facts for _, adapter in ADAPTERS]
    suffixes = {s for f in facts for s in f.source_suffixes} | {".pyc", ".pth"}
    runners = {"pytest", "unittest", "stestr", "trial", "node-test", "jest", "vitest", "mocha"}
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.module == "agentic_codemod.adapters":
                names += [f"agentic_codemod.adapters.{a.name}" for a in node.names]
            found += [n for n in names if n.startswith(ECOSYSTEM_MODULES)]
        elif isinstance(node, ast.Constant) and node.value in suffixes | runners:
            found.append(repr(node.value))
    return found


def test_the_core_knows_no_ecosystem_outside_the_known_leaks() -> None:
    root = Path(__file__).resolve().parents[2]
    core = sorted(
        p for p in (root / "agentic_codemod").rglob("*.py") if "adapters" not in p.relative_to(root).parts[:2]
    )
    leaking = {p.relative_to(root).as_posix(): _leaks(p) for p in core}
    leaking = {k: v for k, v in leaking.items() if v}
    new = {k: v for k, v in leaking.items() if k not in KNOWN_LEAKS}
    assert not new, f"ecosystem knowledge leaked into the core (move it into an adapter): {new}"
    cleaned = sorted(set(KNOWN_LEAKS) - set(leaking))
    assert not cleaned, f"no longer leaking, take them off KNOWN_LEAKS: {cleaned}"
