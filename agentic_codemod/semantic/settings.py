"""The semantic gate's settings (mounted as `gates.semantic`) and its verdict (`semantic.json`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Mode = Literal["off", "advisory", "required"]
Outcome = Literal["pass", "violation", "unavailable"]
FailureKind = Literal["implementation", "environment", "unknown"]


class SemanticSettings(BaseModel):
    """`gates.semantic` in the config. A bare mode is accepted: `gates: {semantic: required}`.

    off       the run does not ask Jev
    advisory  the run asks and records the verdict; it never blocks
    required  the verdict blocks: violation -> exit 1, unavailable -> pause (exit 75 or the mapped code)

    `agentic-codemod gate semantic` asks whatever the mode: calling it is the decision to ask.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Mode = "off"
    model: str = Field("jev-latest", min_length=1)
    # Bytes of changes.patch sent; a longer diff is cut head + tail (every changed path is still listed).
    max_diff_bytes: int = Field(24_000, ge=1_000, le=1_000_000)
    # Bytes of the last verification's output tail sent (its end is kept).
    max_evidence_bytes: int = Field(4_000, ge=256, le=100_000)
    # P(in scope) must reach this to pass; at or below 1 - min_in_scope it is scope drift; between: uncertain.
    min_in_scope: float = Field(0.8, gt=0.5, le=1.0)
    # The failure_kind choice counts as clear only at this confidence or above.
    min_confidence: float = Field(0.7, gt=0.0, le=1.0)
    # Per HTTP operation; the whole call, retries included, stops after about twice this.
    timeout_s: float = Field(20.0, gt=0, le=600)
    # Retries on 429, 5xx, connection errors and timeouts, inside the time budget above.
    max_retries: int = Field(1, ge=0, le=5)
    # Exit code for "service, auth or transport unavailable"; bmad-loop pauses on 126. Never 0.
    unavailable_exit_code: int = Field(75, ge=1, le=255)

    @model_validator(mode="before")
    @classmethod
    def _bare_mode(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value


class SemanticVerdict(BaseModel):
    """What the gate decided about one candidate, and everything Jev said that led there."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["agentic-codemod/semantic@1"] = "agentic-codemod/semantic@1"
    outcome: Outcome
    passed: bool
    exit_code: int
    reason: str
    model: str | None = None  # the model that answered, as the service reported it
    candidate_sha256: str | None = None
    in_scope: float | None = None  # P(the diff stays within the acceptance criteria)
    failure_kind: FailureKind | None = None  # asked only when the last verification failed
    failure_kind_confidence: float | None = None
    probabilities: dict[str, dict[str, float]] = Field(default_factory=dict)
    usage: dict[str, int | None] | None = None  # None: unknown (not asked, or not reported)
    request_id: str | None = None
    questions: list[str] = Field(default_factory=list)
    state_bytes: int = 0
    diff_bytes: int = 0
    diff_truncated: bool = False

    def gate_record(self) -> dict[str, Any]:
        """The entry for run.json `gates` (publish_check reads name, passed, candidate_sha256)."""
        return {
            "name": "semantic",
            "passed": self.passed,
            "candidate_sha256": self.candidate_sha256,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "reason": self.reason,
        }
