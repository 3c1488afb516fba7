"""The few GitLab REST calls publish needs: find, open or update one merge request (httpx).

    token_from_env(env) -> GitLabToken | None        GITLAB_TOKEN (PRIVATE-TOKEN) or CI_JOB_TOKEN (JOB-TOKEN)
    GitLabClient(api_url, project, token, policy=RetryPolicy(), transport=None)
      .find_open(source_branch, target_branch) -> dict | None
      .upsert(MergeRequestSpec) -> MergeRequestResult      create, or update the open one; idempotent

Failures (errors.py):
    401, 403                          -> GitLabUnavailable (75) at once: credentials do not heal on retry
    429, 5xx, timeout, no connection  -> retried `policy.attempts` times, then GitLabUnavailable (75)
    409 on create                     -> another open MR holds the branch: it is found and updated
    404                               -> InputError (2): the project or merge request does not exist
    other 4xx                         -> GitLabRejected (1) with GitLab's message

The token goes only into a request header. It is never part of a message, a repr or an artifact.
httpx is imported when a client is made: the CLI parser imports this module on every command.

Text sent to GitLab is inert: `inert_spec` (applied by `upsert`) makes the title one line and escapes
every line that would start with `/` (a quick action: /approve, /merge, /assign_reviewer ...) with a
visible backslash, inside code blocks too (a fence GitLab reads differently must not reopen the door).
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from agentic_codemod.config import MR_TITLE_MAX_CHARS
from agentic_codemod.errors import CandidateRejected, EnvironmentUnavailable, InputError

if TYPE_CHECKING:
    import httpx

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
AUTH_STATUSES = frozenset({401, 403})


class GitLabUnavailable(EnvironmentUnavailable):
    """GitLab cannot be reached or refuses the credentials: publish pauses (exit 75)."""


class GitLabRejected(CandidateRejected):
    """GitLab refused the request for a reason a retry cannot fix (exit 1)."""


@dataclass(frozen=True)
class GitLabToken:
    header: Literal["PRIVATE-TOKEN", "JOB-TOKEN"]
    value: str = field(repr=False)
    source: str = ""  # the variable it came from, for messages

    @property
    def git_username(self) -> str:
        """The user name git uses with this token over HTTPS."""
        return "gitlab-ci-token" if self.header == "JOB-TOKEN" else "oauth2"

    def __str__(self) -> str:
        return f"{self.header} from ${self.source}"


def token_from_env(env: Mapping[str, str]) -> GitLabToken | None:
    """GITLAB_TOKEN (a project or personal access token) wins over the CI job token."""
    if env.get("GITLAB_TOKEN"):
        return GitLabToken("PRIVATE-TOKEN", env["GITLAB_TOKEN"], "GITLAB_TOKEN")
    if env.get("CI_JOB_TOKEN"):
        return GitLabToken("JOB-TOKEN", env["CI_JOB_TOKEN"], "CI_JOB_TOKEN")
    return None


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3  # total tries for 429/5xx/transport errors
    backoff_s: float = 1.0  # first pause; doubles each time
    timeout_s: float = 30.0


@dataclass(frozen=True)
class MergeRequestSpec:
    source_branch: str
    target_branch: str
    title: str
    description: str
    labels: tuple[str, ...] = ()
    remove_source_branch: bool = True


def inert_text(text: str) -> str:
    """The text with no line starting with `/` (after blanks or invisible characters): such a line gets a
    backslash before its `/`, which Markdown renders as the `/` alone. Idempotent."""
    lines = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        lead = 0
        while lead < len(line) and (line[lead].isspace() or unicodedata.category(line[lead]) == "Cf"):
            lead += 1
        if line[lead:].startswith("/"):
            line = f"{line[:lead]}\\{line[lead:]}"
        lines.append(line)
    return "\n".join(lines)


def inert_title(title: str) -> str:
    """One line (every run of blanks, newlines included, becomes one space), inert, at most
    MR_TITLE_MAX_CHARS characters."""
    return inert_text(" ".join(title.split()))[:MR_TITLE_MAX_CHARS]


def inert_spec(spec: MergeRequestSpec) -> MergeRequestSpec:
    return replace(spec, title=inert_title(spec.title), description=inert_text(spec.description))


@dataclass(frozen=True)
class MergeRequestResult:
    iid: int
    web_url: str
    action: Literal["created", "updated", "unchanged"]


class GitLabClient:
    def __init__(
        self,
        api_url: str,
        project: str,
        token: GitLabToken,
        policy: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx

        self.policy = policy or RetryPolicy()
        self.project_path = f"/projects/{quote(project, safe='')}"
        self._http = httpx.Client(
            base_url=api_url.rstrip("/"),
            headers={token.header: token.value, "User-Agent": "agentic-codemod"},
            timeout=self.policy.timeout_s,
            transport=transport,
        )
        self._token = token

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GitLabClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def find_open(self, source_branch: str, target_branch: str) -> dict[str, Any] | None:
        params = {"state": "opened", "source_branch": source_branch, "target_branch": target_branch}
        found = self._request("GET", f"{self.project_path}/merge_requests", params=params)
        return found[0] if isinstance(found, list) and found else None

    def upsert(self, spec: MergeRequestSpec) -> MergeRequestResult:
        """Open the merge request, or bring the open one for the same branches up to date."""
        spec = inert_spec(spec)
        existing = self.find_open(spec.source_branch, spec.target_branch)
        if existing is None:
            try:
                created = self._request(
                    "POST", f"{self.project_path}/merge_requests", json=_create_body(spec)
                )
                return MergeRequestResult(int(created["iid"]), str(created.get("web_url", "")), "created")
            except _Conflict:  # opened meanwhile, or our own earlier POST went through before a 5xx
                existing = self.find_open(spec.source_branch, spec.target_branch)
                if existing is None:
                    raise GitLabRejected(
                        "GitLab answered 409 to the new merge request but lists no open one for "
                        f"{spec.source_branch} -> {spec.target_branch}",
                        hint="look for a closed or locked merge request on that branch",
                    ) from None
        return self._update(existing, spec)

    def _update(self, existing: dict[str, Any], spec: MergeRequestSpec) -> MergeRequestResult:
        iid, url = int(existing["iid"]), str(existing.get("web_url", ""))
        same = (
            existing.get("title") == spec.title
            and existing.get("description") == spec.description
            and sorted(existing.get("labels") or []) == sorted(spec.labels)
        )
        if same:
            return MergeRequestResult(iid, url, "unchanged")
        self._request("PUT", f"{self.project_path}/merge_requests/{iid}", json=_update_body(spec))
        return MergeRequestResult(iid, url, "updated")

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        what = f"GitLab {method} {path}"
        for attempt in range(1, self.policy.attempts + 1):
            last = attempt == self.policy.attempts
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if last:
                    raise GitLabUnavailable(
                        f"{what}: {type(exc).__name__} after {attempt} attempt(s)",
                        hint="GitLab is unreachable; rerun the job later",
                    ) from None
                self._pause(attempt)
                continue
            status = response.status_code
            if status < 300:
                return response.json() if response.content else None
            if status in AUTH_STATUSES:
                raise GitLabUnavailable(
                    f"{what}: {status} {_message(response)}",
                    hint=f"check the token ({self._token}): it needs the api scope and Developer access",
                )
            if status in RETRY_STATUSES and not last:
                self._pause(attempt)
                continue
            if status in RETRY_STATUSES:
                raise GitLabUnavailable(
                    f"{what}: {status} after {attempt} attempt(s)",
                    hint="GitLab is failing; rerun the job later",
                )
            if status == 409:
                raise _Conflict(_message(response))
            if status == 404:
                raise InputError(
                    f"{what}: 404 {_message(response)}",
                    hint="check --project / CI_PROJECT_ID and --gitlab-url / CI_API_V4_URL",
                )
            raise GitLabRejected(f"{what}: {status} {_message(response)}")
        raise AssertionError("unreachable")  # pragma: no cover

    def _pause(self, attempt: int) -> None:
        time.sleep(self.policy.backoff_s * 2 ** (attempt - 1))


class _Conflict(Exception):
    pass


def _create_body(spec: MergeRequestSpec) -> dict[str, Any]:
    return {
        "source_branch": spec.source_branch,
        "target_branch": spec.target_branch,
        "remove_source_branch": spec.remove_source_branch,
        **_update_body(spec),
    }


def _update_body(spec: MergeRequestSpec) -> dict[str, Any]:
    return {"title": spec.title, "description": spec.description, "labels": ",".join(spec.labels)}


def _message(response: httpx.Response) -> str:
    """GitLab's own error text ({"message": ...} or {"error": ...}), cut short."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        return str(body.get("message") or body.get("error") or body)[:300]
    return str(body)[:300]
