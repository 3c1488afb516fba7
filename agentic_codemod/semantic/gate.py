"""The semantic gate (ARCHITECTURE.md §6.5): Jev judges a bounded diff against the acceptance criteria.

    evaluate(run_dir, settings, env) -> SemanticVerdict      also written to run_dir/semantic.json
    enforced_exit_code(verdict, settings) -> int             what a run does with it, by mode

Exit contract: 0 pass, 1 violation, 75 unavailable (or `unavailable_exit_code`). Fail-closed:
  - in scope only at P >= min_in_scope; at P <= 1 - min_in_scope it is scope drift; between is uncertain;
  - a failed last verification never passes, whatever Jev says: the failure kind is asked
    (implementation | environment | unknown) and recorded for a human, never acted on;
  - `unknown` or a choice below min_confidence is unclear, and unclear does not pass;
  - a missing or unreadable answer does not pass.
The gate reads artifacts and asks; it never edits code and never picks the next step.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast, get_args

from agentic_codemod.errors import EXIT_OK, EXIT_REJECTED
from agentic_codemod.semantic.evidence import Evidence, Unjudgeable, read_evidence
from agentic_codemod.semantic.jev import JevRefused, JevReply, JevUnavailable, ask
from agentic_codemod.semantic.settings import FailureKind, SemanticSettings, SemanticVerdict

VERDICT_FILE = "semantic.json"
IN_SCOPE = "in_scope"
FAILURE_KIND = "failure_kind"


def evaluate(
    run_dir: Path, settings: SemanticSettings, env: Mapping[str, str] = os.environ
) -> SemanticVerdict:
    """Ask Jev about the candidate in `run_dir` and write the verdict there. Never raises for a verdict."""
    run_dir = Path(run_dir)
    verdict = _evaluate(run_dir, settings, env)
    if run_dir.is_dir():
        (run_dir / VERDICT_FILE).write_text(verdict.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return verdict


def enforced_exit_code(verdict: SemanticVerdict, settings: SemanticSettings) -> int:
    """off: not asked; advisory: recorded, never blocks; required: the verdict's own exit code."""
    return verdict.exit_code if settings.mode == "required" else EXIT_OK


def _evaluate(run_dir: Path, settings: SemanticSettings, env: Mapping[str, str]) -> SemanticVerdict:
    try:
        evidence = read_evidence(run_dir, settings)
    except Unjudgeable as exc:
        return _violation(str(exc))
    names = [IN_SCOPE, FAILURE_KIND] if evidence.verification_failed else [IN_SCOPE]
    asked: dict[str, Any] = {
        "candidate_sha256": evidence.candidate_sha256,
        "questions": names,
        "state_bytes": len(evidence.state.encode("utf-8")),
        "diff_bytes": evidence.diff_bytes,
        "diff_truncated": evidence.diff_truncated,
    }
    try:
        reply = ask(evidence.state, names, settings, env)
    except JevUnavailable as exc:
        return SemanticVerdict(
            outcome="unavailable",
            passed=False,
            exit_code=settings.unavailable_exit_code,
            reason=f"semantic gate unavailable: {exc}",
            request_id=exc.request_id,
            **asked,
        )
    except JevRefused as exc:
        return _violation(f"semantic gate request refused: {exc}", request_id=exc.request_id, **asked)
    return _decide(evidence, reply, settings, asked)


def _decide(
    evidence: Evidence, reply: JevReply, settings: SemanticSettings, asked: dict[str, Any]
) -> SemanticVerdict:
    recorded: dict[str, Any] = {
        **asked,
        "model": reply.model,
        "usage": reply.usage,
        "request_id": reply.request_id,
        "probabilities": {name: {"noul": p} for name, p in reply.nouls.items()}
        | {name: probs for name, (_, _, probs) in reply.choices.items()},
    }
    p = reply.nouls.get(IN_SCOPE)
    if p is None:
        return _violation("Jev gave no in_scope answer: unclear does not pass", **recorded)
    recorded["in_scope"] = p
    problems = [_scope_problem(p, settings.min_in_scope)]
    if evidence.verification_failed:
        kind, confidence, kind_problem = _failure_kind(reply, settings.min_confidence)
        recorded |= {"failure_kind": kind, "failure_kind_confidence": confidence}
        last = evidence.last
        exit_text = "did not finish" if last.exit_code is None else f"exit {last.exit_code}"
        problems.insert(0, f"the last verification failed ({exit_text}); a red test result stays red")
        problems.append(kind_problem)
    found = [problem for problem in problems if problem]
    if found:
        return _violation("; ".join(found), **recorded)
    return SemanticVerdict(
        outcome="pass",
        passed=True,
        exit_code=EXIT_OK,
        reason=f"in scope (P={p:.2f} >= {settings.min_in_scope})",
        **recorded,
    )


def _scope_problem(p: float, threshold: float) -> str:
    if p >= threshold:
        return ""
    if p <= 1 - threshold:
        return f"scope drift: P(in scope)={p:.2f} <= {1 - threshold:.2f}"
    return f"uncertain scope: P(in scope)={p:.2f} is between {1 - threshold:.2f} and {threshold}"


def _failure_kind(reply: JevReply, threshold: float) -> tuple[FailureKind | None, float | None, str]:
    answer = reply.choices.get(FAILURE_KIND)
    if answer is None:
        return None, None, "Jev gave no failure_kind answer: unclear"
    choice, confidence, _ = answer
    if choice not in get_args(FailureKind):
        return None, confidence, f"failure kind {choice!r} is not one that was offered: unclear"
    kind = cast(FailureKind, choice)
    if kind == "unknown":
        return kind, confidence, f"failure kind unknown (confidence {confidence:.2f})"
    if confidence < threshold:
        return kind, confidence, f"failure kind unclear: {kind} at confidence {confidence:.2f} < {threshold}"
    return kind, confidence, f"failure looks like {kind} (confidence {confidence:.2f}); recorded for a human"


def _violation(reason: str, **fields: Any) -> SemanticVerdict:
    return SemanticVerdict(
        outcome="violation", passed=False, exit_code=EXIT_REJECTED, reason=reason, **fields
    )
