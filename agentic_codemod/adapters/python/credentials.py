"""The caller's pip credentials (user:password and tokens of index URLs), for the run's Redactor, and
the files that hold them, which no box shows."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from agentic_codemod.adapters.python import pip_config


def credentials(environ: Mapping[str, str]) -> list[str]:
    return pip_config.credentials(pip_config.read_caller_config(environ))


def secret_files(environ: Mapping[str, str]) -> list[str]:
    """The caller's client certificate (its key) and every pip configuration file (an index URL with a
    password): the sandboxed installs get what they need of them from the index front and variables."""
    config = pip_config.read_caller_config(environ)
    named = [config.get("client-cert", ""), environ.get("PIP_CONFIG_FILE", "")]
    places = [*pip_config.config_files(environ), *pip_config.candidate_files(environ)]
    places.append(f"{sys.base_prefix}/pip.conf")
    return [path for path in [*named, *places] if path and path != os.devnull]
