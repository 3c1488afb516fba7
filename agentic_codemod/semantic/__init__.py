"""Optional semantic gate (ARCHITECTURE.md §6.5): Jev, TypeSafe's System One, judges scope drift.

    settings.py    SemanticSettings (config `gates.semantic`), SemanticVerdict (`semantic.json`)
    evidence.py    the bounded state built from run.json and changes.patch
    questions.yml  the two questions, as data
    jev.py         the only module that knows the TypeSafe client; its errors mapped to 75 or 1
    gate.py        evaluate(): the fail-closed decision
    cli.py         `agentic-codemod gate semantic --run-dir DIR`

Needs the `semantic` extra (typesafe-sdk); without it the gate reports "unavailable", never "pass".
"""

from importlib import import_module
from typing import Any

_HOMES = {
    "add_gate_parser": "cli",
    "gate_command": "cli",
    "VERDICT_FILE": "gate",
    "enforced_exit_code": "gate",
    "evaluate": "gate",
    "SemanticSettings": "settings",
    "SemanticVerdict": "settings",
}


def __getattr__(name: str) -> Any:  # lazy: the CLI parser must not pay for pydantic and the client
    if name not in _HOMES:
        raise AttributeError(name)
    return getattr(import_module(f"agentic_codemod.semantic.{_HOMES[name]}"), name)


__all__ = [
    "VERDICT_FILE",
    "SemanticSettings",
    "SemanticVerdict",
    "add_gate_parser",
    "enforced_exit_code",
    "evaluate",
    "gate_command",
]
