from agentic_codemod.cli import entry

entry()
