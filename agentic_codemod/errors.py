"""Errors that end a run, each carrying the exit code the CLI maps it to.

    CodemodError                  base; never raised directly
    ├── InputError          (2)   bad task file, bad repo path, refused context; names file and field
    ├── RequiresHuman       (3)   the tool cannot decide (no migration notes, no working test command)
    ├── CandidateRejected   (1)   verification, scope or review said no
    ├── EnvironmentUnavailable (75) a service the run needs cannot be reached; the run pauses
    │   └── ServiceTimeout     (75) it was reached but did not answer in time (a reviewer's is "unsure")
    ├── BudgetExceeded      (1)   a configured budget was hit; the budget is named
    └── Cancelled          (130)  SIGINT/SIGTERM; partial artifacts are kept

Exit codes are the contract with CI (see README "Exit codes").
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_BAD_INPUT = 2
EXIT_REQUIRES_HUMAN = 3
EXIT_UNAVAILABLE = 75
EXIT_CANCELLED = 130


class CodemodError(Exception):
    exit_code = EXIT_REJECTED
    status = "failed"

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InputError(CodemodError):
    """Bad input. The message names the file and the field, the hint says what to do."""

    exit_code = EXIT_BAD_INPUT
    status = "bad_input"


class RequiresHuman(CodemodError):
    exit_code = EXIT_REQUIRES_HUMAN
    status = "requires_human"


class CandidateRejected(CodemodError):
    exit_code = EXIT_REJECTED
    status = "rejected"


class BudgetExceeded(CodemodError):
    exit_code = EXIT_REJECTED
    status = "rejected"

    def __init__(self, budget: str, limit: float | int, actual: float | int) -> None:
        super().__init__(
            f"budget {budget!r} exceeded: {actual} > {limit}",
            hint=f"raise budgets.{budget} in the config or narrow the task",
        )
        self.budget = budget
        self.limit = limit
        self.actual = actual


class EnvironmentUnavailable(CodemodError):
    exit_code = EXIT_UNAVAILABLE
    status = "paused"


class ServiceTimeout(EnvironmentUnavailable):
    """The service did not answer within its time budget. For most steps a pause; for the reviewer a
    timeout is a verdict of its own: `unsure`, never an approval (ARCHITECTURE.md §6.3)."""


class Cancelled(CodemodError):
    exit_code = EXIT_CANCELLED
    status = "cancelled"
