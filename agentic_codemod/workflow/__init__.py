"""The RUNTIME layer: one explicit agno Workflow, its steps, brains, codemod rules and gates."""
