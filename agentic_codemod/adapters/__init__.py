"""Registry of ecosystem adapters. One package per ecosystem, same file names in each."""

from __future__ import annotations

from agentic_codemod.adapters.types import Adapter
from agentic_codemod.errors import InputError


def registry() -> dict[str, Adapter]:
    from agentic_codemod.adapters import npm, python

    return {python.NAME: python.ADAPTER, npm.NAME: npm.ADAPTER}


def get_adapter(ecosystem: str) -> Adapter:
    adapters = registry()
    if ecosystem not in adapters:
        raise InputError(f"no adapter for ecosystem {ecosystem!r}; known: {', '.join(sorted(adapters))}")
    return adapters[ecosystem]
