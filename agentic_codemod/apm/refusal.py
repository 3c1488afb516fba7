"""A refused context: every violation names the file, the package and the rule.

Rule ids are stable (docs/context.md lists them); tests and the auditor match on them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentic_codemod.errors import InputError

PROJECT = "(project)"  # package label for files of the root project itself


@dataclass(frozen=True)
class Violation:
    path: str  # project-relative POSIX path of the offending file (or package dir)
    package: str
    rule: str
    detail: str
    hint: str = ""

    def line(self) -> str:
        text = f"{self.path}: {self.detail} (package {self.package}, rule {self.rule})"
        return f"{text} — {self.hint}" if self.hint else text


class ContextRefused(InputError):
    """The installed context failed verification; no run may start. Exit code 2."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        if not violations:
            raise ValueError("ContextRefused needs at least one violation")
        self.violations = tuple(violations)
        if len(self.violations) == 1:
            message = f"context refused: {self.violations[0].line()}"
        else:
            lines = "\n".join(f"  - {v.line()}" for v in self.violations)
            message = f"context refused ({len(self.violations)} violations):\n{lines}"
        super().__init__(message)

    @property
    def rules(self) -> set[str]:
        return {v.rule for v in self.violations}


def raise_if_any(violations: Sequence[Violation]) -> None:
    if violations:
        raise ContextRefused(violations)
