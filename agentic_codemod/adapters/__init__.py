"""Registry of ecosystem adapters. One package per ecosystem, same file names in each.

registry() -> {name: Adapter}
get_adapter(ecosystem) -> Adapter              InputError naming the known ones
detect_ecosystem(root) -> str                  the one adapter whose detect(root) holds; InputError when
                                               none or several do (the task's `sdk.ecosystem` decides)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

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


def detect_ecosystem(root: Path) -> str:
    found = sorted(name for name, adapter in registry().items() if adapter.detect(root))
    if len(found) == 1:
        return found[0]
    known = ", ".join(sorted(registry()))
    if not found:
        raise InputError(f"{root}: no known ecosystem's dependency files ({known})", hint="set sdk.ecosystem")
    raise InputError(
        f"{root}: several ecosystems found ({', '.join(found)})", hint="set sdk.ecosystem in the task"
    )


def secret_files(environ: Mapping[str, str]) -> tuple[Path, ...]:
    """Every adapter's files of the caller's that may hold package-index secrets (Adapter.secret_files):
    every box shows them empty."""
    found = [f for a in registry().values() if a.secret_files for f in a.secret_files(environ)]
    return tuple(Path(f).expanduser() for f in dict.fromkeys(found))
