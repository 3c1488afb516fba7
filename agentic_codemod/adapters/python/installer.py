"""Who creates a verification venv and installs into it: uv (fast, byte-compiled) or pip (the fallback).

    choose(settings) -> Installer            uv where python.installer allows it and `uv --version` starts
                                             (the `uv` extra puts it beside this interpreter); else pip
    installer.venv_command(env_dir)          uv venv --relocatable / python -m venv --without-pip
    installer.seed_command(python, seed, cache)
                                             pip (and setuptools) from the interpreter's own wheels,
                                             offline and not byte-compiled (seed.py)
    installer.install_command(python, settings, plan, caller, cache)
                                             the install of `plan` into the venv of `python`
    installer.install_env(caller, cert)      the caller's pip configuration as this installer reads it

Both run inside the sandbox's install box. uv is told to read no configuration file (`--no-config`):
the repository copy it runs in may carry a uv.toml or a [tool.uv] table naming its own index. Its
cache is `cache`, a per-run directory the install box mounts writable (never the runner's shared one,
which a setup.py could otherwise poison for other repositories; see env_template.py). Files are copied
from it, never hardlinked (`--link-mode copy`): a hardlink would let a later install write through the
venv into the cache. `--compile-bytecode` writes the .pyc files once, at install: the tests run with
PYTHONDONTWRITEBYTECODE and a read-only venv, so without it every test run recompiles what it imports.
The bump's install compiles nothing (`InstallPlan.host_compiles`): the host writes the bytecode of every
distribution it added or replaced afresh (installed_files.fresh_bytecode), which an installer's compile
would have done a second time, slower (uv starts interpreters for it) and skipping a folder made read-only.
"""

from __future__ import annotations

import functools
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentic_codemod.adapters.python import pip_config
from agentic_codemod.adapters.python.install_plan import InstallPlan
from agentic_codemod.adapters.python.seed import Seed
from agentic_codemod.config import Settings

PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Installer:
    name: str  # "uv" | "pip"
    program: str  # the uv binary; this interpreter for pip
    version: str = ""

    def venv_command(self, env_dir: Path) -> list[str]:
        if self.name == "uv":
            # relocatable: an environment template copied to another directory still runs its scripts
            argv = [self.program, "venv", "--quiet", "--no-config", "--relocatable"]
            return [*argv, "--python", sys.executable, str(env_dir)]
        # -P (here and for pip): these run in the repository copy, which must not be where venv or pip
        # come from (a pip package at its root would run with the caller's index credentials)
        return [sys.executable, "-P", "-m", "venv", "--without-pip", str(env_dir)]

    def seed_command(self, python: Path, seed: Seed, cache: Path | None) -> list[str]:
        """What `python -m venv` would add, from `seed.directory` alone: no index, no configuration
        (`--no-config`; pip's `--isolated`), no bytecode."""
        offline = ["--no-index", "--find-links", str(seed.directory), *seed.requirements]
        if self.name == "uv":
            argv = [self.program, "pip", "install", "--python", str(python), "--no-config"]
            argv += ["--link-mode", "copy", "--no-progress"]
            argv += ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
            return argv + offline
        argv = [sys.executable, "-P", "-m", "pip", "--isolated", "--python", str(python), "install"]
        return [*argv, "--disable-pip-version-check", "--no-input", "--no-compile", *offline]

    def install_command(
        self,
        python: Path,
        settings: Settings,
        plan: InstallPlan,
        cache: Path | None,
        *,
        extra: tuple[str, ...] = (),
    ) -> list[str]:
        """`extra`: options of this installer placed before the plan (pip's --cert, uv's --no-build)."""
        index = settings.packages
        if self.name == "uv":
            argv = [self.program, "pip", "install", "--python", str(python), "--no-config"]
            argv += [] if plan.host_compiles else ["--compile-bytecode"]
            argv += ["--link-mode", "copy", "--no-progress"]
            argv += ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
            argv += [arg for name in plan.reinstall for arg in ("--reinstall-package", name)]
        else:
            argv = [sys.executable, "-P", "-m", "pip", "--python", str(python), "install"]
            argv += ["--disable-pip-version-check", "--no-input"]
            argv += ["--no-compile"] if plan.host_compiles else []
            argv += ["--force-reinstall", "--no-deps"] if plan.reinstall else []
        argv += list(extra)
        argv += ["--no-index"] if index.local_only else []
        argv += ["--index-url", index.index_url] if index.index_url else []
        argv += [arg for link in index.local for arg in ("--find-links", link)]
        return argv + plan.pip_args()

    def install_env(self, caller: Mapping[str, str], cert: Mapping[str, str]) -> dict[str, str]:
        """The caller's index, proxy, timeout and certificate settings as variables this installer reads
        (`cert`: {pip option: path of the copy the sandbox sees})."""
        if self.name == "uv":
            return pip_config.uv_env(caller, cert)
        return pip_config.install_env(caller)


PIP = Installer("pip", sys.executable)


def choose(settings: Settings) -> Installer:
    """uv unless python.installer says pip or no uv starts here (then pip, which "uv" also falls back
    to: run.json records which one ran)."""
    if settings.python.installer == "pip":
        return PIP
    found = find_uv()
    return found if found is not None else PIP


@functools.cache
def find_uv() -> Installer | None:
    """The uv beside this interpreter (the `uv` extra) or the uv package's own, when it starts. Only
    these: the sandbox sees this interpreter's installation, not an arbitrary uv on PATH."""
    candidates = [Path(sys.executable).parent / "uv"]
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]

        candidates.append(Path(find_uv_bin()))
    except (ImportError, FileNotFoundError):
        pass
    for path in candidates:
        if not path.is_file():
            continue
        try:
            done = subprocess.run(
                [str(path), "--version"],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_S,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        words = done.stdout.split()
        if done.returncode == 0 and words[:1] == ["uv"] and len(words) > 1:
            return Installer("uv", str(path), words[1])
    return None
