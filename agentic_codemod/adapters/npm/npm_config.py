"""Registry settings for the npm that runs inside the sandbox, and what a repository's .npmrc may say.

    read_caller_config(environ) -> dict[str, str]   the caller's user .npmrc (NPM_CONFIG_USERCONFIG or
                                                    ~/.npmrc, ${VAR} expanded) then npm_config_* variables
    install_env(config) -> {npm_config_*: value}    registry, @scope:registry, proxy, strict-ssl, timeouts:
                                                    passed as variables, never on a command line
    auth_lines(config) -> str                       the `//host/:_authToken=…` lines, written to a private
                                                    user config file for the length of one install
                                                    (environment.py) and removed after it
    credentials(config) -> [secret, ...]            token and password values, for the run's Redactor
    refused_lines(root) -> [(line, reason)]         keys of the repository's own .npmrc that would run
                                                    code, read config from elsewhere, turn install
                                                    scripts on, or route the registry's traffic (proxy,
                                                    TLS trust)

The sandbox clears the environment and puts HOME on a tmpfs, so without this the caller's registry and
credentials would be lost. Installs that reach the network run with --ignore-scripts, so no repository
code runs while a credential is present; install scripts run afterwards (`npm rebuild`), without
credentials, in the same install box (with the registry's network). The repository's own .npmrc is
read by npm as project configuration (its registry settings are honoured; its proxy and TLS settings
are refused, NETWORK_KEYS); the caller's settings win over it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

MAX_NPMRC_BYTES = 1 << 20  # of a caller's npmrc read for secrets
PASSED_KEYS = (
    "registry",
    "strict-ssl",
    "cafile",
    "proxy",
    "https-proxy",
    "noproxy",
    "fetch-timeout",
    "fetch-retries",
)
SCOPED_REGISTRY = re.compile(r"^@[a-z0-9][\w.-]*:registry$")
AUTH_KEY = re.compile(r"^//[^\s=]+:(?:_authToken|_auth|_password|username|email|always-auth)$")
SECRET_KEYS = ("_authToken", "_auth", "_password")
# Repository .npmrc keys that make npm run a program, load config or code from elsewhere, or write
# outside the install: refused before npm reads the file.
REFUSED_KEYS = frozenset(
    {
        "script-shell",
        "shell",
        "node-options",
        "userconfig",
        "globalconfig",
        "prefix",
        "cache",
        "git",
        "init-module",
        "onload-script",
        "editor",
        "browser",
        "viewer",
        "node-gyp",
        "cafile",
        "globalignorefile",
        "tmp",
    }
)
# Repository .npmrc keys that decide where the registry's traffic goes or which certificates count: with
# the caller's credentials in the install (a private user config), a proxy the repository names would
# receive the caller's token with every request (and could answer with packages of its own). Only the
# caller sets these (PASSED_KEYS); `strict-ssl=true`, npm's default, is no change and passes.
NETWORK_KEYS = frozenset({"proxy", "https-proxy", "http-proxy", "noproxy", "strict-ssl", "ca", "cert", "key"})
_ENV_REF = re.compile(r"\$\{([^}]+)\}")
# What JavaScript's String.prototype.trim removes: Unicode white space, line ends and the byte order mark.
JS_SPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace()) + "\ufeff"
# Proxy settings that turn a proxy off: nothing is routed anywhere.
NO_PROXY_VALUES = frozenset({"", "null", "false"})


def parse(text: str) -> list[tuple[int, str, str]]:
    """(line, key, value) of an npmrc, each key and value read as npm's ini parser reads it: lines split
    at CR and LF only; JavaScript's trim (a byte order mark included); a quoted one unquoted, an unquoted
    one cut at `;` or `#` (`\\;` and `\\#` escape them); a key alone is `true`. Whole-line comments and
    section headers are skipped (a section's keys are read as top-level ones: stricter than npm, which
    nests them). helper-39: `"proxy"=`, `proxy;x=` and a byte order mark before `proxy` were keys this
    reader did not know and npm read as `proxy`."""
    found = []
    for number, raw in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        line = raw.strip(JS_SPACE)
        if not line or line[0] in ";#" or line.startswith("["):
            continue
        key, equals, value = line.partition("=")
        found.append((number, _unsafe(key), _unsafe(value) if equals else "true"))  # a bare key is true
    return found


def _unsafe(text: str) -> str:
    """ini's `unsafe`: trimmed; a quoted one read as JSON (a single-quoted one stripped of its quotes
    first: `'"proxy"'` is `proxy`, helper-40), else as it is; an unquoted one cut at the first unescaped
    `;` or `#`."""
    text = text.strip(JS_SPACE)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        quoted = text[1:-1] if text[0] == "'" else text
        try:
            decoded = json.loads(quoted)
        except ValueError:
            return quoted if text[0] == "'" else text
        return decoded if isinstance(decoded, str) else quoted
    out, escaped = [], False
    for char in text:
        if escaped:
            out.append(char if char in "\\;#" else "\\" + char)
            escaped = False
        elif char in ";#":
            break
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return ("".join(out) + ("\\" if escaped else "")).strip(JS_SPACE)


def read_caller_config(environ: Mapping[str, str]) -> dict[str, str]:
    """npm's global npmrc, then the user's over it, then npm_config_* variables (npm's order): the boxes
    show neither file where it holds a secret (secret_files), so what npm needs of them goes as variables."""
    path = environ.get("NPM_CONFIG_USERCONFIG") or environ.get("npm_config_userconfig")
    user = Path(path) if path else Path(environ.get("HOME", str(Path.home()))) / ".npmrc"
    config: dict[str, str] = {}
    for file in (global_config(environ), user):
        try:
            text = file.read_bytes()[:MAX_NPMRC_BYTES].decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        for _line, key, value in parse(text):
            config[key] = _ENV_REF.sub(lambda m: environ.get(m.group(1), ""), value)
    for name, value in environ.items():
        if name.lower().startswith("npm_config_"):
            key = name[len("npm_config_") :].lower().replace("_", "-")
            if key in PASSED_KEYS:
                config[key] = value
    return config


def global_config(environ: Mapping[str, str]) -> Path:
    """npm's global npmrc: `globalconfig`, else `{prefix}/etc/npmrc` where the prefix is node's."""
    named = environ.get("NPM_CONFIG_GLOBALCONFIG") or environ.get("npm_config_globalconfig")
    if named:
        return Path(named)
    node = shutil.which("node", path=environ.get("PATH"))
    return Path(node).resolve().parent.parent / "etc" / "npmrc" if node else Path("/usr/etc/npmrc")


def secret_files(environ: Mapping[str, str]) -> list[str]:
    """npm's user and global configuration files that hold a secret (a registry token, a password in a
    URL, a client key inline), and the client certificate's key and certificate files they name: npm's
    global npmrc sits under its prefix, inside /usr on most machines, where every box would show it to
    the repository's install scripts (helper-43). A file without one stays visible: npm in the box may
    need what it says (a `cafile` for a TLS-inspecting proxy)."""
    node = shutil.which("node", path=environ.get("PATH"))
    prefixes = ["/usr", "/usr/local", *([str(Path(node).resolve().parent.parent)] if node else [])]
    named = [environ.get(k, "") for k in ("NPM_CONFIG_USERCONFIG", "npm_config_userconfig")]
    named += [environ.get(k, "") for k in ("NPM_CONFIG_GLOBALCONFIG", "npm_config_globalconfig")]
    home = environ.get("HOME", str(Path.home()))
    places = [*named, f"{home}/.npmrc", "/etc/npmrc", *(f"{x}/etc/npmrc" for x in prefixes)]
    found: list[str] = []
    for path in dict.fromkeys(p for p in places if p):
        settings = _settings(Path(path))
        if credentials(settings) or any(_client_key(k) == "key" for k in settings):
            found.append(path)
        # the client certificate's files it names (helper-47: a keyfile under /opt was in every box)
        found += [
            _expanded(v, home) for k, v in settings.items() if _client_key(k) in ("keyfile", "certfile")
        ]
    return [path for path in dict.fromkeys(found) if path]


def _settings(path: Path) -> dict[str, str]:
    try:
        text = path.read_bytes()[:MAX_NPMRC_BYTES].decode("utf-8", "replace")
    except OSError:
        return {}
    return {key: value for _line, key, value in parse(text)}


def _client_key(key: str) -> str:
    """`key`, `keyfile`, `certfile` (and `cert`) of a client certificate, set for every registry or for one
    (`//HOST/:keyfile`); "" for any other key."""
    name = key.rpartition(":")[2] if key.startswith("//") else key
    return name if name in ("key", "keyfile", "certfile", "cert") else ""


def _expanded(value: str, home: str) -> str:
    value = value.strip()
    return f"{home}{value[1:]}" if value.startswith("~/") else value


def install_env(config: Mapping[str, str]) -> dict[str, str]:
    env = {f"npm_config_{key}": value for key, value in config.items() if key in PASSED_KEYS}
    env.update({f"npm_config_{key}": value for key, value in config.items() if SCOPED_REGISTRY.match(key)})
    return env


def auth_lines(config: Mapping[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in config.items() if AUTH_KEY.match(key))


def credentials(config: Mapping[str, str]) -> list[str]:
    secrets = [v for k, v in config.items() if AUTH_KEY.match(k) and k.endswith(SECRET_KEYS) and v]
    secrets += [m.group(2) for v in config.values() for m in re.finditer(r"://([^:/@\s]+):([^@/\s]+)@", v)]
    return secrets


def caller_credentials(environ: Mapping[str, str]) -> list[str]:
    """The contract's credentials: the secrets of the caller's npm configuration."""
    return credentials(read_caller_config(environ))


def _harmless(name: str, value: str) -> bool:
    """npm's default TLS check kept, or a proxy turned off."""
    if name == "strict-ssl":
        return value == "true"
    return name in ("proxy", "https-proxy", "http-proxy") and value in NO_PROXY_VALUES


def refused_lines(root: Path) -> list[tuple[int, str]]:
    try:
        text = (root / ".npmrc").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [(0, f"cannot read: {exc}")]
    refused = []
    for line, key, value in parse(text):
        name = key.lower().removesuffix("[]")  # `ca[]=…` adds to a list
        if "${" in key and not key.startswith(("//", "@")):  # npm expands variables in keys: `pro${X?}xy`
            # is `proxy`; a registry's own settings (`//${CI_SERVER_HOST}/...:_authToken`) stay what they are
            refused.append((line, f"`{key}` is a key npm builds from variables; name the key itself"))
        elif name in REFUSED_KEYS:
            refused.append((line, f"`{key}` may not be set by the repository (it runs or loads code)"))
        elif name in NETWORK_KEYS and not _harmless(name, value.lower()):
            refused.append(
                (
                    line,
                    f"`{key}` may not be set by the repository (it decides where the registry's traffic,"
                    " with the caller's credentials, goes or which certificates count); the caller's npm"
                    " configuration sets it",
                )
            )
        elif name == "ignore-scripts" and value.lower() == "false":
            refused.append(
                (line, "`ignore-scripts=false`: install scripts run only where the tool lets them")
            )
    return refused
