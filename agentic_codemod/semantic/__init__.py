"""Optional semantic gate (ARCHITECTURE.md §6.5): Jev, TypeSafe's System One, judges scope drift.

    settings.py    SemanticSettings (config `gates.semantic`), SemanticVerdict (`semantic.json`)
    evidence.py    the bounded state built from run.json and changes.patch
    questions.yml  the two questions, as data
    jev.py         the only module that knows the TypeSafe client; its errors mapped to 75 or 1
    gate.py        evaluate(): the fail-closed decision
    cli.py         `agentic-codemod gate semantic --run-dir DIR`

Needs the `semantic` extra (typesafe-sdk); without it the gate reports "unavailable", never "pass".
"""

from agentic_codemod.semantic.cli import add_gate_parser, gate_command
from agentic_codemod.semantic.gate import VERDICT_FILE, enforced_exit_code, evaluate
from agentic_codemod.semantic.settings import SemanticSettings, SemanticVerdict

__all__ = [
    "VERDICT_FILE",
    "SemanticSettings",
    "SemanticVerdict",
    "add_gate_parser",
    "enforced_exit_code",
    "evaluate",
    "gate_command",
]
