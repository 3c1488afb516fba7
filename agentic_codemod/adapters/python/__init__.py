"""The Python ecosystem adapter: requirements files, PEP 621 / Poetry pyproject.toml, setup.cfg.

Declarations only; each concern lives in its own module (see README.md beside this file).
"""

from __future__ import annotations

from agentic_codemod.adapters.python.environment import install_dependencies, prepare_environment
from agentic_codemod.adapters.python.extract import FILE_PATTERNS, extract_dependencies, find_dependency_files
from agentic_codemod.adapters.python.test_command import detect_test_command
from agentic_codemod.adapters.python.update import LOCKFILES, update_dependency, update_lockfiles
from agentic_codemod.adapters.types import Adapter

NAME = "python"

ADAPTER = Adapter(
    name=NAME,
    file_patterns=FILE_PATTERNS,
    lockfiles=LOCKFILES,
    find_dependency_files=find_dependency_files,
    extract_dependencies=extract_dependencies,
    update_dependency=update_dependency,
    update_lockfiles=update_lockfiles,
    detect_test_command=detect_test_command,
    prepare_environment=prepare_environment,
    install_dependencies=install_dependencies,
)

__all__ = ["ADAPTER", "FILE_PATTERNS", "LOCKFILES", "NAME"]
