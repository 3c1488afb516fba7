"""Reading what an agent answered: a structured reply validates against its schema or fails the step,
and a coder that changed nothing is named for what most likely happened (the endpoint's tool parser)."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from agentic_codemod.errors import CandidateRejected
from agentic_codemod.llm.factory import TOOL_PARSER_HINT

S = TypeVar("S", bound=BaseModel)
TOOL_CALL_TEXT = re.compile(
    r"<tool_call>|<function=|^\s*\{\s*\"(name|function)\"\s*:.*\"(arguments|parameters)\"", re.DOTALL
)
FENCED = re.compile(r"^\s*```(?:json)?\s*\n(.*)\n```\s*$", re.DOTALL)


def structured_reply(content: Any, schema: type[S], agent: str) -> S:
    if isinstance(content, schema):
        return content
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    fenced = FENCED.match(text)
    try:
        return schema.model_validate_json(fenced.group(1) if fenced else text)
    except ValidationError as exc:
        if TOOL_CALL_TEXT.search(text):
            raise CandidateRejected(
                f"agent {agent} answered with a tool call written as text instead of a {schema.__name__}",
                hint=TOOL_PARSER_HINT,
            ) from exc
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "<root>"
        raise CandidateRejected(
            f"agent {agent}'s reply does not fit {schema.__name__}: field '{where}': {err['msg']}",
            hint=f"reply starts with: {text[:160]!r}",
        ) from exc


def silent_failure(agent: str, calls: int, text: str) -> CandidateRejected:
    if TOOL_CALL_TEXT.search(text):
        return CandidateRejected(
            f"agent {agent} wrote its tool call as text instead of calling the tool; no file was changed",
            hint=TOOL_PARSER_HINT,
        )
    if calls == 0:
        return CandidateRejected(
            f"agent {agent} made no tool call at all; no file was changed",
            hint=f"the endpoint may not return tool calls: {TOOL_PARSER_HINT}",
        )
    return CandidateRejected(
        f"agent {agent} ended after {calls} tool call(s) without changing a file",
        hint=f"its last words: {text[:300]!r}",
    )
