"""Errors that end a run, each carrying the exit code the CLI maps it to.

    CodemodError                  base; never raised directly
    ├── InputError          (2)   bad task file, bad repo path, refused context; names file and field
    ├── RequiresHuman       (3)   the tool cannot decide (no migration notes, no working test command)
    ├── CandidateRejected   (1)   verification, scope or review said no
    ├── EnvironmentUnavailable (75) a service the run needs cannot be reached; the run pauses
    │   └── ServiceTimeout     (75) it was reached but did not answer in time (a reviewer's is "unsure")
    ├── BudgetExceeded      (1)   a configured budget was hit; the budget is named
    └── Cancelled          (130)  SIGINT/SIGTERM; partial artifacts are kept

Each error names its Status; the Status knows the exit code (status.py, the contract with CI, see README
"Exit codes").
"""

from __future__ import annotations

from agentic_codemod.status import ExitCode, Status

EXIT_OK = ExitCode.OK
EXIT_REJECTED = ExitCode.REJECTED
EXIT_BAD_INPUT = ExitCode.BAD_INPUT
EXIT_REQUIRES_HUMAN = ExitCode.REQUIRES_HUMAN
EXIT_UNAVAILABLE = ExitCode.UNAVAILABLE
EXIT_CANCELLED = ExitCode.CANCELLED

# What Python's parser (ast.parse, compile) raises on a text it cannot build a tree for: a syntax error, a
# NUL byte, and nesting too deep for its recursion limit or its memory (a repository's file can be written
# to do that). Every reader of repository source takes these as "unparseable", never as a crash.
UNPARSEABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


class CodemodError(Exception):
    status = Status.FAILED

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    @property
    def exit_code(self) -> int:
        return self.status.exit_code

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InputError(CodemodError):
    """Bad input. The message names the file and the field, the hint says what to do."""

    status = Status.BAD_INPUT


class RequiresHuman(CodemodError):
    status = Status.REQUIRES_HUMAN


class CandidateRejected(CodemodError):
    status = Status.REJECTED


class BudgetExceeded(CodemodError):
    status = Status.REJECTED

    def __init__(self, budget: str, limit: float | int, actual: float | int) -> None:
        super().__init__(
            f"budget {budget!r} exceeded: {actual} > {limit}",
            hint=f"raise budgets.{budget} in the config or narrow the task",
        )
        self.budget = budget
        self.limit = limit
        self.actual = actual


class EnvironmentUnavailable(CodemodError):
    status = Status.PAUSED


class ServiceTimeout(EnvironmentUnavailable):
    """The service did not answer within its time budget. For most steps a pause; for the reviewer a
    timeout is a verdict of its own: `unsure`, never an approval (ARCHITECTURE.md §6.3)."""


class Cancelled(CodemodError):
    status = Status.CANCELLED
