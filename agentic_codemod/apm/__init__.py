"""The CONTEXT layer: APM packages, verified fail-closed and compiled into agent specs and skills.

    load_context(project_root) -> Context     the one call a run makes (load.py)
      ├── manifest.py / lockfile.py / policy.py   apm.yml, apm.lock.yaml, apm-policy.yml
      ├── command.py                              `apm install --frozen`, `apm audit --ci`
      ├── integrity.py                            content hash, hooks, symlinks, hidden Unicode
      ├── primitives.py                           agents, instructions, context docs, skills
      └── compile.py                              AgentSpec per step, skill selection per SDK

A refusal raises ContextRefused (an InputError, exit 2) listing every violation with file, package
and rule. See docs/context.md.
"""

from agentic_codemod.apm.compile import STEPS, TOOLS, AgentSpec, Context, PackageInfo
from agentic_codemod.apm.integrity import content_hash
from agentic_codemod.apm.load import load_context
from agentic_codemod.apm.primitives import ContextDoc, Instruction, Skill
from agentic_codemod.apm.refusal import ContextRefused, Violation

__all__ = [
    "STEPS",
    "TOOLS",
    "AgentSpec",
    "Context",
    "ContextDoc",
    "ContextRefused",
    "Instruction",
    "PackageInfo",
    "Skill",
    "Violation",
    "content_hash",
    "load_context",
]
