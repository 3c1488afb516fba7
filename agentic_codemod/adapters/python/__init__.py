"""The Python ecosystem adapter: requirements files, PEP 621 / PEP 735 / Poetry pyproject.toml, setup.cfg,
setup.py (read with ast), tox.ini deps, lockfiles.

Declarations only; each concern lives in its own module (see README.md beside this file).
"""

from __future__ import annotations

NAME = "python"

# The one definition of "dependency file": every file this adapter (or pip on its behalf) reads as a
# dependency or constraint declaration. Globs, matched from the right (so at any depth) and without case
# by the manifest gate; at the repository root (and its requirements/ folder) when the adapter looks for
# files to read. Files reached through `-r`/`-c` or a setuptools `file:` directive count too (see
# dependency_files.py). Declared before the imports below: those modules read them.
FILE_PATTERNS: tuple[str, ...] = (
    "requirements*.txt",
    "requirements*.in",
    "*-requirements.txt",
    "*_requirements.txt",
    "*-requirements.in",
    "*_requirements.in",
    "requirements/*.txt",
    "requirements/*.in",
    "constraints*.txt",
    "*.pip",
    "pyproject.toml",
    "hatch.toml",
    "setup.py",
    "setup.cfg",
    "tox.ini",
    "tox.toml",
    "Pipfile",
    "pylock.toml",
    "pylock.*.toml",
    "requirements.lock",  # rye's lockfiles: read as locks (lockfile.REQUIREMENTS_LOCKS), refreshed by no tool
    "requirements-dev.lock",  # here, so not in LOCKFILES
)
# Lockfiles, refreshed only by their own tool during the bump (update.py); dependency files as well.
LOCKFILES: tuple[str, ...] = ("poetry.lock", "uv.lock", "pdm.lock", "Pipfile.lock")

from agentic_codemod.adapters.python import install_scripts, installed_files, shadowing  # noqa: E402
from agentic_codemod.adapters.python.credentials import credentials, secret_files  # noqa: E402
from agentic_codemod.adapters.python.dependency_files import (  # noqa: E402
    is_dependency_file,
    read_dependency_files,
)
from agentic_codemod.adapters.python.environment import (  # noqa: E402
    copy_environment,
    holding,
    install_dependencies,
    installed_versions,
    prepare_environment,
    uninstall,
    version_matches,
)
from agentic_codemod.adapters.python.extract import extract_dependencies, find_dependency_files  # noqa: E402
from agentic_codemod.adapters.python.imports import first_sdk_import  # noqa: E402
from agentic_codemod.adapters.python.install_plan import asked_for  # noqa: E402
from agentic_codemod.adapters.python.lockfile import lock_format, locked_versions  # noqa: E402
from agentic_codemod.adapters.python.removed_imports import removed_imports  # noqa: E402
from agentic_codemod.adapters.python.scaffold import SCAFFOLD  # noqa: E402
from agentic_codemod.adapters.python.test_command import detect_test_command  # noqa: E402
from agentic_codemod.adapters.python.test_facts import SANDBOX_ENV, TEST_FACTS, detect  # noqa: E402
from agentic_codemod.adapters.python.test_requirements import check_test_requirement  # noqa: E402
from agentic_codemod.adapters.python.unscanned import unscanned_code  # noqa: E402
from agentic_codemod.adapters.python.update import update_dependency, update_lockfiles  # noqa: E402
from agentic_codemod.adapters.python.versioning import VERSIONING  # noqa: E402
from agentic_codemod.adapters.types import Adapter  # noqa: E402

ADAPTER = Adapter(
    name=NAME,
    file_patterns=FILE_PATTERNS,
    lockfiles=LOCKFILES,
    is_dependency_file=is_dependency_file,
    read_dependency_files=read_dependency_files,
    find_dependency_files=find_dependency_files,
    extract_dependencies=extract_dependencies,
    install_script_pins=install_scripts.found,
    shadowing=shadowing.in_repository,
    capping=installed_files.capping,
    removed_imports=removed_imports,
    unscanned_code=unscanned_code,
    update_dependency=update_dependency,
    update_lockfiles=update_lockfiles,
    locked_versions=locked_versions,
    lock_format=lock_format,
    detect_test_command=detect_test_command,
    prepare_environment=prepare_environment,
    copy_environment=copy_environment,
    install_dependencies=install_dependencies,
    installed_versions=installed_versions,
    holding=holding,
    uninstall=uninstall,
    version_matches=version_matches,
    versioning=VERSIONING,
    test_facts=TEST_FACTS,
    sandbox_env=SANDBOX_ENV,
    detect=detect,
    credentials=credentials,
    secret_files=secret_files,
    first_import=first_sdk_import,
    check_test_requirement=check_test_requirement,
    scaffold=SCAFFOLD,
    asked_for_by_tests=asked_for,
)

__all__ = ["ADAPTER", "FILE_PATTERNS", "LOCKFILES", "NAME"]
