"""Code that still imports a module of the SDK the target version no longer ships (Adapter.removed_imports).

    removed_imports(worktree, before_env, after_env, wheel_dirs, sdk, from_version, to) -> [item]
        "src/a.py:3 imports acme.errors, which acme-sdk 2.0.0 no longer ships", one per import, and one
        per code file naming the SDK's package that could not be read; [] where either version's module
        list is not at hand

The modules each version ships are its installed RECORD's (module_sets.installed); the FROM version's
from the baseline environment, or, where the bump installed into that environment itself
(`before_env` None), from its wheel in the run's local wheel folders (module_sets.in_wheels). The
imports are read with `ast` from every Python code file git lists (code_imports.found). A module the
target moved to another distribution under the same import path (dbt-core 1.8's `dbt.adapters`, now
dbt-adapters') is not gone where any distribution of the target's environment ships it
(module_sets.all_installed).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from agentic_codemod.adapters.python import code_imports, module_sets


def removed_imports(
    worktree: Path,
    before_env: Path | None,
    after_env: Path,
    wheel_dirs: Sequence[Path],
    sdk: str,
    from_version: str | None,
    to: str,
) -> list[str]:
    gone = _gone(before_env, after_env, wheel_dirs, sdk, from_version)
    if not gone:
        return []
    ships_no_more = f"which {sdk} {to} no longer ships"
    packages = ", ".join(sorted({m.split(".")[0] for m in gone}))
    said: list[str] = []
    for f in code_imports.found(worktree, gone):
        if f.module is not None:
            said.append(f"{f.where} imports {f.module}, {ships_no_more}")
        elif f.where:
            said.append(
                f"{f.where} cannot be read: {f.problem}; it names {packages}, whose modules "
                f"{', '.join(sorted(gone))} {sdk} {to} no longer ships"
            )
        else:
            said.append(f"{f.problem}: imports of {', '.join(sorted(gone))} may be left")
    return said


def _gone(
    before_env: Path | None, after_env: Path, wheel_dirs: Sequence[Path], sdk: str, from_version: str | None
) -> frozenset[str] | None:
    """What the FROM version ships and no distribution of the target's environment does (None: unknown)."""
    after = module_sets.installed(after_env, sdk)
    if after is None:
        return None
    if before_env is not None:
        shipped = module_sets.installed(before_env, sdk)
        before = shipped.modules if shipped else None
    else:
        before = module_sets.in_wheels(wheel_dirs, sdk, from_version) if from_version else None
    if before is None:
        return None
    return before - after.modules - module_sets.all_installed(after_env)
