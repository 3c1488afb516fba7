"""The npm ecosystem adapter: package.json (root and workspaces), package-lock.json refreshed by npm,
npm ci into the verification environment, the test command from scripts.test.

Declarations only; each concern lives in its own module (see README.md beside this file).
"""

from __future__ import annotations

NAME = "npm"

# The one definition of "dependency file" (matched by name at any depth by the manifest gate).
# Declared before the imports below: those modules read them.
FILE_PATTERNS: tuple[str, ...] = ("package.json", ".npmrc")
# Lockfiles refreshed only by npm during the bump (update.py).
LOCKFILES: tuple[str, ...] = ("package-lock.json", "npm-shrinkwrap.json")
# Lockfiles of package managers not supported yet: recognised, and the run refused with their name.
UNSUPPORTED_LOCKFILES: dict[str, str] = {"pnpm-lock.yaml": "pnpm", "yarn.lock": "yarn", "bun.lockb": "bun"}

from agentic_codemod.adapters.npm import install_scripts  # noqa: E402
from agentic_codemod.adapters.npm.dependency_files import (  # noqa: E402
    is_dependency_file,
    read_dependency_files,
)
from agentic_codemod.adapters.npm.environment import (  # noqa: E402
    check_test_requirement,
    copy_environment,
    holding,
    install_dependencies,
    installed_versions,
    prepare_environment,
    uninstall,
    version_matches,
)
from agentic_codemod.adapters.npm.extract import extract_dependencies, find_dependency_files  # noqa: E402
from agentic_codemod.adapters.npm.imports import first_import  # noqa: E402
from agentic_codemod.adapters.npm.lockfile import lock_format, locked_versions  # noqa: E402
from agentic_codemod.adapters.npm.npm_config import caller_credentials  # noqa: E402
from agentic_codemod.adapters.npm.npm_config import secret_files as npm_secret_files  # noqa: E402
from agentic_codemod.adapters.npm.scaffold import SCAFFOLD  # noqa: E402
from agentic_codemod.adapters.npm.test_command import detect_test_command  # noqa: E402
from agentic_codemod.adapters.npm.test_facts import SANDBOX_ENV, TEST_FACTS, detect  # noqa: E402
from agentic_codemod.adapters.npm.unscanned import unscanned_code  # noqa: E402
from agentic_codemod.adapters.npm.update import update_dependency, update_lockfiles  # noqa: E402
from agentic_codemod.adapters.npm.versioning import VERSIONING  # noqa: E402
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
    credentials=caller_credentials,
    secret_files=npm_secret_files,
    first_import=first_import,
    check_test_requirement=check_test_requirement,
    scaffold=SCAFFOLD,
    lock_cache=True,
    unscanned_code=unscanned_code,
)

__all__ = ["ADAPTER", "FILE_PATTERNS", "LOCKFILES", "NAME", "UNSUPPORTED_LOCKFILES"]
