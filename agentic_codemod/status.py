"""How a run ended, and what that means for CI and for a fleet: the one table of statuses.

    Status           exit  fleet outcome
    succeeded          0   done
    nothing_to_do      0   done
    rejected           1   failed          verification, scope or review said no; a budget was hit
    failed             1   failed          the run crashed (a defect of the tool)
    bad_input          2   failed          task file, repo path, config, refused context
    requires_human     3   needs_human
    paused            75   paused          an environment fault; state and artifacts are kept
    cancelled        130   failed          SIGINT/SIGTERM (a fleet's timeout stops a run this way)

Exit codes are the contract with CI (README "Exit codes"). A fleet exits with the code of its worst
outcome: failed (1) before paused (75) before needs_human (3) before done (0).
run.json and fleet.json carry the string values; the enums are `str`, so they compare and serialise
as those strings.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    OK = 0
    REJECTED = 1
    BAD_INPUT = 2
    REQUIRES_HUMAN = 3
    UNAVAILABLE = 75
    CANCELLED = 130


class Outcome(StrEnum):
    """A repository's result in a fleet, listed from worst to best."""

    FAILED = "failed"
    PAUSED = "paused"
    NEEDS_HUMAN = "needs_human"
    DONE = "done"

    @property
    def exit_code(self) -> ExitCode:
        return _OUTCOME_EXIT[self]


class Status(StrEnum):
    SUCCEEDED = "succeeded"
    NOTHING_TO_DO = "nothing_to_do"
    REJECTED = "rejected"
    REQUIRES_HUMAN = "requires_human"
    PAUSED = "paused"
    BAD_INPUT = "bad_input"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def exit_code(self) -> ExitCode:
        return _STATUS[self][0]

    @property
    def outcome(self) -> Outcome:
        return _STATUS[self][1]


_STATUS: dict[Status, tuple[ExitCode, Outcome]] = {
    Status.SUCCEEDED: (ExitCode.OK, Outcome.DONE),
    Status.NOTHING_TO_DO: (ExitCode.OK, Outcome.DONE),
    Status.REJECTED: (ExitCode.REJECTED, Outcome.FAILED),
    Status.FAILED: (ExitCode.REJECTED, Outcome.FAILED),
    Status.BAD_INPUT: (ExitCode.BAD_INPUT, Outcome.FAILED),
    Status.REQUIRES_HUMAN: (ExitCode.REQUIRES_HUMAN, Outcome.NEEDS_HUMAN),
    Status.PAUSED: (ExitCode.UNAVAILABLE, Outcome.PAUSED),
    Status.CANCELLED: (ExitCode.CANCELLED, Outcome.FAILED),
}
_OUTCOME_EXIT = {
    Outcome.FAILED: ExitCode.REJECTED,
    Outcome.PAUSED: ExitCode.UNAVAILABLE,
    Outcome.NEEDS_HUMAN: ExitCode.REQUIRES_HUMAN,
    Outcome.DONE: ExitCode.OK,
}


def worst(outcomes: list[Outcome]) -> Outcome:
    """The outcome a set of repositories exits with: the first of failed, paused, needs_human, done."""
    order = list(Outcome)
    return min(outcomes, key=order.index, default=Outcome.DONE)
