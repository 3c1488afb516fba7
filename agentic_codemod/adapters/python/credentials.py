"""The caller's pip credentials (user:password and tokens of index URLs), for the run's Redactor."""

from __future__ import annotations

from collections.abc import Mapping

from agentic_codemod.adapters.python import pip_config


def credentials(environ: Mapping[str, str]) -> list[str]:
    return pip_config.credentials(pip_config.read_caller_config(environ))
