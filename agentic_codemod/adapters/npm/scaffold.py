"""What `agentic-codemod init` writes for an npm repository (the core's scaffold.py fills its templates
with these): the example rule's ast-grep language, the default `--from`, the files a plain bump may edit
(package.json and the lockfile npm refreshes) and how the code imports the SDK (by its package name)."""

from __future__ import annotations

from agentic_codemod.adapters.types import Scaffold

SCAFFOLD = Scaffold(
    rule_language="javascript",
    from_range="^1.0.0",
    bump_paths=("package.json", "package-lock.json"),
    code="JavaScript",
    name_pattern=r"(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*",
    module=lambda name: name,
)
