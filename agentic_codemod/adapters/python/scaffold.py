"""What `agentic-codemod init` writes for a Python repository (the core's scaffold.py fills its templates
with these): the example rule's ast-grep language, the default `--from`, the files a plain bump may edit
and how the code imports the SDK (a distribution's module name: `acme-sdk` -> `acme_sdk`)."""

from __future__ import annotations

from agentic_codemod.adapters.types import Scaffold

SCAFFOLD = Scaffold(
    rule_language="python",
    from_range=">=1,<2",
    bump_paths=("requirements*.txt", "pyproject.toml", "setup.cfg", "setup.py"),
    code="Python",
    name_pattern=r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?",
    module=lambda name: name.replace("-", "_"),
)
