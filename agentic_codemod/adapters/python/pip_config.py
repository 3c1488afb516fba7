"""The caller's pip configuration, handed explicitly to the pip that runs inside the sandbox.

    read_caller_config(environ) -> dict[str, str]     pip's own reading (its Configuration, merged as
                                                      pip merges it; this interpreter's pip, the
                                                      caller's environment):
                                                      site, user and PIP_CONFIG_FILE files, then PIP_*
    install_env(config) -> {PIP_*: value}              index-url, extra-index-url, trusted-host, proxy,
                                                      timeout, retries, find-links, no-index: passed as
                                                      variables, so an index URL with credentials is on
                                                      no command line; no configuration file is read
    cert_args(config, root) -> ["--cert", path ...]    certificate files copied into the repository copy
                                                      (which the sandbox mounts), given as arguments
    cert_copies(config, root) -> {option: path}        the same copies, relative to the copy's root
    uv_env(config, certs) -> {UV_*: value}             the same options as uv reads them: UV_DEFAULT_INDEX,
                                                      UV_INDEX (extra indexes, searched like pip's:
                                                      best match over all), UV_INSECURE_HOST,
                                                      HTTP(S)_PROXY, UV_HTTP_TIMEOUT, UV_HTTP_RETRIES,
                                                      SSL_CERT_FILE / SSL_CLIENT_CERT, UV_FIND_LINKS,
                                                      UV_NO_INDEX
    credentials(config) -> [secret, ...]               user:password and token parts of index URLs, for
                                                      the run's Redactor

The sandbox clears the environment and puts HOME on a tmpfs, so without this the caller's private
index, certificates and trusted hosts would be lost. The tool's own settings (packages.index_url,
local, local_only: --index-url, --find-links, --no-index) are command-line options and win over these.
Keys from [install] win over [global]; PIP_* variables win over files (pip's order).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

from agentic_codemod.tools import repo_copy

# pip option names passed on to the sandboxed pip as variables.
PASSED_KEYS = ("index-url", "extra-index-url", "trusted-host", "proxy", "timeout", "retries")
ALIASES = {"default-timeout": "timeout"}
CERT_KEYS = ("cert", "client-cert")
CERT_DIR = ".codemod-pip"  # in the repository copy of an install (discarded after it)
SCOPES = {"global": 0, "install": 1, ":env:": 2}
CONFIG_TIMEOUT_S = 60.0


def read_caller_config(environ: Mapping[str, str]) -> dict[str, str]:
    """{option: value} of the caller's effective pip configuration (empty when pip cannot say). Starting
    pip costs about half a second of CPU: the answer is kept for the same environment and the same
    config files (by path, size and mtime) within this process, and pip is not started where it would
    read nothing: on Linux, no PIP_* variable and none of the files it reads exists."""
    if nothing_to_read(environ):
        return {}
    key = (frozenset(environ.items()), tuple(_stat(path) for path in config_files(environ)))
    if key not in _READ:
        _READ.clear()
        _READ[key] = _read(environ)
    return dict(_READ[key])


_READ: dict[object, dict[str, str]] = {}


def config_files(environ: Mapping[str, str]) -> list[str]:
    """Where pip looks for configuration (pip._internal.configuration), as far as it can change."""
    home = environ.get("HOME", "")
    xdg = environ.get("XDG_CONFIG_HOME", f"{home}/.config")
    dirs = environ.get("XDG_CONFIG_DIRS", "/etc/xdg").split(":")
    files = [environ.get("PIP_CONFIG_FILE", ""), f"{home}/.pip/pip.conf", f"{xdg}/pip/pip.conf"]
    return files + [f"{d}/pip/pip.conf" for d in dirs] + ["/etc/pip.conf", f"{sys.prefix}/pip.conf"]


def nothing_to_read(environ: Mapping[str, str]) -> bool:
    """Whether pip would find no configuration: Linux, HOME set, no PIP_* variable (PIP_CONFIG_FILE is
    one), no XDG_CONFIG_* variable (how a pip reads those has changed between versions: `~` expanded or
    not, spaces stripped or not), and no file at any of candidate_files. Anything else asks pip."""
    if sys.platform != "linux" or not environ.get("HOME"):
        return False
    if any(k.startswith(("PIP_", "XDG_CONFIG_")) for k in environ):
        return False
    return not any(os.path.lexists(path) for path in candidate_files(environ))


def candidate_files(environ: Mapping[str, str]) -> list[str]:
    """Every place pip's Linux file list (pip._internal.configuration with platformdirs) names where no
    XDG_CONFIG_* variable is set (a test checks pip's own list against it)."""
    home = environ.get("HOME", "")
    dirs = [f"{home}/.pip", f"{home}/.config/pip", "/etc/xdg/pip", "/etc", sys.prefix]
    return [f"{d}/pip.conf" for d in dirs]


def _stat(path: str) -> tuple[str, int, int]:
    try:
        info = Path(path).stat() if path else None
    except OSError:
        info = None
    return (path, info.st_size, info.st_mtime_ns) if info else (path, -1, -1)


# pip's own merge (Configuration.get_value's): every file in pip's order of precedence (global, user,
# site, PIP_CONFIG_FILE, then PIP_* variables), a later one winning, as `scope.key=value` lines.
# `pip config list` prints the files sorted by their names, not in that order: where two files set one key
# (PIP_CONFIG_FILE and /etc/pip.conf each a `cert`), the name sorted last won (pip 24.1 and later).
MERGED = """
import sys
try:
    from pip._internal.configuration import Configuration
except ImportError:
    sys.exit(3)
configuration = Configuration(isolated=False)
configuration.load()
merged = {}
for name, values in configuration.items():
    merged.update(values if isinstance(values, dict) else {name: values})  # per file since pip 24.1
for key, value in merged.items():
    print(f"{key}={value!r}")
"""


def _read(environ: Mapping[str, str]) -> dict[str, str]:
    """pip's merged configuration (MERGED); `pip config list` where this pip has no such module."""
    # -I: the caller's working directory (a repository's checkout, for a project that migrates itself) is
    # not on sys.path, so a `pip` package there cannot run in the tool's process
    done = _pip([sys.executable, "-I", "-c", MERGED], environ)
    if done is not None and done.returncode == 3:
        done = _pip([sys.executable, "-I", "-m", "pip", "config", "list"], environ)
    return parse_config_list(done.stdout) if done is not None and done.returncode == 0 else {}


def _pip(argv: list[str], environ: Mapping[str, str]) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(
            argv,
            env=dict(environ),
            capture_output=True,
            text=True,
            timeout=CONFIG_TIMEOUT_S,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None


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
    """The PIP_* variables that carry the passed options (multi-valued ones space-separated), find-links
    and no-index among them; and PIP_CONFIG_FILE=/dev/null: the sandboxed pip reads no configuration
    file at all (not the machine's, which the box does not mount, nor ENV/pip.conf, which the baseline's
    build backend could write for the bump's install: helper-41, a find-links into the repository)."""
    env = {
        "PIP_" + key.upper().replace("-", "_"): " ".join(config[key].split())
        for key in (*PASSED_KEYS, "find-links")
        if config.get(key, "").strip()
    }
    if config.get("no-index", "").strip().lower() in TRUE_VALUES:
        env["PIP_NO_INDEX"] = "1"
    return env | {"PIP_CONFIG_FILE": os.devnull}


def cert_args(config: Mapping[str, str], root: Path) -> list[str]:
    """--cert / --client-cert pointing at copies inside `root`, the repository copy the install runs on
    (a file the caller's config names is not otherwise visible in the sandbox)."""
    return [arg for key, rel in cert_copies(config, root).items() for arg in (f"--{key}", str(root / rel))]


def cert_copies(config: Mapping[str, str], root: Path) -> dict[str, str]:
    """{cert option: path relative to `root`} of the certificate files copied into `root`.

    `root` is a copy of the repository: whatever it holds at CERT_DIR (a symlink out of it, a planted
    file) is removed first, and the folder and files are created new, never following a link, so that a
    copy cannot land outside the root or overwrite a file there."""
    sources = {key: Path(config[key]).expanduser() for key in CERT_KEYS if config.get(key)}
    sources = {key: source for key, source in sources.items() if source.is_file()}
    if not sources:
        return {}
    folder = root / CERT_DIR
    repo_copy.remove(folder)
    folder.mkdir(mode=0o700)
    copies: dict[str, str] = {}
    for key, source in sources.items():
        target = folder / f"{key}{source.suffix}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(target, flags, 0o600), "wb") as out:
            out.write(source.read_bytes())
        copies[key] = str(target.relative_to(root))
    return copies


# pip option -> the variable uv reads for it (multi-valued ones space-separated, as uv expects).
UV_VARIABLES = {
    "index-url": ("UV_DEFAULT_INDEX",),
    "extra-index-url": ("UV_INDEX",),
    "trusted-host": ("UV_INSECURE_HOST",),
    "proxy": ("HTTPS_PROXY", "HTTP_PROXY"),
    "timeout": ("UV_HTTP_TIMEOUT",),
    "retries": ("UV_HTTP_RETRIES",),
}
UV_CERT_VARIABLES = {"cert": "SSL_CERT_FILE", "client-cert": "SSL_CLIENT_CERT"}
UV_KEYS = (*PASSED_KEYS, "find-links", "no-index")  # what uv_env reads of the caller's configuration
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def uv_env(config: Mapping[str, str], certs: Mapping[str, str]) -> dict[str, str]:
    """The passed pip options as uv's variables; `certs` are cert_copies (relative to the install's
    working directory, the repository copy). Several indexes are searched as pip does, for the best
    version over all of them (uv's default would stop at the first index that has the name)."""
    env: dict[str, str] = {}
    for key, names in UV_VARIABLES.items():
        value = " ".join(config.get(key, "").split())
        env.update({name: value for name in names if value})
    if "UV_INDEX" in env:
        env["UV_INDEX_STRATEGY"] = "unsafe-best-match"
    # find-links and no-index: pip reads them from the machine's pip.conf itself; uv reads no pip.conf.
    # A local directory that does not exist is left out, as pip ignores it (uv would stop).
    links = [link for link in config.get("find-links", "").split() if "://" in link or Path(link).is_dir()]
    env.update({"UV_FIND_LINKS": ",".join(links)} if links else {})
    if config.get("no-index", "").strip().lower() in TRUE_VALUES:
        env["UV_NO_INDEX"] = "1"
    env.update({UV_CERT_VARIABLES[key]: path for key, path in certs.items()})
    return env


def credentials(config: Mapping[str, str]) -> list[str]:
    """The secret parts of the index and proxy URLs: passwords and user names that are tokens."""
    found: list[str] = []
    for key in ("index-url", "extra-index-url", "proxy"):
        for url in config.get(key, "").split():
            parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
            secret = parts.password or parts.username  # a user name alone is a token
            found += [secret] if secret else []
    return found


def proxy_with_user_info(proxy: str) -> bool:
    """A proxy setting (pip takes `user:pass@host:port` without a scheme too) that holds a password."""
    return any("@" in urllib.parse.urlsplit(p if "://" in p else f"http://{p}").netloc for p in proxy.split())
