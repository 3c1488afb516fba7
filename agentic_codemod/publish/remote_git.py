"""git for publishing: a fixed identity, no user or system config, no hooks, no prompts, none of the caller's
environment (tools/safe_git.run_git), credentials kept out of sight.

    Git(token).run(*args, cwd=..., remote=True) -> GitOutput      raises on failure:
        auth or network trouble on a remote  -> EnvironmentUnavailable (75)
        not a repository                     -> InputError (2)
        anything else                        -> CandidateRejected (1)
    safe_url(url) -> the URL without user or password

The token reaches git only as an `http.extraHeader` through GIT_CONFIG_* environment variables: never on a
command line, never in a URL, and every message is redacted before it leaves this module.
"""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit, urlunsplit

from agentic_codemod.config import GIT_REMOTE_TIMEOUT_S
from agentic_codemod.errors import CandidateRejected, EnvironmentUnavailable, InputError
from agentic_codemod.publish.gitlab import GitLabToken
from agentic_codemod.tools.safe_git import run_git
from agentic_codemod.tools.trace import Redactor

AUTHOR = ("agentic-codemod", "agentic-codemod@noreply.invalid")
# The caller's network settings a push or fetch may need (no GIT_* variable, no credential).
NETWORK_ENV = (
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
)
# git's words for "cannot reach / not allowed": the job pauses (75) instead of failing the change.
UNAVAILABLE_MARKERS = (
    "Authentication failed",
    "could not read Username",
    "Access denied",
    "returned error: 401",
    "returned error: 403",
    "returned error: 5",
    "Could not resolve host",
    "Connection refused",
    "Connection timed out",
    "Failed to connect",
    "Operation timed out",
    "The remote end hung up",
)


def safe_url(url: str) -> str:
    """The URL without user or password, for messages and artifacts."""
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


@dataclass(frozen=True)
class GitOutput:
    code: int
    raw: bytes
    stderr: str

    @property
    def stdout(self) -> str:
        return self.raw.decode("utf-8", "replace")


class Git:
    """git with a fixed identity, no user or system config, no prompts; the token only in an env header."""

    def __init__(self, token: GitLabToken | None) -> None:
        self.auth: dict[str, str] = {}
        secrets = []
        if token is not None:
            basic = base64.b64encode(f"{token.git_username}:{token.value}".encode()).decode()
            self.auth = {
                "GIT_CONFIG_COUNT": "1",
                "GIT_CONFIG_KEY_0": "http.extraHeader",
                "GIT_CONFIG_VALUE_0": f"Authorization: Basic {basic}",
            }
            secrets = [token.value, basic]
        self.redactor = Redactor(secrets)

    def redact(self, text: str | bytes) -> str:
        raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        return self.redactor.redact(raw).strip()

    def run(
        self,
        *args: str,
        cwd: Path,
        check: bool = True,
        remote: bool = False,
        input_text: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> GitOutput:
        merged = {  # added to run_git's scrubbed environment: nothing else of the caller's gets through
            **{k: os.environ[k] for k in NETWORK_ENV if k in os.environ},
            "GIT_AUTHOR_NAME": AUTHOR[0],
            "GIT_AUTHOR_EMAIL": AUTHOR[1],
            "GIT_COMMITTER_NAME": AUTHOR[0],
            "GIT_COMMITTER_EMAIL": AUTHOR[1],
            **self.auth,
            **(env or {}),
        }
        stdin = input_text.encode() if input_text is not None else None
        try:
            proc = run_git(args, cwd=cwd, env=merged, stdin=stdin, timeout_s=GIT_REMOTE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise EnvironmentUnavailable(
                f"git {args[0]} timed out after {GIT_REMOTE_TIMEOUT_S:.0f}s",
                hint="the git remote is slow or unreachable; rerun later",
            ) from None
        out = GitOutput(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
        if check and out.code != 0:
            self.raise_for(out, args[0], remote=remote)
        return out

    def raise_for(
        self, proc: GitOutput, what: str, *, remote: bool, fallback: Exception | None = None
    ) -> NoReturn:
        err = self.redact(proc.stderr)[-400:]
        message = f"git {what} failed (exit {proc.code}): {err}"
        if remote and any(marker in err for marker in UNAVAILABLE_MARKERS):
            raise EnvironmentUnavailable(
                message, hint="check the token (write_repository) and the remote; rerun later"
            )
        if remote and "does not appear to be a git repository" in err:
            raise InputError(message, hint="check --remote")
        raise fallback or CandidateRejected(message)
