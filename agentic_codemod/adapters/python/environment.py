"""The isolated environment verification runs in: a pip-less venv filled by this interpreter's pip.

    prepare_environment(root, env_dir, settings, runner) -> VerificationEnv
        python -m venv --without-pip ENV, then
        python -m pip --python ENV/bin/python install ... (see install_plan for what)
    install_dependencies(root, env, settings, runner) -> ProcessResult
        the same install with --upgrade, after the bump has been written

Failures are data in `install_log` / the returned ProcessResult; the caller counts a failed install as
a failed verification. The one exception: pip failing because the package index cannot be reached
raises EnvironmentUnavailable (exit 75, the run pauses) — that is not the code's fault.
The caller's pip configuration (pip.conf files, PIP_* variables: index, extra index, trusted host,
certificates, proxy) is read with pip's own reader and handed to the sandboxed pip explicitly
(pip_config.py): index URLs as PIP_* variables (never on a recorded command line), certificate files
copied into the repository copy. The tool's python.index_url / find_links / no_index win over it.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentic_codemod.adapters.python import pip_config
from agentic_codemod.adapters.python.install_plan import InstallPlan, plan_install
from agentic_codemod.adapters.types import ProcessResult, Runner, VerificationEnv
from agentic_codemod.config import Settings
from agentic_codemod.errors import EnvironmentUnavailable

INSPECT_TIMEOUT_S = 60.0  # listing what an environment holds

# Lower-cased fragments of pip output that mean "the index could not be reached", not "bad requirements".
NETWORK_FAILURE_MARKERS = (
    "failed to establish a new connection",
    "temporary failure in name resolution",
    "name or service not known",
    "nodename nor servname provided",
    "nameresolutionerror",
    "network is unreachable",
    "connection refused",
    "connection reset by peer",
    "connecttimeouterror",
    "read timed out",
    "proxyerror",
    "certificate verify failed",
    "could not fetch url",
)


def prepare_environment(
    root: Path, env_dir: Path, settings: Settings, runner: Runner, pins: Sequence[str]
) -> VerificationEnv:
    """Create the venv and install the repository's requirements into it, together with `pins`
    (requirement strings of the tool's own: the bumped package at its `from` range, so the baseline
    tests the highest version both the task and the repository allow)."""
    timeout = settings.budgets.install_timeout_s
    created = runner(
        [sys.executable, "-m", "venv", "--without-pip", str(env_dir)], cwd=root, timeout_s=timeout
    )
    env = VerificationEnv(python=venv_python(env_dir), root=env_dir, install_log=[created])
    if not created.ok:
        return env
    plan = plan_install(root, settings)
    plan = replace(plan, requirements=[*plan.requirements, *pins])
    if not plan.empty:
        env.install_log.append(_install(root, env, settings, runner, plan, upgrade=False))
    return env


def install_dependencies(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, pins: Sequence[str]
) -> ProcessResult:
    """The baseline environment plus the change the bump makes: only `pins` (the bumped package at
    exactly its target) are installed, with what they require; nothing else is upgraded. The result is
    also appended to `env.install_log`."""
    result = _install(root, env, settings, runner, InstallPlan(requirements=list(pins)), upgrade=False)
    env.install_log.append(result)
    return result


# Printed by the environment's own interpreter: {canonical name: version} of every installed distribution.
_LIST_INSTALLED = (
    "import importlib.metadata as m, json, re\n"
    "print(json.dumps({re.sub(r'[-_.]+', '-', (d.metadata['Name'] or '')).lower(): d.version"
    " for d in m.distributions() if d.metadata['Name']}, sort_keys=True))"
)


def installed_versions(root: Path, env: VerificationEnv, runner: Runner) -> dict[str, str] | None:
    """What is installed in the environment, by canonical name; None when it cannot be read."""
    result = runner([str(env.python), "-c", _LIST_INSTALLED], cwd=root, timeout_s=INSPECT_TIMEOUT_S)
    if not result.ok:
        return None
    try:
        found = json.loads(result.output_tail.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else None


def version_matches(version: str, specifier: str) -> bool:
    """Whether `version` is inside `specifier` (PEP 440); an unparsable one never is."""
    try:
        return Version(version) in SpecifierSet(specifier)
    except (InvalidVersion, InvalidSpecifier):
        return False


def pip_install_command(python: Path, settings: Settings, plan: InstallPlan, *, upgrade: bool) -> list[str]:
    """This interpreter's pip, installing `plan` into the environment whose interpreter is `python`."""
    index = settings.python
    argv = [sys.executable, "-m", "pip", "--python", str(python), "install"]
    argv += ["--disable-pip-version-check", "--no-input"]
    argv += ["--no-index"] if index.no_index else []
    argv += ["--index-url", index.index_url] if index.index_url else []
    argv += [arg for link in index.find_links for arg in ("--find-links", link)]
    argv += ["--upgrade"] if upgrade else []
    return argv + plan.pip_args()


def venv_python(env_dir: Path) -> Path:
    if sys.platform == "win32":
        return env_dir / "Scripts" / "python.exe"
    return env_dir / "bin" / "python"


def index_unreachable(result: ProcessResult) -> str | None:
    """The line of pip's output saying the index could not be reached, when that is why it failed."""
    if result.ok:
        return None
    for line in result.output_tail.splitlines():
        if any(marker in line.lower() for marker in NETWORK_FAILURE_MARKERS):
            return line.strip()
    return None


def _install(
    root: Path, env: VerificationEnv, settings: Settings, runner: Runner, plan: InstallPlan, *, upgrade: bool
) -> ProcessResult:
    if plan.empty:
        return ProcessResult(argv=[], exit_code=0, duration_s=0.0, output_tail="nothing to install")
    caller = pip_config.read_caller_config(os.environ)  # the sandbox clears the environment and HOME
    argv = pip_install_command(env.python, settings, plan, upgrade=upgrade)
    argv[argv.index("install") + 1 : argv.index("install") + 1] = pip_config.cert_args(caller, root)
    result = runner(
        argv, cwd=root, timeout_s=settings.budgets.install_timeout_s, env=pip_config.install_env(caller)
    )
    reason = index_unreachable(result)
    if reason is not None:
        raise EnvironmentUnavailable(
            f"the package index cannot be reached while installing into {env.root}: {reason}",
            hint="check python.index_url / python.find_links in the config and the network, then resume",
        )
    return result
