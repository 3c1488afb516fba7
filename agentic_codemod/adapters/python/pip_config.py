"""The caller's pip configuration, handed explicitly to the pip that runs inside the sandbox.

    read_caller_config(environ) -> dict[str, str]     pip's own reading (`pip config list`, this
                                                      interpreter's pip, the caller's environment):
                                                      site, user and PIP_CONFIG_FILE files, then PIP_*
    install_env(config) -> {PIP_*: value}              index-url, extra-index-url, trusted-host, proxy,
                                                      timeout, retries: passed as variables, so an index
                                                      URL with credentials is on no command line
    cert_args(config, root) -> ["--cert", path ...]    certificate files copied into the repository copy
                                                      (which the sandbox mounts), given as arguments
    credentials(config) -> [secret, ...]               user:password and token parts of index URLs, for
                                                      the run's Redactor

The sandbox clears the environment and puts HOME on a tmpfs, so without this the caller's private
index, certificates and trusted hosts would be lost. The tool's own settings (python.index_url,
find_links, no_index) are command-line options and win over these. Keys from [install] win over
[global]; PIP_* variables win over files (pip's order).
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

# pip option names passed on to the sandboxed pip as variables.
PASSED_KEYS = ("index-url", "extra-index-url", "trusted-host", "proxy", "timeout", "retries")
ALIASES = {"default-timeout": "timeout"}
CERT_KEYS = ("cert", "client-cert")
CERT_DIR = ".codemod-pip"  # in the repository copy of an install (discarded after it)
SCOPES = {"global": 0, "install": 1, ":env:": 2}
CONFIG_TIMEOUT_S = 60.0


def read_caller_config(environ: Mapping[str, str]) -> dict[str, str]:
    """{option: value} of the caller's effective pip configuration (empty when pip cannot say)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=CONFIG_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return parse_config_list(done.stdout) if done.returncode == 0 else {}


def parse_config_list(output: str) -> dict[str, str]:
    """`scope.key='value'` lines of `pip config list`, merged in pip's order of precedence."""
    found: dict[str, tuple[int, str]] = {}
    for line in output.splitlines():
        name, sep, raw = line.partition("=")
        scope, _, key = name.rpartition(".")
        if not sep or scope not in SCOPES:
            continue
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            continue
        key = ALIASES.get(key, key)
        if isinstance(value, str) and (key not in found or SCOPES[scope] >= found[key][0]):
            found[key] = (SCOPES[scope], value)
    return {key: value for key, (_rank, value) in found.items()}


def install_env(config: Mapping[str, str]) -> dict[str, str]:
    """The PIP_* variables that carry the passed options (multi-valued ones space-separated)."""
    return {
        "PIP_" + key.upper().replace("-", "_"): " ".join(config[key].split())
        for key in PASSED_KEYS
        if config.get(key, "").strip()
    }


def cert_args(config: Mapping[str, str], root: Path) -> list[str]:
    """--cert / --client-cert pointing at copies inside `root`, the repository copy the install runs on
    (a file the caller's config names is not otherwise visible in the sandbox)."""
    args: list[str] = []
    for key in CERT_KEYS:
        source = Path(config.get(key, "")).expanduser()
        if not config.get(key) or not source.is_file():
            continue
        target = root / CERT_DIR / f"{key}{source.suffix}"
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(0o600)
        args += [f"--{key}", str(target)]
    return args


def credentials(config: Mapping[str, str]) -> list[str]:
    """The secret parts of the index and proxy URLs: passwords and user names that are tokens."""
    found: list[str] = []
    for key in ("index-url", "extra-index-url", "proxy"):
        for url in config.get(key, "").split():
            parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
            secret = parts.password or parts.username  # a user name alone is a token
            found += [secret] if secret else []
    return found
