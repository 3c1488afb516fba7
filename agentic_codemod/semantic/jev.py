"""The only module that knows the TypeSafe client (`typesafe-sdk`, the `semantic` extra).

    ask(state, names, settings, env) -> JevReply
    JevError (CodemodError)
    ├── JevUnavailable (75)  no client, no key, 401, 403, 408, 429, 5xx, connection refused, timeout
    └── JevRefused      (1)  400, 404, 422 and other 4xx; a reply the client cannot read

Both carry the request id when the service sent one. The key and base URL are read from `env`
(TYPESAFE_API_KEY, TYPESAFE_BASE_URL), never from anywhere else, and the key is never recorded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentic_codemod.errors import CodemodError
from agentic_codemod.semantic.settings import SemanticSettings
from agentic_codemod.status import Status
from agentic_codemod.yaml_input import safe_load

if TYPE_CHECKING:
    from typesafe_sdk import Choice, Noul, SystemOneResponse, TypeSafeAPIError

API_KEY_ENV = "TYPESAFE_API_KEY"
BASE_URL_ENV = "TYPESAFE_BASE_URL"
DEFAULT_BASE_URL = "https://api.typesafe.ai"
_UNAVAILABLE_STATUSES = frozenset({401, 403, 408, 429})


class JevError(CodemodError):
    def __init__(self, message: str, *, hint: str = "", request_id: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.request_id = request_id


class JevUnavailable(JevError):
    status = Status.PAUSED


class JevRefused(JevError):
    status = Status.REJECTED


@dataclass(frozen=True)
class JevReply:
    model: str
    nouls: dict[str, float] = field(default_factory=dict)
    # name -> (choice, confidence, probabilities)
    choices: dict[str, tuple[str, float, dict[str, float]]] = field(default_factory=dict)
    usage: dict[str, int | None] | None = None
    request_id: str | None = None


@cache
def question_texts() -> dict[str, dict[str, Any]]:
    text = resources.files("agentic_codemod.semantic").joinpath("questions.yml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, Any]] = safe_load(text)
    return loaded


def ask(state: str, names: list[str], settings: SemanticSettings, env: Mapping[str, str]) -> JevReply:
    try:
        import typesafe_sdk as ts
    except ImportError as exc:
        raise JevUnavailable(
            "typesafe-sdk is not installed", hint="pip install 'agentic-codemod[semantic]'"
        ) from exc
    key = (env.get(API_KEY_ENV) or "").strip()
    if not key:
        raise JevUnavailable(f"{API_KEY_ENV} is not set", hint="export the TypeSafe API key for this job")
    base_url = (env.get(BASE_URL_ENV) or "").strip() or DEFAULT_BASE_URL
    questions = {name: _question(name) for name in names}
    retry = ts.RetryPolicy(max_retries=settings.max_retries, timeout=settings.timeout_s)
    try:
        with ts.TypeSafeClient(
            api_key=key,
            base_url=base_url,
            model=settings.model,
            timeout=settings.timeout_s,
            retry=retry,
            compression=False,
        ) as client:
            response = client.system_one(state=state, questions=questions)
    except ts.TypeSafeAPIConnectionError as exc:  # includes TypeSafeAPITimeoutError
        raise JevUnavailable(f"TypeSafe at {_host(base_url)} unreachable: {exc}") from exc
    except ts.TypeSafeAPIResponseValidationError as exc:
        raise JevRefused(f"unreadable reply from TypeSafe: {exc}", request_id=exc.request_id) from exc
    except ts.TypeSafeAPIError as exc:
        raise _api_error(exc) from exc
    except ts.TypeSafeError as exc:  # raised before sending: an unusable key or setting
        raise JevUnavailable(f"TypeSafe client not usable: {exc}") from exc
    return _reply(response)


def _host(base_url: str) -> str:
    """The base URL without credentials a user may have put in it."""
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")


def _question(name: str) -> Noul | Choice:
    from typesafe_sdk import Choice, Noul

    spec = question_texts()[name]
    if spec["type"] == "noul":
        return Noul(instructions=spec["instructions"], criteria=spec["criteria"])
    return Choice(instructions=spec["instructions"], criteria=spec["criteria"])


def _api_error(exc: TypeSafeAPIError) -> JevError:
    status = exc.status
    message = f"TypeSafe answered {exc}"
    if status in _UNAVAILABLE_STATUSES or status >= 500:
        hint = "check TYPESAFE_API_KEY" if status in (401, 403) else "try again later"
        return JevUnavailable(message, hint=hint, request_id=exc.request_id)
    hint = "the request was refused; check gates.semantic.model"
    return JevRefused(message, hint=hint, request_id=exc.request_id)


def _reply(response: SystemOneResponse) -> JevReply:
    from typesafe_sdk import TypeSafeError

    try:
        request_id: str | None = response.request_id
    except TypeSafeError:  # the service sent no x-typesafe-request-id
        request_id = None
    usage = response.usage
    return JevReply(
        model=response.model,
        nouls={name: a.noul for name, a in response.nouls.items()},
        choices={n: (a.choice, a.confidence, dict(a.probabilities)) for n, a in response.choices.items()},
        usage={"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        request_id=request_id,
    )
