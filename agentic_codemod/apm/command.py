"""The `apm` CLI, used for what it does well: `apm install --frozen` and `apm audit --ci`.

A failure of either is a refusal carrying the tail of APM's own output. The subprocess never
outlives its timeout: the whole process group is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from agentic_codemod.apm.refusal import PROJECT, ContextRefused, Violation
from agentic_codemod.config import Budgets
from agentic_codemod.errors import EnvironmentUnavailable, InputError
from agentic_codemod.tools.process_group import stop_group

DEFAULT_TIMEOUT_S: float = Budgets.model_fields["install_timeout_s"].default
TAIL_CHARS = 2_000


@dataclass(frozen=True)
class ApmResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def tail(self) -> str:
        text = (self.stdout + "\n" + self.stderr).strip()
        return text[-TAIL_CHARS:]


def find_apm(use_cli: bool | None) -> str | None:
    """Path of the `apm` executable: the one installed beside this interpreter (the pinned extra in the
    venv) first, else the first on PATH."""
    if use_cli is False:
        return None
    beside = Path(sys.executable).parent / "apm"
    found = str(beside) if beside.is_file() else shutil.which("apm")
    if found is None and use_cli:
        hint = "pip install 'agentic-codemod[apm]'"
        raise InputError("the `apm` CLI is required but not installed", hint=hint)
    return found


def run_apm(apm: str, args: list[str], *, cwd: Path, timeout_s: float = DEFAULT_TIMEOUT_S) -> ApmResult:
    """Run one apm command non-interactively; HOME and the rest of the environment are the caller's."""
    env = {**os.environ, "APM_NON_INTERACTIVE": "1", "NO_COLOR": "1", "COLUMNS": "200"}
    with subprocess.Popen(
        [apm, *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            proc.communicate()
            raise EnvironmentUnavailable(
                f"`apm {' '.join(args)}` did not finish within {timeout_s:.0f} s",
                hint="check the package sources are reachable, then rerun",
            ) from None
    return ApmResult(tuple(args), proc.returncode, stdout, stderr)


def install_frozen(apm: str, root: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> ApmResult:
    """`apm install --frozen`: reproduce apm.lock.yaml exactly or fail. Org-policy discovery over the
    network is off (`--no-policy`); the project's own policy is applied by `audit`."""
    result = run_apm(apm, ["install", "--frozen", "--no-policy"], cwd=root, timeout_s=timeout_s)
    if result.returncode != 0:
        detail = f"`apm install --frozen` exited {result.returncode}: {result.tail()}"
        hint = "make apm.yml, apm.lock.yaml and the local packages agree, then rerun"
        raise ContextRefused([Violation("apm.lock.yaml", PROJECT, "apm-install-frozen", detail, hint)])
    return result


def audit(apm: str, root: Path, policy: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> ApmResult:
    """`apm audit --ci --policy <file>`; each failed APM check becomes one violation."""
    args = ["audit", "--ci", "--policy", policy, "--no-fail-fast", "-f", "json"]
    result = run_apm(apm, args, cwd=root, timeout_s=timeout_s)
    if result.returncode == 0:
        return result
    hint = "see `apm audit --ci --policy " + policy + "` for details"
    try:
        report = json.loads(result.stdout)
        failed = [c for c in report.get("checks", []) if not c.get("passed", True)]
    except (json.JSONDecodeError, AttributeError):
        failed = []
    violations = [
        Violation(policy, PROJECT, f"apm-audit:{c.get('name')}", _check_text(c), hint) for c in failed
    ] or [Violation(policy, PROJECT, "apm-audit", f"exited {result.returncode}: {result.tail()}", hint)]
    raise ContextRefused(violations)


def _check_text(check: dict[str, object]) -> str:
    details = check.get("details") or []
    shown = "; ".join(str(d) for d in details[:3]) if isinstance(details, list) else ""
    return f"{check.get('message')}" + (f" ({shown})" if shown else "")
